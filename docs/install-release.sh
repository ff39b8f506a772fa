v=v0.1.0 t=x86_64-unknown-linux-musl  # or aarch64-unknown-linux-musl, x86_64-apple-darwin, aarch64-apple-darwin
curl -fsSLO "https://github.com/gitops-lint/gitops-lint/releases/download/$v/gitops-lint-$v-$t.tar.gz"
curl -fsSLO "https://github.com/gitops-lint/gitops-lint/releases/download/$v/SHA256SUMS"
sha256sum --ignore-missing -c SHA256SUMS   # macOS: shasum -a 256 --ignore-missing -c SHA256SUMS
tar -xzf "gitops-lint-$v-$t.tar.gz"
mkdir -p ~/.local/bin && install "gitops-lint-$v-$t/gitops-lint" ~/.local/bin/
