//! Remote files: a `resources:` entry, a patch `path:` or a generator file given as a URL.
//! kustomize loads them over HTTP(S) on every build; here they render from the cache once
//! `gitops-lint fetch` has downloaded them (locked by digest), and are left out with an issue
//! naming the URL until then.

use super::acc::{Builder, Fail, failed, unrenderable};
use super::kustomization::Item;
use crate::remote::RemoteRef;
use crate::render::{Fetched, MissingInput, RemoteUse};

/// Does a file entry name a URL kustomize reads over HTTP (`http://` or `https://`, as its
/// loader's `IsRemoteFile`)?
pub(super) fn is_http_url(entry: &str) -> bool {
    let e = entry.trim();
    ["https://", "http://"]
        .iter()
        .any(|p| e.get(..p.len()).is_some_and(|s| s.eq_ignore_ascii_case(p)))
}

/// Where a remote file entry leads.
pub(super) enum RemoteFile {
    /// The fetched file, at its mounted repo path.
    Ready(String),
    /// Not fetched: left out; the issue says why and names the input.
    Missing(Fail),
}

impl Builder<'_> {
    /// The fetched file an entry names, or why it is missing. `what` names the entry in
    /// messages (`resource`, `patch`, `generator file`).
    pub(super) fn remote_file(&self, item: &Item, what: &str) -> Result<RemoteFile, Fail> {
        let url = item.text.trim();
        // `fetch` speaks HTTPS only; an `http://` file can only be vendored.
        if !crate::remote::is_fetchable_url(url) {
            let mut issue = unrenderable(
                item.span,
                format!(
                    "remote {what} '{url}' is served over plain HTTP, which `gitops-lint fetch` does not download; vendor it into the repository"
                ),
            );
            issue.input = MissingInput::vendor_only(url.to_string());
            return Ok(RemoteFile::Missing(issue));
        }
        let reference = RemoteRef::url(url);
        self.remotes.borrow_mut().push(RemoteUse {
            reference: reference.clone(),
            span: item.span,
            floats: false,
        });
        match self.opts.remotes.url_file(&reference) {
            Fetched::Ready { root } => Ok(RemoteFile::Ready(root)),
            Fetched::Missing(why) => {
                let mut issue = unrenderable(item.span, format!("remote {what} '{url}': {why}"));
                issue.input = MissingInput::fetchable(reference.to_string());
                Ok(RemoteFile::Missing(issue))
            }
            Fetched::Broken(why) => Err(failed(item.span, format!("remote {what} '{url}': {why}"))),
        }
    }
}
