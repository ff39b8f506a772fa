//! Is a `repoURL` (or a Flux GitRepository URL) this repository? Compared after
//! normalisation: scheme, user, trailing `.git` and `/` dropped, host
//! case-insensitive; `git@host:org/repo` ≡ `https://host/org/repo`. The repo's own URLs come
//! from its git remotes, `.gitops-lint.yaml` `repo-urls`, or, with neither, from what the repo
//! says of itself: its Flux bootstrap GitRepository, or the URL most of its Applications use
//! for paths that exist here.

use crate::source::{RepoFs, normalize_relative};
use std::path::Path;

/// Which rule decided that a source is (or is not) this repository.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdentityRule {
    /// The URL matches a git remote of the checkout.
    GitRemote,
    /// The URL matches `repo-urls` in `.gitops-lint.yaml`.
    Config,
    /// No remote: the URL of the repo's own Flux bootstrap GitRepository.
    FluxBootstrap,
    /// No remote: the URL most of the repo's Applications use for paths that exist here.
    ArgoMajority,
    /// No URL known at all: the source is this repo when its path exists here.
    PathExists,
}

impl IdentityRule {
    pub fn describe(&self) -> &'static str {
        match self {
            IdentityRule::GitRemote => "git remote",
            IdentityRule::Config => "repo-urls in .gitops-lint.yaml",
            IdentityRule::FluxBootstrap => "the repo's Flux bootstrap GitRepository",
            IdentityRule::ArgoMajority => "the repoURL most Applications use for paths here",
            IdentityRule::PathExists => "no URL known, the path exists here",
        }
    }
}

/// The verdict on one source URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    pub url: Option<String>,
    pub local: bool,
    pub rule: IdentityRule,
}

impl Judgement {
    pub fn describe(&self) -> String {
        format!(
            "{} ({})",
            if self.local {
                "this repository"
            } else {
                "another repository"
            },
            self.rule.describe()
        )
    }
}

/// How the repo names itself: normalised URLs, each with the rule that made it ours.
#[derive(Clone, Default)]
pub struct RepoIdentity {
    urls: Vec<(String, IdentityRule)>,
}

impl RepoIdentity {
    pub fn new(remotes: &[String], configured: &[String]) -> RepoIdentity {
        let mut id = RepoIdentity::default();
        for u in remotes {
            id.add(u, IdentityRule::GitRemote);
        }
        for u in configured {
            id.add(u, IdentityRule::Config);
        }
        id
    }

    pub fn add(&mut self, url: &str, rule: IdentityRule) {
        let n = normalize_url(url);
        if !n.is_empty() && !self.urls.iter().any(|(u, _)| *u == n) {
            self.urls.push((n, rule));
        }
    }

    pub fn knows_urls(&self) -> bool {
        !self.urls.is_empty()
    }

    /// By URL when the repo knows its URLs, else by whether the path exists.
    pub fn judge(&self, url: Option<&str>, path: Option<&str>, fs: &dyn RepoFs) -> Judgement {
        if let Some(url) = url
            && let Some((_, first_rule)) = self.urls.first()
        {
            let n = normalize_url(url);
            return match self.urls.iter().find(|(u, _)| *u == n) {
                Some((_, rule)) => Judgement {
                    url: Some(url.to_string()),
                    local: true,
                    rule: *rule,
                },
                None => Judgement {
                    url: Some(url.to_string()),
                    local: false,
                    rule: *first_rule,
                },
            };
        }
        Judgement {
            url: url.map(str::to_string),
            local: path
                .and_then(normalize_relative)
                .is_some_and(|p| fs.is_dir(&p)),
            rule: IdentityRule::PathExists,
        }
    }
}

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
    // Hosts are case-insensitive; GitHub and GitLab paths are too, so compare all lower-case.
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
