//! Reading a git revision of the linted repository, for `gitops-lint diff --base REV`.
//!
//! This is the one place the crate spawns a process, and only in diff mode: the repo's own
//! `git` (no network, no checkout, no hooks run by these plumbing commands). `ls-tree` lists
//! the revision's blobs, one `cat-file --batch` streams their contents, `diff --name-status`
//! and `diff -U0` say which files and lines the change touches.

use super::MemTree;
use super::relative_path;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The linted directory inside its git work tree.
pub struct GitRepo {
    toplevel: PathBuf,
    /// The linted root relative to the top level (`""` at the top), `/`-separated.
    prefix: String,
}

/// A file the change touches, relative to the linted root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// `A`dded, `M`odified, `D`eleted, `T`ype changed.
    pub status: char,
    pub path: String,
}

fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    // Plumbing output must not depend on the user's pager, colours or path quoting; and git
    // must neither run a configured program (fsmonitor hook, textconv, external diff) nor
    // reach the network (a partial clone fetches missing blobs on demand).
    c.current_dir(dir)
        .args(["-c", "core.quotepath=off", "-c", "color.ui=false"])
        .args(["-c", "core.fsmonitor=false", "-c", "protocol.allow=never"])
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    c
}

fn run(cmd: &mut Command, what: &str) -> Result<Vec<u8>, String> {
    let out = cmd
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run git ({what}): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// A revision given on the command line; refuse option-looking values (`--output=…`).
fn check_rev(rev: &str) -> Result<(), String> {
    if rev.is_empty() || rev.starts_with('-') || rev.contains('\0') {
        return Err(format!("`{rev}` is not a git revision"));
    }
    Ok(())
}

impl GitRepo {
    /// The work tree that contains `root` (canonical).
    pub fn open(root: &Path) -> Result<GitRepo, String> {
        let out = run(
            git(root).args(["rev-parse", "--show-toplevel"]),
            "rev-parse --show-toplevel",
        )?;
        let top = String::from_utf8_lossy(&out).trim().to_string();
        let toplevel = std::fs::canonicalize(&top).map_err(|e| format!("{top}: {e}"))?;
        let prefix = relative_path(&toplevel, root)
            .ok_or_else(|| format!("{} is not inside {}", root.display(), toplevel.display()))?;
        Ok(GitRepo { toplevel, prefix })
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The commit id `rev` names.
    pub fn resolve(&self, rev: &str) -> Result<String, String> {
        check_rev(rev)?;
        let spec = format!("{rev}^{{commit}}");
        let out = run(
            git(&self.toplevel).args(["rev-parse", "--verify", "--quiet", &spec]),
            &format!("rev-parse {rev}"),
        )
        .map_err(|_| {
            format!(
                "unknown revision `{rev}` (in CI, fetch it: actions/checkout with fetch-depth: 0)"
            )
        })?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    fn strip<'a>(&self, path: &'a str) -> Option<&'a str> {
        if self.prefix.is_empty() {
            Some(path)
        } else {
            path.strip_prefix(&self.prefix)?.strip_prefix('/')
        }
    }

    fn pathspec(&self) -> String {
        if self.prefix.is_empty() {
            ".".into()
        } else {
            self.prefix.clone()
        }
    }

    /// The files of the linted directory at `commit`, in memory. Blobs over `max_bytes` are
    /// recorded by size only (the walk reports them as the working-tree walk does).
    pub fn tree_at(&self, commit: &str, max_bytes: u64) -> Result<MemTree, String> {
        check_rev(commit)?;
        let listing = run(
            git(&self.toplevel)
                .args(["ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--"])
                .arg(self.pathspec()),
            "ls-tree",
        )?;
        let mut tree = MemTree::new();
        let mut wanted: Vec<(String, String)> = Vec::new();
        for record in listing.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let record = String::from_utf8_lossy(record);
            let Some((meta, path)) = record.split_once('\t') else {
                continue;
            };
            let fields: Vec<&str> = meta.split_whitespace().collect();
            // mode type object size; symlinks (120000) and submodules are not read, as the
            // working-tree walk does not follow links out of the tree.
            let [mode, kind, object, size] = fields[..] else {
                continue;
            };
            if kind != "blob" || mode == "120000" {
                continue;
            }
            let Some(rel) = self.strip(path) else {
                continue;
            };
            let size: u64 = size.parse().unwrap_or(u64::MAX);
            if size > max_bytes {
                tree.insert_oversized(rel, size);
            } else {
                wanted.push((object.to_string(), rel.to_string()));
            }
        }
        for (rel, bytes) in self.blobs(wanted)? {
            tree.insert(&rel, bytes);
        }
        Ok(tree)
    }

    /// Contents of many blobs through one `git cat-file --batch`.
    fn blobs(&self, wanted: Vec<(String, String)>) -> Result<Vec<(String, Vec<u8>)>, String> {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let mut child = git(&self.toplevel)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run git cat-file: {e}"))?;
        let mut stdin = child.stdin.take().ok_or("git cat-file: no stdin")?;
        let ids: Vec<String> = wanted.iter().map(|(id, _)| id.clone()).collect();
        // Feed ids from another thread: git blocks writing output until we read it.
        let feeder = std::thread::spawn(move || {
            for id in ids {
                if writeln!(stdin, "{id}").is_err() {
                    break;
                }
            }
        });
        let stdout = child.stdout.take().ok_or("git cat-file: no stdout")?;
        let mut reader = BufReader::new(stdout);
        let mut out = Vec::with_capacity(wanted.len());
        for (_, rel) in wanted {
            let mut header = String::new();
            reader
                .read_line(&mut header)
                .map_err(|e| format!("git cat-file: {e}"))?;
            let parts: Vec<&str> = header.split_whitespace().collect();
            let [_, "blob", size] = parts[..] else {
                return Err(format!(
                    "git cat-file: unexpected answer `{}` for {rel}",
                    header.trim()
                ));
            };
            let size: usize = size
                .parse()
                .map_err(|_| format!("git cat-file: bad size for {rel}"))?;
            let mut bytes = vec![0u8; size + 1]; // content and its trailing LF
            reader
                .read_exact(&mut bytes)
                .map_err(|e| format!("git cat-file: {e}"))?;
            bytes.truncate(size);
            out.push((rel, bytes));
        }
        let _ = feeder.join();
        let _ = child.wait();
        Ok(out)
    }

    /// Files that differ between `commit` and the working tree (untracked ones included),
    /// under the linted root.
    pub fn changed_files(&self, commit: &str) -> Result<Vec<ChangedFile>, String> {
        check_rev(commit)?;
        let out = run(
            git(&self.toplevel)
                .args([
                    "diff",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--no-renames",
                    "--name-status",
                    "-z",
                    commit,
                    "--",
                ])
                .arg(self.pathspec()),
            "diff --name-status",
        )?;
        // `--no-renames`: a rename is a delete and an add, both of which map to apps.
        let mut fields = out.split(|&b| b == 0).filter(|f| !f.is_empty());
        let mut files = Vec::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            let status = String::from_utf8_lossy(status)
                .chars()
                .next()
                .unwrap_or('M');
            let path = String::from_utf8_lossy(path);
            if let Some(rel) = self.strip(&path) {
                files.push(ChangedFile {
                    status,
                    path: rel.to_string(),
                });
            }
        }
        // Untracked files are part of the working tree the head lint reads (local runs).
        let untracked = run(
            git(&self.toplevel)
                .args(["ls-files", "--others", "--exclude-standard", "-z", "--"])
                .arg(self.pathspec()),
            "ls-files --others",
        )?;
        for path in untracked.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(path);
            if let Some(rel) = self.strip(&path) {
                files.push(ChangedFile {
                    status: 'A',
                    path: rel.to_string(),
                });
            }
        }
        Ok(files)
    }

    /// Line ranges (1-based, inclusive) added or changed in the working tree relative to
    /// `commit`, per root-relative path: where a pull-request review may comment; and of
    /// those, the ones no line of `commit` stands for (hunks that remove nothing).
    pub fn changed_lines(&self, commit: &str) -> Result<ChangedLines, String> {
        check_rev(commit)?;
        let out = run(
            git(&self.toplevel)
                .args([
                    "diff",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--no-renames",
                    "-U0",
                    commit,
                    "--",
                ])
                .arg(self.pathspec()),
            "diff -U0",
        )?;
        Ok(parse_hunks(&String::from_utf8_lossy(&out), |p| {
            self.strip(p).map(str::to_string)
        }))
    }
}

/// Line ranges per root-relative path (1-based, inclusive).
pub type LineRanges = BTreeMap<String, Vec<(usize, usize)>>;

/// What a change did to lines, from `git diff -U0`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ChangedLines {
    /// Lines added or rewritten (every `+` line).
    pub changed: LineRanges,
    /// Lines added where the base had none (hunks `@@ -a,0 +c,d @@`): `replicas: 1` → `3`
    /// is changed, not inserted.
    pub inserted: LineRanges,
}

/// `+++ b/path` and `@@ -a,b +c,d @@` lines of a `-U0` diff → added ranges per path.
fn parse_hunks(diff: &str, rel: impl Fn(&str) -> Option<String>) -> ChangedLines {
    let mut out = ChangedLines::default();
    let mut current: Option<String> = None;
    for line in diff.lines() {
        if let Some(p) = line.strip_prefix("+++ ") {
            current = p.strip_prefix("b/").and_then(&rel);
        } else if let Some(h) = line.strip_prefix("@@ ")
            && let Some(path) = &current
        {
            let Some(new) = h.split_whitespace().find(|t| t.starts_with('+')) else {
                continue;
            };
            // `-a,0`: the hunk removes no line of the base.
            let removes_nothing = h
                .split_whitespace()
                .find(|t| t.starts_with('-'))
                .and_then(|old| old.split_once(','))
                .is_some_and(|(_, n)| n == "0");
            let mut nums = new[1..].split(',');
            let start: usize = nums.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            let count: usize = nums.next().and_then(|n| n.parse().ok()).unwrap_or(1);
            if count > 0 && start > 0 {
                let range = (start, start + count - 1);
                out.changed.entry(path.clone()).or_default().push(range);
                if removes_nothing {
                    out.inserted.entry(path.clone()).or_default().push(range);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_give_added_ranges() {
        let diff = "diff --git a/x b/x\n--- a/sub/a.yaml\n+++ b/sub/a.yaml\n@@ -3,0 +4,2 @@ spec:\n+  a: 1\n+  b: 2\n@@ -9 +11 @@\n-x\n+y\n@@ -20,2 +21,0 @@\n--- a/other\n+++ /dev/null\n";
        let h = parse_hunks(diff, |p| p.strip_prefix("sub/").map(str::to_string));
        assert_eq!(h.changed.get("a.yaml"), Some(&vec![(4, 5), (11, 11)]));
        assert_eq!(h.changed.len(), 1);
        // Line 11 replaced line 9: changed, not inserted.
        assert_eq!(h.inserted.get("a.yaml"), Some(&vec![(4, 5)]));
    }

    #[test]
    fn option_like_revisions_are_refused() {
        assert!(check_rev("--output=/tmp/x").is_err());
        assert!(check_rev("main").is_ok());
    }
}
