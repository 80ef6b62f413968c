-- lib: base
-- register registers or refreshes a worker. ARGV: prefix, worker, now,
-- queues (JSON), labels (JSON). Replies the worker's started_at.
local w, now = ARGV[2], ARGV[3]
touch(w, now)
redis.call('HSET', wkey(w), 'qs', ARGV[4], 'lb', ARGV[5])
return redis.call('HGET', wkey(w), 'sa')
