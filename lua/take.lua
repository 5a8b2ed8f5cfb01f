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
  then, for each group: the number of its buckets, and for each bucket six values:
               capacity (tokens > 0), refill rate (tokens per second > 0, may be fractional),
               cost (tokens; > 0 but for a settlement or a return), mode (0 enforcing,
               1 shadow, 2 settle, 3 lease, 4 return), overdraft (tokens >= 0 the bucket may go
               below zero to pay now: prepayment; for a return, the lease's size), block
               (microseconds >= 0 a refusal blocks the bucket for, 0 for none; for a return,
               the lease window the lease was lent in)

  A take is allowed when the bucket holds `cost`, or when it can prepay it within the
  overdraft (the bucket goes into debt and the take waits until its tokens would have been
  there). While a block stands every enforcing or shadow take is refused; a refusal for want of
  tokens starts a block when `block` > 0 (a standing block is never extended). A settlement
  changes its bucket by `cost` (negative: a refund) and is never refused: a charge may leave the
  bucket in debt, below zero (at most ten years of refill), which refill and later requests pay
  off; a refund never fills it past capacity.

  Leases (bucket/leased.rs): a lease pays `cost` if the bucket holds it, like a shadow take, and
  counts it as out on lease in this lease window (Redis TIME ÷ 20 s); a bucket refills only up
  to its capacity minus what is out, window by window, and forgets what a window lent two
  windows later. A return takes its lease's size off its window's count and puts the unspent
  tokens (minus `cost`) back, up to capacity minus what is still out; a return whose window is
  forgotten changes nothing. A refund, too, fills only up to capacity minus what is out.

  Returns { now_us, then for each bucket in KEYS order: allowed (1 or 0), remaining (an
  8-byte little-endian IEEE double, so no fraction of a token is lost in transit),
  retry_after_us (refused: until the take would be allowed; allowed: how long a prepaid take
  waits, else 0), full_in_us, penalty (0 none, 1 this refusal started a block, 2 a standing
  block refused it) }.

  Each bucket is one string: three little-endian doubles (struct '<ddd'), the tokens
  (fractional, below zero in debt), the Redis TIME in microseconds when they were true, and the
  time a block ends (0 for none), then, while tokens are out on lease, three more: the lease
  window, and what this window and the one before lent; a two-double string is read too. Read with one
  MGET, written with SET ... PX. A missing key is a full, unblocked bucket. Time is Redis's own
  TIME (read once per call), never a client clock; a TIME earlier than the stored one counts as
  no time passed. A written bucket expires exactly when it would be full again and unblocked,
  plus the margin (an expired key and a full bucket are the same thing, so no state is lost
  early and no idle key lingers), and while tokens are out on lease, for as long again as they
  stay counted; a bucket that is full and unblocked after paying is deleted.
  A bucket that neither pays nor starts a block is not written.
]]

local EPSILON = 1e-9
local MICROS = 1000000
local WINDOW = 20000000 -- LEASE_WINDOW_US

-- The lease window of instant t (exact, whatever the division rounds to).
local function window_of(t)
  local w = math.floor(t / WINDOW)
  if (w + 1) * WINDOW <= t then
    w = w + 1
  elseif w * WINDOW > t then
    w = w - 1
  end
  return w
end

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
  local value = values[i]
  if value and stored[KEYS[i]] == nil then
    if #value == 16 then
      local tokens, ts = struct.unpack('<dd', value)
      stored[KEYS[i]] = { tokens, ts, 0, window_of(ts), 0, 0 }
    elseif #value == 24 then
      local tokens, ts, blocked = struct.unpack('<ddd', value)
      stored[KEYS[i]] = { tokens, ts, blocked, window_of(ts), 0, 0 }
    else
      stored[KEYS[i]] = { struct.unpack('<dddddd', value) }
    end
  end
end

local reply = { now }
local written = {}
local key_at, arg_at = 1, 3

-- Lent sums { window, current, previous } seen from window w (not before their own).
local function rolled(lent, w)
  local behind = w - lent[1]
  if behind <= 0 then
    return lent
  elseif behind == 1 then
    return { w, 0, lent[2] }
  end
  return { w, 0, 0 }
end

-- BucketSpec::refill_leased: tokens, time, block end and lent sums at now.
local function level(key, capacity, rate)
  local state = stored[key]
  if not state then
    return capacity, now, 0, { window_of(now), 0, 0 }
  end
  local at = state[2]
  local t = math.max(now, at)
  local tokens = state[1]
  local lent = { state[4], state[5], state[6] }
  while lent[2] + lent[3] > 0 and (lent[1] + 1) * WINDOW <= t do
    local boundary = (lent[1] + 1) * WINDOW
    tokens = math.min(tokens + (boundary - at) * rate / MICROS, capacity - (lent[2] + lent[3]))
    at = boundary
    lent = rolled(lent, lent[1] + 1)
  end
  tokens = math.min(tokens + (t - at) * rate / MICROS, capacity - (lent[2] + lent[3]))
  return tokens, t, state[3], rolled(lent, window_of(t))
end

-- BucketSpec::take_back: the lent sums and tokens after a return.
local function take_back(tokens, lent, capacity, unspent, leased, window)
  local after = { lent[1], lent[2], lent[3] }
  if window == lent[1] then
    after[2] = math.max(lent[2] - leased, 0)
  elseif window + 1 == lent[1] then
    after[3] = math.max(lent[3] - leased, 0)
  else
    return tokens, after
  end
  return math.min(tokens + unspent, capacity - (after[2] + after[3])), after
end

-- BucketSpec::assess: allowed, remaining, retry_after_us, penalty.
local function assess(tokens, blocked, capacity, rate, cost, overdraft, block)
  local token_wait = 0
  if not (tokens + overdraft + EPSILON >= cost) then
    token_wait = micros_to_gain(cost - overdraft - tokens, rate)
  end
  if now < blocked then
    return false, tokens, math.max(blocked - now, token_wait), 2
  end
  if token_wait > 0 then
    if block == 0 then
      return false, tokens, token_wait, 0
    end
    return false, tokens, math.max(token_wait, block), 1
  end
  if tokens + EPSILON >= cost then
    return true, math.max(tokens - cost, 0), 0, 0
  end
  return true, tokens - cost, micros_to_gain(cost - tokens, rate), 0
end

local function answer(allowed, remaining, retry_after, capacity, rate, penalty)
  table.insert(reply, allowed and 1 or 0)
  table.insert(reply, struct.pack('<d', remaining))
  table.insert(reply, retry_after)
  table.insert(reply, micros_to_gain(capacity - remaining, rate))
  table.insert(reply, penalty)
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
    local overdraft = tonumber(ARGV[arg_at + 4])
    local block = tonumber(ARGV[arg_at + 5])
    arg_at = arg_at + 6
    local tokens, ts, blocked, lent = level(key, capacity, rate)
    local take = { key = key, capacity = capacity, rate = rate, cost = cost, mode = mode,
      block = block, tokens = tokens, ts = ts, blocked = blocked, lent = lent,
      overdraft = overdraft }
    if mode ~= '2' and mode ~= '4' then
      take.allowed, take.remaining, take.retry_after, take.penalty =
        assess(tokens, blocked, capacity, rate, cost, overdraft, block)
      if mode == '0' and not take.allowed then
        enforced = false
      end
    end
    takes[j] = take
  end
  for j = 1, count do
    local t = takes[j]
    local lent = t.lent
    if t.mode == '2' then
      -- In debt by at most ten years of refill (MAX_DEBT_SECONDS in bucket.rs).
      local settled = math.max(math.min(t.tokens - t.cost, t.capacity), -(t.rate * 316224000))
      settled = math.min(settled, t.capacity - (lent[2] + lent[3]))
      stored[t.key] = { settled, t.ts, t.blocked, lent[1], lent[2], lent[3] }
      written[t.key] = { t.capacity, t.rate }
      answer(true, settled, 0, t.capacity, t.rate, 0)
    elseif t.mode == '4' then
      -- overdraft carries the lease's size, block its window.
      local tokens, after = take_back(t.tokens, lent, t.capacity, -t.cost, t.overdraft, t.block)
      stored[t.key] = { tokens, t.ts, t.blocked, after[1], after[2], after[3] }
      written[t.key] = { t.capacity, t.rate }
      answer(true, tokens, 0, t.capacity, t.rate, 0)
    else
      if t.allowed and (enforced or t.mode == '1' or t.mode == '3') then
        local lending = 0
        if t.mode == '3' then
          lending = t.cost
        end
        stored[t.key] = { t.remaining, t.ts, t.blocked, lent[1], lent[2] + lending, lent[3] }
        written[t.key] = { t.capacity, t.rate }
      elseif t.penalty == 1 then
        stored[t.key] = { t.tokens, t.ts, now + t.block, lent[1], lent[2], lent[3] }
        written[t.key] = { t.capacity, t.rate }
      end
      answer(t.allowed, t.remaining, t.retry_after, t.capacity, t.rate, t.penalty)
    end
  end
  key_at = key_at + count
end

-- Writes in KEYS order, each key once, with its final state, kept as long as
-- BucketSpec::keep_for_us says (for the shape of the take that wrote it last).
for i = 1, #KEYS do
  local key = KEYS[i]
  local shape = written[key]
  if shape then
    written[key] = nil
    local state = stored[key]
    local capacity, rate = shape[1], shape[2]
    local keep = micros_to_gain(capacity - state[1], rate)
    local block_left = state[3] - now
    if block_left > keep then
      keep = block_left
    end
    local out = state[5] + state[6]
    if out > 0 then
      keep = keep + math.max((state[4] + 2) * WINDOW - now, 0)
    end
    if keep > 0 and out > 0 then
      redis.call('SET', key, struct.pack('<dddddd', state[1], state[2], state[3], state[4],
        state[5], state[6]), 'PX', math.ceil(keep / 1000) + margin_ms)
    elseif keep > 0 then
      redis.call('SET', key, struct.pack('<ddd', state[1], state[2], state[3]),
        'PX', math.ceil(keep / 1000) + margin_ms)
    else
      redis.call('DEL', key)
    end
  end
end
return reply
