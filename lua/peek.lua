--[[ peek.lua: read one bucket and Redis's clock together, changing nothing (an operator's
inspect call). The arithmetic is done by the caller (crates/limiter/src/peek.rs mirrors take.lua).

  KEYS[1]  the bucket, `prefix:{identity}:policy` (take.lua's header says what it holds)
  Returns  { now_us, value or false }: Redis TIME in microseconds, and the stored string.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
return { now, redis.call('GET', KEYS[1]) }
