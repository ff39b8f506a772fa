//! What `lint` knows of remote inputs: the repo's lock file and the cache, read-only. Each
//! blob is read and verified once per run however many apps use it.

use super::cache::{Cache, CacheError};
use super::lock::{LOCK_FILE, Lock, LockEntry, LockError};
use super::reference::RemoteRef;
use crate::source::RepoFs;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The answer for one remote input.
#[derive(Debug)]
pub enum Lookup<'a> {
    /// Locked and cached: the verified bytes (a chart `.tgz`, or a tree archive for git).
    Ready {
        entry: &'a LockEntry,
        bytes: Arc<[u8]>,
    },
    /// No lock entry: `gitops-lint fetch` has not resolved it.
    NotLocked,
    /// Locked, but the cache does not hold it (a fresh checkout: run `gitops-lint fetch`).
    NotCached { entry: &'a LockEntry },
    /// Locked, and the cache entry is corrupt or unreadable: an error naming it.
    Corrupt {
        entry: &'a LockEntry,
        error: CacheError,
    },
}

/// A blob's bytes once read and verified, or why they could not be.
type Verified = Result<Arc<[u8]>, CacheError>;

#[derive(Default)]
pub struct RemoteStore {
    lock: Lock,
    errors: Vec<LockError>,
    cache: Option<Cache>,
    read: Mutex<HashMap<String, Verified>>,
}

impl RemoteStore {
    /// Nothing locked, no cache: every remote input is `NotLocked`.
    pub fn empty() -> RemoteStore {
        RemoteStore::default()
    }

    /// Read the lock file at the repository root (when there is one) through the repo's
    /// file access, and use `cache` for the bytes.
    pub fn open(fs: &dyn RepoFs, cache: Option<Cache>) -> RemoteStore {
        let mut store = RemoteStore {
            cache,
            ..RemoteStore::default()
        };
        if fs.is_file(LOCK_FILE) {
            match fs.read(LOCK_FILE) {
                Ok(id) => {
                    let text = fs.source_map().get(id).text.clone();
                    let (lock, errors) = Lock::parse(&text, id);
                    store.lock = lock;
                    store.errors = errors;
                }
                Err(e) => store.errors.push(LockError {
                    span: None,
                    message: format!("{LOCK_FILE} cannot be read: {e}"),
                }),
            }
        }
        store
    }

    /// A store over a lock already in memory (fetch, tests).
    pub fn with_lock(lock: Lock, cache: Option<Cache>) -> RemoteStore {
        RemoteStore {
            lock,
            cache,
            ..RemoteStore::default()
        }
    }

    pub fn lock(&self) -> &Lock {
        &self.lock
    }

    /// Problems with the lock file itself (reported once, on the lock file).
    pub fn lock_errors(&self) -> &[LockError] {
        &self.errors
    }

    pub fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    pub fn lookup(&self, reference: &RemoteRef) -> Lookup<'_> {
        let Some(entry) = self.lock.find(reference) else {
            return Lookup::NotLocked;
        };
        let Some(cache) = &self.cache else {
            return Lookup::NotCached { entry };
        };
        let result = {
            let mut read = match self.read.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            read.entry(entry.digest.clone())
                .or_insert_with(|| cache.read(&entry.digest).map(Arc::from))
                .clone()
        };
        match result {
            Ok(bytes) => Lookup::Ready { entry, bytes },
            Err(CacheError::Missing { .. }) => Lookup::NotCached { entry },
            Err(error) => Lookup::Corrupt { entry, error },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_of_an_input_has_its_answer() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let present = cache.put(b"tgz").unwrap();
        let r_ok = RemoteRef::helm("https://c.example", "ok", "1.0.0");
        let r_missing = RemoteRef::helm("https://c.example", "gone", "1.0.0");
        let r_bad = RemoteRef::helm("https://c.example", "bad", "1.0.0");
        let mut lock = Lock::default();
        let entry = |r: &RemoteRef, digest: &str| LockEntry {
            reference: r.clone(),
            resolved: "1.0.0".into(),
            digest: digest.into(),
            origin: None,
            span: None,
        };
        lock.insert(entry(&r_ok, &present));
        lock.insert(entry(&r_missing, &super::super::digest_of(b"never stored")));
        let bad = cache.put(b"original").unwrap();
        std::fs::write(dir.path().join("blobs/sha256").join(&bad[7..]), b"tampered").unwrap();
        lock.insert(entry(&r_bad, &bad));
        let store = RemoteStore::with_lock(lock, Some(cache));
        assert!(matches!(store.lookup(&r_ok), Lookup::Ready { bytes, .. } if &bytes[..] == b"tgz"));
        assert!(matches!(store.lookup(&r_missing), Lookup::NotCached { .. }));
        assert!(matches!(store.lookup(&r_bad), Lookup::Corrupt { .. }));
        assert!(matches!(
            store.lookup(&RemoteRef::helm("https://c.example", "ok", "2.0.0")),
            Lookup::NotLocked
        ));
    }
}
