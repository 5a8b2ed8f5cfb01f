--[[ inflight.lua: concurrency slots (max_in_flight) as leases, on Redis's clock.

Contract:
  KEYS      the caller's slots under one policy: a sorted set `prefix:{identity}:policy:in-flight`
            whose members are slot ids and whose scores are the times (Redis TIME, in
            milliseconds) their leases end. `acquire` and `release` take one key; `renew` any
            number (all in one Cluster slot).
  ARGV[1]   `acquire`, `release`, `renew` or `count`
  acquire:  ARGV[2] the slot id (unique per instance and slot), ARGV[3] the limit (integer
            >= 1), ARGV[4] the lease (milliseconds >= 1). Expired leases are dropped; if fewer
            than `limit` remain, the slot is added with a lease ending at now + lease and the
            set expires with its last lease. Returns { 1, held } when the slot was taken (held
            counts it), { 0, held } when all `limit` slots are held.
  release:  ARGV[2] the slot id; removes it (a lease that already ended is not an error).
            Returns { 1, held }.
  renew:    ARGV[2] the lease (milliseconds >= 1); then, for each key in order, how many of
            its slot ids follow, and those ids (the live slots of one instance). Expired leases
            are dropped; every listed slot still held gets a lease ending at now + lease, and
            each set expires with its last lease. A listed slot that is gone (released, or
            lapsed) is not brought back: a renewal racing its slot's release never revives it.
            Returns { renewed, { the ids of the listed slots that are gone } }.

  count:    no more arguments; changes nothing. Returns { 1, the slots whose leases have not
            ended }.

A slot whose holder died is given back when its lease ends: its instance no longer renews it.
]]

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- The set `key` expires with its last lease (an empty set is already gone).
local function expire_with_last_lease(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIREAT', key, tonumber(last[2]) + 1)
  end
end

if ARGV[1] == 'count' then
  return { 1, redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf') }
end

if ARGV[1] == 'release' then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return { 1, redis.call('ZCARD', KEYS[1]) }
end

if ARGV[1] == 'renew' then
  local lease = tonumber(ARGV[2])
  local at, renewed, gone = 3, 0, {}
  for i = 1, #KEYS do
    local key = KEYS[i]
    local count = tonumber(ARGV[at])
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    for j = at + 1, at + count do
      if redis.call('ZSCORE', key, ARGV[j]) then
        redis.call('ZADD', key, now + lease, ARGV[j])
        renewed = renewed + 1
      else
        gone[#gone + 1] = ARGV[j]
      end
    end
    at = at + count + 1
    expire_with_last_lease(key)
  end
  return { renewed, gone }
end

local key = KEYS[1]
local limit = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
local held = redis.call('ZCARD', key)
if held >= limit then
  return { 0, held }
end
redis.call('ZADD', key, now + lease, ARGV[2])
expire_with_last_lease(key)
return { 1, held + 1 }
