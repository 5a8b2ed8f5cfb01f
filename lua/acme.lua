--[[ acme.lua: the fleet's ACME state. One instance at a time holds the lock and places the
orders; every instance reads the certificates and answers the CA's validations
(src/acme/fleet.rs is the caller).

  KEYS[1]  lock: the id of the instance that orders, with a lease (PX)
  KEYS[2]  certs: a hash, domain -> the certificate as JSON { chain = PEM, key = the private
           key sealed with the fleet's key (src/acme/seal.rs) }
  KEYS[3]  version: raised by every certificate written
  KEYS[4]  accounts: a hash, ACME directory URL -> the account's credentials, sealed
  KEYS[5]  answers: a hash, name -> "<expiry Unix ms>|<answer>": the validations under way
           (an HTTP-01 token's key authorization; a TLS-ALPN-01 domain's key authorization)
  (all in one Cluster slot: the keys share the hash tag `{acme}`)

  ARGV[1]  the operation:
    lead     ARGV[2] the instance's id, ARGV[3] the lease in ms. Returns 2 when the instance
             just took the lock, 1 when it held it already (renewed), 0 when another holds it.
    resign   ARGV[2] the instance's id: gives the lock up if held. Returns 1 or 0.
    put      ARGV[2] the holder's id, ARGV[3] a domain, ARGV[4] its certificate's JSON.
             Returns the new version, or -1 when the caller does not hold the lock.
    read     ARGV[2] the version the reader knows (0: none). Returns { version } when that is
             the version, else { version, domain, JSON, domain, JSON, … }.
    account  ARGV[2] a directory URL: its sealed credentials, or false.
    enrol    ARGV[2] the holder's id, ARGV[3] a directory URL, ARGV[4] sealed credentials.
             Returns 1, or -1 as above.
    answer   ARGV[2] the holder's id, ARGV[3] a name, ARGV[4] the answer, ARGV[5] its
             lifetime in ms (expired answers are swept). Returns 1, or -1 as above.
    forget   ARGV[2] the holder's id, ARGV[3] a name. Returns 1, or -1 as above.
    asked    ARGV[2] a name: its answer while it lives, or false.
]]

local lock, certs, version, accounts, answers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local op = ARGV[1]
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

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

if op == 'put' then
  if not holds(ARGV[2]) then
    return -1
  end
  redis.call('HSET', certs, ARGV[3], ARGV[4])
  return redis.call('INCR', version)
end

if op == 'read' then
  local current = tonumber(redis.call('GET', version) or '0')
  if current == tonumber(ARGV[2]) then
    return { current }
  end
  local reply = { current }
  for _, item in ipairs(redis.call('HGETALL', certs)) do
    reply[#reply + 1] = item
  end
  return reply
end

if op == 'account' then
  return redis.call('HGET', accounts, ARGV[2])
end

if op == 'enrol' then
  if not holds(ARGV[2]) then
    return -1
  end
  redis.call('HSET', accounts, ARGV[3], ARGV[4])
  return 1
end

if op == 'answer' then
  if not holds(ARGV[2]) then
    return -1
  end
  local all = redis.call('HGETALL', answers)
  for i = 1, #all, 2 do
    local expiry = tonumber(string.match(all[i + 1], '^(%d+)|'))
    if not expiry or expiry <= now_ms then
      redis.call('HDEL', answers, all[i])
    end
  end
  redis.call('HSET', answers, ARGV[3], string.format('%d', now_ms + tonumber(ARGV[5])) .. '|' .. ARGV[4])
  return 1
end

if op == 'forget' then
  if not holds(ARGV[2]) then
    return -1
  end
  redis.call('HDEL', answers, ARGV[3])
  return 1
end

if op == 'asked' then
  local held = redis.call('HGET', answers, ARGV[2])
  if not held then
    return false
  end
  local expiry, answer = string.match(held, '^(%d+)|(.*)$')
  if not expiry or tonumber(expiry) <= now_ms then
    return false
  end
  return answer
end

return redis.error_reply('acme.lua: unknown operation ' .. tostring(op))
