# Floodgate's image: the release binary (scripts/build-release: profile-guided, trained on a
# short local load) run as a non-root user. docs/src/operations.md (Docker) says more.
#   docker build -t floodgate --build-arg FLOODGATE_COMMIT=$(git rev-parse --short=12 HEAD) .
#   docker run -p 8080:8080 -v $PWD/my.toml:/etc/floodgate/floodgate.toml:ro \
#       --read-only --tmpfs /tmp floodgate \
#       --config /etc/floodgate/floodgate.toml
# A config used in a container must listen on 0.0.0.0 (see conf/docker.toml).
#
# Build arguments:
#   BUILDER_IMAGE  the build stage's base (Rust >= 1.88; cmake, nginx, redis-server, wrk and
#                  curl are installed into it). Default rust:1-bookworm.
#   RUNTIME_IMAGE  the final image's base, a Debian or Ubuntu; ca-certificates and curl (the
#                  HEALTHCHECK's) are installed into it unless it has them. Default
#                  debian:bookworm-slim.
# Targets: the last stage, `release` (the default), builds the binary in the `source` stage;
# `--target prebuilt` takes a binary already built, at target/image/floodgate in the build
# context, and skips the build stage and its base (scripts/image does this, from a base made
# by mmdebstrap, where no base image can be pulled).
ARG BUILDER_IMAGE=rust:1-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${BUILDER_IMAGE} AS source
RUN apt-get update \
    && apt-get install -y --no-install-recommends cmake nginx redis-server wrk curl \
    && rm -rf /var/lib/apt/lists/* \
    && rustup component add llvm-tools
WORKDIR /src
# `floodgate --version` names it (build.rs; without it, and without .git, "unknown").
ARG FLOODGATE_COMMIT=""
ENV FLOODGATE_COMMIT=$FLOODGATE_COMMIT
COPY . .
RUN scripts/build-release

# Everything but the binary, shared by the two targets below.
FROM ${RUNTIME_IMAGE} AS runtime
RUN { command -v curl >/dev/null && [ -e /etc/ssl/certs/ca-certificates.crt ]; } \
    || { apt-get update \
         && apt-get install -y --no-install-recommends ca-certificates curl \
         && rm -rf /var/lib/apt/lists/*; } \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin floodgate
COPY conf/ /etc/floodgate/
USER floodgate
EXPOSE 8080 9090
# The admin listener's /healthz; a config whose admin listener is elsewhere sets
# FLOODGATE_HEALTHZ (docker run -e FLOODGATE_HEALTHZ=http://127.0.0.1:9191/healthz).
ENV FLOODGATE_HEALTHZ=http://127.0.0.1:9090/healthz
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD curl -fsS --max-time 2 -o /dev/null "$FLOODGATE_HEALTHZ" || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/floodgate"]
CMD ["--config", "/etc/floodgate/docker.toml"]

FROM runtime AS prebuilt
COPY target/image/floodgate /usr/local/bin/floodgate

FROM runtime AS release
COPY --from=source /src/target/pgo/release/floodgate /usr/local/bin/floodgate
