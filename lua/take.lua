--[[ take.lua: decide many independent groups of bucket takes in one call, on Redis's clock.
ANCHOR: contract
Each group takes `cost` tokens from every enforcing bucket in it, all or nothing, and from each
of its shadow buckets on its own. Groups are decided in order; a later group sees what an
earlier one took (two requests of one caller may share a call).

Contract (crates/limiter/src/bucket.rs is the specification; this script mirrors it operation for
operation, so both give the same answers for the same times and costs):

  KEYS         every bucket of every group, group after group: one identity under one policy,
               `prefix:{identity}:policy`. Every key of a call lives in one Redis Cluster slot.
  ARGV[1]      margin added to each key's expiry, in milliseconds (integer >= 0)
  ARGV[2]      the call's numbers in one binary string, little-endian (read with struct.unpack,
               so no number is parsed from decimal text, and none loses a bit in transit):
                 u32 the number of shapes, then for each shape four doubles: capacity
                   (tokens > 0), refill rate (tokens per second > 0, may be fractional; 0 for
                   a quota), overdraft (tokens >= 0 the bucket may go below zero to pay now:
                   prepayment), block (microseconds >= 0 a refusal blocks the bucket for, 0
                   for none); a quota's shape has four more: its period boundaries in Unix
                   microseconds as the instance's clock saw them (the previous period's
                   start, the current one's start and end, the next one's end);
                 u32 the number of groups, then for each group a u32, the number of its
                   buckets, and for each bucket: u32 its shape (1-based), u8 its mode (0
                   ENFORCE, 1 SHADOW, 2 SETTLE, 3 LEASE, 4 RETURN), a double, its cost
                   (tokens; > 0 but for a settlement or a return), and for a return two more
                   doubles: the lease's size and the lease window it was lent in.
                 Settlements and returns ignore their shape's overdraft and block.

  A take is allowed when the bucket holds `cost`, or when it can prepay it within the
  overdraft (the bucket goes into debt and the take waits until its tokens would have been
  there). While a block stands every enforcing or shadow take is refused; a refusal for want of
  tokens starts a block when `block` > 0 (a standing block is never extended). A settlement
  changes its bucket by `cost` (negative: a refund) and is never refused: a charge may leave the
  bucket in debt, below zero (at most ten years of refill), which refill and later requests pay
  off; a refund never fills it past capacity.

  Quotas (bucket.rs, bucket/periods.rs): a quota refills all at once when its period ends.
  The script picks, with TIME, the period of the three its boundaries describe that holds now;
  a stored state older than that period's start is a full bucket (no count leaks from one
  period into the next). Waits (retry-after, time to full) are the time to the period's end.
  A settlement applies only while TIME is in the middle period (the one its request was
  admitted in); a quota may go into debt by at most 2^40 tokens. A quota's key expires at
  an absolute time (PEXPIREAT): its period's end (or its block's end, if later) plus the
  margin.
  Quotas are never lent.

  Leases (bucket/leased.rs): a lease pays `cost` if the bucket holds it, like a shadow take, and
  counts it as out on lease in this lease window (Redis TIME ÷ 20 s); a bucket refills only up
  to its capacity minus what is out, window by window, and forgets what a window lent two
  windows later. A return takes its lease's size off its window's count and puts the unspent
  tokens (minus `cost`) back, up to capacity minus what is still out; a return whose window is
  forgotten changes nothing. A refund, too, fills only up to capacity minus what is out.

  Returns { now_us, answers }: answers holds 17 bytes per bucket, in KEYS order: u8 allowed
  (1 or 0) + 2 x penalty (0 none, 1 this refusal started a block, 2 a standing block refused
  it), then two doubles: remaining (so no fraction of a token is lost in transit) and
  retry_after_us (refused: until the take would be allowed; allowed: how long a prepaid take
  waits, else 0; always a whole number). How long until the bucket is full again follows from
  remaining (BucketSpec::micros_to_gain), so it is not sent.

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
ANCHOR_END: contract
]]

-- Each number shared with Rust is named once here; crates/limiter/tests/lua_constants.rs
-- reads these lines and checks each against its Rust twin.
local EPSILON = 1e-9 -- bucket::EPSILON
local MICROS = 1000000 -- bucket::MICROS_PER_SECOND
local WINDOW = 20000000 -- bucket::LEASE_WINDOW_US
local MAX_DEBT_SECONDS = 316224000 -- bucket::MAX_DEBT_SECONDS: ten years of refill
local MAX_QUOTA_DEBT = 1099511627776 -- bucket::MAX_CAPACITY: 2^40 tokens
-- A shape's rate of 0 marks a quota (Refill::Calendar); any other rate refills continuously.
local CALENDAR = 0
-- The modes of a take (take::ModeCode).
local ENFORCE, SHADOW, SETTLE, LEASE, RETURN = 0, 1, 2, 3, 4
-- A penalty's part in an answer (bucket::Penalty::wire).
local NO_PENALTY, PENALTY_STARTED, PENALTY_STANDING = 0, 1, 2

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

local time = redis.call('TIME')
local now = tonumber(time[1]) * MICROS + tonumber(time[2])
local now_window = window_of(now)
local margin_ms = tonumber(ARGV[1])

-- The shapes: capacity, rate, overdraft and block of each; for a quota (rate CALENDAR) the start
-- and end of the period holding now (Periods::at), and whether settlements apply in it
-- (Periods::settles_at).
local wire = ARGV[2]
local caps, rates, overdrafts, blocks = {}, {}, {}, {}
local starts, ends, settles -- made only when a quota is among the shapes
local shapes, at = struct.unpack('<I', wire)
for s = 1, shapes do
  caps[s], rates[s], overdrafts[s], blocks[s], at = struct.unpack('<dddd', wire, at)
  if rates[s] == CALENDAR then
    if not starts then
      starts, ends, settles = {}, {}, {}
    end
    local before, start, stop, after
    before, start, stop, after, at = struct.unpack('<dddd', wire, at)
    if now < start then
      starts[s], ends[s] = before, start
    elseif now < stop then
      starts[s], ends[s] = start, stop
    else
      starts[s], ends[s] = stop, after
    end
    settles[s] = starts[s] == start
  end
end

-- BucketSpec::micros_to_gain: by the rate, or for a quota (rate CALENDAR) until its period
-- ends (at least 1).
local function micros_to_gain(tokens, rate, shape)
  if tokens <= 0 then
    return 0
  end
  if rate == CALENDAR then
    return math.max(ends[shape] - now, 1)
  end
  return math.ceil(tokens * MICROS / rate)
end

-- What each key holds now, { tokens, time, block end, window, lent now, lent before }: read
-- once, then kept up to date as groups pay.
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

-- Lent sums (window, current, previous) seen from window w (not before their own).
local function rolled(lw, lc, lp, w)
  local behind = w - lw
  if behind <= 0 then
    return lw, lc, lp
  elseif behind == 1 then
    return w, 0, lc
  end
  return w, 0, 0
end

-- BucketSpec::refill_leased: tokens, time, block end and lent sums at now.
local function level(state, capacity, rate, shape)
  if not state then
    return capacity, now, 0, now_window, 0, 0
  end
  if rate == CALENDAR then
    -- BucketSpec::refill (a quota): a state from before this period is a full quota.
    local tokens = math.min(state[1], capacity)
    if state[2] < starts[shape] then
      tokens = capacity
    end
    return tokens, math.max(now, state[2]), state[3], now_window, 0, 0
  end
  local at = state[2]
  local t = math.max(now, at)
  local tokens = state[1]
  local lw, lc, lp = state[4], state[5], state[6]
  while lc + lp > 0 and (lw + 1) * WINDOW <= t do
    local boundary = (lw + 1) * WINDOW
    tokens = math.min(tokens + (boundary - at) * rate / MICROS, capacity - (lc + lp))
    at = boundary
    lw, lc, lp = rolled(lw, lc, lp, lw + 1)
  end
  tokens = math.min(tokens + (t - at) * rate / MICROS, capacity - (lc + lp))
  if t ~= now then
    lw, lc, lp = rolled(lw, lc, lp, window_of(t))
  else
    lw, lc, lp = rolled(lw, lc, lp, now_window)
  end
  return tokens, t, state[3], lw, lc, lp
end

-- BucketSpec::assess: allowed, remaining, retry_after_us, penalty.
local function assess(tokens, blocked, rate, cost, overdraft, block, shape)
  local token_wait = 0
  if not (tokens + overdraft + EPSILON >= cost) then
    token_wait = micros_to_gain(cost - overdraft - tokens, rate, shape)
  end
  if now < blocked then
    return false, tokens, math.max(blocked - now, token_wait), PENALTY_STANDING
  end
  if token_wait > 0 then
    if block == 0 then
      return false, tokens, token_wait, NO_PENALTY
    end
    return false, tokens, math.max(token_wait, block), PENALTY_STARTED
  end
  if tokens + EPSILON >= cost then
    return true, math.max(tokens - cost, 0), 0, NO_PENALTY
  end
  return true, tokens - cost, micros_to_gain(cost - tokens, rate, shape), NO_PENALTY
end

-- Stores a bucket's new state and marks it to be written with its shape.
local written = {}
local function keep(key, shape, tokens, ts, blocked, lw, lc, lp)
  stored[key] = { tokens, ts, blocked, lw, lc, lp }
  written[key] = shape
end

-- The answers, 17 bytes per bucket: allowed + 2 x penalty, remaining, retry_after_us.
local answers = {}
local function answer(allowed, remaining, retry_after, penalty)
  answers[#answers + 1] = struct.pack('<Bdd', (allowed and 1 or 0) + 2 * penalty, remaining,
    retry_after)
end

-- One group's buckets, as read and assessed (reused from group to group).
local b_key, b_shape, b_cost, b_mode, b_leased, b_window = {}, {}, {}, {}, {}, {}
local b_tokens, b_ts, b_blocked, b_lw, b_lc, b_lp = {}, {}, {}, {}, {}, {}
local b_allowed, b_remaining, b_retry, b_penalty = {}, {}, {}, {}

local groups
groups, at = struct.unpack('<I', wire, at)
local key_at = 1
for _ = 1, groups do
  local count
  count, at = struct.unpack('<I', wire, at)
  local enforced = true
  for j = 1, count do
    local key = KEYS[key_at]
    key_at = key_at + 1
    local shape, mode, cost
    shape, mode, cost, at = struct.unpack('<IBd', wire, at)
    if mode == RETURN then
      b_leased[j], b_window[j], at = struct.unpack('<dd', wire, at)
    end
    local capacity, rate = caps[shape], rates[shape]
    local tokens, ts, blocked, lw, lc, lp = level(stored[key], capacity, rate, shape)
    b_key[j], b_shape[j], b_cost[j], b_mode[j] = key, shape, cost, mode
    b_tokens[j], b_ts[j], b_blocked[j], b_lw[j], b_lc[j], b_lp[j] = tokens, ts, blocked, lw, lc, lp
    if mode ~= SETTLE and mode ~= RETURN then
      local allowed, remaining, retry, penalty =
        assess(tokens, blocked, rate, cost, overdrafts[shape], blocks[shape], shape)
      b_allowed[j], b_remaining[j], b_retry[j], b_penalty[j] = allowed, remaining, retry, penalty
      if mode == ENFORCE and not allowed then
        enforced = false
      end
    end
  end
  for j = 1, count do
    local key, shape, mode = b_key[j], b_shape[j], b_mode[j]
    local capacity, rate = caps[shape], rates[shape]
    local tokens, ts, blocked = b_tokens[j], b_ts[j], b_blocked[j]
    local lw, lc, lp = b_lw[j], b_lc[j], b_lp[j]
    if mode == SETTLE then
      -- In debt by at most ten years of refill, a quota by at most 2^40 tokens and only in
      -- the period its request was admitted in.
      local settled = tokens
      if rate ~= CALENDAR then
        settled = math.max(math.min(tokens - b_cost[j], capacity), -(rate * MAX_DEBT_SECONDS))
      elseif settles[shape] then
        settled = math.max(math.min(tokens - b_cost[j], capacity), -MAX_QUOTA_DEBT)
      end
      settled = math.min(settled, capacity - (lc + lp))
      keep(key, shape, settled, ts, blocked, lw, lc, lp)
      answer(true, settled, 0, NO_PENALTY)
    elseif mode == RETURN then
      -- BucketSpec::take_back: the lease's size off its window's count, its unspent tokens
      -- (minus the cost) back in.
      local window, leased = b_window[j], b_leased[j]
      if window == lw then
        lc = math.max(lc - leased, 0)
        tokens = math.min(tokens - b_cost[j], capacity - (lc + lp))
      elseif window + 1 == lw then
        lp = math.max(lp - leased, 0)
        tokens = math.min(tokens - b_cost[j], capacity - (lc + lp))
      end
      keep(key, shape, tokens, ts, blocked, lw, lc, lp)
      answer(true, tokens, 0, NO_PENALTY)
    else
      local allowed, penalty = b_allowed[j], b_penalty[j]
      if allowed and (enforced or mode == SHADOW or mode == LEASE) then
        if mode == LEASE then
          lc = lc + b_cost[j]
        end
        keep(key, shape, b_remaining[j], ts, blocked, lw, lc, lp)
      elseif penalty == PENALTY_STARTED then
        keep(key, shape, tokens, ts, now + blocks[shape], lw, lc, lp)
      end
      answer(allowed, b_remaining[j], b_retry[j], penalty)
    end
  end
end

-- Writes in KEYS order, each key once, with its final state, kept as long as
-- BucketSpec::keep_for_us says (for the shape of the take that wrote it last).
for i = 1, #KEYS do
  local key = KEYS[i]
  local shape = written[key]
  if shape then
    written[key] = nil
    local state = stored[key]
    local rate = rates[shape]
    local keep_us = micros_to_gain(caps[shape] - state[1], rate, shape)
    local block_left = state[3] - now
    if block_left > keep_us then
      keep_us = block_left
    end
    local out = state[5] + state[6]
    if out > 0 then
      keep_us = keep_us + math.max((state[4] + 2) * WINDOW - now, 0)
    end
    if keep_us > 0 and rate == CALENDAR then
      -- SET then PEXPIREAT, not SET ... PXAT: the same absolute expiry on Redis before 6.2.
      redis.call('SET', key, struct.pack('<ddd', state[1], state[2], state[3]))
      redis.call('PEXPIREAT', key, math.ceil((now + keep_us) / 1000) + margin_ms)
    elseif keep_us > 0 and out > 0 then
      redis.call('SET', key, struct.pack('<dddddd', state[1], state[2], state[3], state[4],
        state[5], state[6]), 'PX', math.ceil(keep_us / 1000) + margin_ms)
    elseif keep_us > 0 then
      redis.call('SET', key, struct.pack('<ddd', state[1], state[2], state[3]),
        'PX', math.ceil(keep_us / 1000) + margin_ms)
    else
      redis.call('DEL', key)
    end
  end
end
return { now, table.concat(answers) }
