# Sourced by bench/run, bench/pgo-passthrough and scripts/build-release: the loopback servers
# they start, on free ports, and the scratch space they run in.

# Sets $work, a new directory, and $pids, empty; on exit, every pid in $pids is ended and
# $work removed.
scratch() {
    work=$(mktemp -d)
    pids=()
    trap end_scratch EXIT
}
end_scratch() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}

# A port below the ephemeral range (so no outgoing connection holds it) that nothing serves.
free_port() {
    local p
    while :; do
        p=$(shuf -i 20000-32000 -n 1)
        (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null || { echo "$p"; return; }
    done
}

# Waits up to 10 s for something to listen on port $1.
wait_port() {
    for _ in $(seq 1 200); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done
    echo "port $1 never opened" >&2
    exit 1
}

# An nginx answering every request with a small 200 on 127.0.0.1:$2, its files in directory $1,
# run under the command prefix $3 (e.g. "taskset -c 1"); its pid joins the caller's `pids`.
start_ok_upstream() { # dir port [prefix]
    mkdir -p "$1"
    cat > "$1/nginx.conf" <<EOC
worker_processes 1;
daemon off;
pid $1/nginx.pid;
error_log $1/error.log crit;
events { worker_connections 4096; }
http {
    access_log off;
    server { listen 127.0.0.1:$2; keepalive_requests 1000000; location / { return 200 "ok\n"; } }
}
EOC
    ${3:-} nginx -c "$1/nginx.conf" -p "$1" & pids+=($!)
}

# A redis-server on 127.0.0.1:$1 that keeps nothing on disk, under the command prefix $2.
start_redis() { # port [prefix]
    ${2:-} redis-server --port "$1" --bind 127.0.0.1 --save "" --appendonly no >/dev/null & pids+=($!)
}
