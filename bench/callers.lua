-- wrk script: requests cycle through 1,000 callers (x-api-key caller-0 … caller-999), each
-- connection starting at its own offset, so every caller is active all the time.
local n = math.random(0, 999)
function request()
  n = (n + 1) % 1000
  wrk.headers["x-api-key"] = "caller-" .. n
  return wrk.format(nil, nil)
end
