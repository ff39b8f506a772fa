//! What gitops-lint reports on eight real public GitOps repositories
//! (`../shared/corpus/real-repos`, or `$GITOPS_LINT_SHARED/corpus/real-repos`), compared with
//! a reviewed expectation per repo in `tests/real_repos/<repo>.expected`.
//!
//! Every finding (all severities) is one line, `severity rule file:line | first words`, and
//! must be followed by a `review:` line saying why it is right (the Argo CD or Flux fact
//! behind it). Any change in what the tool reports on these repos fails the test, so each one
//! is a reviewed diff. `UPDATE_REAL_REPOS=1` rewrites the files, keeping the reviews of lines
//! that did not change and marking new lines `review: TODO`, which fails until reviewed.
//!
//! The repos were extracted without git metadata; each is linted in a temporary copy whose
//! `.git/config` names the origin URL the corpus README gives, as a clone would.

use crate::common;

use gitops_lint::lint::{LintOptions, lint};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// (directory, origin URL) as the corpus README lists them.
const REPOS: &[(&str, &str)] = &[
    (
        "argoproj__argocd-example-apps",
        "https://github.com/argoproj/argocd-example-apps.git",
    ),
    (
        "fluxcd__flux2-kustomize-helm-example",
        "https://github.com/fluxcd/flux2-kustomize-helm-example",
    ),
    (
        "fluxcd__flux2-multi-tenancy",
        "https://github.com/fluxcd/flux2-multi-tenancy",
    ),
    ("onedr0p__home-ops", "https://github.com/onedr0p/home-ops"),
    (
        "bjw-s__home-ops",
        "https://github.com/bjw-s-labs/home-ops.git",
    ),
    (
        "christianh814__gitops-examples",
        "https://github.com/christianh814/gitops-examples",
    ),
    (
        "gitops-bridge-dev__gitops-bridge-argocd-control-plane-template",
        "https://github.com/gitops-bridge-dev/gitops-bridge-argocd-control-plane-template",
    ),
    (
        "kubernetes-sigs__kustomize",
        "https://github.com/kubernetes-sigs/kustomize",
    ),
];

/// Words of the message kept in the expectation: enough to tell findings apart, few enough
/// that a reworded explanation further on is not a change in what is reported.
const MESSAGE_WORDS: usize = 10;

fn corpus() -> Option<PathBuf> {
    common::shared_corpus("corpus/real-repos", "README.md")
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        } else if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        }
    }
    Ok(())
}

/// The repo's findings as expectation lines, in report order.
fn report_lines(repo_dir: &Path, origin: &str) -> Vec<String> {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("repo");
    copy_tree(repo_dir, &root).expect("copy repo");
    std::fs::create_dir_all(root.join(".git")).expect(".git");
    std::fs::write(
        root.join(".git/config"),
        format!(
            "[remote \"origin\"]\n\turl = {origin}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
        ),
    )
    .expect(".git/config");
    let result = lint(&LintOptions {
        root: root.clone(),
        config: None,
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{}: {e}", repo_dir.display()));
    result
        .findings
        .iter()
        .map(|f| {
            let lc = result.map.line_col(f.primary.span);
            let words: Vec<&str> = f.message.split_whitespace().take(MESSAGE_WORDS).collect();
            format!(
                "{} {} {}:{} | {}",
                f.severity.as_str(),
                f.rule,
                result.map.path(f.primary.span.file),
                lc.line,
                words.join(" ")
            )
        })
        .collect()
}

/// Expectation lines and their reviews (None when a line has no `review:` after it).
fn read_expected(path: &Path) -> Vec<(String, Option<String>)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(review) = trimmed.strip_prefix("review:") {
            if let Some(last) = out.last_mut() {
                last.1 = Some(review.trim().to_string());
            }
            continue;
        }
        out.push((trimmed.to_string(), None));
    }
    out
}

fn write_expected(path: &Path, repo: &str, got: &[String], old: &[(String, Option<String>)]) {
    // Reviews follow their line; identical lines (one finding per app) keep theirs in order.
    let mut reviews: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (line, review) in old {
        if let Some(r) = review {
            reviews.entry(line.as_str()).or_default().push(r.as_str());
        }
    }
    let mut used: BTreeMap<&str, usize> = BTreeMap::new();
    let mut text = format!(
        "# gitops-lint on {repo} (tests/real_repos.rs): every finding, with why it is right.\n"
    );
    if got.is_empty() {
        text.push_str("# no findings\n");
    }
    for line in got {
        let n = used.entry(line.as_str()).or_default();
        let review = reviews
            .get(line.as_str())
            .and_then(|r| r.get(*n).or_else(|| r.last()))
            .copied()
            .unwrap_or("TODO");
        *n += 1;
        text.push_str(&format!("{line}\n  review: {review}\n"));
    }
    std::fs::write(path, text).expect("write expectation");
}

#[test]
fn real_repos_report_exactly_their_reviewed_findings() {
    let Some(corpus) = corpus() else {
        return;
    };
    let expect_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_repos");
    let update = std::env::var_os("UPDATE_REAL_REPOS").is_some();
    let mut failures = Vec::new();
    for (repo, origin) in REPOS {
        let dir = corpus.join(repo);
        if !dir.is_dir() {
            failures.push(format!(
                "{repo}: missing from the corpus at {}",
                dir.display()
            ));
            continue;
        }
        let got = report_lines(&dir, origin);
        let path = expect_dir.join(format!("{repo}.expected"));
        let expected = read_expected(&path);
        if update {
            write_expected(&path, repo, &got, &expected);
        }
        let expected = read_expected(&path);
        let want: Vec<&str> = expected.iter().map(|(l, _)| l.as_str()).collect();
        let have: Vec<&str> = got.iter().map(String::as_str).collect();
        if want != have {
            let gone: Vec<&&str> = want.iter().filter(|l| !have.contains(l)).collect();
            let new: Vec<&&str> = have.iter().filter(|l| !want.contains(l)).collect();
            failures.push(format!(
                "{repo}: the report changed ({} expected, {} now)\n  no longer reported:\n    {}\n  newly reported:\n    {}",
                want.len(),
                have.len(),
                gone.iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n    "),
                new.iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n    ")
            ));
        }
        let unreviewed: Vec<&str> = expected
            .iter()
            .filter(|(_, r)| r.as_deref().is_none_or(|r| r.is_empty() || r == "TODO"))
            .map(|(l, _)| l.as_str())
            .collect();
        if !unreviewed.is_empty() {
            failures.push(format!(
                "{repo}: {} findings without a review:\n    {}",
                unreviewed.len(),
                unreviewed.join("\n    ")
            ));
        }
        let counts = ["error", "warning", "info"].map(|s| {
            have.iter()
                .filter(|l| l.starts_with(&format!("{s} ")))
                .count()
        });
        println!(
            "{repo}: {} errors, {} warnings, {} info",
            counts[0], counts[1], counts[2]
        );
    }
    assert!(
        failures.is_empty(),
        "{}\n(run with UPDATE_REAL_REPOS=1 to rewrite the expectations, then review every TODO)",
        failures.join("\n\n")
    );
}
