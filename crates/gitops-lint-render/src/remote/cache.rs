//! The content-addressed cache: `<dir>/blobs/sha256/<hex>`, one file per artifact, named by
//! the SHA-256 of its bytes. Nothing else is stored, so an entry cannot be stale, only missing
//! or corrupt, and both are found by re-hashing on every read.

use super::MAX_ARTIFACT_BYTES;
use super::lock::is_sha256_digest;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// `sha256:<hex>` of some bytes.
pub fn digest_of(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in hash.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    #[error("{digest} is not in the cache {dir}")]
    Missing { digest: String, dir: String },
    #[error("cache entry {path} is corrupt: its content hashes to {actual}, not {digest}")]
    Corrupt {
        digest: String,
        path: String,
        actual: String,
    },
    #[error("cache entry {path} is not a regular file")]
    NotAFile { path: String },
    #[error("cache entry {path} holds {size} bytes, over the {max}-byte limit")]
    TooLarge { path: String, size: u64, max: u64 },
    #[error("`{0}` is not a sha256 digest")]
    BadDigest(String),
    #[error("cache {path}: {message}")]
    Io { path: String, message: String },
}

/// A cache directory. Opening one touches nothing; `fetch` creates it on the first write.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn blob_path(&self, digest: &str) -> Result<PathBuf, CacheError> {
        if !is_sha256_digest(digest) {
            return Err(CacheError::BadDigest(digest.to_string()));
        }
        let hex = &digest["sha256:".len()..];
        Ok(self.dir.join("blobs").join("sha256").join(hex))
    }

    /// The blob's bytes, verified against its digest.
    pub fn read(&self, digest: &str) -> Result<Vec<u8>, CacheError> {
        let path = self.blob_path(digest)?;
        let shown = path.display().to_string();
        let io = |e: std::io::Error| CacheError::Io {
            path: shown.clone(),
            message: e.to_string(),
        };
        // Not following a link: the cache holds only files fetch wrote.
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CacheError::Missing {
                    digest: digest.to_string(),
                    dir: self.dir.display().to_string(),
                });
            }
            Err(e) => return Err(io(e)),
        };
        if !meta.is_file() {
            return Err(CacheError::NotAFile { path: shown });
        }
        if meta.len() > MAX_ARTIFACT_BYTES {
            return Err(CacheError::TooLarge {
                path: shown,
                size: meta.len(),
                max: MAX_ARTIFACT_BYTES,
            });
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        std::fs::File::open(&path)
            .and_then(|f| f.take(MAX_ARTIFACT_BYTES + 1).read_to_end(&mut bytes))
            .map_err(io)?;
        let actual = digest_of(&bytes);
        if actual != digest {
            return Err(CacheError::Corrupt {
                digest: digest.to_string(),
                path: shown,
                actual,
            });
        }
        Ok(bytes)
    }

    /// Is the blob present and intact?
    pub fn has(&self, digest: &str) -> bool {
        self.read(digest).is_ok()
    }

    /// Store bytes under their digest (atomically: a temporary file renamed into place) and
    /// return the digest.
    pub fn put(&self, bytes: &[u8]) -> Result<String, CacheError> {
        if bytes.len() as u64 > MAX_ARTIFACT_BYTES {
            return Err(CacheError::TooLarge {
                path: "(new entry)".into(),
                size: bytes.len() as u64,
                max: MAX_ARTIFACT_BYTES,
            });
        }
        let digest = digest_of(bytes);
        let path = self.blob_path(&digest)?;
        if self.has(&digest) {
            return Ok(digest);
        }
        let dir = path.parent().unwrap_or(&self.dir).to_path_buf();
        let io = |e: std::io::Error| CacheError::Io {
            path: dir.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        // Unique per call: two threads of one process may store the same blob at once.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!(
            ".tmp-{}-{n}-{}",
            std::process::id(),
            &digest["sha256:".len().."sha256:".len() + 16]
        ));
        let written = std::fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        });
        if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, &path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        Ok(digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_reads_back_and_a_changed_byte_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().join("c"));
        let digest = cache.put(b"chart bytes").unwrap();
        assert_eq!(digest, digest_of(b"chart bytes"));
        assert_eq!(cache.read(&digest).unwrap(), b"chart bytes");
        let hex = &digest[7..];
        let path = dir.path().join("c/blobs/sha256").join(hex);
        std::fs::write(&path, b"chart bytez").unwrap();
        assert!(matches!(
            cache.read(&digest),
            Err(CacheError::Corrupt { .. })
        ));
        assert!(!cache.has(&digest));
        // Putting it again repairs the entry.
        cache.put(b"chart bytes").unwrap();
        assert!(cache.has(&digest));
    }

    #[test]
    fn missing_links_and_bad_digests_are_errors_not_reads() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let d = digest_of(b"x");
        assert!(matches!(cache.read(&d), Err(CacheError::Missing { .. })));
        assert!(matches!(
            cache.read("sha256:../../etc"),
            Err(CacheError::BadDigest(_))
        ));
        #[cfg(unix)]
        {
            let blobs = dir.path().join("blobs/sha256");
            std::fs::create_dir_all(&blobs).unwrap();
            std::fs::write(dir.path().join("outside"), b"x").unwrap();
            std::os::unix::fs::symlink(dir.path().join("outside"), blobs.join(&d[7..])).unwrap();
            assert!(matches!(cache.read(&d), Err(CacheError::NotAFile { .. })));
        }
    }
}
