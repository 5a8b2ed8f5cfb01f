--[[ inflight.lua: concurrency slots (max_in_flight) as leases, on Redis's clock.

Contract:
  KEYS[1]   the caller's slots under one policy: a sorted set `prefix:{identity}:policy:in-flight`
            whose members are slot ids and whose scores are the times (Redis TIME, in
            milliseconds) their leases end.
  ARGV[1]   `acquire` or `release`
  ARGV[2]   the slot id (unique per instance and slot)
  acquire:  ARGV[3] the limit (integer >= 1), ARGV[4] the lease (milliseconds >= 1).
            Expired leases are dropped; if fewer than `limit` remain, the slot is added with a
            lease ending at now + lease and the set expires with its last lease. Returns
            { 1, held } when the slot was taken (held counts it), { 0, held } when all `limit`
            slots are held.
  release:  removes the slot (a lease that already ended is not an error). Returns { 1, held }.

A slot whose holder died is given back when its lease ends: nothing else is needed.
]]

local key = KEYS[1]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

if ARGV[1] == 'release' then
  redis.call('ZREM', key, ARGV[2])
  return { 1, redis.call('ZCARD', key) }
end

local limit = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
local held = redis.call('ZCARD', key)
if held >= limit then
  return { 0, held }
end
redis.call('ZADD', key, now + lease, ARGV[2])
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', key, tonumber(last[2]) + 1)
return { 1, held + 1 }
