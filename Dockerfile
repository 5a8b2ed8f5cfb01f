# Floodgate: build the release binary the way the README does, run it as a non-root user.
#   docker build -t floodgate .
#   docker run -p 8080:8080 -v $PWD/my.toml:/etc/floodgate/floodgate.toml floodgate \
#       --config /etc/floodgate/floodgate.toml
# A config used in a container must listen on 0.0.0.0 (see conf/docker.toml).

FROM rust:1-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends cmake \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin floodgate

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin floodgate
COPY --from=build /src/target/release/floodgate /usr/local/bin/floodgate
COPY conf/ /etc/floodgate/
USER floodgate
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/floodgate"]
CMD ["--config", "/etc/floodgate/docker.toml"]
