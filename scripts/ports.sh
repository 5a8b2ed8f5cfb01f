# Sourced by bench/run and scripts/build-release: loopback ports for the servers they start.

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
