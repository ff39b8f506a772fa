//! The `.gitignore` and `.ignore` files of an in-memory tree (a git revision), applied as the
//! disk walk applies them through ripgrep's walker: each file's patterns hold for its own
//! directory and below, a deeper file decides before a shallower one, `.ignore` before
//! `.gitignore` in one directory, and an ignored directory is not entered (its own ignore
//! files are never read, so they cannot bring anything back).

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::BTreeMap;

/// Ignore file names, the stronger first.
const NAMES: [&str; 2] = [".ignore", ".gitignore"];

pub(super) struct TreeIgnores {
    /// Directory → its matchers, `.ignore` first.
    by_dir: BTreeMap<String, Vec<Gitignore>>,
}

impl TreeIgnores {
    /// Read the ignore files among `paths` (with `read` giving their text), shallow
    /// directories first, skipping those in a directory already ignored.
    pub(super) fn new<'a>(
        paths: impl Iterator<Item = &'a str>,
        read: impl Fn(&str) -> Option<String>,
    ) -> TreeIgnores {
        let mut files: Vec<(usize, String, usize, &str)> = Vec::new();
        for p in paths {
            let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
            if let Some(rank) = NAMES.iter().position(|n| *n == name) {
                files.push((depth(dir), dir.to_string(), rank, p));
            }
        }
        files.sort();
        let mut out = TreeIgnores {
            by_dir: BTreeMap::new(),
        };
        for (_, dir, _, path) in files {
            if !dir.is_empty() && out.ignored(&dir, true) {
                continue;
            }
            let Some(text) = read(path) else { continue };
            let mut builder = GitignoreBuilder::new(&dir);
            for line in text.lines() {
                // A line the gitignore syntax rejects is skipped, as git does.
                let _ = builder.add_line(None, line);
            }
            if let Ok(matcher) = builder.build() {
                out.by_dir.entry(dir).or_default().push(matcher);
            }
        }
        out
    }

    /// Is `path` (a file, or a directory when `is_dir`) ignored?
    pub(super) fn ignored(&self, path: &str, is_dir: bool) -> bool {
        // The ancestors of `path`, deepest first (a file's own directory included).
        let mut dirs = vec![String::new()];
        let mut acc = String::new();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(part);
            dirs.push(acc.clone());
        }
        for dir in dirs.iter().rev() {
            for m in self.by_dir.get(dir).into_iter().flatten() {
                match m.matched_path_or_any_parents(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
        }
        false
    }
}

fn depth(dir: &str) -> usize {
    if dir.is_empty() {
        0
    } else {
        dir.matches('/').count() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignores(files: &[(&str, &str)]) -> TreeIgnores {
        TreeIgnores::new(files.iter().map(|(p, _)| *p), |p| {
            files
                .iter()
                .find(|(q, _)| *q == p)
                .map(|(_, t)| t.to_string())
        })
    }

    #[test]
    fn deeper_files_decide_first_and_ignored_directories_stay_closed() {
        let i = ignores(&[
            (".gitignore", "scratch/\n*.tmp.yaml\n"),
            ("apps/.gitignore", "!keep.tmp.yaml\n"),
            ("apps/.ignore", "local.yaml\n"),
            ("scratch/.gitignore", "!*\n"),
        ]);
        assert!(i.ignored("scratch/a.yaml", false));
        assert!(i.ignored("x.tmp.yaml", false));
        assert!(!i.ignored("apps/keep.tmp.yaml", false));
        assert!(i.ignored("apps/other.tmp.yaml", false));
        assert!(i.ignored("apps/web/local.yaml", false));
        assert!(!i.ignored("apps/web/deploy.yaml", false));
    }
}
