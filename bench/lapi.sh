# Sourced by bench/run and bench/crowdsec: a real CrowdSec LAPI (Debian's package, extracted by
# need_crowdsec) in $work/lapi on a free port, loaded with N decisions made with `cscli decisions
# import` (one in ten a /24 range, the rest addresses; none covers 127.0.0.0/8), and a bouncer
# key in $work/lapi/key. Sets LAPI_PORT; the LAPI is in $pids (stopped on exit).
start_loaded_lapi() { # decisions [prefix]
    local n=$1 prefix=${2:-} d=$work/lapi cs=$CROWDSEC_DIR
    mkdir -p "$d/data" "$d/cfg/notifications"
    cp "$cs/etc/crowdsec/profiles.yaml" "$cs/etc/crowdsec/simulation.yaml" "$d/cfg/"
    : > "$d/cfg/acquis.yaml"
    LAPI_PORT=$(free_port)
    cat > "$d/config.yaml" <<YAML
common: { daemonize: false, log_media: stdout, log_level: warning, working_dir: . }
config_paths:
  config_dir: $d/cfg/
  data_dir: $d/data/
  simulation_path: $d/cfg/simulation.yaml
  hub_dir: $cs/usr/share/crowdsec/hub/
  index_path: $cs/usr/share/crowdsec/hub/.index.json
  notification_dir: $d/cfg/notifications/
  plugin_dir: $cs/usr/lib/crowdsec/plugins/
crowdsec_service: { acquisition_path: $d/cfg/acquis.yaml }
db_config: { log_level: warning, type: sqlite, db_path: $d/data/crowdsec.db, use_wal: true }
api:
  client: { credentials_path: $d/cfg/local_api_credentials.yaml }
  server: { log_level: warning, listen_uri: "127.0.0.1:$LAPI_PORT", profiles_path: $d/cfg/profiles.yaml, trusted_ips: [127.0.0.1] }
prometheus: { enabled: false }
YAML
    local cscli="$cs/usr/bin/cscli -c $d/config.yaml"
    $cscli machines add -a --force >/dev/null 2>&1
    $cscli bouncers add floodgate-bench -k bench-key-0123456789abcdef >/dev/null
    echo bench-key-0123456789abcdef > "$d/key"
    $prefix "$cs/usr/bin/crowdsec" -c "$d/config.yaml" -no-cs > "$d/lapi.log" 2>&1 & pids+=($!)
    wait_port "$LAPI_PORT"
    python3 - "$n" > "$d/decisions.csv" <<'PY'
import random, sys
r = random.Random(1)
print("value,duration,scope,type,reason")
for i in range(int(sys.argv[1])):
    if i % 10 == 0:
        print(f"10.{r.randrange(256)}.{r.randrange(256)}.0/24,24h,Range,ban,bench")
    else:
        print(f"{r.randrange(11, 127)}.{r.randrange(256)}.{r.randrange(256)}.{r.randrange(1, 255)},24h,Ip,ban,bench")
PY
    $cscli decisions import -i "$d/decisions.csv" >/dev/null 2>&1
}

# Waits until the Floodgate whose admin listener is on port ADMIN applies at least N decisions.
wait_decisions() { # admin n
    local i
    for i in $(seq 1 120); do
        curl -s "http://127.0.0.1:$1/metrics" \
            | awk -v n="$2" '/^floodgate_crowdsec_decisions / { ok = ($2 >= n) } END { exit !ok }' && return 0
        sleep 1
    done
    echo "Floodgate on admin port $1 did not load $2 decisions" >&2
    return 1
}
