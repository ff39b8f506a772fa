//! Source files and positions: every file is read once into a [`SourceMap`]; everything else
//! refers to text by [`Span`] (byte offsets), and line:col is computed only when reported.

mod error;
mod fs;
pub mod git;
mod lazy;
mod tree;
mod tree_ignore;
mod walk;

pub use error::FsError;
pub use fs::{DirEntry, DiskFs, EntryKind, RepoFs};
pub use lazy::LazyBytes;
pub use tree::{MemFs, MemTree, walk_tree};
pub use walk::{
    WalkIssue, WalkOptions, WalkedRepo, is_script, read_text, text_from_bytes, walk_repo,
};

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

/// Index of a file in the [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte range in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end.max(start) as u32,
        }
    }
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    /// The smallest span covering both (same file assumed; otherwise `self`).
    pub fn cover(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// 1-based line and column (column counted in characters, as editors and GitHub do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// What a file is: a real file of the repo, or text made by the tool (a rendered template,
/// a file at a git revision) that still deserves a name in reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Repo,
    Virtual,
}

pub struct SourceFile {
    /// Path relative to the linted root, with `/` separators (the name shown in reports).
    pub path: String,
    pub text: Arc<str>,
    pub origin: Origin,
    /// Byte offsets of line starts, built when a position is first asked for: most files
    /// read (chart templates, values) are never reported on.
    line_starts: OnceLock<Vec<u32>>,
}

impl SourceFile {
    pub fn new(path: impl Into<String>, text: impl Into<Arc<str>>, origin: Origin) -> SourceFile {
        SourceFile {
            path: path.into(),
            text: text.into(),
            origin,
            line_starts: OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0u32];
            starts.extend(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|i| i as u32 + 1));
            starts
        })
    }

    pub fn line_count(&self) -> usize {
        self.line_starts().len()
    }

    /// 1-based line containing byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts().binary_search(&(offset as u32)) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = self.line_of(offset);
        let start = self.line_starts()[line - 1] as usize;
        let column = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(offset - start)
            + 1;
        LineCol { line, column }
    }

    /// Byte range of 1-based `line`, without its line break.
    pub fn line_range(&self, line: usize) -> std::ops::Range<usize> {
        let line_starts = self.line_starts();
        if line == 0 || line > line_starts.len() {
            return self.text.len()..self.text.len();
        }
        let start = line_starts[line - 1] as usize;
        let mut end = line_starts
            .get(line)
            .map(|&e| e as usize)
            .unwrap_or(self.text.len());
        let bytes = self.text.as_bytes();
        while end > start && matches!(bytes[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        start..end
    }

    pub fn line_text(&self, line: usize) -> &str {
        let r = self.line_range(line);
        &self.text[r]
    }

    /// The `# comment` on a line, if any (outside quotes), without the `#`, trimmed.
    pub fn comment_on_line(&self, line: usize) -> Option<&str> {
        comment_in(self.line_text(line))
    }
}

/// The comment part of one YAML line: a `#` at the line start or after whitespace, outside
/// single- and double-quoted scalars.
pub fn comment_in(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(b'"') if b == b'\\' => i += 1,
            Some(q) if b == q => {
                // '' inside single quotes is an escaped quote
                if q == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                    i += 1;
                } else {
                    quote = None;
                }
            }
            Some(_) => {}
            None => {
                if b == b'#' && (i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') {
                    return Some(line[i + 1..].trim());
                }
                if (b == b'"' || b == b'\'')
                    && (i == 0
                        || matches!(
                            bytes[i - 1],
                            b' ' | b'\t' | b'[' | b'{' | b',' | b':' | b'-'
                        ))
                {
                    quote = Some(b);
                }
            }
        }
        i += 1;
    }
    None
}

/// All files the tool knows about. Append-only: a [`FileId`] stays valid for the whole run,
/// and renderers add virtual files (rendered templates) while others read.
#[derive(Default)]
pub struct SourceMap {
    files: RwLock<Vec<Arc<SourceFile>>>,
    /// The first repo file added under each path (`find`): renders ask for files by path
    /// thousands of times, and a map holds thousands of files.
    repo_paths: RwLock<crate::hash::FastMap<String, FileId>>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&self, file: SourceFile) -> FileId {
        let mut files = self.files.write().unwrap_or_else(|e| e.into_inner());
        let id = FileId(files.len() as u32);
        if file.origin == Origin::Repo {
            // Taken while `files` is held, so ids and the index agree.
            let mut paths = self.repo_paths.write().unwrap_or_else(|e| e.into_inner());
            paths.entry(file.path.clone()).or_insert(id);
        }
        files.push(Arc::new(file));
        id
    }

    pub fn add_text(&self, path: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        self.add(SourceFile::new(path, text, Origin::Repo))
    }

    pub fn get(&self, id: FileId) -> Arc<SourceFile> {
        let files = self.files.read().unwrap_or_else(|e| e.into_inner());
        match files.get(id.0 as usize) {
            Some(f) => f.clone(),
            // FileIds are only minted by `add`; an unknown id is a programming error, but we
            // answer with an empty file rather than abort a lint run.
            None => Arc::new(SourceFile::new("<unknown>", "", Origin::Virtual)),
        }
    }

    /// The file registered under `path` (relative, `/`-separated), if any.
    pub fn find(&self, path: &str) -> Option<FileId> {
        let paths = self.repo_paths.read().unwrap_or_else(|e| e.into_inner());
        paths.get(path).copied()
    }

    pub fn len(&self) -> usize {
        self.files.read().map(|f| f.len()).unwrap_or(0)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn ids(&self) -> Vec<FileId> {
        (0..self.len() as u32).map(FileId).collect()
    }

    pub fn line_col(&self, span: Span) -> LineCol {
        self.get(span.file).line_col(span.start as usize)
    }
    pub fn end_line_col(&self, span: Span) -> LineCol {
        self.get(span.file).line_col(span.end as usize)
    }
    pub fn path(&self, id: FileId) -> String {
        self.get(id).path.clone()
    }
    pub fn text(&self, span: Span) -> String {
        let f = self.get(span.file);
        f.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
            .to_string()
    }
}

/// `/`-separated relative path of `path` under `root`, or None when it is not under it.
pub fn relative_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// Join a `/`-separated relative path onto a root.
pub fn join_relative(root: &Path, rel: &str) -> PathBuf {
    let mut p = root.to_path_buf();
    for part in rel.split('/').filter(|s| !s.is_empty()) {
        p.push(part);
    }
    p
}

/// Normalise a `/`-separated repo-relative path lexically (`a/./b/../c` → `a/c`). Returns
/// None when it climbs above the root: no caller may reach outside the repo.
pub fn normalize_relative(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p),
        }
    }
    Some(out.join("/"))
}

/// The directory of a repo-relative path (`""` at the root).
pub fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The keys strictly below directory `dir` (not `""`) in a map sorted by path, as a range:
/// they sort between `dir/` and `dir0` ('0' follows '/'), past siblings such as `dir-x`.
/// With `dir` itself, the paths [`is_within`] takes, without scanning the map.
pub fn below_dir(dir: &str) -> std::ops::Range<String> {
    format!("{dir}/")..format!("{dir}0")
}

/// Is the repo-relative `path` the directory `dir` or below it (`""` is the root, which holds
/// everything)? `apps/web` holds `apps/web/x.yaml`, not `apps/website`.
pub fn is_within(dir: &str, path: &str) -> bool {
    dir.is_empty()
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The directories that hold the repo-relative `path`, from itself up to the root (`""`):
/// what [`is_within`] is true of, to look up in a set instead of testing every directory.
pub fn self_and_parents(path: &str) -> impl Iterator<Item = &str> {
    let parents = path.match_indices('/').rev().map(|(i, _)| &path[..i]);
    std::iter::once(path)
        .chain(parents)
        .chain((!path.is_empty()).then_some(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_a_directory_means_the_directory_or_below_it() {
        assert!(is_within("", "apps/web/x.yaml"));
        assert!(is_within("apps/web", "apps/web"));
        assert!(is_within("apps/web", "apps/web/x.yaml"));
        assert!(!is_within("apps/web", "apps/website/x.yaml"));
        assert!(!is_within("apps/web", "apps"));
        let holders: Vec<&str> = self_and_parents("apps/web/x.yaml").collect();
        assert_eq!(holders, ["apps/web/x.yaml", "apps/web", "apps", ""]);
        assert_eq!(self_and_parents("").collect::<Vec<_>>(), [""]);
        for dir in ["", "apps", "apps/web", "apps/web/x.yaml", "apps/we", "x"] {
            assert_eq!(
                holders.contains(&dir),
                is_within(dir, "apps/web/x.yaml"),
                "{dir}"
            );
        }
    }

    #[test]
    fn find_answers_the_first_repo_file_of_a_path() {
        let map = SourceMap::new();
        // A rendered document named like a repo file is no repo file.
        let rendered = map.add(SourceFile::new("apps/a.yaml", "", Origin::Virtual));
        assert_eq!(map.find("apps/a.yaml"), None);
        let first = map.add_text("apps/a.yaml", "a: 1\n");
        let second = map.add_text("apps/a.yaml", "a: 2\n");
        assert_ne!(rendered, first);
        assert_ne!(first, second);
        assert_eq!(map.find("apps/a.yaml"), Some(first));
        assert_eq!(map.find("apps"), None);
        assert_eq!(map.find("apps/b.yaml"), None);
    }

    #[test]
    fn line_col_counts_characters() {
        let f = SourceFile::new("a.yaml", "a: é\nb: 2\n", Origin::Repo);
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        let b = f.text.find('b').unwrap_or(0);
        assert_eq!(f.line_col(b), LineCol { line: 2, column: 1 });
        assert_eq!(f.line_col(b + 3), LineCol { line: 2, column: 4 });
        assert_eq!(f.line_text(1), "a: é");
    }

    #[test]
    fn comments_outside_quotes_only() {
        assert_eq!(comment_in("a: 1 # why"), Some("why"));
        assert_eq!(comment_in("a: \"x # not\""), None);
        assert_eq!(comment_in("a: 'it''s # no'"), None);
        assert_eq!(comment_in("# whole"), Some("whole"));
        assert_eq!(comment_in("url: http://x/#frag"), None);
    }

    #[test]
    fn normalize_refuses_escape() {
        assert_eq!(normalize_relative("a/./b/../c").as_deref(), Some("a/c"));
        assert_eq!(normalize_relative("a/../../etc"), None);
    }
}
