# Sourced by scripts/run, scripts/test and bench/: installs missing system tools when it can.
# usage: need_packages COMMAND:PACKAGE ...  (e.g. need_packages cmake:cmake redis-server:redis-server)

need_packages() {
    local missing_cmds=() missing_pkgs=() pair
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || {
            missing_cmds+=("${pair%%:*}")
            missing_pkgs+=("${pair#*:}")
        }
    done
    [ ${#missing_pkgs[@]} -eq 0 ] && return 0
    echo "installing missing tools: ${missing_cmds[*]} (packages: ${missing_pkgs[*]})" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && sudo="sudo -n"
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; }; then
        $sudo apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
            "${missing_pkgs[@]}" >&2
    else
        echo "cannot install automatically; please install these packages: ${missing_pkgs[*]}" >&2
        echo "  e.g. sudo apt-get install ${missing_pkgs[*]}" >&2
        exit 1
    fi
}

need_rust_components() {
    local c
    for c in "$@"; do
        if ! cargo "$c" --version >/dev/null 2>&1; then
            command -v rustup >/dev/null 2>&1 || { echo "cargo $c is missing; install it (rustup component add $c)" >&2; exit 1; }
            local component=$c
            [ "$c" = fmt ] && component=rustfmt
            rustup component add "$component" >&2
        fi
    done
}
