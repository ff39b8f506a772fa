//! A repository tree held in memory (the files of a git revision), walked with the same rules
//! as the working tree and read through a [`RepoFs`], so a revision is linted without a
//! checkout and renderers cannot tell the difference.

use super::error::FsError;
use super::fs::RepoFs;
use super::walk::{WalkIssue, WalkOptions, WalkedRepo, is_candidate, text_from_bytes};
use super::{FileId, Origin, SourceFile, SourceMap, normalize_relative};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Files by repo-relative `/`-separated path, with the directories they imply.
#[derive(Default, Debug, Clone)]
pub struct MemTree {
    files: BTreeMap<String, Arc<[u8]>>,
    dirs: BTreeSet<String>,
    /// Files over the size limit, by size: not held, reported by the walk.
    oversized: BTreeMap<String, u64>,
}

impl MemTree {
    pub fn new() -> MemTree {
        MemTree::default()
    }

    /// Add a file; paths that climb above the root are ignored (a tree cannot hold them).
    pub fn insert(&mut self, path: &str, bytes: impl Into<Arc<[u8]>>) {
        let Some(path) = normalize_relative(path).filter(|p| !p.is_empty()) else {
            return;
        };
        let mut dir = path.as_str();
        while let Some((parent, _)) = dir.rsplit_once('/') {
            self.dirs.insert(parent.to_string());
            dir = parent;
        }
        self.files.insert(path, bytes.into());
    }

    /// A file too large to hold; the walk reports it as the disk walk reports large files.
    pub fn insert_oversized(&mut self, path: &str, size: u64) {
        if let Some(path) = normalize_relative(path).filter(|p| !p.is_empty()) {
            self.oversized.insert(path, size);
        }
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(|b| &b[..])
    }

    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    fn is_dir(&self, path: &str) -> bool {
        path.is_empty() || self.dirs.contains(path)
    }
}

/// The in-memory counterpart of `walk_repo`: same candidates, excludes and limits.
pub fn walk_tree(tree: &MemTree, root: PathBuf, opts: &WalkOptions, map: &SourceMap) -> WalkedRepo {
    // The revision's own `.gitignore` / `.ignore` files, as the disk walk honours them (a
    // committed file that is ignored is not linted on either side of a diff).
    let ignores = opts.ignore_files.then(|| {
        super::tree_ignore::TreeIgnores::new(tree.paths(), |p| {
            tree.get(p)
                .and_then(|b| std::str::from_utf8(b).ok())
                .map(str::to_string)
        })
    });
    let ignored = |p: &str| ignores.as_ref().is_some_and(|i| i.ignored(p, false));
    let mut issues: Vec<WalkIssue> = tree
        .oversized
        .iter()
        .filter(|(p, _)| is_candidate(p) && !opts.exclude.is_match(p.as_str()) && !ignored(p))
        .map(|(p, len)| WalkIssue {
            path: p.clone(),
            message: format!(
                "file is {len} bytes, over the {}-byte limit (`limits.max-file-bytes`); not parsed",
                opts.max_file_bytes
            ),
        })
        .collect();
    let candidates: Vec<&str> = tree
        .paths()
        .filter(|p| is_candidate(p))
        .filter(|p| !ignored(p))
        .collect();
    let all = candidates.len();
    let mut paths: Vec<&str> = candidates
        .into_iter()
        .filter(|p| !opts.exclude.is_match(p))
        .collect();
    let excluded = all - paths.len();
    if paths.len() > opts.max_files {
        issues.push(WalkIssue {
            path: String::new(),
            message: format!(
                "repository has {} candidate files; only the first {} are read (limit `limits.max-files`)",
                paths.len(),
                opts.max_files
            ),
        });
        paths.truncate(opts.max_files);
    }
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let bytes = tree.get(path).map(<[u8]>::to_vec).unwrap_or_default();
        match text_from_bytes(bytes, opts.max_file_bytes) {
            Ok(text) => files.push(map.add(SourceFile::new(path, text, Origin::Repo))),
            Err(message) => issues.push(WalkIssue {
                path: path.to_string(),
                message,
            }),
        }
    }
    WalkedRepo {
        root,
        files,
        issues,
        excluded,
    }
}

/// [`RepoFs`] over a [`MemTree`].
pub struct MemFs {
    tree: Arc<MemTree>,
    map: Arc<SourceMap>,
    max_file_bytes: u64,
    cache: Mutex<HashMap<String, Result<FileId, FsError>>>,
}

impl MemFs {
    pub fn new(tree: Arc<MemTree>, map: Arc<SourceMap>, max_file_bytes: u64) -> MemFs {
        MemFs {
            tree,
            map,
            max_file_bytes,
            cache: Mutex::new(HashMap::new()),
        }
    }
}

impl RepoFs for MemFs {
    fn read(&self, path: &str) -> Result<FileId, FsError> {
        let rel = normalize_relative(path).ok_or_else(|| FsError::OutsideRepo(path.into()))?;
        // The lock is held while the file is read: renders on several threads asking for one
        // file get one FileId, so their spans agree.
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hit) = cache.get(&rel) {
            return hit.clone();
        }
        let result = match self.map.find(&rel) {
            Some(id) => Ok(id),
            None => match self.tree.get(&rel) {
                None => Err(FsError::NotFound(rel.clone())),
                Some(bytes) => text_from_bytes(bytes.to_vec(), self.max_file_bytes)
                    .map(|text| {
                        self.map
                            .add(SourceFile::new(rel.clone(), text, Origin::Repo))
                    })
                    .map_err(|why| FsError::Unreadable(rel.clone(), why)),
            },
        };
        cache.insert(rel, result.clone());
        result
    }

    fn is_file(&self, path: &str) -> bool {
        normalize_relative(path).is_some_and(|p| self.tree.get(&p).is_some())
    }

    fn is_dir(&self, path: &str) -> bool {
        normalize_relative(path).is_some_and(|p| self.tree.is_dir(&p))
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, FsError> {
        let rel = normalize_relative(path).ok_or_else(|| FsError::OutsideRepo(path.into()))?;
        if !self.tree.is_dir(&rel) {
            return Err(FsError::NotFound(rel));
        }
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let children = self
            .tree
            .paths()
            .chain(self.tree.dirs.iter().map(String::as_str))
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter(|rest| !rest.is_empty() && !rest.contains('/'))
            .map(str::to_string);
        let names: BTreeSet<String> = children.collect();
        Ok(names.into_iter().collect())
    }

    fn source_map(&self) -> &SourceMap {
        &self.map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> MemTree {
        let mut t = MemTree::new();
        t.insert("apps/a/deploy.yaml", b"kind: Deployment\n".to_vec());
        t.insert("apps/a/README.md", b"# a\n".to_vec());
        t.insert("apps/b/bin.yaml", b"a\0b".to_vec());
        t.insert("../escape.yaml", b"x: 1".to_vec());
        t
    }

    #[test]
    fn walks_candidates_and_reports_unreadable() {
        let map = SourceMap::new();
        let w = walk_tree(&tree(), PathBuf::from("/r"), &WalkOptions::default(), &map);
        let paths: Vec<String> = w.files.iter().map(|&f| map.path(f)).collect();
        assert_eq!(paths, ["apps/a/deploy.yaml"]);
        assert_eq!(w.issues.len(), 1);
        assert!(w.issues[0].message.contains("binary"));
    }

    /// A revision's `.gitignore` / `.ignore` files leave out what they leave out on disk: the
    /// same files are walked from a checkout and from the tree (`diff`'s base side).
    #[test]
    fn ignore_files_hold_in_a_tree_as_on_disk() {
        let files: &[(&str, &str)] = &[
            (".gitignore", "scratch/\n*.local.yaml\n"),
            ("apps/.ignore", "generated.yaml\n"),
            ("apps/.gitignore", "!keep.local.yaml\n"),
            ("scratch/.gitignore", "!*\n"),
            ("scratch/app.yaml", "kind: ConfigMap\n"),
            ("apps/web/deploy.yaml", "kind: Deployment\n"),
            ("apps/web/generated.yaml", "kind: ConfigMap\n"),
            ("apps/keep.local.yaml", "kind: ConfigMap\n"),
            ("apps/dev.local.yaml", "kind: ConfigMap\n"),
            ("top.local.yaml", "kind: ConfigMap\n"),
        ];
        let disk = tempfile::tempdir().expect("tmp");
        let mut t = MemTree::new();
        for (p, text) in files {
            let full = disk.path().join(p);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(&full, text).expect("write");
            t.insert(p, text.as_bytes().to_vec());
        }
        for ignore_files in [true, false] {
            let opts = WalkOptions {
                ignore_files,
                ..WalkOptions::default()
            };
            let walked = |w: &WalkedRepo, map: &SourceMap| {
                let mut p: Vec<String> = w.files.iter().map(|&f| map.path(f)).collect();
                p.sort();
                p
            };
            let (m1, m2) = (SourceMap::new(), SourceMap::new());
            let on_disk = super::super::walk::walk_repo(disk.path(), &opts, &m1).expect("walk");
            let in_tree = walk_tree(&t, PathBuf::from("/r"), &opts, &m2);
            assert_eq!(
                walked(&in_tree, &m2),
                walked(&on_disk, &m1),
                "ignore_files: {ignore_files}"
            );
            if ignore_files {
                assert_eq!(
                    walked(&in_tree, &m2),
                    ["apps/keep.local.yaml", "apps/web/deploy.yaml"]
                );
            }
        }
    }

    #[test]
    fn fs_answers_like_a_disk() {
        let fs = MemFs::new(Arc::new(tree()), Arc::new(SourceMap::new()), 1 << 20);
        assert!(fs.is_dir("apps") && fs.is_dir("apps/a") && fs.is_dir(""));
        assert!(fs.is_file("apps/a/README.md") && !fs.is_file("apps/a"));
        assert_eq!(
            fs.list_dir("apps").unwrap_or_default(),
            ["a".to_string(), "b".to_string()]
        );
        assert!(fs.read("apps/a/deploy.yaml").is_ok());
        assert!(matches!(fs.read("../x"), Err(FsError::OutsideRepo(_))));
        assert!(matches!(fs.read("nope.yaml"), Err(FsError::NotFound(_))));
    }
}
