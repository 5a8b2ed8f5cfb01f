--[[ control.lua: the fleet's bans and overrides, one state in Redis (src/control/redis.rs is the
caller; src/control/memory/ keeps the same rules in one process).

  KEYS[1]  bans: a hash, id -> the ban as JSON
  KEYS[2]  overrides: a hash, id -> the override as JSON
  KEYS[3]  expiry: a sorted set, id scored by the Unix milliseconds it ends at (no entry for
           an entry that never ends)
  KEYS[4]  override index: a hash, "policy caller" -> the id of that caller's override
  KEYS[5]  the last id given (INCR)
  KEYS[6]  the state's version, raised once by every call that changes something (first set
           from the clock, in microseconds, so a state made again never repeats an earlier
           state's version; absent, 0, until the first change)
  KEYS[7]  changes: a stream of the last changes, one entry per version (fields `v`, the
           version, and `c`, the change as JSON { a = added entries' JSON, g = ids gone,
           r = caller digests reset }), so readers read what changed, not the whole state
  KEYS[8]  ban index: a hash, the ban's target ("cidr NET" or "caller SOURCE DIGEST") -> its id
  KEYS[9]  this call's idempotency key (`…:idem:KEY`, a string with a day to live), or any
           unused key of the slot when the call has none
  (all in one Cluster slot: the keys share the hash tag `{control}`)

  ARGV[1]  the operation:
    add      ARGV[2] `ban` or `override`, ARGV[3] the list's bound, ARGV[4] milliseconds to
             live (0: never ends), ARGV[5] the entry as JSON, ARGV[6] 1 when KEYS[9] is the
             call's idempotency key. The entry gets the next id, `created_at_ms` and
             `expires_at_ms` (Redis's clock); an override replaces the one on the same policy
             and caller. Returns { 'created', id, now_ms, json }; { 'existing', id, now_ms,
             json } when a ban already refuses the same target, or the key made this entry
             before; { 'replayed', id, now_ms } when the key's entry is gone since; { 'full',
             0, now_ms } when the list holds its bound (nothing changed).
    delete   ARGV[2] `ban` or `override`, ARGV[3] the id, ARGV[4] 1 when KEYS[9] is the call's
             key. Returns { 1 or 0 (it was there, or the key removed it before), now_ms }.
    reset    ARGV[2] a caller digest: its buckets were reset. Returns { 1, now_ms }.
    lookup   whether KEYS[9] made a change: { id or 0, now_ms }.
    read     ARGV[2] the version the reader knows (0: none). Returns { version, now_ms } when
             that is the version; { v, now_ms, 'delta', change, … } with the next (at most
             500) changes when the stream holds the one after the known version, `v` being the
             version they lead to (the reader reads again while it is not the latest); else
             { version, now_ms, 'full' }: the reader then reads both hashes with HSCAN and
             reads again from that version.
  Every operation first drops up to 100 entries whose time has come (a change of their own),
  so expired entries disappear by themselves; no call touches more than that many entries.
]]

local bans, overrides, expiry, index, seq, version, changes, ban_index, idem =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local KEEP_CHANGES = 10000
local IDEM_TTL_MS = 86400000
local READ_CHANGES = 500

local function slot_of(e)
  return e.policy .. ' ' .. e.caller
end

local function target_of(e)
  if e.scope == 'cidr' then
    return 'cidr ' .. e.value
  end
  return 'caller ' .. e.source .. ' ' .. e.caller
end

-- Removes entry `id` (a string) wherever it is; whether it was there.
local function drop(id)
  local o = redis.call('HGET', overrides, id)
  if o then
    local slot = slot_of(cjson.decode(o))
    if redis.call('HGET', index, slot) == id then
      redis.call('HDEL', index, slot)
    end
  end
  local b = redis.call('HGET', bans, id)
  if b then
    local target = target_of(cjson.decode(b))
    if redis.call('HGET', ban_index, target) == id then
      redis.call('HDEL', ban_index, target)
    end
  end
  redis.call('ZREM', expiry, id)
  return redis.call('HDEL', bans, id) + redis.call('HDEL', overrides, id) > 0
end

-- Raises the version once and appends `change` to the stream under it.
local function changed(change)
  if redis.call('EXISTS', version) == 0 then
    redis.call('SET', version, tonumber(time[1]) * 1000000 + tonumber(time[2]))
  end
  local v = redis.call('INCR', version)
  -- The entry's id is its version, so a reader seeks straight to the change after its own.
  -- Should the stream hold a later id (its version key lost alone), readers find a gap and
  -- read the whole state: pcall keeps the change made.
  redis.pcall('XADD', changes, 'MAXLEN', '~', KEEP_CHANGES, string.format('%.0f-1', v),
    'v', v, 'c', cjson.encode(change))
  return v
end

-- An empty Lua table encodes as {} where a list is meant: the reader takes both.
local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', now, 'LIMIT', 0, 100)
local expired = {}
for _, id in ipairs(gone) do
  if drop(id) then
    expired[#expired + 1] = tonumber(id)
  end
end
if #expired > 0 then
  changed({ g = expired })
end

local op = ARGV[1]
if op == 'add' then
  local list = ARGV[2] == 'ban' and bans or overrides
  local max, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
  local e = cjson.decode(ARGV[5])
  if ARGV[6] == '1' then
    local made = redis.call('GET', idem)
    if made then
      local json = redis.call('HGET', list, made)
      if json then
        return { 'existing', tonumber(made), now, json }
      end
      return { 'replayed', tonumber(made), now }
    end
  end
  local replaced = false
  if ARGV[2] == 'override' then
    replaced = redis.call('HGET', index, slot_of(e))
  else
    local held = redis.call('HGET', ban_index, target_of(e))
    if held then
      local json = redis.call('HGET', bans, held)
      if json then
        return { 'existing', tonumber(held), now, json }
      end
    end
  end
  local held = redis.call('HLEN', list)
  if replaced then
    held = held - 1
  end
  if held >= max then
    return { 'full', 0, now }
  end
  local removed = {}
  if replaced and drop(replaced) then
    removed[1] = tonumber(replaced)
  end
  local id = redis.call('INCR', seq)
  e.id = id
  e.created_at_ms = now
  if ttl > 0 then
    e.expires_at_ms = now + ttl
    redis.call('ZADD', expiry, now + ttl, id)
  end
  local json = cjson.encode(e)
  redis.call('HSET', list, id, json)
  if ARGV[2] == 'override' then
    redis.call('HSET', index, slot_of(e), id)
  else
    redis.call('HSET', ban_index, target_of(e), id)
  end
  if ARGV[6] == '1' then
    redis.call('SET', idem, id, 'PX', IDEM_TTL_MS)
  end
  if #removed > 0 then
    changed({ a = { json }, g = removed })
  else
    changed({ a = { json } })
  end
  return { 'created', id, now, json }
elseif op == 'delete' then
  local list = ARGV[2] == 'ban' and bans or overrides
  if ARGV[4] == '1' and redis.call('GET', idem) == 'deleted ' .. ARGV[3] then
    return { 1, now }
  end
  if redis.call('HEXISTS', list, ARGV[3]) == 0 then
    return { 0, now }
  end
  drop(ARGV[3])
  if ARGV[4] == '1' then
    redis.call('SET', idem, 'deleted ' .. ARGV[3], 'PX', IDEM_TTL_MS)
  end
  changed({ g = { tonumber(ARGV[3]) } })
  return { 1, now }
elseif op == 'reset' then
  changed({ r = { ARGV[2] } })
  return { 1, now }
elseif op == 'lookup' then
  local made = redis.call('GET', idem)
  if made and not string.find(made, '^deleted ') then
    return { tonumber(made), now }
  end
  return { 0, now }
end

-- read. Versions are compared as text: Lua would print a large number in exponent form.
local v = redis.call('GET', version) or '0'
if v == ARGV[2] then
  return { tonumber(v), now }
end
local known = tonumber(ARGV[2])
if known > 0 and known < tonumber(v) then
  local from = string.format('%.0f-1', known + 1)
  local entries = redis.call('XRANGE', changes, from, '+', 'COUNT', READ_CHANGES)
  local reply, next_v = { 0, now, 'delta' }, known + 1
  for _, entry in ipairs(entries) do
    if tonumber(entry[2][2]) ~= next_v then
      break
    end
    reply[#reply + 1] = entry[2][4]
    next_v = next_v + 1
  end
  if next_v > known + 1 then
    reply[1] = next_v - 1
    return reply
  end
end
return { tonumber(v), now, 'full' }
