--[[ traps.lua: the robots.txt trap's fleet-wide tables (src/robots/trap/fleet.rs is the
caller), as keyed digests only, never an address or a credential.

  KEYS[1]  bans: a hash, field -> entry "<until_ms> <field> <0|1> [source]". A field is a
           letter and a digest (32 hex): `a` an address, `n` an IPv6 /48, `i` a proven
           identity (its entry ends with the source). The 0|1 says whether it is IPv6.
  KEYS[2]  order: a sorted set, field scored by when it was (last) banned: the oldest first out
  KEYS[3]  expiry: a sorted set, field scored by the Unix ms its ban ends at
  KEYS[4]  v6: a set of the fields that are IPv6 (addresses and /48s), for the folding rule
  KEYS[5]  changes: a stream of the last changes (field `e`: an entry as in bans, or
           "f 0 <field>" for a ban pushed out), so readers read what changed
  KEYS[6]  readers: a sorted set, an address's digest (32 hex) scored by the Unix ms it last
           fetched /robots.txt
  KEYS[7]  path: the fleet's trap path (a string, kept forever)
  (all in one Cluster slot: the keys share the hash tag `{traps}`)

  ARGV[1]  the operation:
    reader   ARGV[2] digest, ARGV[3] now (ms), ARGV[4] cutoff (ms: reads before it are
             forgotten), ARGV[5] the most readers kept (the oldest read goes first). Returns 1.
    has_read ARGV[2] digest, ARGV[3] since (ms). Returns 1 when it read at `since` or later, else 0.
    ban      ARGV[2] the field, ARGV[3] its /48's field (an IPv6 address) or '', ARGV[4] until
             (ms), ARGV[5] now (ms), ARGV[6] the most bans kept, ARGV[7] fold_at, ARGV[8]
             the source of an identity or ''. The folding rule: an IPv6 address's ban covers
             its /48 instead once `fold_at` or more IPv6 bans are held. A ban held already
             lasts the longer of the two and counts as new. Returns { entry, stream id }.
    read     ARGV[2] the last stream id the reader knows ("0": none yet; "0-0": the stream was
             empty). Returns { 'delta', last id, entry, … } with the next (at most 500) changes,
             or { 'full', last id } when the changes after the known id are gone (trimmed, or
             the stream is not the one the reader knew: Redis lost it): the reader then reads
             the bans whole (HSCAN) and reads again from that id.
    path     ARGV[2] a fresh random path. Stores it unless a path is stored; returns the
             stored one.
  A ban first drops up to 100 bans that ended and a reader up to 100 reads past the cutoff,
  so no call touches more than that and the tables shrink by themselves (readers of the
  stream skip bans that ended anyway); past their bounds each drops at most 100 of the oldest.
]]

local bans, order, expiry, v6, changes, readers, path =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local KEEP_CHANGES = 10000
local READ_CHANGES = 500
local STEP = 100
local op = ARGV[1]

local function drop(field)
  redis.call('HDEL', bans, field)
  redis.call('ZREM', order, field)
  redis.call('ZREM', expiry, field)
  redis.call('SREM', v6, field)
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

if op == 'reader' then
  local digest, now, cutoff, max = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
  -- GT: a clock gone back never moves a read back (and a new reader is added all the same).
  redis.call('ZADD', readers, 'GT', now, digest)
  local old = redis.call('ZRANGEBYSCORE', readers, '-inf', '(' .. cutoff, 'LIMIT', 0, STEP)
  if #old > 0 then redis.call('ZREM', readers, unpack(old)) end
  local over = redis.call('ZCARD', readers) - max
  if over > 0 then redis.call('ZPOPMIN', readers, math.min(over, STEP)) end
  return 1
elseif op == 'has_read' then
  local at = redis.call('ZSCORE', readers, ARGV[2])
  if at and tonumber(at) >= tonumber(ARGV[3]) then return 1 end
  return 0
elseif op == 'ban' then
  local field, network, until_ms, now = ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
  local max, fold_at, source = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', expiry, '-inf', now, 'LIMIT', 0, STEP)) do
    drop(gone)
  end
  local is_v6 = network ~= ''
  if is_v6 and redis.call('SCARD', v6) >= fold_at then field = network end
  local held = redis.call('HGET', bans, field)
  if held then
    local held_until = tonumber(string.match(held, '^(%d+)'))
    if held_until and held_until > until_ms then until_ms = held_until end
  end
  local entry = until_ms .. ' ' .. field .. ' ' .. (is_v6 and '1' or '0')
  if source ~= '' then entry = entry .. ' ' .. source end
  redis.call('HSET', bans, field, entry)
  redis.call('ZADD', order, now, field)
  redis.call('ZADD', expiry, until_ms, field)
  if is_v6 then redis.call('SADD', v6, field) end
  local id = tell(entry)
  local over = math.min(redis.call('HLEN', bans) - max, STEP)
  for _ = 1, over do
    -- The two oldest: the ban just made may tie with the oldest and is never the one out.
    local two = redis.call('ZRANGE', order, 0, 1)
    local oldest = two[1]
    if oldest == field then oldest = two[2] end
    if not oldest then break end
    drop(oldest)
    id = tell('f 0 ' .. oldest)
  end
  return { entry, id }
elseif op == 'read' then
  local known = ARGV[2]
  local last = redis.call('XREVRANGE', changes, '+', '-', 'COUNT', 1)
  local last_id = '0-0'
  if #last > 0 then last_id = last[1][1] end
  if known == '0' then
    return { 'full', last_id }
  end
  -- The changes after the known one are gone when the oldest kept is newer; the stream is
  -- not the one the reader knew when it is empty or ends before the known id.
  local first = redis.call('XRANGE', changes, '-', '+', 'COUNT', 1)
  if known ~= '0-0' then
    if #first == 0 or before(known, first[1][1]) or before(last_id, known) then
      return { 'full', last_id }
    end
  end
  local out = { 'delta', known }
  local next_ones = redis.call('XRANGE', changes, '(' .. known, '+', 'COUNT', READ_CHANGES)
  for _, item in ipairs(next_ones) do
    out[2] = item[1]
    out[#out + 1] = item[2][2]
  end
  return out
elseif op == 'path' then
  redis.call('SET', path, ARGV[2], 'NX')
  return redis.call('GET', path)
end
return redis.error_reply('traps.lua: unknown operation ' .. tostring(op))
