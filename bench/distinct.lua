-- wrk script: every request a different identity, so every request is allowed.
local n = 0
function request()
  n = n + 1
  wrk.headers["x-api-key"] = tostring(n) .. "-" .. tostring(math.random(1, 1000000000))
  return wrk.format(nil, nil)
end
