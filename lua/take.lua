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

local function micros_to_gain(tokens, rate)
  if tokens <= 0 then
    return 0
  end
  return math.ceil(tokens * MICROS / rate)
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * MICROS + tonumber(time[2])
local margin_ms = tonumber(ARGV[1])

-- What each key holds now: read once, then kept up to date as groups pay.
local stored = {}
local values = redis.call('MGET', unpack(KEYS))
for i = 1, #KEYS do
  if values[i] and stored[KEYS[i]] == nil then
    local tokens, ts = struct.unpack('<dd', values[i])
    stored[KEYS[i]] = { tokens, ts }
  end
end

local reply = { now }
local written = {}
local key_at, arg_at = 1, 3

local function level(key, capacity, rate)
  local state = stored[key]
  if not state then
    return capacity, now
  end
  local elapsed = now - state[2]
  if elapsed < 0 then
    elapsed = 0
  end
  return math.min(state[1] + elapsed * rate / MICROS, capacity), math.max(state[2], now)
end

for _ = 1, tonumber(ARGV[2]) do
  local count = tonumber(ARGV[arg_at])
  arg_at = arg_at + 1
  local takes, enforced = {}, true
  for j = 1, count do
    local key = KEYS[key_at + j - 1]
    local capacity = tonumber(ARGV[arg_at])
    local rate = tonumber(ARGV[arg_at + 1])
    local cost = tonumber(ARGV[arg_at + 2])
    local mode = ARGV[arg_at + 3]
    arg_at = arg_at + 4
    local tokens, ts = level(key, capacity, rate)
    takes[j] = { key, capacity, rate, cost, mode, tokens, ts }
    if tokens + EPSILON < cost and mode == '0' then
      enforced = false
    end
  end
  for j = 1, count do
    local key, capacity, rate, cost, mode, tokens, ts = unpack(takes[j])
    local shadow = mode == '1'
    if mode == '2' then
      local settled = math.min(tokens - cost, capacity)
      local full_in = micros_to_gain(capacity - settled, rate)
      stored[key] = { settled, ts }
      written[key] = full_in
      table.insert(reply, 1)
      table.insert(reply, struct.pack('<d', settled))
      table.insert(reply, 0)
      table.insert(reply, full_in)
    elseif tokens + EPSILON >= cost then
      local remaining = math.max(tokens - cost, 0)
      local full_in = micros_to_gain(capacity - remaining, rate)
      if enforced or shadow then
        stored[key] = { remaining, ts }
        written[key] = full_in
      end
      table.insert(reply, 1)
      table.insert(reply, struct.pack('<d', remaining))
      table.insert(reply, 0)
      table.insert(reply, full_in)
    else
      table.insert(reply, 0)
      table.insert(reply, struct.pack('<d', tokens))
      table.insert(reply, micros_to_gain(cost - tokens, rate))
      table.insert(reply, micros_to_gain(capacity - tokens, rate))
    end
  end
  key_at = key_at + count
end

-- Writes in KEYS order, each key once, with its final state.
for i = 1, #KEYS do
  local key = KEYS[i]
  local full_in = written[key]
  if full_in then
    written[key] = nil
    if full_in > 0 then
      local state = stored[key]
      redis.call('SET', key, struct.pack('<dd', state[1], state[2]),
        'PX', math.ceil(full_in / 1000) + margin_ms)
    else
      redis.call('DEL', key)
    end
  end
end
return reply
