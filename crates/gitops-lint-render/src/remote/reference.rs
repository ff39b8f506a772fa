//! What an app names as a remote input, in the one normal form that the lock file, `fetch`
//! and `lint` compare.

use std::fmt;

/// The kind of server a remote input comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RemoteKind {
    /// A Helm chart repository over HTTP(S): `index.yaml` plus chart archives.
    Helm,
    /// An OCI registry (distribution API) holding Helm charts as artifacts.
    Oci,
    /// A git repository (a kustomize remote base).
    Git,
    /// One file over HTTPS (a kustomize `resources:` or patch `path:` URL): no version, so the
    /// lock pins its content by digest.
    Url,
}

impl RemoteKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RemoteKind::Helm => "helm",
            RemoteKind::Oci => "oci",
            RemoteKind::Git => "git",
            RemoteKind::Url => "url",
        }
    }

    pub fn parse(s: &str) -> Option<RemoteKind> {
        match s {
            "helm" => Some(RemoteKind::Helm),
            "oci" => Some(RemoteKind::Oci),
            "git" => Some(RemoteKind::Git),
            "url" => Some(RemoteKind::Url),
            _ => None,
        }
    }
}

/// One remote input as a repo names it. Built only through the constructors, which normalise
/// the source, so that two apps naming the same chart compare equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RemoteRef {
    pub kind: RemoteKind,
    /// Helm: the repository URL (`https://charts.example.com/stable`). OCI: the chart's full
    /// reference without tag (`oci://ghcr.io/org/charts/podinfo`). Git: the clone URL
    /// (`https://github.com/org/repo`). URL: the file's URL as written.
    pub source: String,
    /// Helm: the chart name in the index. Empty for OCI (the name ends `source`) and git.
    pub chart: String,
    /// What the repo asked for: an exact version, a semver range, `*` or empty (the newest),
    /// an OCI `@sha256:` digest; for git a branch, tag or commit (empty: the default branch).
    pub requested: String,
}

impl RemoteRef {
    /// A chart in a Helm HTTP(S) repository.
    pub fn helm(repo: &str, chart: &str, version: &str) -> RemoteRef {
        RemoteRef {
            kind: RemoteKind::Helm,
            source: repo.trim().trim_end_matches('/').to_string(),
            chart: chart.trim().to_string(),
            requested: version.trim().to_string(),
        }
    }

    /// A chart in an OCI registry. `repo` is the registry path with or without the `oci://`
    /// scheme, and `chart` is appended when given (Argo CD and Flux HelmRepository name the
    /// chart separately; an OCIRepository URL already ends with it).
    pub fn oci(repo: &str, chart: &str, version: &str) -> RemoteRef {
        let base = repo.trim().trim_end_matches('/');
        let base = base.strip_prefix("oci://").unwrap_or(base);
        let chart = chart.trim().trim_matches('/');
        let source = if chart.is_empty() {
            format!("oci://{base}")
        } else {
            format!("oci://{base}/{chart}")
        };
        RemoteRef {
            kind: RemoteKind::Oci,
            source,
            chart: String::new(),
            requested: version.trim().to_string(),
        }
    }

    /// A git repository at a ref. The URL keeps its scheme (`https://…`, `ssh://…`); only a
    /// trailing `/` is dropped (kustomize and Argo CD treat `repo` and `repo.git` as different
    /// clone URLs, and so do servers).
    pub fn git(url: &str, reference: &str) -> RemoteRef {
        RemoteRef {
            kind: RemoteKind::Git,
            source: url.trim().trim_end_matches('/').to_string(),
            chart: String::new(),
            requested: reference.trim().to_string(),
        }
    }

    /// One file at a URL, as kustomize loads a remote resource or patch file. The URL is
    /// kept as written (query included): it is what the server is asked for.
    pub fn url(url: &str) -> RemoteRef {
        RemoteRef {
            kind: RemoteKind::Url,
            source: url.trim().to_string(),
            chart: String::new(),
            requested: String::new(),
        }
    }

    /// The host the input is fetched from (credentials are sent only there).
    pub fn host(&self) -> Option<&str> {
        let rest = self.source.split_once("://").map(|(_, r)| r)?;
        let host = rest.split(['/', '?', '#']).next()?;
        let host = host.rsplit_once('@').map(|(_, h)| h).unwrap_or(host);
        (!host.is_empty()).then_some(host)
    }
}

impl fmt::Display for RemoteRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let version = if self.requested.is_empty() {
            "latest"
        } else {
            &self.requested
        };
        match self.kind {
            RemoteKind::Helm => write!(f, "chart {} {} from {}", self.chart, version, self.source),
            RemoteKind::Oci => write!(f, "chart {} {}", self.source, version),
            RemoteKind::Git => write!(f, "{} at {}", self.source, version),
            RemoteKind::Url => write!(f, "{}", self.source),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_normalised_so_two_apps_naming_one_chart_compare_equal() {
        assert_eq!(
            RemoteRef::helm("https://charts.example.com/", "web", " 1.2.3"),
            RemoteRef::helm("https://charts.example.com", "web", "1.2.3")
        );
        assert_eq!(
            RemoteRef::oci("ghcr.io/org/charts", "podinfo", "6.5.4"),
            RemoteRef::oci("oci://ghcr.io/org/charts/podinfo", "", "6.5.4")
        );
        assert_eq!(
            RemoteRef::oci("oci://r.io/c/", "", "").source,
            "oci://r.io/c"
        );
    }

    #[test]
    fn the_host_is_what_credentials_are_scoped_to() {
        assert_eq!(
            RemoteRef::helm("https://user@charts.example.com:8443/x", "a", "").host(),
            Some("charts.example.com:8443")
        );
        assert_eq!(
            RemoteRef::oci("127.0.0.1:5000/charts", "a", "").host(),
            Some("127.0.0.1:5000")
        );
        assert_eq!(RemoteRef::git("github.com/org/repo", "").host(), None);
    }
}
