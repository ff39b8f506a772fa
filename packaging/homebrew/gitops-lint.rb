# Homebrew formula for a tap (`brew install <owner>/tap/gitops-lint`), installing the release
# archives .github/release/package.sh makes. This file is the template: the release workflow
# renders it with packaging/homebrew/render.sh (the tag's version, each archive's sha256 from
# the release's SHA256SUMS) and attaches the result to the GitHub release as gitops-lint.rb;
# copy that file into the tap's Formula/ directory. The sha256 placeholders are filled then.
class GitopsLint < Formula
  desc "Lint GitOps repositories (Argo CD, Flux) for drift loops"
  homepage "https://github.com/gitops-lint/gitops-lint"
  version "0.1.0"
  license "Apache-2.0"

  on_macos do
    on_arm do
      url "https://github.com/gitops-lint/gitops-lint/releases/download/v#{version}/gitops-lint-v#{version}-aarch64-apple-darwin.tar.gz"
      sha256 "@SHA256 aarch64-apple-darwin@"
    end
    on_intel do
      url "https://github.com/gitops-lint/gitops-lint/releases/download/v#{version}/gitops-lint-v#{version}-x86_64-apple-darwin.tar.gz"
      sha256 "@SHA256 x86_64-apple-darwin@"
    end
  end

  on_linux do
    on_arm do
      url "https://github.com/gitops-lint/gitops-lint/releases/download/v#{version}/gitops-lint-v#{version}-aarch64-unknown-linux-musl.tar.gz"
      sha256 "@SHA256 aarch64-unknown-linux-musl@"
    end
    on_intel do
      url "https://github.com/gitops-lint/gitops-lint/releases/download/v#{version}/gitops-lint-v#{version}-x86_64-unknown-linux-musl.tar.gz"
      sha256 "@SHA256 x86_64-unknown-linux-musl@"
    end
  end

  def install
    bin.install "gitops-lint"
    man1.install "gitops-lint.1"
    bash_completion.install "completions/gitops-lint.bash" => "gitops-lint"
    zsh_completion.install "completions/_gitops-lint"
    fish_completion.install "completions/gitops-lint.fish"
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/gitops-lint --version")
  end
end
