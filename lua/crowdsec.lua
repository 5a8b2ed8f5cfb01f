--[[ crowdsec.lua: CrowdSec's decisions, pulled from the Local API by one instance at a time
and shared with the fleet (src/crowdsec/shared.rs is the caller).

  KEYS[1]  lock: the id of the instance that pulls, with a lease (PX)
  KEYS[2]  decisions: a hash, LAPI decision id -> the decision as JSON (src/crowdsec/decision.rs
           `Held`: id, value, type, scenario, expires_at_ms)
  KEYS[3]  version: raised by every change (first set from the clock, in microseconds, so a
           state written again never repeats an earlier version)
  KEYS[4]  changes: a stream of the last changes, one entry per pull that changed something
           (fields `v`, the version it made, and `c`, the change as JSON { d = deleted ids,
           n = new decisions' JSON }), so readers that know the previous version read only
           what changed
  KEYS[5]  pulled: Unix milliseconds of the last successful pull (Redis's clock)
  KEYS[6]  next: the whole state being written (`stage`), until `commit` makes it the state
  (all in one Cluster slot: the keys share the hash tag `{crowdsec}`)

  ARGV[1]  the operation:
    lead     ARGV[2] the instance's id, ARGV[3] the lease in ms. Returns 2 when the instance
             just took the lock, 1 when it held it already (renewed), 0 when another holds it.
    resign   ARGV[2] the instance's id: gives the lock up if held. Returns 1 or 0.
    stage    ARGV[2] the holder's id, ARGV[3] 1 for the first part (0 after), then decisions'
             JSON: a part of the whole state, as a pull with `startup=true` gives it, written
             aside (in parts, so Redis is never held long). Returns how many, or -1 when the
             caller does not hold the lock (nothing changed).
    commit   ARGV[2] the holder's id: the staged state becomes the state (RENAME). Returns the
             new version, or -1 as above.
    apply    ARGV[2] the holder's id, ARGV[3] n, then n deleted ids, then new decisions' JSON.
             Returns the version (raised only when something changed), or -1 as above.
    read     ARGV[2] the version the reader knows (0: none). Returns { version, pulled_ms }
             when that is the version; { version, pulled_ms, 'delta', change, … } when the
             stream holds every change since; else { version, pulled_ms, 'full' }: the reader
             then reads the decisions hash with HSCAN and reads again from that version.
]]

local lock, decisions, version, changes, pulled, next =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local op = ARGV[1]
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local CHUNK = 1000

local function raise_version()
  if redis.call('EXISTS', version) == 0 then
    redis.call('SET', version, tonumber(time[1]) * 1000000 + tonumber(time[2]))
  end
  return redis.call('INCR', version)
end

-- Decisions' JSON in ARGV[from..]: HSET into `hash` by id, a chunk at a time.
local function put(hash, from)
  local args = {}
  for i = from, #ARGV do
    local id = cjson.decode(ARGV[i]).id
    args[#args + 1] = string.format('%d', id)
    args[#args + 1] = ARGV[i]
    if #args >= 2 * CHUNK then
      redis.call('HSET', hash, unpack(args))
      args = {}
    end
  end
  if #args > 0 then
    redis.call('HSET', hash, unpack(args))
  end
end

local function holds(id)
  return redis.call('GET', lock) == id
end

if op == 'lead' then
  local held = redis.call('GET', lock)
  if held == ARGV[2] then
    redis.call('PEXPIRE', lock, ARGV[3])
    return 1
  end
  if not held then
    redis.call('SET', lock, ARGV[2], 'PX', ARGV[3])
    return 2
  end
  return 0
end

if op == 'resign' then
  if holds(ARGV[2]) then
    redis.call('DEL', lock)
    return 1
  end
  return 0
end

if op == 'stage' then
  if not holds(ARGV[2]) then return -1 end
  if ARGV[3] == '1' then redis.call('DEL', next) end
  put(next, 4)
  return #ARGV - 3
end

if op == 'commit' then
  if not holds(ARGV[2]) then return -1 end
  if redis.call('EXISTS', next) == 1 then
    redis.call('RENAME', next, decisions)
  else
    redis.call('DEL', decisions)
  end
  redis.call('DEL', changes)
  redis.call('SET', pulled, now_ms)
  return raise_version()
end

if op == 'apply' then
  if not holds(ARGV[2]) then return -1 end
  redis.call('SET', pulled, now_ms)
  local n = tonumber(ARGV[3])
  local deleted, removed = {}, 0
  for i = 4, 3 + n do
    removed = removed + redis.call('HDEL', decisions, ARGV[i])
    deleted[#deleted + 1] = ARGV[i]
  end
  local added = {}
  for i = 4 + n, #ARGV do added[#added + 1] = ARGV[i] end
  if removed == 0 and #added == 0 then
    return tonumber(redis.call('GET', version) or '0')
  end
  put(decisions, 4 + n)
  local v = raise_version()
  local change = cjson.encode({ d = deleted, n = added })
  redis.call('XADD', changes, 'MAXLEN', '~', 256, '*', 'v', v, 'c', change)
  return v
end

if op == 'read' then
  local known = tonumber(ARGV[2])
  local v = tonumber(redis.call('GET', version) or '0')
  local at = tonumber(redis.call('GET', pulled) or '0')
  if v == known then return { v, at } end
  if known > 0 and known < v then
    local reply, next_v = { v, at, 'delta' }, known + 1
    for _, entry in ipairs(redis.call('XRANGE', changes, '-', '+')) do
      local fields = entry[2]
      local ev = tonumber(fields[2])
      if ev == next_v then
        reply[#reply + 1] = fields[4]
        next_v = next_v + 1
      end
    end
    if next_v == v + 1 then return reply end
  end
  return { v, at, 'full' }
end

return redis.error_reply('crowdsec.lua: unknown operation ' .. tostring(op))
