--[[ take.lua: decide many independent groups of bucket takes in one call, on Redis's clock.
Each group takes `cost` tokens from every enforcing bucket in it, all or nothing, and from each
of its shadow buckets on its own. Groups are decided in order; a later group sees what an
earlier one took (two requests of one caller may share a call).

Contract (src/limiter/bucket.rs is the specification; this script mirrors it operation for
operation, so both give the same answers for the same times and costs):

  KEYS         every bucket of every group, group after group: one identity under one policy,
               `prefix:{identity}:policy`. Every key of a call lives in one Redis Cluster slot.
  ARGV[1]      margin added to each key's expiry, in milliseconds (integer >= 0)
  ARGV[2]      the number of groups
  then, for each group: the number of its buckets, and for each bucket four values:
               capacity (tokens > 0), refill rate (tokens per second > 0, may be fractional),
               cost (tokens; > 0 but for a settlement), mode (0 enforcing, 1 shadow, 2 settle)

  A settlement changes its bucket by `cost` (negative: a refund) and is never refused: a
  charge may leave the bucket in debt, below zero, which refill and later requests pay off; a
  refund never fills it past capacity.

  Returns { now_us, then for each bucket in KEYS order: allowed (1 or 0), remaining (an
  8-byte little-endian IEEE double, so no fraction of a token is lost in transit),
  retry_after_us, full_in_us }.

  Each bucket is one string: two little-endian doubles (struct '<dd'), the tokens (fractional)
  and the Redis TIME in microseconds when they were true; read with one MGET, written with
  SET ... PX. A missing key is a full bucket. Time is Redis's own TIME (read once per call),
  never a client clock; a TIME earlier than the stored one counts as no time passed. A paying
  bucket expires exactly when it would be full again, plus the margin (an expired key and a
  full bucket are the same thing, so no state is lost early and no idle key lingers); a bucket
  that is full after paying is deleted. A bucket that does not pay is not written.
]]

local EPSILON = 1e-9
local MICROS = 1000000
local call, pack, unpack_state = redis.call, struct.pack, struct.unpack
local tonumber, ceil, min, max = tonumber, math.ceil, math.min, math.max

local function micros_to_gain(tokens, rate)
  if tokens <= 0 then
    return 0
  end
  return ceil(tokens * MICROS / rate)
end

local time = call('TIME')
local now = tonumber(time[1]) * MICROS + tonumber(time[2])
local margin_ms = tonumber(ARGV[1])
local nkeys = #KEYS

-- What each key holds now: read once, then kept up to date as groups pay.
local tokens_of, stamp_of = {}, {}
local values = call('MGET', unpack(KEYS))
for i = 1, nkeys do
  local key, value = KEYS[i], values[i]
  if value and tokens_of[key] == nil then
    tokens_of[key], stamp_of[key] = unpack_state('<dd', value)
  end
end

local reply, r = { now }, 1
local full_in_of = {}
-- Per take of the group being decided: its level, stamp and arguments.
local levels, stamps, caps, rates, costs, modes = {}, {}, {}, {}, {}, {}
local key_at, arg_at = 1, 3

for _ = 1, tonumber(ARGV[2]) do
  local count = tonumber(ARGV[arg_at])
  arg_at = arg_at + 1
  local enforced = true
  for j = 1, count do
    local key = KEYS[key_at + j - 1]
    local capacity, rate = tonumber(ARGV[arg_at]), tonumber(ARGV[arg_at + 1])
    local cost, mode = tonumber(ARGV[arg_at + 2]), ARGV[arg_at + 3]
    arg_at = arg_at + 4
    local tokens, ts = tokens_of[key], stamp_of[key]
    if tokens then
      local elapsed = now - ts
      if elapsed < 0 then
        elapsed = 0
      end
      tokens, ts = min(tokens + elapsed * rate / MICROS, capacity), max(ts, now)
    else
      tokens, ts = capacity, now
    end
    levels[j], stamps[j], caps[j], rates[j], costs[j], modes[j] = tokens, ts, capacity, rate, cost, mode
    if mode == '0' and tokens + EPSILON < cost then
      enforced = false
    end
  end
  for j = 1, count do
    local key = KEYS[key_at + j - 1]
    local tokens, capacity, rate, cost, mode = levels[j], caps[j], rates[j], costs[j], modes[j]
    if mode == '2' then
      local settled = min(tokens - cost, capacity)
      local full_in = micros_to_gain(capacity - settled, rate)
      tokens_of[key], stamp_of[key], full_in_of[key] = settled, stamps[j], full_in
      reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4] = 1, pack('<d', settled), 0, full_in
    elseif tokens + EPSILON >= cost then
      local remaining = max(tokens - cost, 0)
      local full_in = micros_to_gain(capacity - remaining, rate)
      if enforced or mode == '1' then
        tokens_of[key], stamp_of[key], full_in_of[key] = remaining, stamps[j], full_in
      end
      reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4] = 1, pack('<d', remaining), 0, full_in
    else
      reply[r + 1], reply[r + 2] = 0, pack('<d', tokens)
      reply[r + 3] = micros_to_gain(cost - tokens, rate)
      reply[r + 4] = micros_to_gain(capacity - tokens, rate)
    end
    r = r + 4
  end
  key_at = key_at + count
end

-- Writes in KEYS order, each key once, with its final state.
for i = 1, nkeys do
  local key = KEYS[i]
  local full_in = full_in_of[key]
  if full_in then
    full_in_of[key] = nil
    if full_in > 0 then
      call('PSETEX', key, ceil(full_in / 1000) + margin_ms, pack('<dd', tokens_of[key], stamp_of[key]))
    else
      call('DEL', key)
    end
  end
end
return reply
