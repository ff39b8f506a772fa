//! `--fix` on the seed repos (the demo and every rule's `bad` fixture): the safe fixes
//! remove the drift conflicts, a second lint run reports none of the fixed findings, no file
//! stops parsing, and every line the fix did not touch is byte for byte the same.

use gitops_lint::baseline::FindingKey;
use gitops_lint::lint::{LintOptions, lint};
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

fn seed_repos() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut repos = vec![root.join("testdata/demo")];
    for rule in std::fs::read_dir(root.join("testdata/rules"))
        .expect("rules")
        .flatten()
    {
        if rule.path().join("bad").is_dir() {
            repos.push(rule.path().join("bad"));
        }
    }
    repos.sort();
    repos
}

/// Findings (as stable keys) whose safe fix resolves them; the reason-comment fix only
/// inserts a `# reason: TODO` marker, which by design keeps its finding until a person writes
/// the reason.
fn fixable(dir: &Path) -> Vec<FindingKey> {
    let r = lint(&LintOptions {
        root: dir.to_path_buf(),
        config: None,
        ..Default::default()
    })
    .expect("lint");
    r.findings
        .iter()
        .filter(|f| f.fix.as_ref().is_some_and(|x| x.safe))
        .filter(|f| f.rule != "ignore-differences-unjustified")
        .map(|f| FindingKey::of(f, &r.map))
        .collect()
}

fn all_keys(dir: &Path) -> (Vec<FindingKey>, usize) {
    let r = lint(&LintOptions {
        root: dir.to_path_buf(),
        config: None,
        ..Default::default()
    })
    .expect("lint");
    let syntax = r
        .findings
        .iter()
        .filter(|f| f.rule == "yaml-syntax")
        .count();
    (
        r.findings
            .iter()
            .map(|f| FindingKey::of(f, &r.map))
            .collect(),
        syntax,
    )
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read").flatten() {
        if e.path().is_dir() {
            files(&e.path(), out);
        } else {
            out.push(e.path());
        }
    }
}

#[test]
fn fix_removes_the_conflicts_on_every_seed_repo() {
    let mut total_fixed = 0;
    for seed in seed_repos() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("repo");
        copy_dir(&seed, &dir);
        let before_keys = fixable(&dir);
        let (_, syntax_before) = all_keys(&dir);

        let dry = bin()
            .args(["--fix", "--dry-run"])
            .arg(&dir)
            .output()
            .expect("run");
        let patch = String::from_utf8_lossy(&dry.stdout).into_owned();
        assert_eq!(dry.status.code(), Some(0));
        let (after_dry, _) = all_keys(&dir);
        assert!(
            after_dry.iter().filter(|k| before_keys.contains(k)).count() >= before_keys.len(),
            "dry run wrote files"
        );

        let mut originals = Vec::new();
        let mut paths = Vec::new();
        files(&dir, &mut paths);
        for p in &paths {
            originals.push((p.clone(), std::fs::read_to_string(p).unwrap_or_default()));
        }
        let out = bin()
            .args(["--fix", "--no-color"])
            .arg(&dir)
            .output()
            .expect("run");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );

        let (after, syntax_after) = all_keys(&dir);
        let left: Vec<&FindingKey> = before_keys.iter().filter(|k| after.contains(k)).collect();
        assert!(
            left.is_empty(),
            "{}: still reported after --fix: {left:#?}",
            seed.display()
        );
        assert_eq!(
            syntax_after,
            syntax_before,
            "{}: a fix broke the YAML",
            seed.display()
        );
        total_fixed += before_keys.len();

        // Untouched lines stay byte for byte: every original line is still there, in order,
        // except the ones the patch removes.
        for (p, before) in originals {
            let after = std::fs::read_to_string(&p).unwrap_or_default();
            if after == before {
                continue;
            }
            let removed: Vec<&str> = patch
                .lines()
                .filter(|l| l.starts_with('-') && !l.starts_with("---"))
                .map(|l| &l[1..])
                .collect();
            let mut rest = after.lines();
            for line in before.lines() {
                if rest.clone().any(|l| l == line) {
                    for l in rest.by_ref() {
                        if l == line {
                            break;
                        }
                    }
                } else {
                    assert!(
                        removed.contains(&line),
                        "{}: line `{line}` changed",
                        p.display()
                    );
                }
            }
        }
    }
    assert!(
        total_fixed >= 5,
        "the seeds have fixable findings ({total_fixed})"
    );
}

#[test]
fn demo_fix_is_the_catalog_step_one() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("demo");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo"),
        &dir,
    );
    let out = bin()
        .args(["--fix", "--dry-run"])
        .arg(&dir)
        .output()
        .expect("run");
    let patch = String::from_utf8_lossy(&out.stdout);
    assert!(patch.contains("+++ b/argocd/payments.yaml"), "{patch}");
    assert!(patch.contains("+    - group: apps\n+      kind: Deployment\n+      name: payments\n+      namespace: prod\n+      jsonPointers:\n+        - /spec/replicas\n"), "{patch}");
    assert!(
        patch.contains("+      - RespectIgnoreDifferences=true\n"),
        "{patch}"
    );
    let out = bin()
        .args(["--fix", "--format", "json"])
        .arg(&dir)
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rules: Vec<&str> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert!(!rules.contains(&"hpa-replicas-conflict"), "{rules:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("applied fixes for 1 finding(s) in 1 file(s)")
    );
}

#[test]
fn baseline_hides_known_findings_and_keeps_new_ones() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("demo");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo"),
        &dir,
    );
    let baseline = tmp.path().join("baseline.json");
    let out = bin()
        .arg("--write-baseline")
        .arg(&baseline)
        .arg(&dir)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let out = bin()
        .arg("--baseline")
        .arg(&baseline)
        .args(["--no-color"])
        .arg(&dir)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("known finding(s) hidden by the baseline")
    );

    // Move the conflict down two lines: still known. Add a second conflict: new.
    let dep = dir.join("apps/payments/deployment.yaml");
    let text = std::fs::read_to_string(&dep).expect("read");
    std::fs::write(
        &dep,
        text.replacen(
            "  name: payments\n  labels:\n",
            "  name: payments\n  annotations:\n    team: payments\n  labels:\n",
            1,
        ),
    )
    .expect("write");
    let out = bin()
        .arg("--baseline")
        .arg(&baseline)
        .args(["--format", "json"])
        .arg(&dir)
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(0), "{v}");
    std::fs::write(
        dir.join("apps/payments/worker.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: worker\nspec:\n  replicas: 2\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: worker\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: worker\n  minReplicas: 1\n  maxReplicas: 3\n",
    )
    .expect("write");
    let out = bin()
        .arg("--baseline")
        .arg(&baseline)
        .args(["--format", "json"])
        .arg(&dir)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["findings"][0]["object"], "Deployment/prod/worker", "{v}");
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(1), "{v}");
}

#[test]
fn unsafe_fixes_are_opt_in() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("repo");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules/hpa-replicas-conflict/bad"),
        &dir,
    );
    // The worker's Application goes: its KEDA target is then a directory applied by hand,
    // which has no safe fix (no app to carry an ignoreDifferences entry).
    std::fs::remove_file(dir.join("argocd/worker.yaml")).expect("remove");
    let count = |dir: &Path| {
        let r = lint(&LintOptions {
            root: dir.to_path_buf(),
            config: None,
            ..Default::default()
        })
        .expect("lint");
        r.findings
            .iter()
            .filter(|f| f.rule == "hpa-replicas-conflict")
            .count()
    };
    assert_eq!(count(&dir), 2);
    // The Argo app gets the safe step one; the standalone KEDA target has no safe fix.
    bin().arg("--fix").arg(&dir).output().expect("run");
    assert_eq!(count(&dir), 1);
    let worker = dir.join("apps/worker/scaledobject.yaml");
    assert!(
        std::fs::read_to_string(&worker)
            .expect("read")
            .contains("  replicas: 1\n")
    );
    // Opting in removes the replicas line (the whole line, nothing else).
    let before = std::fs::read_to_string(&worker).expect("read");
    bin()
        .args(["--fix", "--unsafe-fixes"])
        .arg(&dir)
        .output()
        .expect("run");
    assert_eq!(count(&dir), 0);
    let after = std::fs::read_to_string(&worker).expect("read");
    assert_eq!(after, before.replacen("  replicas: 1\n", "", 1));
}

/// Leaves of a YAML text by (document, key path): the scalar text and its byte range.
type Leaves = std::collections::BTreeMap<(usize, String), (String, (u32, u32))>;

fn leaves(text: &str) -> Leaves {
    use gitops_lint::yaml::{Limits, Node, Value, parse_str};
    let parsed = parse_str(text, gitops_lint::source::FileId(0), &Limits::default());
    assert!(parsed.error.is_none(), "does not parse: {:?}", parsed.error);
    let mut out = Leaves::new();
    fn walk(n: &Node, doc: usize, path: String, out: &mut Leaves) {
        match &n.value {
            Value::Map(es) if !es.is_empty() => {
                for e in es {
                    walk(&e.value, doc, format!("{path}/{}", e.key.key_str()), out);
                }
            }
            Value::Seq(xs) if !xs.is_empty() => {
                for (i, x) in xs.iter().enumerate() {
                    walk(x, doc, format!("{path}/{i}"), out);
                }
            }
            _ => {
                let v = n.scalar_text().unwrap_or_else(|| format!("{:?}", n.value));
                out.insert((doc, path), (v, (n.span.start, n.span.end)));
            }
        }
    }
    for d in &parsed.docs {
        walk(&d.root, d.index, String::new(), &mut out);
    }
    out
}

#[test]
fn after_fix_every_object_is_the_original_minus_the_fixed_paths() {
    let mut files_fixed = 0;
    for repo in seed_repos() {
        let r = lint(&LintOptions {
            root: repo.clone(),
            config: None,
            ..Default::default()
        })
        .expect("lint");
        // The byte ranges the safe fixes edit, per file.
        let mut edited: std::collections::BTreeMap<String, Vec<(u32, u32)>> = Default::default();
        for f in &r.findings {
            for e in f.fix.iter().filter(|x| x.safe).flat_map(|x| &x.edits) {
                edited
                    .entry(r.map.path(e.span.file).to_string())
                    .or_default()
                    .push((e.span.start, e.span.end));
            }
        }
        if edited.is_empty() {
            continue;
        }
        let tmp = tempfile::tempdir().expect("tmp");
        copy_dir(&repo, tmp.path());
        let out = bin().arg(tmp.path()).arg("--fix").output().expect("fix");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("applied fixes"),
            "{}: {}",
            repo.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        for (file, ranges) in &edited {
            let before = std::fs::read_to_string(repo.join(file)).expect("before");
            let after = std::fs::read_to_string(tmp.path().join(file)).expect("after");
            if before == after {
                continue;
            }
            files_fixed += 1;
            let (lb, la) = (leaves(&before), leaves(&after));
            for (k, (v, span)) in &lb {
                if la.get(k).is_some_and(|(w, _)| w == v) {
                    continue;
                }
                assert!(
                    ranges
                        .iter()
                        .any(|&(s, t)| span.0 >= s && span.1 <= t.max(s)),
                    "{}/{file}: --fix changed {} (document {}), which no fix edits",
                    repo.display(),
                    k.1,
                    k.0 + 1
                );
            }
        }
    }
    assert!(files_fixed > 0, "no fixture was fixed");
}
