-- wrk script: every request claims the same identity.
wrk.headers["x-api-key"] = "one-bot"
