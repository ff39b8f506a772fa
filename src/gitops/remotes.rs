//! Is a `repoURL` this repository? Compared after normalisation (catalog A1.9): scheme,
//! user, trailing `.git` and `/` dropped; `git@host:org/repo` ≡ `https://host/org/repo`.

use std::path::Path;

/// Remote URLs from `.git/config` (read as a file: linting spawns no process).
pub fn git_remotes(root: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join(".git").join("config")) else {
        return vec![];
    };
    let mut urls = Vec::new();
    let mut in_remote = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_remote = line.starts_with("[remote ");
            continue;
        }
        if in_remote
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == "url"
        {
            urls.push(v.trim().to_string());
        }
    }
    urls
}

pub fn normalize_url(url: &str) -> String {
    let mut u = url.trim().to_ascii_lowercase();
    for scheme in ["https://", "http://", "ssh://", "git://", "git+ssh://"] {
        if let Some(rest) = u.strip_prefix(scheme) {
            u = rest.to_string();
            break;
        }
    }
    if let Some((user, rest)) = u.split_once('@')
        && !user.contains('/')
    {
        u = rest.to_string();
    }
    // scp-like `host:org/repo` (but not `host:22/org`)
    if let Some((host, rest)) = u.split_once(':')
        && !host.contains('/')
    {
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        u = format!("{host}/{}", rest.trim_start_matches('/'));
    }
    let u = u.trim_end_matches('/');
    u.strip_suffix(".git").unwrap_or(u).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn urls_normalise() {
        let a = normalize_url("git@github.com:Org/Repo.git");
        assert_eq!(a, "github.com/org/repo");
        assert_eq!(normalize_url("https://github.com/org/repo/"), a);
        assert_eq!(normalize_url("ssh://git@github.com/org/repo.git"), a);
    }
}
