-- lib: base job end
-- fail ends a delivery as failed and applies the failure decisions. ARGV:
-- prefix, id, token, now, error, no retry ('1'), retry_in in ms ('' none),
-- jitter. Replies {'ok', wakes(), job}, {'lost'} or {'nf'}.
local code, j = do_fail(ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], optnum(ARGV[7]), tonumber(ARGV[8]))
if code ~= 'ok' then return {code, 0} end
return {'ok', wakes(), reply(ARGV[2], j)}
