-- lib: base job
-- retry puts a dead or cancelled job back to available with attempt and
-- rescues reset, its history kept. ARGV: prefix, id, now, payload ('' to
-- keep it, 'i' + value kept in the hash, 'k' + value in its own key).
-- Replies {'ok', wakes(), job}, {'nf'} or {'invalid'}.
local id, now, pl = ARGV[2], ARGV[3], ARGV[4]
local j = load(id)
if not j then return {'nf', 0} end
if j.s ~= 'dead' and j.s ~= 'cancelled' then return {'invalid', 0} end
-- Retrying would make two unfinished jobs share a unique_key.
if j.uk and unique_holder(j.q, j.uk) then return {'invalid', 0} end
local ch = {s = 'available', a = '0', rc = '0', dr = false, fa = false, cr = false, t = false, ra = now}
local mode = string.sub(pl, 1, 1)
if mode == 'i' then
  ch.pl, ch.pk = string.sub(pl, 2), false
  redis.call('DEL', pkey(id))
elseif mode == 'k' then
  ch.pl, ch.pk = false, '1'
  redis.call('SET', pkey(id), string.sub(pl, 2))
end
move(id, j, ch)
wake(j.q)
return {'ok', wakes(), reply(id, j)}
