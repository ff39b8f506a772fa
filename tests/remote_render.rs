//! `lint` renders remote charts and bases from the fetch cache, with no network: the test
//! packs testdata/remote's charts and git tree into a cache (`Cache::put`) and writes the lock
//! `fetch` would write, then lints testdata/remote/repo. Findings land on the repo line a
//! person edits (values lines, the `chart:` line, the `resources:` entry), with the fetched
//! file as a related label; what is not fetched or broken says so.

use gitops_lint::lint::{LintOptions, LintResult, lint};
use gitops_lint::remote::{Cache, LOCK_FILE, Lock, LockEntry, RemoteRef, archive};
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/remote")
}

/// Files under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap_or_else(|e| panic!("{e}")).path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read(&p).unwrap_or_else(|e| panic!("{e}"))));
            }
        }
    }
    out.sort();
    out
}

/// A chart directory as `helm package` archives it: every file under `<name>/`.
fn package_chart(name: &str) -> Vec<u8> {
    let dir = testdata().join("charts").join(name);
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (rel, bytes) in files_under(&dir) {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, format!("{name}/{rel}"), &bytes[..])
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let gz = tar.into_inner().unwrap_or_else(|e| panic!("{e}"));
    gz.finish().unwrap_or_else(|e| panic!("{e}"))
}

struct Fixture {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    cache: PathBuf,
    lock: Lock,
}

fn entry(reference: RemoteRef, resolved: &str, digest: String) -> LockEntry {
    LockEntry {
        reference,
        resolved: resolved.into(),
        digest,
        origin: None,
        span: None,
    }
}

/// The fixture repo in a temporary directory, a cache holding every input but the guestbook
/// base, and the lock naming them.
fn fetched() -> Fixture {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let repo = tmp.path().join("repo");
    for (rel, bytes) in files_under(&testdata().join("repo")) {
        let p = repo.join(&rel);
        std::fs::create_dir_all(p.parent().unwrap_or(&repo)).ok();
        std::fs::write(&p, bytes).unwrap_or_else(|e| panic!("{e}"));
    }
    let cache_dir = tmp.path().join("cache");
    let cache = Cache::new(&cache_dir);
    let put = |bytes: Vec<u8>| cache.put(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let mut lock = Lock::default();
    let stable = "https://charts.example.com/stable";
    lock.insert(entry(
        RemoteRef::helm(stable, "web", "1.2.3"),
        "1.2.3",
        put(package_chart("web")),
    ));
    lock.insert(entry(
        RemoteRef::helm(stable, "redis", "17.0.0"),
        "17.0.0",
        put(package_chart("redis")),
    ));
    lock.insert(entry(
        RemoteRef::oci("oci://ghcr.io/example/charts", "podinfo", "6.5.4"),
        "6.5.4",
        put(package_chart("podinfo")),
    ));
    let tree = archive::pack_tree(&files_under(&testdata().join("git/platform")))
        .unwrap_or_else(|e| panic!("{e}"));
    lock.insert(entry(
        RemoteRef::git("https://github.com/example/platform", "v1.2.0"),
        "4f2a9c1e0b7d3a6f8e5c2b1a0d9e8f7c6b5a4d3e",
        put(tree),
    ));
    std::fs::write(repo.join(LOCK_FILE), lock.to_yaml()).unwrap_or_else(|e| panic!("{e}"));
    Fixture {
        _tmp: tmp,
        repo,
        cache: cache_dir,
        lock,
    }
}

fn lint_fixture(f: &Fixture) -> LintResult {
    let opts = LintOptions {
        root: f.repo.clone(),
        config: None,
        ..Default::default()
    };
    lint(&LintOptions {
        cache: Some(f.cache.clone()),
        ..opts.clone()
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// `rule file:line [app] message` plus each secondary label as `  ~ file:line text`.
fn report(r: &LintResult) -> Vec<String> {
    let at = |span| {
        let lc = r.map.line_col(span);
        format!("{}:{}", r.map.path(span.file), lc.line)
    };
    let mut out = Vec::new();
    for f in &r.findings {
        out.push(format!(
            "{} {} [{}] {}",
            f.rule,
            at(f.primary.span),
            f.app.as_deref().unwrap_or("-"),
            f.message
        ));
        for s in &f.secondary {
            out.push(format!("  ~ {} {}", at(s.span), s.text));
        }
    }
    out
}

fn status(r: &LintResult, app: &str) -> String {
    let a = r
        .model
        .apps
        .iter()
        .find(|a| a.name == app)
        .unwrap_or_else(|| panic!("no app {app}"));
    format!("{} {}", a.status().0.as_str(), a.objects.len())
}

#[test]
fn fetched_charts_and_bases_render_with_findings_on_repo_lines() {
    let f = fetched();
    let r = lint_fixture(&f);
    let lines = report(&r);
    let text = lines.join("\n");
    eprintln!("{text}");
    for (app, want) in [
        ("web", "rendered 2"),
        ("podinfo", "rendered 2"),
        ("platform", "rendered 2"),
        ("umbrella", "rendered 2"),
        ("guestbook", "partial 1"),
    ] {
        assert_eq!(status(&r, app), want, "{app}\n{text}");
    }
    // The Argo app's values pin replicas under the chart's HPA: on the values line.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("hpa-replicas-conflict apps/web/values.yaml:2 [web]")),
        "{text}"
    );
    // randAlphaNum in the OCI chart: on the HelmRelease's chart line, the template related.
    let random = lines
        .iter()
        .position(|l| {
            l.starts_with("helm-nondeterministic-function clusters/prod/podinfo.yaml:21 [podinfo]")
        })
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        lines[random + 1..]
            .iter()
            .take_while(|l| l.starts_with("  ~"))
            .any(|l| l.contains("ghcr.io/example/charts/podinfo@6.5.4/templates/secret.yaml:7")),
        "{text}"
    );
    // The remote base declares replicas under the repo's HPA: on the resources entry.
    let base = lines
        .iter()
        .position(|l| {
            l.starts_with("hpa-replicas-conflict apps/platform/kustomization.yaml:5 [platform]")
        })
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        lines[base + 1..]
            .iter()
            .take_while(|l| l.starts_with("  ~"))
            .any(|l| l.contains("github.com/example/platform@v1.2.0/deploy/base/deployment.yaml:6")),
        "{text}"
    );
    // The chart dependency resolved from the cache as `helm dependency build` would.
    let umbrella = r.model.apps.iter().find(|a| a.name == "umbrella").unwrap();
    let kinds: Vec<String> = r
        .model
        .objects_of(umbrella)
        .map(|o| format!("{}/{}", o.object.kind, o.object.name))
        .collect();
    assert!(
        kinds.contains(&"StatefulSet/umbrella-redis".to_string()),
        "{kinds:?}"
    );
    // Not fetched: the rest of the build renders, the entry says to run fetch.
    assert!(
        lines.iter().any(|l| l.starts_with(
            "offline-unrenderable-input apps/guestbook/kustomization.yaml:4 [guestbook]"
        ) && l.contains("run `gitops-lint fetch`")),
        "{text}"
    );
    // Nothing of the cache is reported as a repository file.
    assert!(!text.contains(".gitops-lint/remote"), "{text}");
    assert!(
        !lines.iter().any(|l| l.starts_with("render-failed")),
        "{text}"
    );
}

#[test]
fn without_the_cache_remote_inputs_stay_unrenderable_and_say_fetch() {
    let f = fetched();
    let empty = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let opts = LintOptions {
        root: f.repo.clone(),
        config: None,
        ..Default::default()
    };
    let r = lint(&LintOptions {
        cache: Some(empty.path().to_path_buf()),
        ..opts.clone()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let lines = report(&r);
    let text = lines.join("\n");
    for (app, at) in [
        ("web", "argocd/web.yaml:10"),
        ("podinfo", "clusters/prod/podinfo.yaml:21"),
        ("platform", "apps/platform/kustomization.yaml:5"),
        ("umbrella", "apps/umbrella/Chart.yaml:5"),
    ] {
        assert!(
            lines.iter().any(|l| l
                .starts_with(&format!("offline-unrenderable-input {at} [{app}]"))
                && l.contains("gitops-lint fetch")),
            "{app}\n{text}"
        );
    }
    assert_eq!(status(&r, "web"), "not-rendered 0");
    assert_eq!(status(&r, "platform"), "partial 1", "the HPA still renders");
}

#[test]
fn a_corrupt_cache_entry_is_an_error_naming_it() {
    let f = fetched();
    let web = RemoteRef::helm("https://charts.example.com/stable", "web", "1.2.3");
    let digest = f
        .lock
        .find(&web)
        .map(|e| e.digest.clone())
        .unwrap_or_default();
    let blob = f
        .cache
        .join("blobs/sha256")
        .join(digest.trim_start_matches("sha256:"));
    std::fs::write(&blob, b"not the chart").unwrap_or_else(|e| panic!("{e}"));
    let r = lint_fixture(&f);
    let lines = report(&r);
    let text = lines.join("\n");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("render-failed argocd/web.yaml:10 [web]")
                && l.contains(&digest)
                && l.contains("fetch` again")),
        "{text}"
    );
    // The other inputs still render.
    assert_eq!(status(&r, "podinfo"), "rendered 2");
}

#[test]
fn lock_file_problems_are_findings_on_the_lock_file() {
    let f = fetched();
    let text = std::fs::read_to_string(f.repo.join(LOCK_FILE)).unwrap_or_default();
    let broken = text.replacen("\"sha256:", "\"md5:", 1);
    std::fs::write(f.repo.join(LOCK_FILE), broken).unwrap_or_else(|e| panic!("{e}"));
    let r = lint_fixture(&f);
    let lines = report(&r);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("yaml-syntax {LOCK_FILE}:"))),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn the_default_cache_lives_in_the_repo_and_is_not_linted_as_content() {
    let f = fetched();
    let inside = f.repo.join(".gitops-lint/cache");
    std::fs::create_dir_all(f.repo.join(".gitops-lint")).ok();
    std::fs::rename(&f.cache, &inside).unwrap_or_else(|e| panic!("{e}"));
    // Junk beside the cache is not the repository's content.
    std::fs::write(f.repo.join(".gitops-lint/notes.yaml"), "a: [unclosed\n").ok();
    if std::env::var_os("GITOPS_LINT_CACHE").is_some() {
        eprintln!("skipped: GITOPS_LINT_CACHE is set, so the default cache is not used");
        return;
    }
    let opts = LintOptions {
        root: f.repo.clone(),
        config: None,
        ..Default::default()
    };
    let r = lint(&LintOptions {
        cache: None,
        ..opts.clone()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let text = report(&r).join("\n");
    assert_eq!(status(&r, "web"), "rendered 2", "{text}");
    assert!(
        !text.contains("notes.yaml") && !text.contains("yaml-syntax"),
        "{text}"
    );
}

#[test]
fn a_fetched_base_cannot_reach_outside_its_clone() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let repo = tmp.path().join("repo");
    let write = |rel: &str, text: &str| {
        let p = repo.join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(&repo)).ok();
        std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
    };
    write(
        "apps/edge/kustomization.yaml",
        "resources:\n  - github.com/example/edge//base?ref=v1\n",
    );
    write(
        "apps/private/kustomization.yaml",
        "resources:\n  - secret.yaml\n",
    );
    write(
        "apps/private/secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: private\n",
    );
    let tree = archive::pack_tree(&[(
        "base/kustomization.yaml".to_string(),
        b"resources:\n  - ../../../../apps/private\n".to_vec(),
    )])
    .unwrap_or_else(|e| panic!("{e}"));
    let cache_dir = tmp.path().join("cache");
    let digest = Cache::new(&cache_dir)
        .put(&tree)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut lock = Lock::default();
    lock.insert(entry(
        RemoteRef::git("https://github.com/example/edge", "v1"),
        "abc",
        digest,
    ));
    std::fs::write(repo.join(LOCK_FILE), lock.to_yaml()).unwrap_or_else(|e| panic!("{e}"));
    let opts = LintOptions {
        root: repo.clone(),
        config: None,
        ..Default::default()
    };
    let r = lint(&LintOptions {
        cache: Some(cache_dir.clone()),
        ..opts.clone()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let lines = report(&r);
    let text = lines.join("\n");
    assert!(
        lines.iter().any(
            |l| l.starts_with("render-failed apps/edge/kustomization.yaml:2")
                && l.contains("must be within the repo")
        ),
        "{text}"
    );
    let edge = r
        .model
        .apps
        .iter()
        .find(|a| a.name == "apps/edge")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(edge.objects.is_empty(), "{text}");
}

#[test]
fn inline_values_object_of_an_argo_app_is_the_line_to_edit() {
    let f = fetched();
    let app = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://charts.example.com/stable\n    chart: web\n    targetRevision: 1.2.3\n    helm:\n      valuesObject:\n        replicaCount: 4\n        autoscaling:\n          enabled: true\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: web\n  syncPolicy:\n    automated:\n      selfHeal: true\n";
    std::fs::write(f.repo.join("argocd/web.yaml"), app).unwrap_or_else(|e| panic!("{e}"));
    let r = lint_fixture(&f);
    let lines = report(&r);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("hpa-replicas-conflict argocd/web.yaml:14 [web]")),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn the_cli_reads_the_cache_from_the_flag_or_the_environment() {
    let f = fetched();
    let bin = env!("CARGO_BIN_EXE_gitops-lint");
    let apps = std::process::Command::new(bin)
        .args(["apps", "--format", "json", "--cache"])
        .arg(&f.cache)
        .arg(&f.repo)
        .env_remove("GITOPS_LINT_CACHE")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let json: serde_json::Value =
        serde_json::from_slice(&apps.stdout).unwrap_or_else(|e| panic!("{e}"));
    let web = json["apps"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["name"] == "web"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(web["status"], "rendered", "{web:#}");
    assert_eq!(web["remotes"][0]["chart"], "web", "{web:#}");
    let lint = std::process::Command::new(bin)
        .args(["--format", "json", "--comment", "off"])
        .arg(&f.repo)
        .env("GITOPS_LINT_CACHE", &f.cache)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let json: serde_json::Value =
        serde_json::from_slice(&lint.stdout).unwrap_or_else(|e| panic!("{e}"));
    let findings = json["findings"].as_array().cloned().unwrap_or_default();
    assert!(
        findings
            .iter()
            .any(|f| f["rule"] == "hpa-replicas-conflict" && f["file"] == "apps/web/values.yaml"),
        "{findings:#?}"
    );
}

/// A remote base that follows a branch stays `unpinned-source` once it is fetched: the cache
/// holds today's commit of `main`, the next fetch another one.
#[test]
fn a_fetched_base_on_a_branch_is_still_unpinned() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let repo = tmp.path().join("repo");
    let p = repo.join("apps/edge/kustomization.yaml");
    std::fs::create_dir_all(p.parent().unwrap_or(&repo)).ok();
    std::fs::write(
        &p,
        "resources:\n  - github.com/example/edge//base?ref=main\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let tree = archive::pack_tree(&[
        (
            "base/kustomization.yaml".to_string(),
            b"resources:\n  - config.yaml\n".to_vec(),
        ),
        (
            "base/config.yaml".to_string(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: edge\ndata:\n  mode: fast\n"
                .to_vec(),
        ),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let cache_dir = tmp.path().join("cache");
    let digest = Cache::new(&cache_dir)
        .put(&tree)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut lock = Lock::default();
    lock.insert(entry(
        RemoteRef::git("https://github.com/example/edge", "main"),
        "4f2a9c1e0b7d3a6f8e5c2b1a0d9e8f7c6b5a4d3e",
        digest,
    ));
    std::fs::write(repo.join(LOCK_FILE), lock.to_yaml()).unwrap_or_else(|e| panic!("{e}"));
    let opts = LintOptions {
        root: repo.clone(),
        config: None,
        ..Default::default()
    };
    let r = lint(&LintOptions {
        cache: Some(cache_dir.clone()),
        ..opts.clone()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let lines = report(&r);
    assert_eq!(status(&r, "apps/edge"), "rendered 1", "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("unpinned-source apps/edge/kustomization.yaml:2")),
        "{lines:#?}"
    );
}
