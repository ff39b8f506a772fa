//! Parity with `kubectl kustomize` (Kustomize v5.5.0) on the shared conformance corpus.
//!
//! Every case in `vectors/`, every rendered tree in `real/` and every case in
//! `vectors-errors/` is built natively. The score counts **strict** matches: the output text
//! equals the oracle's after normalising line endings, trailing whitespace and trailing
//! blank lines (README "Strict"). A semantic comparison (documents in order, as data) is
//! reported alongside for diagnosis. Error cases must fail with an issue.
//!
//! Every mismatch must be listed in `testdata/kustomize/known-differences.tsv` with a reason;
//! the test fails when an unlisted case mismatches or a listed one starts to match.
//! Set `KUSTOMIZE_PARITY_DIFF=1` to print a diff head for each mismatch.

use crate::common;

use gitops_lint::render::kustomize::{BuildOptions, build, to_yaml_stream};
use gitops_lint::source::{DiskFs, FileId, SourceMap};
use gitops_lint::yaml::{Limits, parse_str};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn corpus_dir() -> Option<PathBuf> {
    common::shared_corpus("corpus/kustomize", "README.md")
}

fn normalise(s: &str) -> String {
    let mut lines: Vec<&str> = s.lines().map(|l| l.trim_end()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

fn semantic(s: &str) -> Vec<serde_json::Value> {
    let parsed = parse_str(s, FileId(0), &Limits::default());
    parsed
        .docs
        .iter()
        .filter(|d| !d.root.is_null())
        .map(|d| d.root.to_json())
        .collect()
}

enum Outcome {
    Strict,
    Semantic(String),
    Differs(String),
    Failed(String),
}

fn render(root: &Path, dir: &str) -> Result<String, String> {
    let root = std::fs::canonicalize(root).map_err(|e| e.to_string())?;
    let map = Arc::new(SourceMap::new());
    let fs = DiskFs::new(root, map.clone(), 64 << 20);
    let out = build(&fs, dir, &BuildOptions::default());
    if let Some(issue) = out.issues.first() {
        let lc = map.line_col(issue.span);
        return Err(format!(
            "{}:{}: {:?}: {}",
            map.path(issue.span.file),
            lc.line,
            issue.kind,
            issue.message
        ));
    }
    Ok(to_yaml_stream(&out.objects))
}

fn compare(root: &Path, dir: &str, expected: &Path) -> Outcome {
    let want = std::fs::read_to_string(expected).unwrap_or_default();
    match render(root, dir) {
        Err(e) => Outcome::Failed(e),
        Ok(got) => {
            let (g, w) = (normalise(&got), normalise(&want));
            if g == w {
                return Outcome::Strict;
            }
            let first = g
                .lines()
                .zip(w.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(g.lines().count().min(w.lines().count()));
            let hint = format!(
                "line {}: got {:?} want {:?}",
                first + 1,
                g.lines().nth(first).unwrap_or(""),
                w.lines().nth(first).unwrap_or("")
            );
            if semantic(&got) == semantic(&want) {
                Outcome::Semantic(hint)
            } else {
                Outcome::Differs(hint)
            }
        }
    }
}

fn case_root(case_dir: &Path) -> String {
    let text = std::fs::read_to_string(case_dir.join("case.json")).unwrap_or_default();
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("root").and_then(|r| r.as_str()).map(str::to_string))
        .unwrap_or_else(|| ".".into())
}

fn case_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// (set, case) → reason, from the checked-in known-differences file.
fn known_differences() -> Vec<(String, String, String)> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize/known-differences.tsv");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut parts = l.splitn(4, '\t');
            let set = parts.next()?.to_string();
            let case = parts.next()?.to_string();
            let category = parts.next().unwrap_or("").to_string();
            let reason = parts.next().unwrap_or("").to_string();
            Some((set, case, format!("{category}: {reason}")))
        })
        .collect()
}

#[test]
fn kustomize_corpus_parity() {
    let Some(corpus) = corpus_dir() else {
        println!("kustomize parity: skipped (corpus not found; set GITOPS_LINT_CORPUS)");
        return;
    };
    let show_diff = std::env::var_os("KUSTOMIZE_PARITY_DIFF").is_some();

    let vectors: Vec<(String, Outcome)> = case_dirs(&corpus.join("vectors"))
        .par_iter()
        .map(|d| {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, compare(d, &case_root(d), &d.join("expected.yaml")))
        })
        .collect();

    let index = std::fs::read_to_string(corpus.join("real/INDEX.tsv")).unwrap_or_default();
    let rows: Vec<(String, String, String)> = index
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() >= 4 && f[2] == "rendered")
                .then(|| (f[0].to_string(), f[1].to_string(), f[3].to_string()))
        })
        .collect();
    let real: Vec<(String, Outcome)> = rows
        .par_iter()
        .map(|(repo, path, exp)| {
            (
                format!("{repo}/{path}"),
                compare(&corpus.join("real").join(repo), path, &corpus.join(exp)),
            )
        })
        .collect();

    let errors: Vec<(String, Outcome)> = case_dirs(&corpus.join("vectors-errors"))
        .par_iter()
        .map(|d| {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let outcome = match render(d, &case_root(d)) {
                Err(e) if !e.trim().is_empty() => Outcome::Strict,
                Err(_) => Outcome::Differs("failed without a message".into()),
                Ok(_) => Outcome::Differs("built, but kustomize fails here".into()),
            };
            (name, outcome)
        })
        .collect();

    let known = known_differences();
    let mut problems: Vec<String> = Vec::new();
    let mut tally = |set: &str, results: &[(String, Outcome)]| -> (usize, usize, usize) {
        let (mut strict, mut sem) = (0, 0);
        for (case, outcome) in results {
            let listed = known.iter().find(|(s, c, _)| s == set && c == case);
            let detail = match outcome {
                Outcome::Strict => {
                    strict += 1;
                    if listed.is_some() {
                        problems.push(format!(
                            "{set} {case}: listed as a known difference but now matches"
                        ));
                    }
                    continue;
                }
                Outcome::Semantic(h) => {
                    sem += 1;
                    format!("same data, different text ({h})")
                }
                Outcome::Differs(h) => format!("differs ({h})"),
                Outcome::Failed(e) => format!("build failed: {e}"),
            };
            if listed.is_none() {
                problems.push(format!("{set} {case}: {detail}"));
            } else if show_diff {
                println!("known {set} {case}: {detail}");
            }
        }
        (strict, sem, results.len())
    };
    let (vs, vsem, vn) = tally("vector", &vectors);
    let (rs, rsem, rn) = tally("real", &real);
    let (es, _, en) = tally("error", &errors);
    println!(
        "kustomize parity: {vs}/{vn} vectors, {rs}/{rn} real trees (strict text); semantic-only matches: {vsem} vectors, {rsem} real trees; error cases failing as expected: {es}/{en}"
    );
    assert!(
        problems.is_empty(),
        "unexpected parity results:\n{}",
        problems.join("\n")
    );
}
