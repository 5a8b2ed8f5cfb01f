--[[ fleet.lua: announce one instance and count the live ones, on Redis's clock.

  KEYS[1]   the fleet's sorted set, `prefix:fleet`: members are instance ids, scores the
            millisecond (Redis TIME) at which each membership lapses
  ARGV[1]   this instance's id
  ARGV[2]   how long a membership lasts without renewal, in milliseconds (integer > 0)

  Returns the number of live instances, this one included. Lapsed members are removed; the
  set itself expires when nobody renews it.
]]

local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lifetime = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now_ms + lifetime, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
redis.call('PEXPIRE', KEYS[1], lifetime)
return redis.call('ZCARD', KEYS[1])
