//! `.gitops-lint.lock`: what each remote input resolved to when it was last fetched. It lives
//! in the repository, so a pull request that moves a chart to another version shows the change,
//! and later fetches honour it (a locked input is not re-resolved).

use super::reference::{RemoteKind, RemoteRef};
use crate::source::{FileId, Span};
use crate::yaml::{Limits, Node, parse_str};

/// The lock file's name, at the repository root.
pub const LOCK_FILE: &str = ".gitops-lint.lock";

/// The only lock format this version reads and writes.
const FORMAT_VERSION: i64 = 1;

/// One resolved remote input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockEntry {
    pub reference: RemoteRef,
    /// The version the request resolved to (for git: the commit id).
    pub resolved: String,
    /// `sha256:<hex>` of the cached blob: the chart archive, or the git tree archive.
    pub digest: String,
    /// What the server named the artifact by, kept for review: the OCI manifest digest, the
    /// index entry's digest, the git commit. Not needed to read the cache.
    pub origin: Option<String>,
    /// Where the entry is in the lock file (none for entries made in this run).
    pub span: Option<Span>,
}

/// A problem with the lock file, located when it came from a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockError {
    pub span: Option<Span>,
    pub message: String,
}

/// The parsed lock file: entries sorted by reference, one per reference.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lock {
    entries: Vec<LockEntry>,
}

impl Lock {
    pub fn entries(&self) -> &[LockEntry] {
        &self.entries
    }

    pub fn find(&self, reference: &RemoteRef) -> Option<&LockEntry> {
        self.entries
            .binary_search_by(|e| e.reference.cmp(reference))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// Add or replace the entry for its reference.
    pub fn insert(&mut self, entry: LockEntry) {
        match self
            .entries
            .binary_search_by(|e| e.reference.cmp(&entry.reference))
        {
            Ok(i) => self.entries[i] = entry,
            Err(i) => self.entries.insert(i, entry),
        }
    }

    /// Keep only the entries `keep` answers true for (fetch drops what no app names any more).
    pub fn retain(&mut self, keep: impl FnMut(&LockEntry) -> bool) {
        self.entries.retain(keep);
    }

    /// Read a lock file's text. Every malformed entry is reported; the good ones are kept.
    pub fn parse(text: &str, file: FileId) -> (Lock, Vec<LockError>) {
        let mut lock = Lock::default();
        let mut errors = Vec::new();
        let parsed = parse_str(text, file, &Limits::default());
        if let Some(e) = parsed.error {
            errors.push(LockError {
                span: Some(e.span),
                message: format!("{LOCK_FILE} is not valid YAML: {}", e.message),
            });
            return (lock, errors);
        }
        let Some(root) = parsed.docs.into_iter().next().map(|d| d.root) else {
            return (lock, errors);
        };
        if root.is_null() {
            return (lock, errors);
        }
        match root.get("version").and_then(Node::as_i64) {
            Some(FORMAT_VERSION) => {}
            _ => {
                errors.push(LockError {
                    span: Some(root.get("version").map(|n| n.span).unwrap_or(root.span)),
                    message: format!(
                        "{LOCK_FILE} must say `version: {FORMAT_VERSION}` (written by another gitops-lint?)"
                    ),
                });
                return (lock, errors);
            }
        }
        let Some(list) = root.get("entries") else {
            return (lock, errors);
        };
        let Some(items) = list.as_seq() else {
            errors.push(LockError {
                span: Some(list.span),
                message: format!("`entries` in {LOCK_FILE} must be a list"),
            });
            return (lock, errors);
        };
        for item in items {
            match entry_of(item) {
                Ok(entry) => {
                    if lock.find(&entry.reference).is_some() {
                        errors.push(LockError {
                            span: Some(item.span),
                            message: format!("{} is locked twice", entry.reference),
                        });
                    } else {
                        lock.insert(entry);
                    }
                }
                Err(message) => errors.push(LockError {
                    span: Some(item.span),
                    message,
                }),
            }
        }
        (lock, errors)
    }

    /// The lock file's text: a comment saying what it is, then one block per entry, sorted,
    /// every value quoted (a version like `1.10` must stay a string).
    pub fn to_yaml(&self) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
        let mut out = String::from(
            "# Written by `gitops-lint fetch`: the version and digest each remote chart or base\n\
             # resolved to. Review changes like code; `gitops-lint lint` checks the cache against it.\n",
        );
        out.push_str(&format!("version: {FORMAT_VERSION}\n"));
        if self.entries.is_empty() {
            out.push_str("entries: []\n");
            return out;
        }
        out.push_str("entries:\n");
        for e in &self.entries {
            let r = &e.reference;
            out.push_str(&format!("  - kind: {}\n", r.kind.as_str()));
            out.push_str(&format!("    source: {}\n", q(&r.source)));
            if !r.chart.is_empty() {
                out.push_str(&format!("    chart: {}\n", q(&r.chart)));
            }
            out.push_str(&format!("    requested: {}\n", q(&r.requested)));
            out.push_str(&format!("    resolved: {}\n", q(&e.resolved)));
            out.push_str(&format!("    digest: {}\n", q(&e.digest)));
            if let Some(o) = &e.origin {
                out.push_str(&format!("    origin: {}\n", q(o)));
            }
        }
        out
    }
}

fn entry_of(item: &Node) -> Result<LockEntry, String> {
    if item.as_map().is_none() {
        return Err(format!("an entry of {LOCK_FILE} must be a mapping"));
    }
    let text = |key: &str| item.get(key).and_then(Node::scalar_text);
    let required = |key: &str| text(key).ok_or_else(|| format!("entry has no `{key}`"));
    let kind_text = required("kind")?;
    let kind = RemoteKind::parse(&kind_text)
        .ok_or_else(|| format!("unknown kind `{kind_text}` (helm, oci, git or url)"))?;
    let source = required("source")?;
    let requested = text("requested").unwrap_or_default();
    let reference = match kind {
        RemoteKind::Helm => RemoteRef::helm(&source, &required("chart")?, &requested),
        RemoteKind::Oci => RemoteRef::oci(&source, "", &requested),
        RemoteKind::Git => RemoteRef::git(&source, &requested),
        RemoteKind::Url => RemoteRef::url(&source),
    };
    let digest = required("digest")?;
    if !is_sha256_digest(&digest) {
        return Err(format!(
            "digest `{digest}` is not `sha256:` and 64 hex digits"
        ));
    }
    Ok(LockEntry {
        reference,
        resolved: required("resolved")?,
        digest,
        origin: text("origin"),
        span: Some(item.span),
    })
}

/// `sha256:` and 64 lowercase hex digits.
pub(super) fn is_sha256_digest(d: &str) -> bool {
    d.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(r: RemoteRef, resolved: &str) -> LockEntry {
        LockEntry {
            reference: r,
            resolved: resolved.into(),
            digest: format!("sha256:{}", "ab".repeat(32)),
            origin: Some("sha256:00".into()),
            span: None,
        }
    }

    #[test]
    fn what_fetch_writes_lint_reads_back() {
        let mut lock = Lock::default();
        lock.insert(entry(
            RemoteRef::helm("https://charts.example.com", "web", ">=1.0 <2"),
            "1.10",
        ));
        lock.insert(entry(
            RemoteRef::oci("oci://127.0.0.1:5000/charts/api", "", "6.x"),
            "6.5.4",
        ));
        lock.insert(entry(
            RemoteRef::git("https://example.com/org/bases", "v1.2.0"),
            "0123abcd",
        ));
        lock.insert(entry(
            RemoteRef::url("https://raw.example.com/org/repo/v1.0.0/install.yaml"),
            "https://raw.example.com/org/repo/v1.0.0/install.yaml",
        ));
        let text = lock.to_yaml();
        let (back, errors) = Lock::parse(&text, FileId(0));
        assert!(errors.is_empty(), "{errors:?}\n{text}");
        let strip = |l: &Lock| {
            l.entries()
                .iter()
                .map(|e| LockEntry {
                    span: None,
                    ..e.clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&back), strip(&lock));
        // A version that YAML would read as a number stays the string it was.
        assert_eq!(
            back.find(&RemoteRef::helm(
                "https://charts.example.com/",
                "web",
                ">=1.0 <2"
            ))
            .map(|e| e.resolved.as_str()),
            Some("1.10")
        );
    }

    #[test]
    fn malformed_entries_are_located_and_the_good_ones_kept() {
        let text = "version: 1\nentries:\n  - kind: helm\n    source: https://c.example\n    chart: a\n    resolved: 1.0.0\n    digest: md5:00\n  - kind: git\n    source: https://example.com/r\n    requested: main\n    resolved: abc\n    digest: sha256:".to_string()
            + &"0".repeat(64)
            + "\n  - kind: svn\n    source: x\n";
        let (lock, errors) = Lock::parse(&text, FileId(3));
        assert_eq!(lock.entries().len(), 1);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].message.contains("md5:00"));
        assert!(errors[1].message.contains("svn"));
        assert!(
            errors
                .iter()
                .all(|e| e.span.is_some_and(|s| s.file == FileId(3)))
        );
    }

    #[test]
    fn another_format_version_is_refused_not_misread() {
        let (lock, errors) = Lock::parse("version: 2\nentries: []\n", FileId(0));
        assert!(lock.entries().is_empty());
        assert_eq!(errors.len(), 1);
    }
}
