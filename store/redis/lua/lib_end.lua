-- lib_end.lua: the failure decisions (store.Decide, mirrored) and the end
-- of a delivery.

-- backoff mirrors store.BackoffDelay in ms: min(max, base * 2^(n-1)),
-- then jitter (a fraction in [-0.1, 0.1) drawn by the caller) of it.
local function backoff(base, max, n, jitter)
  if base <= 0 then base = 1000 end
  if max < base then max = base end
  local d = base
  local i = 1
  while i < n and d < max do
    d = d * 2
    i = i + 1
  end
  if d > max then d = max end
  return d + jitter * d
end

-- dead makes decision d a death for reason (a helper of decide's, defined
-- once per script run rather than once per decision).
local function dead(d, reason)
  d.state, d.reason = 'dead', reason
  return d
end

-- decide mirrors store.Decide row by row: release (cancelled instead when
-- cancellation was requested), cancel requested, permanent failure,
-- orphaned, timed out, failed. A rescue, or a release without a delay,
-- keeps the job's run_at: its place in the queue. retry_in is nil or ms
-- (fail's retry_in, release's delay); max_rescues is resolved by the caller.
local function decide(j, ending, retry_in, max_rescues, now, jitter)
  local d = {attempt = num(j.a), rescues = num(j.rc), run_at = now}
  if ending == 'release' then
    d.outcome, d.attempt = 'released', num(j.a) - 1
    if j.cr == '1' then
      d.outcome, d.state = 'cancelled', 'cancelled'
    elseif retry_in and retry_in > 0 then
      d.state, d.run_at = 'scheduled', now + retry_in
    else
      d.state, d.run_at = 'available', num(j.ra)
    end
    return d
  end
  if j.cr == '1' then
    d.outcome, d.state = 'cancelled', 'cancelled'
    if ending == 'orphan' then d.rescues = d.rescues + 1 end
    return d
  end
  if ending == 'failperm' then
    d.outcome = 'failed'
    return dead(d, 'failed_permanently')
  end
  if ending == 'orphan' then
    d.outcome, d.rescues = 'orphaned', d.rescues + 1
    if d.rescues >= max_rescues then return dead(d, 'crash_loop') end
    if d.attempt >= num(j.ma) then return dead(d, 'attempts_exhausted') end
    d.state, d.run_at = 'available', num(j.ra)
    return d
  end
  if ending == 'timeout' then
    d.outcome = 'timed_out'
    if d.attempt >= num(j.ma) then return dead(d, 'timeout_exhausted') end
  else
    d.outcome = 'failed'
    if d.attempt >= num(j.ma) then return dead(d, 'attempts_exhausted') end
  end
  local delay = backoff(num(j.bb), num(j.bm), d.attempt, jitter)
  if retry_in then delay = retry_in end
  d.state, d.run_at = 'scheduled', now + delay
  if delay <= 0 then d.state = 'available' end
  return d
end

-- close_attempt appends the open attempt of running job j to its history.
-- Times stay strings, exactly as stored.
local function close_attempt(id, j, now, outcome, extra)
  local e = {i = j.ai or '', n = j.a, w = j.w or '', s = j.sa or '', f = now, o = outcome}
  if extra then
    e.e, e.rb, e.lh = extra.err, extra.rb, extra.lh
  end
  redis.call('RPUSH', akey(id), cjson.encode(e))
end

-- TPFIELD is the throughput counter of an attempt's outcome.
local TPFIELD = {failed = 'f', timed_out = 'f', orphaned = 'r'}

-- end_delivery closes a running job's delivery with decision d. by names
-- what ended it (fail, release, rescue, reap, deregister), kept in 'eb'
-- with the delivery's token so that a repeated fail or release can be told
-- from a stale one. extra may carry err (the attempt's error and the job's
-- last_error), rb and lh (recovered_by, last heartbeat), and lost (report
-- the job to its owner).
local function end_delivery(id, j, d, now, by, extra)
  local owner = j.w
  close_attempt(id, j, now, d.outcome, extra)
  -- Throughput: closed attempts per minute (insights.go), kept past
  -- ThroughputRetention; released and cancelled ones do not count.
  local tf = TPFIELD[d.outcome]
  if tf then count_attempt(now, tf) end
  local ch = {s = d.state, a = fmt(d.attempt), rc = fmt(d.rescues), dr = d.reason or false,
    ex = false, w = false, ai = false, eb = by}
  if FINISHED[d.state] then
    ch.fa = now
  else
    ch.ra = fmt(math.floor(d.run_at))
  end
  if extra and extra.err then ch.le = extra.err end
  move(id, j, ch)
  if extra and extra.lost and owner then write('RPUSH', wlkey(owner), id) end
  if d.state == 'available' then wake(j.q) end
end

-- repeated tells whether token's delivery of j ended by `by` already: a
-- fail or release repeated under it is answered with the job as it is.
local function repeated(j, token, by)
  return j.s ~= 'running' and j.t == token and j.eb == by
end

-- do_fail ends a running job's delivery as failed under its token and
-- applies the decisions: 'ok', 'lost' or 'nf', and the job.
local function do_fail(id, token, now, err, noretry, retry_in, jitter)
  local j = load(id)
  if not j then return 'nf' end
  if repeated(j, token, 'fail') then return 'ok', j end
  if j.s ~= 'running' or j.t ~= token then return 'lost' end
  local ending = 'fail'
  if noretry == '1' then ending = 'failperm' end
  local d = decide(j, ending, retry_in, 0, num(now), jitter)
  end_delivery(id, j, d, now, 'fail', {err = err})
  return 'ok', j
end
