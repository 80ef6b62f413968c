-- lib: base job
-- delete removes a job that is not running, with its history. ARGV:
-- prefix, id. Replies {'ok', 0}, {'nf'} or {'invalid'}.
local id = ARGV[2]
local j = load(id)
if not j then return {'nf', 0} end
if j.s == 'running' then return {'invalid', 0} end
forget(id, j)
return {'ok', 0}
