-- wrk script: each connection waits `delay_ms` before each request, so the load is about
-- connections / (delay_ms + latency) requests per second: a steady, sub-peak load.
local delay_ms = tonumber(os.getenv("PACE_MS") or "2")
function delay()
  return delay_ms
end
