# Sourced by bench/run and bench/check: one wrk run, a measured run of a case (its req/s,
# latency, Redis calls and CPU, the proxy's CPU), medians, and ratios paired within a round.
# Needs: $work (scratch), THREADS CONNS DURATION REPS, REST_CPU; RP (Redis's port) when a
# case uses Redis.

# One wrk run; prints "rps p50_ms p99_ms non2xx total".
wrk_once() { # url [extra wrk args...]
    local url=$1; shift
    $REST_CPU wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$@" "$url" > "$work/wrk.out" 2>&1
    awk '
      function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
      /Requests\/sec/ { rps = $2 }
      / 50%/ { p50 = ms($2) }
      / 99%/ { p99 = ms($2) }
      /Non-2xx or 3xx/ { non2xx = $5 }
      /requests in/ { total = $1 }
      END { printf "%.0f %.3f %.3f %d %d\n", rps, p50, p99, non2xx, total }' "$work/wrk.out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Redis's CPU so far (user + system), in microseconds.
redis_cpu_us() {
    [ -n "${RP:-}" ] || { echo 0; return; }
    redis-cli -p "$RP" INFO cpu | tr -d '\r' \
        | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.0f", s * 1000000 }'
}

# Process PID's CPU so far (utime + stime), in microseconds.
proc_cpu_us() {
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f", ($14 + $15) * 1000000 / hz }' "/proc/$1/stat"
}

# Runs REPS times against the proxy with process id PID; prints medians "rps p50 p99
# non2xx_share script_calls_per_request redis_cpu_us_per_allowed proxy_cpu_us_per_request"
# (EVALSHA and EVAL calls: the commands a script runs inside are not counted).
# One measured run of case `name` (a proxy `pid` at `url`), appended to its runs file: req/s,
# p50, p99, non-2xx, requests, Redis script calls, Redis CPU µs, proxy CPU µs.
run_once() { # name pid url [wrk args...]
    local name=$1 pid=$2 url=$3; shift 3
    [ -z "${RP:-}" ] || redis-cli -p "$RP" CONFIG RESETSTAT >/dev/null
    local redis0 proc0; redis0=$(redis_cpu_us); proc0=$(proc_cpu_us "$pid")
    local line; line=$(wrk_once "$url" "$@")
    local redis1 proc1; redis1=$(redis_cpu_us); proc1=$(proc_cpu_us "$pid")
    local calls=0
    [ -z "${RP:-}" ] || calls=$(redis-cli -p "$RP" INFO commandstats | tr -d '\r' \
        | awk -F'[=,:]' '/^cmdstat_(evalsha|eval):/ { s += $3 } END { print s + 0 }')
    echo "$line $calls $((redis1 - redis0)) $((proc1 - proc0))" >> "$work/$name.runs"
}

warm_up() { # url [wrk args...]
    local url=$1; shift
    $REST_CPU wrk -t"$THREADS" -c"$CONNS" -d2s "$@" "$url" >/dev/null 2>&1
}

# The medians of case `name`'s runs: req/s, p50, p99, throttled share, Redis calls per
# request, Redis CPU µs per allowed request, proxy CPU µs per request.
summarize() { # name
    local runs="$work/$1.runs"
    local rps p50 p99 share cpr rcpu pcpu
    rps=$(awk '{print $1}' "$runs" | median)
    p50=$(awk '{print $2}' "$runs" | median)
    p99=$(awk '{print $3}' "$runs" | median)
    share=$(awk '{ if ($5 > 0) print $4 / $5; else print 0 }' "$runs" | median)
    cpr=$(awk '{ if ($5 > 0) print $6 / $5; else print 0 }' "$runs" | median)
    rcpu=$(awk '{ a = $5 - $4; if (a > 0) print $7 / a; else print 0 }' "$runs" | median)
    pcpu=$(awk '{ if ($5 > 0) print $8 / $5; else print 0 }' "$runs" | median)
    echo "$rps $p50 $p99 $share $cpr $rcpu $pcpu"
}

measure() { # name pid url [wrk args...]: REPS runs in a row, then their medians
    local name=$1 pid=$2 url=$3; shift 3
    : > "$work/$name.runs"
    warm_up "$url" "$@"
    for _ in $(seq 1 "$REPS"); do run_once "$name" "$pid" "$url" "$@"; done
    summarize "$name"
}

# The median over rounds of case `name`'s req/s divided by case `base`'s in the same round.
paired_ratio() { # name base
    paste "$work/$1.runs" "$work/$2.runs" | awk '{ if ($9 > 0) print $1 / $9 }' | median \
        | awk '{ printf "%.3f", $1 }'
}

