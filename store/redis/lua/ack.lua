-- lib: base job ack
-- ack settles a running job as succeeded. ARGV: prefix, id, token, now,
-- result ('' none). Replies {'ok', 0, job}, {'lost'} or {'nf'}.
local result = ARGV[5]
if result == '' then result = nil end
local code = do_ack(ARGV[2], ARGV[3], ARGV[4], result)
if code ~= 'ok' then return {code, 0} end
return {'ok', 0, reply(ARGV[2], load(ARGV[2]))}
