--[[ control.lua: the fleet's bans and overrides, one state in Redis (src/control/ is the
reader; src/control/memory.rs keeps the same rules in one process).

  KEYS[1]  bans: a hash, id -> the ban as JSON
  KEYS[2]  overrides: a hash, id -> the override as JSON
  KEYS[3]  expiry: a sorted set, id scored by the Unix milliseconds it ends at (no entry for
           an entry that never ends)
  KEYS[4]  override index: a hash, "policy caller" -> the id of that caller's override
  KEYS[5]  the last id given (INCR)
  KEYS[6]  the state's version, raised by every change (first set from the clock, in
           microseconds, so a state made again never repeats an earlier state's version;
           absent, 0, until the first change)
  KEYS[7]  resets: a sorted set, caller digest scored by when its buckets were last reset
  (all in one Cluster slot: the keys share the hash tag `{control}`)

  ARGV[1]  the operation:
    add      ARGV[2] `ban` or `override`, ARGV[3] the list's bound, ARGV[4] milliseconds to
             live (0: never ends), ARGV[5] the entry as JSON. The entry gets the next id,
             `created_at_ms` and `expires_at_ms` (Redis's clock); an override replaces the one
             on the same policy and caller. Returns { id, now_ms }, or { 0, now_ms } when the
             list holds its bound already (nothing changed).
    delete   ARGV[2] `ban` or `override`, ARGV[3] the id. Returns { 1 or 0 (it was there),
             now_ms }.
    reset    ARGV[2] a caller digest: its buckets were reset. Returns { 1, now_ms }.
    read     ARGV[2] the version the reader knows. Returns { version, now_ms } when that is
             the version, else { version, now_ms, bans' JSON, overrides' JSON, the callers
             reset in the last 10 s }.
  Every operation first drops the entries whose time has come (raising the version), so
  expired entries disappear by themselves.
]]

local bans, overrides, expiry, index, seq, version, resets =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local function slot_of(json)
  local e = cjson.decode(json)
  return e.policy .. ' ' .. e.caller
end

-- Removes entry `id` (a string) wherever it is; how many entries went.
local function drop(id)
  local o = redis.call('HGET', overrides, id)
  if o then
    local slot = slot_of(o)
    if redis.call('HGET', index, slot) == id then
      redis.call('HDEL', index, slot)
    end
  end
  redis.call('ZREM', expiry, id)
  return redis.call('HDEL', bans, id) + redis.call('HDEL', overrides, id)
end

-- Raises the version. A state that starts (or starts again, after Redis lost its data)
-- starts it from the clock, so a reader never takes a new state's version for one it knows.
-- Nothing is written before the first change: a fleet that never uses the control API has
-- no control keys.
local function changed()
  if redis.call('EXISTS', version) == 0 then
    redis.call('SET', version, now * 1000)
  end
  redis.call('INCR', version)
end

local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', now)
for _, id in ipairs(gone) do
  drop(id)
end
if #gone > 0 then
  changed()
end
redis.call('ZREMRANGEBYSCORE', resets, '-inf', now - 10000)

local op = ARGV[1]
if op == 'add' then
  local list = ARGV[2] == 'ban' and bans or overrides
  local max, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
  local e = cjson.decode(ARGV[5])
  local replaced = false
  if ARGV[2] == 'override' then
    replaced = redis.call('HGET', index, e.policy .. ' ' .. e.caller)
  end
  local held = redis.call('HLEN', list)
  if replaced then
    held = held - 1
  end
  if held >= max then
    return { 0, now }
  end
  if replaced then
    drop(replaced)
  end
  local id = redis.call('INCR', seq)
  e.id = id
  e.created_at_ms = now
  if ttl > 0 then
    e.expires_at_ms = now + ttl
    redis.call('ZADD', expiry, now + ttl, id)
  end
  redis.call('HSET', list, id, cjson.encode(e))
  if ARGV[2] == 'override' then
    redis.call('HSET', index, e.policy .. ' ' .. e.caller, id)
  end
  changed()
  return { id, now }
elseif op == 'delete' then
  local list = ARGV[2] == 'ban' and bans or overrides
  if redis.call('HEXISTS', list, ARGV[3]) == 0 then
    return { 0, now }
  end
  drop(ARGV[3])
  changed()
  return { 1, now }
elseif op == 'reset' then
  redis.call('ZADD', resets, now, ARGV[2])
  changed()
  return { 1, now }
end

-- Compared as text: Lua would print a large number in exponent form.
local known = redis.call('GET', version) or '0'
local v = tonumber(known)
if known == ARGV[2] then
  return { v, now }
end
return { v, now, redis.call('HVALS', bans), redis.call('HVALS', overrides),
  redis.call('ZRANGEBYSCORE', resets, now - 10000, '+inf') }
