//! Remote kustomize bases: a shallow fetch of one ref with gix (no git process, no
//! credential helper, no hooks: the clone is bare and opened isolated from every git config
//! but its own), then the commit's tree packed by `remote::archive::pack_tree`.

use super::Fetched;
use super::policy;
use crate::remote::archive::{MAX_TREE_BYTES, MAX_TREE_FILES, pack_tree};
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Most bytes the fetched repository may take on disk while it is read.
const MAX_CLONE_BYTES: u64 = 512 << 20;
/// Deepest directory nesting of a tree taken.
const MAX_TREE_DEPTH: usize = 64;

/// Is this a full commit id (fetched by id rather than by name)?
fn is_commit_id(r: &str) -> bool {
    r.len() == 40 && r.bytes().all(|b| b.is_ascii_hexdigit())
}

/// May fetch clone from this URL? HTTPS anywhere; plain `http://` and `git://` only from a
/// loopback address; `file://` only when the caller allows local remotes (tests); never
/// `ssh` (it would run the ssh program).
pub fn check_git_url(url: &str, allow_local: bool) -> Result<(), String> {
    let (scheme, _) = url
        .split_once("://")
        .ok_or_else(|| format!("`{url}` is not a URL with a scheme (https://…)"))?;
    match scheme {
        "https" | "http" => {
            let parsed = reqwest::Url::parse(url).map_err(|e| format!("`{url}`: {e}"))?;
            policy::check_url(&parsed)
        }
        "git" => {
            let parsed = reqwest::Url::parse(&url.replacen("git://", "http://", 1))
                .map_err(|e| format!("`{url}`: {e}"))?;
            if policy::is_loopback(&parsed) {
                Ok(())
            } else {
                Err(format!(
                    "`{url}`: the git:// protocol is plain text; only a loopback address is fetched over it (use https)"
                ))
            }
        }
        "file" if allow_local => Ok(()),
        "file" => Err(format!("`{url}`: local repositories are not fetched")),
        "ssh" => Err(format!(
            "`{url}`: ssh remotes are not fetched (that would run ssh); use the https URL"
        )),
        other => Err(format!(
            "`{url}`: the `{other}` scheme is not fetched (https only)"
        )),
    }
}

/// Clone `url` at `requested` (branch, tag, full commit id; empty: the default branch) into
/// `work` (an empty directory the caller removes) and pack the commit's tree. `timeout` is
/// the request's time, already cut to what is left of the run.
pub fn fetch(
    url: &str,
    requested: &str,
    work: &Path,
    allow_local: bool,
    timeout: Duration,
) -> Result<Fetched, String> {
    check_git_url(url, allow_local)?;
    super::http::install_crypto_provider();
    let interrupt = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    // The clone runs on its own thread: gix looks at `interrupt` only between steps, so a
    // server that trickles a byte at a time keeps a read blocked past any deadline. At the
    // deadline the clone is abandoned (the flag stops it at its next step; the caller
    // removes `work`), and the fetch fails now.
    {
        let (url, requested, work) = (url.to_string(), requested.to_string(), work.to_path_buf());
        let interrupt = interrupt.clone();
        std::thread::spawn(move || {
            let _ = tx.send(clone_and_pack(&url, &requested, &work, &interrupt));
        });
    }
    let start = Instant::now();
    let stopped = loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(r) => break Err(r),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                break Ok("stopped without a result".to_string());
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if start.elapsed() > timeout {
            break Ok(format!("took longer than {} s", timeout.as_secs()));
        }
        if dir_size(work) > MAX_CLONE_BYTES {
            break Ok(format!("is larger than {MAX_CLONE_BYTES} bytes"));
        }
    };
    let result = match stopped {
        Err(result) => result,
        Ok(reason) => {
            interrupt.store(true, Ordering::Relaxed);
            return Err(format!("{url}: the fetch {reason}"));
        }
    };
    result.map_err(|e| {
        format!(
            "{url} at {}: {e}",
            if requested.is_empty() {
                "HEAD"
            } else {
                requested
            }
        )
    })
}

fn clone_and_pack(
    url: &str,
    requested: &str,
    work: &Path,
    interrupt: &AtomicBool,
) -> Result<Fetched, String> {
    let err = |e: gix::Error| e.to_string();
    let mut prepare = gix::clone::PrepareFetch::new(
        url,
        work,
        gix::create::Kind::Bare,
        gix::create::Options::default(),
        gix::open::Options::isolated(),
    )
    .map_err(err)?
    .with_shallow(gix::remote::fetch::Shallow::DepthAtRemote(NonZeroU32::MIN))
    // A redirect could leave HTTPS or the host; the server is asked at the URL given.
    .with_in_memory_config_overrides(["http.followRedirects=false"])
    .configure_connection(|c| {
        // No credential helper, no prompt: a repository that needs a password fails.
        c.set_credentials(|_| Ok(None));
        Ok(())
    });
    if is_commit_id(requested) {
        prepare = prepare.with_revision(Some(requested)).map_err(err)?;
    } else if !requested.is_empty() {
        prepare = prepare.with_ref_name(Some(requested)).map_err(err)?;
    }
    let (repo, _) = prepare
        .fetch_only(gix::progress::Discard, interrupt)
        .map_err(err)?;
    let commit = repo.head_commit().map_err(|e| e.to_string())?;
    let id = commit.id.to_string();
    if is_commit_id(requested) && !id.eq_ignore_ascii_case(requested) {
        return Err(format!("fetched commit {id}, not the requested one"));
    }
    let tree = commit.tree_id().map_err(|e| e.to_string())?.detach();
    let files = tree_files(&repo, tree)?;
    let bytes = pack_tree(&files)?;
    Ok(Fetched {
        resolved: id.clone(),
        bytes,
        origin: Some(id),
    })
}

/// Every regular file of the tree with its repo-relative path (links and submodules are left
/// out, as the archive holds only regular files).
fn tree_files(
    repo: &gix::Repository,
    root: gix::ObjectId,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    let mut total: u64 = 0;
    let mut stack = vec![(root, String::new(), 0usize)];
    while let Some((id, prefix, depth)) = stack.pop() {
        if depth > MAX_TREE_DEPTH {
            return Err(format!(
                "directories nest deeper than {MAX_TREE_DEPTH} levels"
            ));
        }
        let tree = repo.find_tree(id).map_err(|e| e.to_string())?;
        for entry in tree.iter() {
            let entry = entry.map_err(|e| e.to_string())?;
            let name = entry.filename().to_string();
            let path = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            let mode = entry.mode();
            if mode.is_tree() {
                stack.push((entry.oid().to_owned(), path, depth + 1));
            } else if mode.is_blob() {
                let blob = repo.find_object(entry.oid()).map_err(|e| e.to_string())?;
                total += blob.data.len() as u64;
                if total > MAX_TREE_BYTES || out.len() >= MAX_TREE_FILES {
                    return Err(format!(
                        "the tree holds more than {MAX_TREE_FILES} files or {MAX_TREE_BYTES} bytes"
                    ));
                }
                out.push((path, blob.data.clone()));
            }
        }
    }
    Ok(out)
}

fn dir_size(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_plain_text_is_cloned() {
        assert!(check_git_url("https://github.com/org/bases", false).is_ok());
        assert!(check_git_url("http://127.0.0.1:9418/bases", false).is_ok());
        assert!(check_git_url("git://127.0.0.1:9418/bases", false).is_ok());
        assert!(check_git_url("git://github.com/org/bases", false).is_err());
        assert!(check_git_url("http://github.com/org/bases", false).is_err());
        assert!(
            check_git_url("ssh://git@github.com/org/bases", false)
                .unwrap_err()
                .contains("ssh")
        );
        assert!(check_git_url("file:///srv/bases", false).is_err());
        assert!(check_git_url("file:///srv/bases", true).is_ok());
        assert!(check_git_url("github.com/org/bases", false).is_err());
        assert!(is_commit_id(&"a".repeat(40)));
        assert!(!is_commit_id("v1.2.0"));
    }
}
