-- wrk script for bench/robots/run: half the requests from browsers (Chrome, Firefox, Safari,
-- Chrome on Android), half from crawlers (GPTBot and ClaudeBot, of the `ai-crawler` group;
-- python-requests, of `*`; BadBot, which only a group of the managed file names), each over
-- paths robots.txt allows and disallows. Never /robots.txt nor the trap: a crawler's request
-- for the trap would ban the address.
local agents = {
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
  "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0",
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
  "Mozilla/5.0 (compatible; BadBot/1.0; +https://example.com/bot)",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
  "python-requests/2.32.3",
}
local paths = { "/", "/articles/1?page=2", "/admin/users", "/private/notes", "/private/ok" }
local n = math.random(0, 10000)
function request()
  n = n + 1
  local path = paths[math.floor(n / #agents) % #paths + 1]
  return wrk.format(nil, path, { ["User-Agent"] = agents[n % #agents + 1] })
end
