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
ENTRYPOINT ["racing"]
CMD ["serve"]
