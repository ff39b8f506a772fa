//! Helpers shared by the tests that read the shared corpus.
#![allow(dead_code)] // each test binary uses a subset

use std::path::{Path, PathBuf};

/// `../shared` (or `GITOPS_LINT_SHARED`): the corpora and oracles beside the project.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("GITOPS_LINT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// A corpus under the shared directory, known by a file it must hold (`marker`, relative to
/// it). Absent, the test skips with the reason; but in CI (`CI=true`) with the shared
/// directory present, a corpus that cannot be read is a failure, not a skip: a test that
/// silently runs nothing there would pass for the wrong reason.
pub fn shared_corpus(sub: &str, marker: &str) -> Option<PathBuf> {
    let shared = shared_dir();
    let dir = match std::env::var_os("GITOPS_LINT_CORPUS") {
        // The older override names the corpus folder itself (`…/shared/corpus`).
        Some(c) if sub.starts_with("corpus/") => {
            PathBuf::from(c).join(sub.trim_start_matches("corpus/"))
        }
        _ => shared.join(sub),
    };
    if dir.join(marker).is_file() {
        return Some(dir);
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    if in_ci && shared.is_dir() {
        panic!(
            "{} is present but {} cannot be read: in CI the corpus tests must run",
            shared.display(),
            dir.join(marker).display()
        );
    }
    println!(
        "skipped: no corpus at {} (set GITOPS_LINT_SHARED)",
        dir.display()
    );
    None
}

/// The Helm chart corpus.
pub fn corpus() -> Option<PathBuf> {
    shared_corpus("corpus/helm", "README.md")
}

pub fn read_tsv(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// POSIX shell words (quotes and backslashes), enough for the recorded commands.
pub fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                have = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                have = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                cur.push(e);
                            }
                        }
                        _ => cur.push(d),
                    }
                }
            }
            '\\' => {
                have = true;
                if let Some(e) = chars.next() {
                    cur.push(e);
                }
            }
            c if c.is_whitespace() => {
                if have {
                    out.push(std::mem::take(&mut cur));
                    have = false;
                }
            }
            c => {
                have = true;
                cur.push(c);
            }
        }
    }
    if have {
        out.push(cur);
    }
    out
}
