//! Remote inputs: charts in Helm repositories and OCI registries, and kustomize bases in other
//! git repositories. `gitops-lint fetch` (the only command that uses the network) resolves each
//! [`RemoteRef`] the app model names, stores what it downloaded in a content-addressed
//! [`Cache`] and records the resolution in the repo's lock file ([`Lock`]). `lint` reads the
//! lock and the cache through a [`RemoteStore`], never the network: an input that is locked and
//! cached renders like a vendored one; anything else stays `offline-unrenderable-input`.
//!
//! The cache holds blobs named by their SHA-256. A chart is its `.tgz` as served; a git tree is
//! a deterministic `.tar.gz` of the checkout ([`archive`]). Every read re-hashes the blob and
//! compares it with the lock entry, so a tampered or truncated cache entry is an error naming it.

pub mod archive;
mod cache;
mod lock;
mod reference;
mod store;

pub use cache::{Cache, CacheError, digest_of};
pub use lock::{LOCK_FILE, Lock, LockEntry, LockError};
pub use reference::{RemoteKind, RemoteRef};
pub use store::{Lookup, RemoteStore};

/// The cache directory when neither `--cache` nor `GITOPS_LINT_CACHE` names one, relative to
/// the repository root. The repo walk skips it (it is not the repo's content).
pub const DEFAULT_CACHE_DIR: &str = ".gitops-lint/cache";

/// Most bytes one cached artifact may hold (a chart archive or a git tree archive, compressed).
pub const MAX_ARTIFACT_BYTES: u64 = 64 << 20;

/// Is the URL's host a loopback IP literal (127.0.0.0/8, ::1)? A name, even `localhost`, is
/// not: what it resolves to is not ours to know.
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        _ => false,
    }
}

/// Can `fetch` download a file at this URL? HTTPS anywhere, plain HTTP only to a loopback IP
/// literal (a local mirror, the tests), as `fetch`'s connection policy allows.
pub fn is_fetchable_url(text: &str) -> bool {
    let Ok(url) = url::Url::parse(text.trim()) else {
        return false;
    };
    url.scheme() == "https" || (url.scheme() == "http" && is_loopback(&url))
}
