# The racing service as an image: built with the Rust toolchain, run on a slim base.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin racing

FROM debian:bookworm-slim
COPY --from=build /src/target/release/racing /usr/local/bin/racing
ENV RACING_DATA_DIR=/data RACING_LISTEN=0.0.0.0:8080
VOLUME /data
EXPOSE 8080
# Healthy while the admin listener says the service is ready: caught up with the log and
# able to answer (`racing status` exits non-zero otherwise). A first start may replay the
# log for minutes before it is ready. `racing status` asks RACING_ADMIN_URL, by default
# port 9090 on loopback, where the admin listener is unless RACING_ADMIN_LISTEN moves it
# (then set RACING_ADMIN_URL to match).
HEALTHCHECK --interval=15s --timeout=5s --start-period=10m --retries=3 \
  CMD ["/bin/sh", "-c", "racing status > /dev/null || exit 1"]
ENTRYPOINT ["racing"]
CMD ["serve"]
