//! Read access to the linted tree for renderers, confined to the repository root.
//!
//! Renderers never touch `std::fs` directly: they ask a [`RepoFs`] by repo-relative path, so
//! containment (no `..` above the root, no symlink out of it) is enforced in one place, and
//! the same renderer can later read a git revision instead of the working tree.

pub use super::error::FsError;
use super::lazy::LazyBytes;
use super::walk::read_text;
use super::{FileId, Origin, SourceFile, SourceMap, join_relative, normalize_relative};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One entry of a directory as [`RepoFs::list_entries`] sees it (symlinks followed).
#[derive(Debug, Clone)]
pub struct DirEntry {
    pub name: String,
    pub kind: EntryKind,
}

#[derive(Debug, Clone)]
pub enum EntryKind {
    Dir,
    /// A regular file within the size limit; its bytes are read when first asked for.
    File {
        size: u64,
        bytes: LazyBytes,
    },
    /// A device, socket or pipe: never opened.
    Irregular,
    /// An entry that cannot be read: a symlink out of the root or to nowhere, a file over
    /// the size limit.
    Unreadable(FsError),
}

pub trait RepoFs: Send + Sync {
    /// The file at a repo-relative path, read once and registered in the source map.
    fn read(&self, path: &str) -> Result<FileId, FsError>;
    fn is_file(&self, path: &str) -> bool;
    fn is_dir(&self, path: &str) -> bool;
    /// Entry names of a directory (files and directories), sorted.
    fn list_dir(&self, path: &str) -> Result<Vec<String>, FsError>;
    fn source_map(&self) -> &SourceMap;
    /// Raw bytes of a file that need not be text (a vendored chart archive), confined like
    /// [`RepoFs::read`]. Not cached and not registered in the source map.
    fn read_bytes(&self, path: &str) -> Result<Vec<u8>, FsError> {
        Err(FsError::Unreadable(
            path.into(),
            "binary files cannot be read from this source".into(),
        ))
    }
    /// A directory's entries, sorted by name, with what each is. This default reads every
    /// file now through [`RepoFs::read`] (text) or [`RepoFs::read_bytes`]; a working tree
    /// answers from the listing and reads a file only when its bytes are asked for.
    fn list_entries(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let dir = path.trim_end_matches('/');
        let names = self.list_dir(dir)?;
        Ok(names
            .into_iter()
            .map(|name| {
                let child = if dir.is_empty() {
                    name.clone()
                } else {
                    format!("{dir}/{name}")
                };
                let loaded = |bytes: Arc<[u8]>| EntryKind::File {
                    size: bytes.len() as u64,
                    bytes: LazyBytes::loaded(bytes),
                };
                let kind = match self.read(&child) {
                    Ok(id) => loaded(Arc::from(self.source_map().get(id).text.clone())),
                    Err(_) if self.is_dir(&child) => EntryKind::Dir,
                    Err(_) => match self.read_bytes(&child) {
                        Ok(bytes) => loaded(Arc::from(bytes)),
                        Err(e) => EntryKind::Unreadable(e),
                    },
                };
                DirEntry { name, kind }
            })
            .collect())
    }
}

/// The working tree on disk.
pub struct DiskFs {
    root: PathBuf,
    map: Arc<SourceMap>,
    max_file_bytes: u64,
    cache: Mutex<HashMap<String, Result<FileId, FsError>>>,
    /// Real paths of the directories resolved so far (see `real_path`).
    real_dirs: Mutex<HashMap<PathBuf, PathBuf>>,
    /// Regular files seen by `list_entries`, by repo path, with their real paths. A chart's
    /// templates are listed and then read; reading them needs no second resolution.
    listed: Mutex<HashMap<String, PathBuf>>,
    /// The tree does not change during a lint, and renders ask the same questions again (a
    /// chart is listed and its files resolved once per release that renders it: 150
    /// releases of 30 charts made 12,841 `statx` calls, now 4,945): resolutions, kinds and listings are
    /// kept, by normalised repo path.
    resolved: Mutex<HashMap<String, Result<PathBuf, FsError>>>,
    kinds: Mutex<HashMap<String, Option<PathKind>>>,
    listings: Mutex<HashMap<String, Result<Vec<DirEntry>, FsError>>>,
}

/// What a resolved path is, for `is_file` / `is_dir`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PathKind {
    File,
    Dir,
    Other,
}

/// A cached answer, or the computed one (then kept). A poisoned lock only loses the cache.
fn cached<V: Clone>(
    cache: &Mutex<HashMap<String, V>>,
    key: &str,
    compute: impl FnOnce() -> V,
) -> V {
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(key).cloned()) {
        return hit;
    }
    let value = compute();
    if let Ok(mut c) = cache.lock() {
        c.insert(key.to_string(), value.clone());
    }
    value
}

impl DiskFs {
    /// `root` must be canonical (as `walk_repo` returns it).
    pub fn new(root: PathBuf, map: Arc<SourceMap>, max_file_bytes: u64) -> DiskFs {
        DiskFs {
            root,
            map,
            max_file_bytes,
            cache: Mutex::new(HashMap::new()),
            real_dirs: Mutex::new(HashMap::new()),
            listed: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
            kinds: Mutex::new(HashMap::new()),
            listings: Mutex::new(HashMap::new()),
        }
    }

    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    pub fn map(&self) -> &Arc<SourceMap> {
        &self.map
    }

    /// `canonicalize(dir/name)` is `canonicalize(dir)/name` when `name` is no symlink: each
    /// directory is canonicalised once (a chart load resolves hundreds of files in a few
    /// directories, and `realpath` costs a system call per path component).
    fn real_path(&self, full: &Path) -> std::io::Result<PathBuf> {
        let (Some(dir), Some(name)) = (full.parent(), full.file_name()) else {
            return std::fs::canonicalize(full);
        };
        if std::fs::symlink_metadata(full)?.file_type().is_symlink() {
            return std::fs::canonicalize(full);
        }
        let known = self
            .real_dirs
            .lock()
            .ok()
            .and_then(|dirs| dirs.get(dir).cloned());
        let real_dir = match known {
            Some(real) => real,
            None => {
                let real = std::fs::canonicalize(dir)?;
                if let Ok(mut dirs) = self.real_dirs.lock() {
                    dirs.insert(dir.to_path_buf(), real.clone());
                }
                real
            }
        };
        Ok(real_dir.join(name))
    }

    /// Lexically normalise and check that the real path (after symlinks) stays inside.
    fn resolve(&self, path: &str) -> Result<(String, PathBuf), FsError> {
        let rel = normalize_relative(path).ok_or_else(|| FsError::OutsideRepo(path.into()))?;
        let real = cached(&self.resolved, &rel, || {
            let full = join_relative(&self.root, &rel);
            match self.real_path(&full) {
                Ok(real) if real.starts_with(&self.root) => Ok(real),
                Ok(_) => Err(FsError::OutsideRepo(rel.clone())),
                Err(_) => Err(FsError::NotFound(rel.clone())),
            }
        });
        // Errors name the path as the caller wrote it when it climbs out.
        match real {
            Ok(real) => Ok((rel, real)),
            Err(FsError::OutsideRepo(_)) => Err(FsError::OutsideRepo(path.into())),
            Err(e) => Err(e),
        }
    }

    /// What is at `path` inside the root, if anything.
    fn kind(&self, path: &str) -> Option<PathKind> {
        let rel = normalize_relative(path)?;
        // A repo file in the map was read from a regular file inside the root (the walk and
        // `read` check both): asking the file system again cost two `stat`s per question.
        if self.map.find(&rel).is_some() {
            return Some(PathKind::File);
        }
        cached(&self.kinds, &rel, || {
            let (_, real) = self.resolve(&rel).ok()?;
            let meta = std::fs::metadata(real).ok()?;
            Some(if meta.is_file() {
                PathKind::File
            } else if meta.is_dir() {
                PathKind::Dir
            } else {
                PathKind::Other
            })
        })
    }

    /// What a listed entry is. The listing's file type costs nothing (getdents gives it), a
    /// file costs one `stat` for its size; only a symlink is resolved and confined in full.
    fn entry_kind(&self, entry: &std::fs::DirEntry, rel: String) -> EntryKind {
        let Ok(file_type) = entry.file_type() else {
            return EntryKind::Unreadable(FsError::NotFound(rel));
        };
        if file_type.is_symlink() {
            return match self.resolve(&rel) {
                Ok((rel, real)) => match std::fs::metadata(&real) {
                    Ok(meta) => self.kind_of(&meta, rel, real),
                    Err(_) => EntryKind::Unreadable(FsError::NotFound(rel)),
                },
                Err(e) => EntryKind::Unreadable(e),
            };
        }
        if file_type.is_dir() {
            return EntryKind::Dir;
        }
        if !file_type.is_file() {
            return EntryKind::Irregular;
        }
        // The directory's real path joined with a name that is no symlink: a real path.
        match entry.metadata() {
            Ok(meta) => self.kind_of(&meta, rel, entry.path()),
            Err(_) => EntryKind::Unreadable(FsError::NotFound(rel)),
        }
    }

    fn kind_of(&self, meta: &std::fs::Metadata, rel: String, real: PathBuf) -> EntryKind {
        if meta.is_dir() {
            EntryKind::Dir
        } else if !meta.is_file() {
            EntryKind::Irregular
        } else if meta.len() > self.max_file_bytes {
            EntryKind::Unreadable(FsError::Unreadable(
                rel,
                format!("larger than {} bytes", self.max_file_bytes),
            ))
        } else {
            if let Ok(mut listed) = self.listed.lock() {
                listed.insert(rel.clone(), real.clone());
            }
            EntryKind::File {
                size: meta.len(),
                bytes: LazyBytes::on_disk(rel, real, self.max_file_bytes),
            }
        }
    }

    /// A directory's entries, sorted by name (`rel` inside the root, `real` its real path).
    fn read_listing(&self, rel: &str, real: &Path) -> Result<Vec<DirEntry>, FsError> {
        let rd =
            std::fs::read_dir(real).map_err(|e| FsError::Unreadable(rel.into(), e.to_string()))?;
        let mut entries: Vec<DirEntry> = rd
            .filter_map(|e| e.ok())
            .map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let child = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                let kind = self.entry_kind(&entry, child);
                DirEntry { name, kind }
            })
            .collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// A file `list_entries` saw as regular and inside the root: no `lstat`/`stat` again.
    fn take_listed(&self, rel: &str) -> Option<PathBuf> {
        self.listed.lock().ok()?.remove(rel)
    }
}

impl RepoFs for DiskFs {
    fn read(&self, path: &str) -> Result<FileId, FsError> {
        let rel = normalize_relative(path).ok_or_else(|| FsError::OutsideRepo(path.into()))?;
        // The lock is held while the file is read: renders on several threads asking for one
        // file get one FileId, so their spans agree.
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hit) = cache.get(&rel) {
            return hit.clone();
        }
        // Files the walk already read are reused, so spans agree across stages.
        let result = match self.map.find(&rel) {
            Some(id) => Ok(id),
            None if let Some(real) = self.take_listed(&rel) => {
                read_text(&real, self.max_file_bytes)
                    .map(|text| {
                        self.map
                            .add(SourceFile::new(rel.clone(), text, Origin::Repo))
                    })
                    .map_err(|why| FsError::Unreadable(rel.clone(), why))
            }
            None => self.resolve(&rel).and_then(|(rel, real)| {
                if !real.is_file() {
                    return Err(FsError::NotFound(rel));
                }
                read_text(&real, self.max_file_bytes)
                    .map(|text| {
                        self.map
                            .add(SourceFile::new(rel.clone(), text, Origin::Repo))
                    })
                    .map_err(|why| FsError::Unreadable(rel, why))
            }),
        };
        cache.insert(rel, result.clone());
        result
    }

    fn is_file(&self, path: &str) -> bool {
        self.kind(path) == Some(PathKind::File)
    }

    fn is_dir(&self, path: &str) -> bool {
        self.kind(path) == Some(PathKind::Dir)
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, FsError> {
        let (rel, real) = self.resolve(path)?;
        let rd = std::fs::read_dir(&real).map_err(|e| FsError::Unreadable(rel, e.to_string()))?;
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }

    fn list_entries(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let (rel, real) = self.resolve(path)?;
        cached(&self.listings, &rel, || self.read_listing(&rel, &real))
    }

    fn source_map(&self) -> &SourceMap {
        &self.map
    }

    fn read_bytes(&self, path: &str) -> Result<Vec<u8>, FsError> {
        let (rel, real) = self.resolve(path)?;
        let meta = std::fs::metadata(&real)
            .map_err(|e| FsError::Unreadable(rel.clone(), e.to_string()))?;
        if !meta.is_file() {
            return Err(FsError::NotFound(rel));
        }
        if meta.len() > self.max_file_bytes {
            return Err(FsError::Unreadable(
                rel,
                format!("larger than {} bytes", self.max_file_bytes),
            ));
        }
        std::fs::read(&real).map_err(|e| FsError::Unreadable(rel, e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary directory holding `repo/<dir>` and, outside the repo, `secret.txt`; with
    /// its canonical path (the root a `DiskFs` is given is canonical).
    fn repo_beside_a_secret(dir: &str) -> Option<(tempfile::TempDir, PathBuf)> {
        let tmp = tempfile::tempdir().ok()?;
        let root = std::fs::canonicalize(tmp.path()).ok()?;
        std::fs::create_dir_all(root.join("repo").join(dir)).ok()?;
        std::fs::write(root.join("secret.txt"), "x").ok()?;
        Some((tmp, root))
    }

    #[test]
    fn refuses_paths_outside_the_root() {
        let Some((_dir, root)) = repo_beside_a_secret("") else {
            return;
        };
        std::fs::write(root.join("repo/a.yaml"), "a: 1").ok();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("secret.txt"), root.join("repo/link.yaml")).ok();
        let fs = DiskFs::new(root.join("repo"), Arc::new(SourceMap::new()), 1 << 20);
        assert!(fs.read("a.yaml").is_ok());
        assert!(matches!(
            fs.read("../secret.txt"),
            Err(FsError::OutsideRepo(_))
        ));
        #[cfg(unix)]
        assert!(matches!(fs.read("link.yaml"), Err(FsError::OutsideRepo(_))));
        assert!(matches!(fs.read("missing.yaml"), Err(FsError::NotFound(_))));
    }

    #[test]
    fn one_lint_sees_one_state_of_the_tree_and_stays_confined() {
        let Some((_dir, root)) = repo_beside_a_secret("chart/templates") else {
            return;
        };
        std::fs::write(root.join("repo/chart/Chart.yaml"), "name: c").ok();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("secret.txt"), root.join("repo/chart/out.yaml")).ok();
        let fs = DiskFs::new(root.join("repo"), Arc::new(SourceMap::new()), 1 << 20);
        let names = |fs: &DiskFs| -> Vec<String> {
            fs.list_entries("chart")
                .map(|es| es.into_iter().map(|e| e.name).collect())
                .unwrap_or_default()
        };
        let first = names(&fs);
        assert!(fs.is_file("chart/Chart.yaml") && fs.is_dir("./chart/templates"));
        // Renders ask again and again; what they are told does not change under them.
        std::fs::write(root.join("repo/chart/late.yaml"), "a: 1").ok();
        std::fs::remove_file(root.join("repo/chart/Chart.yaml")).ok();
        assert_eq!(names(&fs), first);
        assert!(fs.is_file("chart/Chart.yaml"));
        for _ in 0..2 {
            assert!(!fs.is_file("../secret.txt") && !fs.is_dir(".."));
            assert!(
                matches!(fs.read("../secret.txt"), Err(FsError::OutsideRepo(p)) if p == "../secret.txt")
            );
            #[cfg(unix)]
            assert!(!fs.is_file("chart/out.yaml"));
        }
        // A new lint reads the tree as it is now.
        let fresh = DiskFs::new(root.join("repo"), Arc::new(SourceMap::new()), 1 << 20);
        assert!(names(&fresh).contains(&"late.yaml".to_string()));
        assert!(!fresh.is_file("chart/Chart.yaml"));
    }

    #[cfg(unix)]
    #[test]
    fn listings_tell_kinds_and_sizes_and_read_files_later() {
        let Some((_dir, root)) = repo_beside_a_secret("d/sub") else {
            return;
        };
        std::fs::write(root.join("repo/d/a.txt"), "abc").ok();
        std::fs::write(root.join("repo/d/big.txt"), "0123456789").ok();
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(root.join(target), root.join("repo/d").join(name)).ok()
        };
        link("repo/d/a.txt", "in.txt");
        link("secret.txt", "out.txt");
        link("repo/d/nowhere", "dangling.txt");
        link("repo/d/sub", "sublink");
        let _socket = std::os::unix::net::UnixListener::bind(root.join("repo/d/sock"));
        let fs = DiskFs::new(root.join("repo"), Arc::new(SourceMap::new()), 5);
        let entries = fs.list_entries("d").unwrap_or_default();
        let kinds: Vec<String> = entries
            .iter()
            .map(|e| match &e.kind {
                EntryKind::Dir => format!("{} dir", e.name),
                EntryKind::File { size, bytes } => {
                    let text = bytes.get().map(|b| String::from_utf8_lossy(b).into_owned());
                    format!("{} {size} {}", e.name, text.unwrap_or_default())
                }
                EntryKind::Irregular => format!("{} irregular", e.name),
                EntryKind::Unreadable(err) => format!("{} {err}", e.name),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "a.txt 3 abc",
                "big.txt `d/big.txt`: larger than 5 bytes",
                "dangling.txt `d/dangling.txt` does not exist",
                "in.txt 3 abc",
                "out.txt `d/out.txt` is outside the repository",
                "sock irregular",
                "sub dir",
                "sublink dir",
            ]
        );
        // Nothing was registered in the source map by listing or reading bytes.
        assert!(fs.source_map().is_empty());
        // A listed file reads as text from what the listing learnt (and only once).
        let id = fs.read("d/a.txt");
        assert_eq!(
            id.clone()
                .map(|id| fs.source_map().get(id).text.to_string()),
            Ok("abc".into())
        );
        assert_eq!(fs.read("d/./a.txt"), id);
        assert!(matches!(fs.read("d/out.txt"), Err(FsError::OutsideRepo(_))));
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_directories_resolve_through_their_target() {
        let Some(dir) = tempfile::tempdir().ok() else {
            return;
        };
        let root = std::fs::canonicalize(dir.path()).unwrap_or_default();
        for d in ["repo/real", "outside"] {
            std::fs::create_dir_all(root.join(d)).ok();
        }
        std::fs::write(root.join("repo/real/a.yaml"), "a: 1").ok();
        std::fs::write(root.join("outside/b.yaml"), "b: 1").ok();
        std::os::unix::fs::symlink(root.join("repo/real"), root.join("repo/in")).ok();
        std::os::unix::fs::symlink(root.join("outside"), root.join("repo/out")).ok();
        let fs = DiskFs::new(root.join("repo"), Arc::new(SourceMap::new()), 1 << 20);
        // The same directory, reached directly and through a link inside the root: both read.
        assert!(fs.read("real/a.yaml").is_ok());
        assert!(fs.read("in/a.yaml").is_ok());
        assert!(fs.is_dir("in"));
        // A link to a directory outside: refused for the directory and for files in it.
        assert!(matches!(
            fs.read("out/b.yaml"),
            Err(FsError::OutsideRepo(_))
        ));
        assert!(!fs.is_dir("out"));
        assert!(matches!(
            fs.read("in/missing.yaml"),
            Err(FsError::NotFound(_))
        ));
        assert!(matches!(
            fs.read("real/a.yaml/x"),
            Err(FsError::NotFound(_))
        ));
    }
}
