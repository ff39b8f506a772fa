//! Remote bases as kustomize reads them (`api/internal/git/repospec.go`): a git-like entry is
//! split into the URL `git clone` gets, the ref to check out and the directory inside the
//! clone holding the kustomization.
//!
//! Forms: `github.com/org/repo//path?ref=v1`, `https://host/org/repo.git/path`,
//! `git::https://…` (the prefix is dropped), `ssh://git@host/org/repo`,
//! `git@github.com:org/repo//path`, Azure DevOps `…/_git/repo/path`, `file:///abs/repo`.
//! `?ref=` wins over `?version=`; without either the default branch is cloned.

/// One remote base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitSpec {
    /// What `git clone` is given (scheme, user and host kept as kustomize keeps them).
    pub clone_url: String,
    /// `ref` (or `version`) from the query; empty for the default branch.
    pub reference: String,
    /// The kustomization's directory inside the clone (`""`: its root).
    pub subdir: String,
    /// `?submodules=` (default true).
    pub submodules: bool,
}

/// Parse a `resources:` / `components:` entry as a git repository, or `None` when kustomize
/// would not take it for one.
pub fn parse(entry: &str) -> Option<GitSpec> {
    let entry = entry.trim();
    if entry.starts_with('/') {
        return None;
    }
    let (rest, query) = entry.split_once('?').unwrap_or((entry, ""));
    let (reference, submodules) = parse_query(query);
    let (host, path) = split_host(rest)?;
    let all_segments = host.starts_with("file://");
    let (repo_path, subdir) = split_path(&path, all_segments)?;
    Some(GitSpec {
        clone_url: format!("{host}{repo_path}"),
        reference,
        subdir,
        submodules,
    })
}

/// An `http(s)://` entry naming one YAML or JSON file (`raw.githubusercontent.com/…/x.yaml`):
/// kustomize downloads it as a file before it tries a clone.
pub fn is_remote_file(entry: &str) -> bool {
    let lower = entry.trim().to_ascii_lowercase();
    let path = lower.split(['?', '#']).next().unwrap_or("");
    (path.starts_with("https://") || path.starts_with("http://"))
        && !path.contains("/_git/")
        && !path["https://".len().min(path.len())..].contains("//")
        && [".yaml", ".yml", ".json"].iter().any(|e| path.ends_with(e))
}

fn parse_query(query: &str) -> (String, bool) {
    let mut reference = None;
    let mut version = None;
    let mut submodules = true;
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = percent_decode(v);
        match k {
            "ref" if !v.is_empty() => reference = Some(v),
            "version" if version.is_none() => version = Some(v),
            "submodules" => {
                if let Some(b) = parse_go_bool(&v) {
                    submodules = b;
                }
            }
            _ => {}
        }
    }
    (reference.or(version).unwrap_or_default(), submodules)
}

/// `strconv.ParseBool`.
fn parse_go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Query values as `url.ParseQuery` decodes them (`%XX`, `+` is a space).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    (s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

/// The host part (scheme, user, host and the separator after it) and the path after it.
fn split_host(n: &str) -> Option<(String, String)> {
    let n = strip_prefix_ci(n, "git::").unwrap_or(n);
    let (scheme, n) = ["ssh://", "https://", "http://", "file://"]
        .iter()
        .find_map(|p| strip_prefix_ci(n, p).map(|rest| (*p, rest)))
        .unwrap_or(("", n));
    let (user, n) = match user_len(n) {
        Some(len) => n.split_at(len),
        None => ("", n),
    };
    let lower = n.to_ascii_lowercase();
    let github = lower.starts_with("github.com/") || lower.starts_with("github.com:");
    let scp = scheme.is_empty() && (!user.is_empty() || github);
    if scheme.is_empty() && !scp {
        return None;
    }
    if scheme == "file://" {
        return Some((scheme.to_string(), format!("{user}{n}")));
    }
    let mut sep = n.find('/');
    if scp
        && let Some(colon) = n.find(':').filter(|&c| c > 0)
        && sep.is_none_or(|s| colon < s)
    {
        sep = Some(colon);
    }
    let (mut host, rest) = match sep {
        Some(i) => (n[..=i].to_string(), n[i + 1..].to_string()),
        None => (n.to_string(), String::new()),
    };
    let (mut scheme, mut user) = (scheme.to_string(), user.to_string());
    if github {
        // GitHub URLs are normalised: ssh (or a user) keeps `git@github.com:`, the rest https.
        if scheme.starts_with("ssh://") || !user.is_empty() {
            scheme = String::new();
            host = "github.com:".into();
        } else {
            scheme = "https://".into();
            user = String::new();
            host = "github.com/".into();
        }
    }
    if host.is_empty() {
        return None;
    }
    Some((format!("{scheme}{user}{host}"), rest))
}

/// Length of a leading `user@` (a letter, then letters, digits and `-`).
fn user_len(s: &str) -> Option<usize> {
    let at = s.find('@')?;
    let user = &s[..at];
    let mut chars = user.chars();
    (chars.next()?.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .then_some(at + 1)
}

/// Split the path into the repository and the directory inside it: on `_git/<repo>`, `//` or
/// `.git`, else after two segments (`org/repo`; every segment for `file://`).
fn split_path(n: &str, all_segments: bool) -> Option<(String, String)> {
    let (repo, sub) = if let Some(i) = n.find("_git/") {
        let root = &n[..i + "_git/".len()];
        let after = &n[i + "_git/".len()..];
        let (first, rest) = after.split_once('/').unwrap_or((after, ""));
        (format!("{root}{first}"), rest.to_string())
    } else if let Some(i) = n.find("//") {
        (n[..i].to_string(), n[i + 2..].to_string())
    } else if let Some(i) = n.find(".git") {
        (n[..i + 4].to_string(), n[i + 4..].to_string())
    } else if all_segments {
        (n.to_string(), String::new())
    } else {
        let segments: Vec<&str> = n.split('/').collect();
        if segments.len() < 2 {
            return None;
        }
        (segments[..2].join("/"), segments[2..].join("/"))
    };
    if repo.is_empty() {
        return None;
    }
    let sub = sub.trim_start_matches('/');
    let clean = crate::source::normalize_relative(sub)?;
    Some((repo, clean))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(entry: &str) -> (String, String, String) {
        let s = parse(entry).unwrap_or_else(|| panic!("{entry} should parse"));
        (s.clone_url, s.reference, s.subdir)
    }

    fn t(a: &str, b: &str, c: &str) -> (String, String, String) {
        (a.into(), b.into(), c.into())
    }

    #[test]
    fn github_shorthand_is_https_with_the_path_after_org_and_repo() {
        assert_eq!(
            spec("github.com/org/repo//deploy/base?ref=v1.2.0"),
            t("https://github.com/org/repo", "v1.2.0", "deploy/base")
        );
        assert_eq!(
            spec("github.com/org/repo/deploy?ref=main"),
            t("https://github.com/org/repo", "main", "deploy")
        );
        assert_eq!(
            spec("https://github.com/org/repo.git//path?ref=abc123"),
            t("https://github.com/org/repo.git", "abc123", "path")
        );
    }

    #[test]
    fn ssh_and_scp_forms_keep_the_git_user() {
        assert_eq!(
            spec("git@github.com:org/repo//path?ref=v2"),
            t("git@github.com:org/repo", "v2", "path")
        );
        assert_eq!(
            spec("ssh://git@github.com/org/repo.git/path?version=v3"),
            t("git@github.com:org/repo.git", "v3", "path")
        );
        assert_eq!(
            spec("ssh://git@gitlab.example.com/team/repo.git//k8s"),
            t("ssh://git@gitlab.example.com/team/repo.git", "", "k8s")
        );
        assert_eq!(
            spec("git@gitlab.example.com:team/repo.git/k8s?ref=x"),
            t("git@gitlab.example.com:team/repo.git", "x", "k8s")
        );
    }

    #[test]
    fn forced_git_protocol_azure_and_file_forms() {
        assert_eq!(
            spec("git::https://gitlab.com/org/repo.git//base?ref=v1"),
            t("https://gitlab.com/org/repo.git", "v1", "base")
        );
        assert_eq!(
            spec("https://dev.azure.com/org/project/_git/repo/deploy/base?ref=main"),
            t(
                "https://dev.azure.com/org/project/_git/repo",
                "main",
                "deploy/base"
            )
        );
        assert_eq!(
            spec("file:///srv/git/repo.git//base"),
            t("file:///srv/git/repo.git", "", "base")
        );
    }

    #[test]
    fn ref_wins_over_version_and_submodules_are_read() {
        let s = parse("github.com/o/r?version=v1&ref=v2&submodules=false").unwrap();
        assert_eq!(s.reference, "v2");
        assert!(!s.submodules);
        assert_eq!(parse("github.com/o/r?ref=a%2Fb").unwrap().reference, "a/b");
    }

    #[test]
    fn what_is_not_a_repository() {
        assert_eq!(parse("../base"), None);
        assert_eq!(parse("/abs/path"), None);
        assert_eq!(parse("example.com/org/repo"), None, "no scheme, no user");
        assert_eq!(parse("https://example.com/only"), None, "one segment");
        assert_eq!(parse("github.com/org/repo//../x"), None, "leaves the clone");
        assert!(is_remote_file(
            "https://raw.githubusercontent.com/org/repo/v1/deploy.yaml"
        ));
        assert!(!is_remote_file(
            "https://github.com/org/repo//deploy?ref=v1"
        ));
        assert!(!is_remote_file("github.com/org/repo/x.yaml"));
    }
}
