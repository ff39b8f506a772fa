//! Helpers shared by the tests that read the shared corpus.
#![allow(dead_code)] // each test module uses a subset

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

/// Copies a fixture directory into a scratch one; a file that cannot be copied fails the test.
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// `rule severity file:line` of every finding at warning or above, sorted: what a fixture's
/// `expected.txt` lists.
pub fn located_findings(result: &gitops_lint::lint::LintResult) -> Vec<String> {
    let mut lines: Vec<String> = result
        .findings
        .iter()
        .filter(|f| f.severity >= gitops_lint::report::Severity::Warning)
        .map(|f| {
            format!(
                "{} {} {}:{}",
                f.rule,
                f.severity.as_str(),
                result.map.path(f.primary.span.file),
                result.map.line_col(f.primary.span).line
            )
        })
        .collect();
    lines.sort();
    lines
}

/// A fixture's `expected.txt`: its non-comment lines, sorted.
pub fn expected_lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    lines.sort();
    lines
}
