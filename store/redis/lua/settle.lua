-- lib: base job end ack
-- settle acks, then fails, many jobs. ARGV: prefix, now, ack count, then
-- (id, token, result) per ack, fail count, then (id, token, error,
-- no retry, retry_in, jitter) per fail. Replies {'ok', wakes(), codes}, one
-- code per item, acks first: 'ok', 'lost' or 'nf'.
local now = ARGV[2]
local codes = {}
local na = tonumber(ARGV[3])
for i = 0, na - 1 do
  local b = 3 + i * 3
  local result = ARGV[b + 3]
  if result == '' then result = nil end
  codes[#codes + 1] = do_ack(ARGV[b + 1], ARGV[b + 2], now, result)
end
local fb = 4 + na * 3
local nf = tonumber(ARGV[fb])
for i = 0, nf - 1 do
  local b = fb + i * 6
  codes[#codes + 1] = do_fail(ARGV[b + 1], ARGV[b + 2], now, ARGV[b + 3], ARGV[b + 4],
    optnum(ARGV[b + 5]), tonumber(ARGV[b + 6]))
end
return {'ok', wakes(), codes}
