# The GitHub Action's image. Build stage: the same command CI runs (`cargo build --release
# --locked`); final stage: the binary, git (diff mode reads the base revision with it) and CA
# certificates (the GitHub API), running as an unprivileged user.
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY rules ./rules
RUN cargo build --release --locked && cp target/release/gitops-lint /usr/local/bin/gitops-lint

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    # The workspace is mounted from the runner; let git read it whoever owns it.
    && git config --system --add safe.directory '*'
COPY --from=build /usr/local/bin/gitops-lint /usr/local/bin/gitops-lint
COPY docs/action-entrypoint.sh /usr/local/bin/gitops-lint-action
# 1001 is the runner user on GitHub-hosted runners, so the mounted workspace and the
# summary/output files it creates stay readable and writable without root.
USER 1001:1001
ENTRYPOINT ["/usr/local/bin/gitops-lint-action"]
