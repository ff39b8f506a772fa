//! The pull request a workflow runs for, from the Actions environment
//! (`GITHUB_EVENT_NAME`, `GITHUB_EVENT_PATH`, `GITHUB_REPOSITORY`, `GITHUB_API_URL`,
//! `GITHUB_TOKEN`).

/// Everything needed to comment on one pull request. `Debug` is written by hand so the
/// token can never end up in a log line.
#[derive(Clone)]
pub struct PrContext {
    pub api_url: String,
    pub token: String,
    pub owner: String,
    pub repo: String,
    pub number: u64,
    /// The PR head commit (reviews comment on it).
    pub head_sha: String,
    /// A `pull_request` event whose head is in another repository (a fork): GitHub gives
    /// its workflow a read-only token, so nothing is written.
    pub from_fork: bool,
}

impl std::fmt::Debug for PrContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PrContext {{ {}/{}#{} at {}, api {}, token: <redacted> }}",
            self.owner, self.repo, self.number, self.head_sha, self.api_url
        )
    }
}

/// Why no PR context was found (said once, so users know why nothing was posted).
#[derive(Debug, PartialEq, Eq)]
pub enum NoPr {
    /// Not a pull-request event or not in Actions: nothing to say.
    NotAPullRequest,
    /// A pull request, but no token: annotations and summary only.
    NoToken,
    /// The event could not be read.
    Invalid(String),
}

/// Read the context through `env` (a function so tests need not touch the process env).
pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<PrContext, NoPr> {
    let name = env("GITHUB_EVENT_NAME").unwrap_or_default();
    if name != "pull_request" && name != "pull_request_target" {
        return Err(NoPr::NotAPullRequest);
    }
    let token = env("GITHUB_TOKEN")
        .filter(|t| !t.trim().is_empty())
        .ok_or(NoPr::NoToken)?;
    let path =
        env("GITHUB_EVENT_PATH").ok_or(NoPr::Invalid("GITHUB_EVENT_PATH is not set".into()))?;
    let text = std::fs::read_to_string(&path).map_err(|e| NoPr::Invalid(format!("{path}: {e}")))?;
    let event: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| NoPr::Invalid(format!("{path}: {e}")))?;
    let pr = &event["pull_request"];
    let number = pr["number"]
        .as_u64()
        .ok_or(NoPr::Invalid("event has no pull_request.number".into()))?;
    let head_sha = pr["head"]["sha"]
        .as_str()
        .ok_or(NoPr::Invalid("event has no pull_request.head.sha".into()))?
        .to_string();
    let full = env("GITHUB_REPOSITORY")
        .or_else(|| pr["base"]["repo"]["full_name"].as_str().map(str::to_string))
        .unwrap_or_default();
    let (owner, repo) = full
        .split_once('/')
        .ok_or(NoPr::Invalid("GITHUB_REPOSITORY is not owner/name".into()))?;
    // `pull_request_target` runs in the base repository with its token; `pull_request` from
    // a fork does not.
    let head_repo = pr["head"]["repo"]["full_name"].as_str();
    let base_repo = pr["base"]["repo"]["full_name"].as_str();
    let from_fork = name == "pull_request"
        && match (head_repo, base_repo) {
            (Some(head), Some(base)) => !head.eq_ignore_ascii_case(base),
            _ => false,
        };
    Ok(PrContext {
        api_url: env("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into()),
        token,
        owner: owner.to_string(),
        repo: repo.to_string(),
        number,
        head_sha,
        from_fork,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn reads_the_pull_request_and_hides_the_token() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("event.json");
        std::fs::write(
            &path,
            r#"{"pull_request":{"number":7,"head":{"sha":"abc"}}}"#,
        )
        .expect("write");
        let env: HashMap<&str, String> = [
            ("GITHUB_EVENT_NAME", "pull_request".to_string()),
            ("GITHUB_TOKEN", "ghs_secret".to_string()),
            ("GITHUB_EVENT_PATH", path.display().to_string()),
            ("GITHUB_REPOSITORY", "acme/gitops".to_string()),
        ]
        .into_iter()
        .collect();
        let ctx = from_env(|k| env.get(k).cloned()).expect("context");
        assert_eq!(
            (ctx.owner.as_str(), ctx.repo.as_str(), ctx.number),
            ("acme", "gitops", 7)
        );
        assert!(!format!("{ctx:?}").contains("ghs_secret"));
        let no_token = |k: &str| {
            if k == "GITHUB_TOKEN" {
                None
            } else {
                env.get(k).cloned()
            }
        };
        assert!(!ctx.from_fork);
        assert_eq!(from_env(no_token).err(), Some(NoPr::NoToken));
        // A pull request from another repository.
        std::fs::write(
            &path,
            r#"{"pull_request":{"number":7,"head":{"sha":"abc","repo":{"full_name":"someone/gitops"}},"base":{"repo":{"full_name":"acme/gitops"}}}}"#,
        )
        .expect("write");
        assert!(
            from_env(|k| env.get(k).cloned())
                .expect("context")
                .from_fork
        );
        assert_eq!(from_env(|_| None).err(), Some(NoPr::NotAPullRequest));
    }
}
