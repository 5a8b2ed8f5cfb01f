--[[ take.lua: take `cost` tokens from every enforcing bucket in KEYS, all or nothing, and from
each shadow bucket on its own, on Redis's clock.

Contract (src/limiter/bucket.rs is the specification; this script mirrors it operation for
operation, so both give the same answers for the same times and costs):

  KEYS[i]      the hash of bucket i: one identity under one policy, `prefix:{identity}:policy`.
               Every key of one call carries the same {identity} hash tag, so a call touches
               one Redis Cluster slot.
  ARGV[1]      margin added to each key's expiry, in milliseconds (integer >= 0)
  ARGV[4i-2]   capacity of bucket i, tokens (> 0)
  ARGV[4i-1]   refill rate of bucket i, tokens per second (> 0, may be fractional)
  ARGV[4i]     cost for bucket i, tokens (> 0)
  ARGV[4i+1]   mode of bucket i: 0 enforcing (all or nothing with the other enforcing buckets),
               1 shadow (pays on its own when it can, never affects the others)

  Returns { now_us, then for each bucket i: allowed (1 or 0), remaining (a string, "%.17g",
  so no fraction of a token is lost in transit), retry_after_us, full_in_us }.

  Each hash holds `tokens` (fractional, "%.17g") and `ts` (microseconds of Redis TIME when
  `tokens` was true). A missing key is a full bucket. Time is Redis's own TIME, never a client
  clock; a TIME earlier than `ts` counts as no time passed. When every bucket holds its cost,
  each is debited and expires (PEXPIRE) exactly when it would be full again, plus the margin:
  an expired key and a full bucket are the same thing, so no state is ever lost early and no
  idle key lingers. When any enforcing bucket is short, no enforcing bucket is written; a
  shadow bucket is written whenever it holds its own cost.
]]

local EPSILON = 1e-9
local MICROS = 1000000

local function micros_to_gain(tokens, rate)
  if tokens <= 0 then
    return 0
  end
  return math.ceil(tokens * MICROS / rate)
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * MICROS + tonumber(time[2])
local margin_ms = tonumber(ARGV[1])

local levels, stamps, costs, caps, rates, shadows = {}, {}, {}, {}, {}, {}
local all_allowed = true
for i = 1, #KEYS do
  local capacity = tonumber(ARGV[4 * i - 2])
  local rate = tonumber(ARGV[4 * i - 1])
  local cost = tonumber(ARGV[4 * i])
  local shadow = ARGV[4 * i + 1] == '1'
  local stored = redis.call('HMGET', KEYS[i], 'tokens', 'ts')
  local tokens, ts = capacity, now
  if stored[1] and stored[2] then
    local elapsed = now - tonumber(stored[2])
    if elapsed < 0 then
      elapsed = 0
    end
    tokens = math.min(tonumber(stored[1]) + elapsed * rate / MICROS, capacity)
    ts = math.max(tonumber(stored[2]), now)
  end
  levels[i], stamps[i], costs[i], caps[i], rates[i] = tokens, ts, cost, capacity, rate
  shadows[i] = shadow
  if tokens + EPSILON < cost and not shadow then
    all_allowed = false
  end
end

local reply = { now }
for i = 1, #KEYS do
  local tokens, cost, capacity, rate = levels[i], costs[i], caps[i], rates[i]
  if tokens + EPSILON >= cost then
    local remaining = math.max(tokens - cost, 0)
    local full_in = micros_to_gain(capacity - remaining, rate)
    if all_allowed or shadows[i] then
      if full_in > 0 then
        -- Numbers are formatted by hand: Redis would turn them into strings with "%.14g",
        -- which loses digits of a microsecond timestamp and of a fractional token.
        redis.call('HSET', KEYS[i], 'tokens', string.format('%.17g', remaining),
          'ts', string.format('%d', stamps[i]))
        redis.call('PEXPIRE', KEYS[i], string.format('%d', math.ceil(full_in / 1000) + margin_ms))
      else
        redis.call('DEL', KEYS[i])
      end
    end
    table.insert(reply, 1)
    table.insert(reply, string.format('%.17g', remaining))
    table.insert(reply, 0)
    table.insert(reply, full_in)
  else
    table.insert(reply, 0)
    table.insert(reply, string.format('%.17g', tokens))
    table.insert(reply, micros_to_gain(cost - tokens, rate))
    table.insert(reply, micros_to_gain(capacity - tokens, rate))
  end
end
return reply
