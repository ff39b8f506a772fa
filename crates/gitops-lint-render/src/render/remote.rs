//! Remote inputs as the renderers see them: every chart in a Helm repository or OCI registry
//! and every remote kustomize base a render meets is named ([`RemoteUse`], what `fetch`
//! downloads), and rendered from the cache when `fetch` put it there.
//!
//! A fetched input is unpacked once per run into memory and *mounted*: its files appear to
//! the renderers at `.gitops-lint/remote/<id>/…` ([`MountFs`]), so a remote chart or base is
//! read exactly as a vendored one. In the source map those files are named by where they came
//! from (`github.com/org/repo@v1.2.0/deploy/app.yaml`, `charts.example.com/web@1.2.3/values.yaml`),
//! virtual, so no fix ever writes them.

use crate::remote::{Lookup, RemoteKind, RemoteRef, RemoteStore};
use crate::source::{
    DirEntry, EntryKind, FileId, FsError, LazyBytes, Origin, RepoFs, SourceFile, SourceMap, Span,
    normalize_relative,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::sync::{Arc, Mutex};

/// A remote input and the line that names it (the `chart:` / `url:` / `resources:` entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteUse {
    pub reference: RemoteRef,
    pub span: Span,
    /// The controller resolves it anew at every build, to whatever is newest (a kustomize
    /// `helmCharts` entry without `version`): the lint renders what the lock pinned, the
    /// cluster gets whatever is latest (`unpinned-source`).
    pub floats: bool,
}

/// Where fetched inputs appear to the renderers. The repo walk skips `.gitops-lint/`, so no
/// repository file can be shadowed by a mount.
pub const MOUNT_ROOT: &str = ".gitops-lint/remote";

/// The mount a repo path is in (`.gitops-lint/remote/<id>`), if any.
pub fn mount_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix(MOUNT_ROOT)?.strip_prefix('/')?;
    let id_len = rest.find('/').unwrap_or(rest.len());
    Some(&path[..MOUNT_ROOT.len() + 1 + id_len])
}

/// Most bytes one file of a fetched chart may hold (Helm's limit for a chart file).
const MAX_MEMBER_BYTES: u64 = 5 << 20;
/// Most bytes a fetched chart may unpack to (Helm's `MaxDecompressedChartSize`).
const MAX_CHART_BYTES: u64 = 100 << 20;

/// What the cache holds for one remote input.
#[derive(Clone, Debug)]
pub enum Fetched {
    /// Locked, cached and unpacked: the repo path its files are mounted at.
    Ready { root: String },
    /// Not fetched (no lock entry, or not in the cache): why, saying what to run.
    Missing(String),
    /// Locked, but the cache entry is corrupt or does not unpack: an error naming it.
    Broken(String),
}

/// The lock and cache of a run, shared by every render (cheap to clone). Without a store
/// every remote input is [`Fetched::Missing`].
#[derive(Clone, Default)]
pub struct RemoteInputs {
    shared: Option<Arc<Shared>>,
}

struct Shared {
    store: RemoteStore,
    /// Mounted inputs by mount id, or why the blob does not unpack.
    mounts: Mutex<BTreeMap<String, Result<Arc<Mounted>, String>>>,
    /// Files read from mounts, and the input each came from.
    files: Mutex<HashMap<FileId, RemoteRef>>,
}

impl std::fmt::Debug for RemoteInputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.shared {
            Some(s) => write!(f, "RemoteInputs({} locked)", s.store.lock().entries().len()),
            None => write!(f, "RemoteInputs(none)"),
        }
    }
}

/// One fetched input unpacked in memory.
struct Mounted {
    reference: RemoteRef,
    /// What the source map calls its root.
    label: String,
    files: BTreeMap<String, Arc<[u8]>>,
    dirs: BTreeSet<String>,
    read: Mutex<HashMap<String, Result<FileId, FsError>>>,
}

impl RemoteInputs {
    pub fn new(store: RemoteStore) -> RemoteInputs {
        RemoteInputs {
            shared: Some(Arc::new(Shared {
                store,
                mounts: Mutex::new(BTreeMap::new()),
                files: Mutex::new(HashMap::new()),
            })),
        }
    }

    pub fn store(&self) -> Option<&RemoteStore> {
        self.shared.as_ref().map(|s| &s.store)
    }

    /// A chart (Helm repository or OCI): its archive unpacked with the top directory
    /// stripped, as `helm pull --untar` leaves it.
    pub fn chart(&self, reference: &RemoteRef) -> Fetched {
        self.fetched(reference, "chart", unpack_chart)
    }

    /// A git tree: the checkout at the locked commit.
    pub fn git_tree(&self, reference: &RemoteRef) -> Fetched {
        self.fetched(reference, "git", |bytes| {
            let tree = crate::remote::archive::unpack_tree(bytes)?;
            Ok(tree
                .paths()
                .filter_map(|p| Some((p.to_string(), Arc::from(tree.get(p)?))))
                .collect())
        })
    }

    /// One file fetched from a URL; `Ready`'s root is the file's own repo path
    /// (`<mount>/<file name>`).
    pub fn url_file(&self, reference: &RemoteRef) -> Fetched {
        let name = url_file_name(&reference.source);
        // One mount per URL, not per content: two URLs serving the same bytes are shown
        // (and named in findings) each at its own address.
        let url_digest = crate::remote::digest_of(reference.source.as_bytes());
        let kind = format!("url-{}", &url_digest["sha256:".len()..][..8]);
        match self.fetched(reference, &kind, |bytes| {
            Ok(BTreeMap::from([(name.clone(), Arc::from(bytes))]))
        }) {
            Fetched::Ready { root } => Fetched::Ready {
                root: format!("{root}/{name}"),
            },
            other => other,
        }
    }

    /// The input a file read from a mount came from.
    pub fn file_origin(&self, file: FileId) -> Option<RemoteRef> {
        let shared = self.shared.as_ref()?;
        lock(&shared.files).get(&file).cloned()
    }

    fn fetched(
        &self,
        reference: &RemoteRef,
        kind: &str,
        unpack: impl FnOnce(&[u8]) -> Result<BTreeMap<String, Arc<[u8]>>, String>,
    ) -> Fetched {
        let Some(shared) = &self.shared else {
            return Fetched::Missing(not_fetched(reference));
        };
        let (entry, bytes) = match shared.store.lookup(reference) {
            Lookup::Ready { entry, bytes } => (entry, bytes),
            Lookup::NotLocked => return Fetched::Missing(not_fetched(reference)),
            Lookup::NotCached { entry } => {
                return Fetched::Missing(format!(
                    "{reference} is locked at {} but not in the cache; run `gitops-lint fetch`",
                    entry.resolved
                ));
            }
            Lookup::Corrupt { entry, error } => {
                return Fetched::Broken(format!(
                    "the cache entry {} for {reference} cannot be used ({error}); run `gitops-lint fetch` again",
                    entry.digest
                ));
            }
        };
        let hex = entry.digest.trim_start_matches("sha256:");
        let id = format!("{kind}-{}", &hex[..hex.len().min(16)]);
        let mut mounts = lock(&shared.mounts);
        let mounted = mounts.entry(id.clone()).or_insert_with(|| {
            unpack(&bytes).map(|files| {
                let mut dirs = BTreeSet::new();
                for path in files.keys() {
                    let mut d = path.as_str();
                    while let Some((parent, _)) = d.rsplit_once('/') {
                        dirs.insert(parent.to_string());
                        d = parent;
                    }
                }
                Arc::new(Mounted {
                    reference: reference.clone(),
                    label: label_of(reference, &entry.resolved),
                    files,
                    dirs,
                    read: Mutex::new(HashMap::new()),
                })
            })
        });
        match mounted {
            Ok(_) => Fetched::Ready {
                root: format!("{MOUNT_ROOT}/{id}"),
            },
            Err(e) => Fetched::Broken(format!(
                "the cache entry {} for {reference} does not unpack ({e}); run `gitops-lint fetch` again",
                entry.digest
            )),
        }
    }

    fn mounted(&self, id: &str) -> Option<Arc<Mounted>> {
        let shared = self.shared.as_ref()?;
        lock(&shared.mounts).get(id)?.as_ref().ok().cloned()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The message for an input `fetch` has not resolved.
pub fn not_fetched(reference: &RemoteRef) -> String {
    format!("{reference} is not fetched; run `gitops-lint fetch` to render it")
}

/// The name a URL's file is mounted under: the last segment of its path (`install.yaml`),
/// or `resource.yaml` when the path ends in `/`.
fn url_file_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let last = path.rsplit('/').next().unwrap_or("");
    match normalize_relative(last) {
        Some(n) if !n.is_empty() && !n.contains('/') => n,
        _ => "resource.yaml".to_string(),
    }
}

/// How the source map names a fetched input's root: where it came from, at which version.
fn label_of(r: &RemoteRef, resolved: &str) -> String {
    let bare = |s: &str| {
        s.split_once("://")
            .map(|(_, rest)| rest)
            .unwrap_or(s)
            .to_string()
    };
    match r.kind {
        RemoteKind::Helm => format!("{}/{}@{resolved}", bare(&r.source), r.chart),
        RemoteKind::Oci => format!("{}@{resolved}", bare(&r.source)),
        RemoteKind::Git => {
            let at = if r.requested.is_empty() {
                resolved
            } else {
                &r.requested
            };
            format!("{}@{at}", bare(&r.source).trim_end_matches(".git"))
        }
        // The file is shown at its URL: the mount's root is the URL's directory.
        RemoteKind::Url => {
            let path = bare(&r.source);
            let path = path.split(['?', '#']).next().unwrap_or("").to_string();
            match path.rsplit_once('/') {
                Some((dir, _)) => dir.to_string(),
                None => path,
            }
        }
    }
}

/// A chart archive's files with the top directory stripped. Only regular files are kept; an
/// absolute path, a `..`, a member outside a top directory or too much content is an error.
fn unpack_chart(bytes: &[u8]) -> Result<BTreeMap<String, Arc<[u8]>>, String> {
    use crate::remote::archive::MAX_TREE_FILES;
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut archive = tar::Archive::new(gz.take(MAX_CHART_BYTES + 1));
    let mut files = BTreeMap::new();
    let mut total = 0u64;
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let raw = entry
            .path()
            .map_err(|e| e.to_string())?
            .to_string_lossy()
            .replace('\\', "/");
        if raw == "pax_global_header" {
            continue;
        }
        if raw.starts_with('/') || raw.split('/').any(|p| p == "..") {
            return Err(format!("the chart archive holds a path outside it: {raw}"));
        }
        let Some((_, inner)) = raw.split_once('/') else {
            return Err(format!(
                "the chart archive holds `{raw}` outside its top directory"
            ));
        };
        let Some(inner) = normalize_relative(inner).filter(|p| !p.is_empty()) else {
            continue;
        };
        if entry.size() > MAX_MEMBER_BYTES {
            return Err(format!(
                "chart file `{inner}` is larger than {MAX_MEMBER_BYTES} bytes"
            ));
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| e.to_string())?;
        total += data.len() as u64;
        if total > MAX_CHART_BYTES || files.len() >= MAX_TREE_FILES {
            return Err(format!(
                "the chart archive unpacks to more than {MAX_CHART_BYTES} bytes or {MAX_TREE_FILES} files"
            ));
        }
        files.insert(inner, Arc::from(data));
    }
    if files.is_empty() {
        return Err("no files in the chart archive".into());
    }
    Ok(files)
}

/// The repository with every fetched input mounted under [`MOUNT_ROOT`].
pub struct MountFs<'a> {
    pub inner: &'a dyn RepoFs,
    pub remotes: RemoteInputs,
}

impl MountFs<'_> {
    /// The mount and the path inside it, for a path under [`MOUNT_ROOT`].
    fn split(&self, path: &str) -> Option<(Arc<Mounted>, String)> {
        let rel = normalize_relative(path)?;
        let rest = rel.strip_prefix(MOUNT_ROOT)?.strip_prefix('/')?;
        let (id, inner) = rest.split_once('/').unwrap_or((rest, ""));
        Some((self.remotes.mounted(id)?, inner.to_string()))
    }
}

impl Mounted {
    fn is_dir(&self, rel: &str) -> bool {
        rel.is_empty() || self.dirs.contains(rel)
    }

    fn children(&self, rel: &str) -> Vec<String> {
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let names: BTreeSet<String> = self
            .files
            .keys()
            .chain(self.dirs.iter())
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter(|r| !r.is_empty() && !r.contains('/'))
            .map(str::to_string)
            .collect();
        names.into_iter().collect()
    }

    fn read(&self, rel: &str, map: &SourceMap, remotes: &RemoteInputs) -> Result<FileId, FsError> {
        // Held while the file is registered: two renders reading it at once get one FileId.
        let mut read = lock(&self.read);
        if let Some(hit) = read.get(rel) {
            return hit.clone();
        }
        let shown = format!("{}/{rel}", self.label);
        let result = match self.files.get(rel) {
            None => Err(FsError::NotFound(shown)),
            Some(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) if !text.contains('\0') => {
                    Ok(map.add(SourceFile::new(shown, text.to_string(), Origin::Virtual)))
                }
                _ => Err(FsError::Unreadable(shown, "not UTF-8 text".into())),
            },
        };
        if let (Ok(id), Some(shared)) = (&result, &remotes.shared) {
            lock(&shared.files).insert(*id, self.reference.clone());
        }
        read.insert(rel.to_string(), result.clone());
        result
    }
}

impl RepoFs for MountFs<'_> {
    fn read(&self, path: &str) -> Result<FileId, FsError> {
        match self.split(path) {
            Some((m, rel)) => m.read(&rel, self.inner.source_map(), &self.remotes),
            None => self.inner.read(path),
        }
    }

    fn is_file(&self, path: &str) -> bool {
        match self.split(path) {
            Some((m, rel)) => m.files.contains_key(&rel),
            None => self.inner.is_file(path),
        }
    }

    fn is_dir(&self, path: &str) -> bool {
        match self.split(path) {
            Some((m, rel)) => m.is_dir(&rel),
            None => self.inner.is_dir(path),
        }
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, FsError> {
        match self.split(path) {
            Some((m, rel)) if m.is_dir(&rel) => Ok(m.children(&rel)),
            Some((_, _)) => Err(FsError::NotFound(path.to_string())),
            None => self.inner.list_dir(path),
        }
    }

    fn list_entries(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let Some((m, rel)) = self.split(path) else {
            return self.inner.list_entries(path);
        };
        if !m.is_dir(&rel) {
            return Err(FsError::NotFound(path.to_string()));
        }
        Ok(m.children(&rel)
            .into_iter()
            .map(|name| {
                let child = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                let kind = match m.files.get(&child) {
                    Some(bytes) => EntryKind::File {
                        size: bytes.len() as u64,
                        bytes: LazyBytes::loaded(bytes.clone()),
                    },
                    None => EntryKind::Dir,
                };
                DirEntry { name, kind }
            })
            .collect())
    }

    fn source_map(&self) -> &SourceMap {
        self.inner.source_map()
    }

    fn read_bytes(&self, path: &str) -> Result<Vec<u8>, FsError> {
        match self.split(path) {
            Some((m, rel)) => m
                .files
                .get(&rel)
                .map(|b| b.to_vec())
                .ok_or(FsError::NotFound(path.to_string())),
            None => self.inner.read_bytes(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::{Cache, Lock, LockEntry};

    /// A gzipped tar of `(path, bytes, type)` entries, paths written raw (no checks).
    fn tgz(entries: &[(&str, &[u8], tar::EntryType)]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        for (path, bytes, kind) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            // `set_path` refuses `..`; write the name bytes as a hostile archive would.
            let name = path.as_bytes();
            h.as_old_mut().name[..name.len()].copy_from_slice(name);
            h.set_cksum();
            tar.append(&h, *bytes).unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap()
    }

    const FILE: tar::EntryType = tar::EntryType::Regular;

    #[test]
    fn chart_archives_lose_their_top_directory_and_keep_only_regular_files() {
        let files = unpack_chart(&tgz(&[
            ("web/Chart.yaml", b"name: web\n", FILE),
            ("web/templates/a.yaml", b"kind: A\n", FILE),
            ("web/link", b"", tar::EntryType::Symlink),
        ]))
        .unwrap();
        let names: Vec<&str> = files.keys().map(String::as_str).collect();
        assert_eq!(names, ["Chart.yaml", "templates/a.yaml"]);
    }

    #[test]
    fn chart_archives_that_climb_out_or_have_no_top_directory_are_refused() {
        let climb = unpack_chart(&tgz(&[("web/../../etc/x", b"x", FILE)])).unwrap_err();
        assert!(climb.contains("outside"), "{climb}");
        let flat = unpack_chart(&tgz(&[("Chart.yaml", b"x", FILE)])).unwrap_err();
        assert!(flat.contains("top directory"), "{flat}");
        assert!(unpack_chart(b"not gzip").is_err());
    }

    fn store_with(bytes: &[u8], dir: &std::path::Path, r: &RemoteRef) -> RemoteInputs {
        let cache = Cache::new(dir);
        let digest = cache.put(bytes).unwrap();
        let mut lock = Lock::default();
        lock.insert(LockEntry {
            reference: r.clone(),
            resolved: "1.0.0".into(),
            digest,
            origin: None,
            span: None,
        });
        RemoteInputs::new(RemoteStore::with_lock(lock, Some(cache)))
    }

    #[test]
    fn a_fetched_chart_is_mounted_and_read_as_virtual_files_named_by_origin() {
        let dir = tempfile::tempdir().unwrap();
        let r = RemoteRef::helm("https://charts.example.com", "web", "1.0.0");
        let remotes = store_with(
            &tgz(&[
                ("web/Chart.yaml", b"name: web\n", FILE),
                ("web/templates/a.yaml", b"kind: A\n", FILE),
            ]),
            dir.path(),
            &r,
        );
        let Fetched::Ready { root } = remotes.chart(&r) else {
            panic!("not ready");
        };
        assert!(root.starts_with(MOUNT_ROOT));
        let map = std::sync::Arc::new(SourceMap::new());
        let inner = crate::source::MemFs::new(Default::default(), map.clone(), 1 << 20);
        let fs = MountFs {
            inner: &inner,
            remotes: remotes.clone(),
        };
        assert!(fs.is_dir(&root) && fs.is_dir(&format!("{root}/templates")));
        assert_eq!(fs.list_dir(&root).unwrap(), ["Chart.yaml", "templates"]);
        let id = fs.read(&format!("{root}/templates/a.yaml")).unwrap();
        let file = map.get(id);
        assert_eq!(file.path, "charts.example.com/web@1.0.0/templates/a.yaml");
        assert_eq!(file.origin, Origin::Virtual);
        assert_eq!(remotes.file_origin(id), Some(r.clone()));
        // Outside the mount, the repository answers.
        assert!(!fs.is_file(&format!("{MOUNT_ROOT}/chart-unknown/Chart.yaml")));
        assert_eq!(mount_of(&format!("{root}/templates")), Some(root.as_str()));
        assert_eq!(mount_of("apps/web"), None);
    }

    #[test]
    fn missing_and_broken_entries_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let r = RemoteRef::helm("https://charts.example.com", "web", "1.0.0");
        let none = RemoteInputs::default();
        assert!(matches!(none.chart(&r), Fetched::Missing(m) if m.contains("gitops-lint fetch")));
        let broken = store_with(b"not a chart", dir.path(), &r);
        assert!(matches!(broken.chart(&r), Fetched::Broken(m) if m.contains("does not unpack")));
    }
}
