# Sourced by scripts/build-release and bench/pgo-passthrough: a profile-guided (PGO) build of
# one cargo target, in two steps around a training load the caller runs:
#   pgo_instrumented NAME TARGET...   the instrumented build, in target/NAME-instrumented
#   (training: run that build with LLVM_PROFILE_FILE pointing into a directory of its own)
#   pgo_optimised NAME DIR TARGET...  merges DIR's profiles into target/NAME/profile.profdata
#                                     and builds TARGET with them, in target/NAME
# TARGET is cargo's target selection (`--bin floodgate`, `--example passthrough`), the same in
# both steps: another selection (an example's dev-dependencies change pingora's features) gives
# other symbols, and the profile would match none of them.

# The path of llvm-profdata (rustup's llvm-tools, added if missing).
pgo_profdata() {
    local host tool
    host=$(rustc -vV | awk '/^host:/ { print $2 }')
    tool="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
    if [ ! -x "$tool" ]; then
        command -v rustup >/dev/null 2>&1 \
            || { echo "llvm-profdata is missing: install rustup's llvm-tools component" >&2; exit 1; }
        rustup component add llvm-tools >&2
    fi
    echo "$tool"
}

# The instrumented build. Its profile path is fixed, so that a second run reuses the first
# one's build; the build scripts' runs write there, the training's where LLVM_PROFILE_FILE says.
pgo_instrumented() { # name target...
    local name=$1; shift
    RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$PWD/target/$name-instrumented/unused" \
        cargo build --release --locked --quiet --target-dir "target/$name-instrumented" "$@"
}

# The optimised build, from the profiles the training left in `dir`.
pgo_optimised() { # name dir target...
    local name=$1 dir=$2; shift 2
    compgen -G "$dir/*.profraw" >/dev/null \
        || { echo "pgo: the training of $name recorded no profile" >&2; exit 1; }
    mkdir -p "target/$name"
    "$(pgo_profdata)" merge -o "target/$name/profile.profdata" "$dir"/*.profraw
    RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$PWD/target/$name/profile.profdata" \
        cargo build --release --locked --quiet --target-dir "target/$name" "$@"
}
