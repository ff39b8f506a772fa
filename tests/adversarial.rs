//! The sandbox promises, checked on a hostile repo (testdata/adversarial): every attack fails
//! alone with a located finding while the healthy app is still linted; no file outside the
//! repo is opened, no process is spawned, no socket is made; linting works with no network;
//! Secret values never reach the output.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const SECRET: &str = "Sup3r-S3cret-Passw0rd";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
}

/// The adversarial repo, generated once per test run under the target dir (its big inputs
/// are made by make.sh, not committed).
struct Repo {
    root: PathBuf,
}

fn adversarial_repo() -> &'static Repo {
    static REPO: OnceLock<Repo> = OnceLock::new();
    REPO.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("adversarial/repo");
        let _ = std::fs::remove_dir_all(root.parent().unwrap_or(&root));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/adversarial/make.sh");
        let status = Command::new("bash")
            .arg(&script)
            .arg(&root)
            .status()
            .expect("run make.sh");
        assert!(status.success(), "make.sh failed");
        Repo { root }
    })
}

fn lint(cmd: &mut Command, root: &Path, format: &str) -> Output {
    // The workflow author's flag lifts the step limit to its ceiling, so that the slow chart
    // meets the time limit (the repo's own config can only lower limits).
    cmd.arg(root)
        .args([
            "--format",
            format,
            "--limit",
            "max-template-steps=1000000000",
        ])
        .env("TMPDIR", root.parent().unwrap_or(root))
        .output()
        .expect("run gitops-lint")
}

fn findings(out: &Output) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&out.stdout).expect("json output");
    v["findings"].as_array().cloned().unwrap_or_default()
}

fn key(f: &Value) -> (String, String, u64) {
    (
        f["rule"].as_str().unwrap_or("").to_string(),
        f["file"].as_str().unwrap_or("").to_string(),
        f["line"].as_u64().unwrap_or(0),
    )
}

#[test]
fn every_attack_fails_alone_with_a_located_finding() {
    let repo = adversarial_repo();
    let out = lint(&mut bin(), &repo.root, "json");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = findings(&out);
    let find = |rule: &str, file: &str, line: u64, needle: &str| {
        let hit = all
            .iter()
            .find(|f| key(f) == (rule.into(), file.into(), line));
        assert!(
            hit.is_some_and(|f| f["message"].as_str().unwrap_or("").contains(needle)),
            "{rule} {file}:{line} containing {needle:?}: got {hit:?}"
        );
    };
    find(
        "yaml-syntax",
        "yaml/billion-laughs.yaml",
        7,
        "limits.max-alias-nodes",
    );
    find(
        "yaml-syntax",
        "yaml/deep-nesting.yaml",
        1,
        "limits.max-depth",
    );
    find(
        "yaml-syntax",
        "yaml/huge-scalar.yaml",
        1,
        "limits.max-file-bytes",
    );
    find(
        "render-failed",
        "charts/recurse/templates/configmap.yaml",
        9,
        "characters omitted",
    );
    find(
        "render-failed",
        "charts/huge-range/templates/configmap.yaml",
        6,
        "until: result of 100000000 elements",
    );
    find(
        "render-failed",
        "charts/slow/templates/configmap.yaml",
        8,
        "limits.max-render-seconds",
    );
    find(
        "render-failed",
        "charts/tgz-host/Chart.yaml",
        1,
        "illegally references parent directory",
    );
    find(
        "render-failed",
        "kustomize/c/kustomization.yaml",
        2,
        "kustomize/a -> kustomize/b -> kustomize/c -> kustomize/a",
    );
    find(
        "render-failed",
        "kustomize/absolute/kustomization.yaml",
        2,
        "outside the repository",
    );
    find(
        "offline-unrenderable-input",
        "kustomize/krm-exec/kustomization.yaml",
        4,
        "never runs plugins",
    );
    // The symlink farm: 200 links in a ring, links to the host and out of the repo.
    let farm: Vec<_> = all
        .iter()
        .filter(|f| f["file"].as_str().unwrap_or("").starts_with("farm/"))
        .collect();
    let loops = farm
        .iter()
        .filter(|f| f["message"].as_str().unwrap_or("").contains("loop"))
        .count();
    assert_eq!(loops, 200);
    for escape in ["farm/passwd.yaml", "farm/etc", "farm/outside"] {
        find("yaml-syntax", escape, 1, "outside the repository");
    }
    // The healthy app and the 10,000 small files are still linted.
    find(
        "hpa-replicas-conflict",
        "apps/healthy/deployment.yaml",
        6,
        "owns the replica count",
    );
    assert!(
        !all.iter()
            .any(|f| f["file"].as_str().unwrap_or("").starts_with("many/"))
    );
    // `.Files.Get "../../etc/passwd"` is empty, as in Helm: nothing of the host is rendered.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("root:x:0"),
        "host file content in the output"
    );
    // Every message stays short enough for a log line or a PR comment.
    assert!(
        all.iter()
            .all(|f| f["message"].as_str().unwrap_or("").len() < 8_000)
    );
    // The KRM function was not run.
    let marker = repo
        .root
        .parent()
        .map(|p| p.join("gitops-lint-ran-repo-code"));
    assert!(
        marker.is_some_and(|m| !m.exists()),
        "repo code was executed"
    );
}

#[test]
fn secret_values_never_reach_findings_reports_or_diffs() {
    let repo = adversarial_repo();
    for format in ["human", "json", "sarif", "junit", "github"] {
        let out = lint(&mut bin(), &repo.root, format);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains(SECRET), "{format} output echoes the secret");
    }
    // The manifest a pull-request diff shows masks Secret data.
    let result = gitops_lint::lint::lint(&gitops_lint::lint::LintOptions {
        root: repo.root.clone(),
        config: None,
        ..Default::default()
    })
    .expect("lint");
    let app = result
        .model
        .apps
        .iter()
        .find(|a| a.name == "secret-values")
        .expect("secret-values app");
    let manifest = gitops_lint::diff::render_app_manifest(&result.model, app);
    assert!(manifest.contains("kind: Secret"), "{manifest}");
    assert!(manifest.contains("<redacted sha256:"), "{manifest}");
    assert!(!manifest.contains(SECRET), "{manifest}");
    let token =
        gitops_lint::render::gotmpl::funcs::base64_decode("U3VwM3ItUzNjcmV0LVBhc3N3MHJkLXRva2Vu")
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
    assert_eq!(token.as_deref(), Some("Sup3r-S3cret-Passw0rd-token"));
    assert!(!manifest.contains("U3VwM3ItUzNjcmV0LVBhc3N3MHJkLXRva2Vu"));
}

/// Files the process may open that are not the repo's: the dynamic loader and libc, and
/// what Rust's runtime reads to size its thread pool and guard its stack.
const RUNTIME_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/lib/",
    "/lib64/",
    "/usr/lib/",
    "/proc/self/",
    "/sys/fs/cgroup/",
    "/sys/devices/system/cpu/",
    // The allocator (mimalloc) reads the kernel's overcommit and huge-page settings at start.
    "/proc/sys/vm/overcommit_memory",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    // Time zones for `dateInZone`, as Go's time.LoadLocation reads them (names checked).
    "/usr/share/zoneinfo/",
];

#[test]
fn no_file_outside_the_repo_no_process_no_socket() {
    if Command::new("strace").arg("-V").output().is_err() {
        println!("skipped: strace is not installed (apt-get install strace)");
        return;
    }
    let repo = adversarial_repo();
    let trace = repo.root.with_file_name("trace.txt");
    let _ = std::fs::remove_file(&trace);
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-qq", "-e"])
        .arg("trace=open,openat,openat2,creat,execve,execveat,socket,connect,fork,vfork,clone,clone3")
        .arg("-o")
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_gitops-lint"));
    let out = lint(&mut cmd, &repo.root, "json");
    if out.status.code() != Some(1) {
        println!(
            "skipped: strace could not trace here: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let text = std::fs::read_to_string(&trace).expect("trace");
    let root = repo.root.to_string_lossy().into_owned();
    let mut execs = 0;
    for line in text.lines() {
        let call = line
            .split_once(' ')
            .map(|(_, c)| c.trim_start())
            .unwrap_or(line);
        if call.starts_with("execve(") || call.starts_with("execveat(") {
            execs += 1;
            continue;
        }
        assert!(
            !call.starts_with("socket(") && !call.starts_with("connect("),
            "network call: {line}"
        );
        assert!(
            !call.starts_with("fork(") && !call.starts_with("vfork("),
            "process spawned: {line}"
        );
        if call.starts_with("clone") {
            assert!(call.contains("CLONE_THREAD"), "process spawned: {line}");
            continue;
        }
        if call.starts_with("open") || call.starts_with("creat") {
            assert!(
                !call.contains("O_WRONLY") && !call.contains("O_RDWR") && !call.contains("O_CREAT"),
                "opened for writing: {line}"
            );
            let opened = !call.contains("= -1");
            let path = call.split('"').nth(1).unwrap_or("");
            let inside = path.starts_with(&format!("{root}/")) || path == root;
            let runtime = RUNTIME_FILES.iter().any(|p| path.starts_with(p));
            assert!(
                !opened || inside || runtime,
                "opened outside the repo: {line}"
            );
        }
    }
    assert_eq!(execs, 1, "only gitops-lint itself is executed");
}

#[test]
fn linting_needs_no_network() {
    // A user and network namespace with no interface but a downed loopback.
    let probe = Command::new("unshare").args(["-rn", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        println!("skipped: unshare -rn (user + network namespace) is not permitted here");
        return;
    }
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo");
    let repo = adversarial_repo();
    for root in [demo.as_path(), repo.root.as_path()] {
        let online = lint(&mut bin(), root, "json");
        let mut cmd = Command::new("unshare");
        cmd.args(["-rn"]).arg(env!("CARGO_BIN_EXE_gitops-lint"));
        let offline = lint(&mut cmd, root, "json");
        assert_eq!(online.status.code(), offline.status.code());
        let keys = |o: &Output| findings(o).iter().map(key).collect::<Vec<_>>();
        assert_eq!(keys(&online), keys(&offline), "{}", root.display());
    }
}
