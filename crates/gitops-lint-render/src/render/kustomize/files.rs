//! Files a kustomization entry names (a patch, a generator's file, a configuration): read
//! from the repository under the build's load restrictions, or, for a URL, from the fetch
//! cache (`remote_file`).

use super::acc::{Builder, Fail, fs_error, parse_docs};
use super::kustomization::{Item, Kustomization};
use super::remote_file::{RemoteFile, is_http_url};
use crate::source::FileId;
use crate::yaml::Node;

impl Builder<'_> {
    /// Read a file named by an entry (for patches, generators, configs). A URL is read from
    /// the fetch cache; unfetched, the build cannot go on without it (a generator's data, a
    /// configuration) and the issue names the input.
    pub fn read_file(&self, k: &Kustomization, item: &Item) -> Result<FileId, Fail> {
        if is_http_url(&item.text) {
            return match self.remote_file(item, "file")? {
                RemoteFile::Ready(path) => self.fs.read(&path).map_err(|e| fs_error(item, e)),
                RemoteFile::Missing(issue) => Err(issue),
            };
        }
        let path = self.resolve(k, item)?;
        self.check_file_restriction(k, &path, item)?;
        self.fs.read(&path).map_err(|e| fs_error(item, e))
    }

    /// A patch file's documents; `None` for a remote one (kustomize loads `https://` patch
    /// paths) that is not fetched: it is left out with an issue naming it, and the build
    /// goes on without that patch.
    pub fn load_patch_docs(
        &self,
        k: &Kustomization,
        item: &Item,
    ) -> Result<Option<Vec<Node>>, Fail> {
        if !is_http_url(&item.text) {
            return self.load_docs(k, item).map(Some);
        }
        match self.remote_file(item, "patch")? {
            RemoteFile::Ready(path) => {
                let file = self.fs.read(&path).map_err(|e| fs_error(item, e))?;
                parse_docs(self.fs, file).map(Some)
            }
            RemoteFile::Missing(mut issue) => {
                issue
                    .message
                    .push_str("; the build goes on without this patch");
                self.skipped.borrow_mut().push(*issue);
                Ok(None)
            }
        }
    }

    /// Parse a YAML file named by an entry into its non-empty documents.
    pub fn load_docs(&self, k: &Kustomization, item: &Item) -> Result<Vec<Node>, Fail> {
        let file = self.read_file(k, item)?;
        parse_docs(self.fs, file)
    }
}
