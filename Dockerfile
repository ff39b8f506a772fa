# The gitops-lint image, for CI systems other than GitHub Actions (the Action is composite and
# downloads the release binary; see README). A static musl binary on distroless `static`,
# which carries CA certificates (for a future `fetch`) and nothing else: no shell, no git, so
# `diff --base` needs the release binary in an image that has git.
# Run: docker run --rm -v "$PWD:/repo" ghcr.io/gitops-lint/gitops-lint:v0 .
# No USER line: the image runs as the container's default user, so a mounted workspace and
# the files it writes (SARIF, the job summary) stay writable whoever owns them.
#
# Default target (`docker build .`): built from this source in the `dist` profile the release
# binaries use (CI builds the same code in `release`, without whole-program LTO).
# `--target prebuilt`: the release workflow's image from the released binaries in
# dist/linux-<arch>/ (TARGETARCH is set by buildx per platform).

FROM rust:1.95-alpine AS build
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates ./crates
COPY src ./src
COPY rules ./rules
RUN cargo build --profile dist --locked && cp target/dist/gitops-lint /gitops-lint

FROM gcr.io/distroless/static-debian12 AS prebuilt
ARG TARGETARCH
COPY dist/linux-${TARGETARCH}/gitops-lint /usr/local/bin/gitops-lint
WORKDIR /repo
ENTRYPOINT ["/usr/local/bin/gitops-lint"]

FROM gcr.io/distroless/static-debian12 AS source
COPY --from=build /gitops-lint /usr/local/bin/gitops-lint
WORKDIR /repo
ENTRYPOINT ["/usr/local/bin/gitops-lint"]
