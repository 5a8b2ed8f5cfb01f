# Floodgate: build the release binary as docs/src/operations.md (Docker) says (scripts/build-release: profile-
# guided, trained on a short local load), run it as a non-root user.
#   docker build -t floodgate --build-arg FLOODGATE_COMMIT=$(git rev-parse --short=12 HEAD) .
#   docker run -p 8080:8080 -v $PWD/my.toml:/etc/floodgate/floodgate.toml floodgate \
#       --config /etc/floodgate/floodgate.toml
# A config used in a container must listen on 0.0.0.0 (see conf/docker.toml).

FROM rust:1-bookworm AS build
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

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin floodgate
COPY --from=build /src/target/pgo/release/floodgate /usr/local/bin/floodgate
COPY conf/ /etc/floodgate/
USER floodgate
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/floodgate"]
CMD ["--config", "/etc/floodgate/docker.toml"]
