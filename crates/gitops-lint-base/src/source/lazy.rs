//! File bytes read on first use. A Helm chart lists every file it holds (READMEs, CRDs,
//! icons, docs) but templates reach few of them through `.Files`: listing a file costs one
//! `stat`, reading it is paid only by a chart that asks for it.

use super::error::FsError;
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Shared handle to a file's bytes: clones share one read (and its outcome).
#[derive(Clone)]
pub struct LazyBytes(Arc<Inner>);

struct Inner {
    source: Pending,
    bytes: OnceLock<Result<Arc<[u8]>, FsError>>,
}

enum Pending {
    /// Already in memory (an archive member, a blob of a revision).
    Loaded,
    /// A regular file on disk: `real` is its resolved path, checked to be inside the root
    /// when it was listed; `rel` names it in errors.
    Disk {
        rel: String,
        real: PathBuf,
        max_bytes: u64,
    },
}

impl LazyBytes {
    pub fn loaded(bytes: Arc<[u8]>) -> LazyBytes {
        LazyBytes(Arc::new(Inner {
            source: Pending::Loaded,
            bytes: OnceLock::from(Ok(bytes)),
        }))
    }

    /// A file on disk whose containment was checked by the caller.
    pub(super) fn on_disk(rel: String, real: PathBuf, max_bytes: u64) -> LazyBytes {
        LazyBytes(Arc::new(Inner {
            source: Pending::Disk {
                rel,
                real,
                max_bytes,
            },
            bytes: OnceLock::new(),
        }))
    }

    /// The bytes, read now if no one asked before.
    pub fn get(&self) -> Result<&Arc<[u8]>, FsError> {
        self.0
            .bytes
            .get_or_init(|| self.0.source.read())
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The error of a read that was tried and failed (a file unreadable or gone since it
    /// was listed); `None` when it read or was never asked for.
    pub fn failure(&self) -> Option<&FsError> {
        self.0.bytes.get().and_then(|r| r.as_ref().err())
    }
}

impl Pending {
    fn read(&self) -> Result<Arc<[u8]>, FsError> {
        let Pending::Disk {
            rel,
            real,
            max_bytes,
        } = self
        else {
            // `loaded` fills the cell, so this is never asked for.
            return Ok(Arc::from(&[][..]));
        };
        let unreadable = |e: std::io::Error| FsError::Unreadable(rel.clone(), e.to_string());
        let file = std::fs::File::open(real).map_err(unreadable)?;
        let meta = file.metadata().map_err(unreadable)?;
        // Replaced by a directory since the listing.
        if !meta.is_file() {
            return Err(FsError::NotFound(rel.clone()));
        }
        if meta.len() > *max_bytes {
            return Err(FsError::Unreadable(
                rel.clone(),
                format!("larger than {max_bytes} bytes"),
            ));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        // `take`: a file that grows after the check is still cut at the limit.
        file.take(*max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.len() as u64 > *max_bytes {
            return Err(FsError::Unreadable(
                rel.clone(),
                format!("larger than {max_bytes} bytes"),
            ));
        }
        Ok(Arc::from(bytes))
    }
}

impl std::fmt::Debug for LazyBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.bytes.get() {
            Some(Ok(b)) => write!(f, "LazyBytes({} bytes)", b.len()),
            Some(Err(e)) => write!(f, "LazyBytes(failed: {e})"),
            None => f.write_str("LazyBytes(unread)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_once_and_remembers_failures() {
        let Some(dir) = tempfile::tempdir().ok() else {
            return;
        };
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "abc").ok();
        let lazy = LazyBytes::on_disk("a.txt".into(), path.clone(), 10);
        let copy = lazy.clone();
        assert!(lazy.failure().is_none());
        assert_eq!(lazy.get().map(|b| b.to_vec()).ok(), Some(b"abc".to_vec()));
        // Read once: a later change on disk is not seen, by any clone.
        std::fs::write(&path, "changed").ok();
        assert_eq!(copy.get().map(|b| b.to_vec()).ok(), Some(b"abc".to_vec()));

        let gone = LazyBytes::on_disk("gone.txt".into(), dir.path().join("gone.txt"), 10);
        assert!(gone.get().is_err());
        assert!(matches!(gone.failure(), Some(FsError::Unreadable(p, _)) if p == "gone.txt"));

        std::fs::write(&path, "more than ten bytes").ok();
        let big = LazyBytes::on_disk("a.txt".into(), path, 10);
        assert!(
            big.get()
                .is_err_and(|e| e.to_string().contains("larger than 10 bytes"))
        );
    }
}
