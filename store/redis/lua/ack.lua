-- lib: base job ack
-- ack settles a running job as succeeded. ARGV: prefix, id, token, now,
-- result ('' none). Replies {'ok', wakes(), job}, {'lost'} or {'nf'}: an
-- ack wakes a leaser when it frees a slot.
local result = ARGV[5]
if result == '' then result = nil end
local code = do_ack(ARGV[2], ARGV[3], ARGV[4], result)
if code ~= 'ok' then return {code, 0} end
return {'ok', wakes(), reply(ARGV[2], load(ARGV[2]))}
