-- lib_ack.lua: the ack, the hot path of workers.

-- do_ack settles a running job as succeeded under its token, which stays
-- on the job so that a repeated ack can be told apart. The settling
-- attempt stays on the job too (w, ai, sa, fa) instead of going to the
-- history list: get.lua reads it from there. It is the hot path, so it
-- reads only the fields it needs and writes the indexes directly, as move
-- would. It returns 'ok' (also for a repeat under the token that settled
-- it), 'lost' or 'nf', and the job's queue.
local function do_ack(id, token, now, result)
  local f = redis.call('HMGET', jkey(id), 's', 't', 'q', 'w', 'uk', 'rs', 'ck')
  local s, t, q, w, uk = f[1], f[2], f[3], f[4], f[5]
  if not s then return 'nf' end
  if t ~= token then return 'lost' end
  if s == 'succeeded' then return 'ok', q end
  if s ~= 'running' then return 'lost' end
  redis.call('ZREM', qkey(q, 'run'), id)
  if w then redis.call('SREM', wjkey(w), id) end
  ended(q, id, f[7])
  if result then
    redis.call('HSET', jkey(id), 's', 'succeeded', 'fa', now, 'rs', result)
  else
    redis.call('HSET', jkey(id), 's', 'succeeded', 'fa', now)
    if f[6] then redis.call('HDEL', jkey(id), 'rs') end
  end
  redis.call('ZADD', qkey(q, 'done'), now, id)
  count_attempt(now, 's')
  if uk and redis.call('GET', ukey(q, uk)) == id then redis.call('DEL', ukey(q, uk)) end
  return 'ok', q
end
