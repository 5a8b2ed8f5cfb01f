--[[ proofs.lua: the fleet's proven and revoked credentials (src/proof/fleet.rs is the caller),
as keyed digests only, never a raw value.

  KEYS[1]  states: a hash, digest (32 hex) -> "<p|r> <until_ms> <digest> <source>" (p: proven,
           r: revoked; the value repeats the digest so a reader of values alone has it)
  KEYS[2]  expiry: a sorted set, digest scored by the Unix milliseconds it ends at
  KEYS[3]  changes: a stream of the last changes (fields `e`, the entry as in states, or
           "f 0 <digest> <source>" for a forgotten one), so readers read what changed
  (all in one Cluster slot: the keys share the hash tag `{proofs}`)

  ARGV[1]  the operation:
    set     ARGV[2] digest, ARGV[3] `p` or `r`, ARGV[4] milliseconds to live, ARGV[5] source.
            Returns the change's stream id.
    forget  ARGV[2] digest, ARGV[3] source. Returns { 1 or 0 (it was there), stream id }.
    read    ARGV[2] the last stream id the reader knows ("0": none yet; "0-0": the stream was
            empty). Returns { 'delta', last
            id, entry, … } with the next (at most 500) changes, or { 'full', last id } when
            changes after the known id were trimmed away: the reader then reads the states
            whole (HSCAN) and reads again from that id.
    get     ARGV[2…] digests. Returns each one's entry, or false.
  Every set first drops up to 100 entries whose time has come, so no call touches more than
  that many and expired entries disappear by themselves (readers skip expired ones anyway).
]]

local states, expiry, changes = KEYS[1], KEYS[2], KEYS[3]
local KEEP_CHANGES = 10000
local READ_CHANGES = 500
local op = ARGV[1]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function prune(now)
  local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', now, 'LIMIT', 0, 100)
  for _, digest in ipairs(gone) do
    redis.call('HDEL', states, digest)
    redis.call('ZREM', expiry, digest)
  end
end

local function tell(entry)
  return redis.call('XADD', changes, 'MAXLEN', '~', KEEP_CHANGES, '*', 'e', entry)
end

-- Whether stream id a comes before b ("ms-seq").
local function before(a, b)
  local am, as = string.match(a, '^(%d+)-?(%d*)$')
  local bm, bs = string.match(b, '^(%d+)-?(%d*)$')
  am, bm = tonumber(am), tonumber(bm)
  if am ~= bm then return am < bm end
  return (tonumber(as) or 0) < (tonumber(bs) or 0)
end

if op == 'set' then
  local digest, state, ttl, source = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
  local now = now_ms()
  prune(now)
  local until_ms = now + ttl
  local entry = state .. ' ' .. until_ms .. ' ' .. digest .. ' ' .. source
  redis.call('HSET', states, digest, entry)
  redis.call('ZADD', expiry, until_ms, digest)
  return tell(entry)
elseif op == 'forget' then
  local digest, source = ARGV[2], ARGV[3]
  local was = redis.call('HDEL', states, digest)
  redis.call('ZREM', expiry, digest)
  return { was, tell('f 0 ' .. digest .. ' ' .. source) }
elseif op == 'read' then
  local known = ARGV[2]
  local last = redis.call('XREVRANGE', changes, '+', '-', 'COUNT', 1)
  local last_id = '0'
  if #last > 0 then last_id = last[1][1] else last_id = '0-0' end
  if known == '0' then
    return { 'full', last_id }
  end
  -- Changes after the known one were trimmed away when the oldest kept is newer ("0-0": the
  -- reader found the stream empty, so everything kept is news to it).
  local first = redis.call('XRANGE', changes, '-', '+', 'COUNT', 1)
  if known ~= '0-0' and #first > 0 and before(known, first[1][1]) then
    return { 'full', last_id }
  end
  local out = { 'delta', known }
  local next_ones = redis.call('XRANGE', changes, '(' .. known, '+', 'COUNT', READ_CHANGES)
  for _, item in ipairs(next_ones) do
    out[2] = item[1]
    out[#out + 1] = item[2][2]
  end
  return out
elseif op == 'get' then
  local out = {}
  for i = 2, #ARGV do
    out[#out + 1] = redis.call('HGET', states, ARGV[i])
  end
  return out
end
return redis.error_reply('proofs.lua: unknown operation ' .. tostring(op))
