//! Helm chart repositories over HTTP(S): `<repo>/index.yaml`, the entry the request picks,
//! its archive at `urls[0]` (relative URLs resolve against the repository URL), and the
//! index's `digest` checked when it gives one.

use super::Fetched;
use super::auth::{Credentials, encode_base64};
use super::http::{Auth, Http};
use super::policy::host_key;
use super::versions;
use crate::remote::{MAX_ARTIFACT_BYTES, digest_of};
use crate::source::FileId;
use crate::yaml::{Limits, Node, parse_str};
use reqwest::Url;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Most bytes of one `index.yaml` (large public repositories publish tens of megabytes).
pub const MAX_INDEX_BYTES: u64 = 64 << 20;

/// One version of a chart in an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChartVersion {
    pub version: String,
    pub urls: Vec<String>,
    /// The archive's SHA-256 in hex, when the index gives one.
    pub digest: Option<String>,
}

/// A parsed index: chart name → its versions.
#[derive(Debug, Default)]
pub struct Index {
    pub entries: HashMap<String, Vec<ChartVersion>>,
}

/// A scalar as written: an unquoted digest of digits or a version like `1.10` is text here,
/// not the number YAML would make of it.
fn as_written(n: &Node) -> Option<String> {
    match &n.value {
        crate::yaml::Value::String(s) => Some(s.clone()),
        _ => n.text_as_written(),
    }
}

/// Read an `index.yaml`. A malformed entry is skipped only when it is one version of many;
/// a file that is not an index at all is an error.
pub fn parse_index(text: &str) -> Result<Index, String> {
    let parsed = parse_str(text, FileId(0), &Limits::default());
    if let Some(e) = parsed.error {
        return Err(format!("index.yaml is not valid YAML: {}", e.message));
    }
    let root = parsed
        .docs
        .into_iter()
        .next()
        .map(|d| d.root)
        .ok_or("index.yaml is empty")?;
    let entries = root
        .get("entries")
        .and_then(Node::as_map)
        .ok_or("index.yaml has no `entries` mapping: not a Helm repository index")?;
    let mut index = Index::default();
    for e in entries {
        let Some(name) = as_written(&e.key) else {
            continue;
        };
        let Some(versions) = e.value.as_seq() else {
            continue;
        };
        let list = versions
            .iter()
            .filter_map(|v| {
                let version = as_written(v.get("version")?)?;
                let urls = v
                    .get("urls")?
                    .as_seq()?
                    .iter()
                    .filter_map(as_written)
                    .collect();
                let digest = v.get("digest").and_then(as_written);
                Some(ChartVersion {
                    version,
                    urls,
                    digest,
                })
            })
            .collect();
        index.entries.insert(name, list);
    }
    Ok(index)
}

/// The archive URL of an entry: absolute as given, else relative to the repository URL
/// (read as a directory, as Helm does).
pub fn resolve_chart_url(repo: &str, entry_url: &str) -> Result<Url, String> {
    if let Ok(abs) = Url::parse(entry_url) {
        return Ok(abs);
    }
    let base = Url::parse(&format!("{}/", repo.trim_end_matches('/')))
        .map_err(|e| format!("repository URL `{repo}`: {e}"))?;
    base.join(entry_url)
        .map_err(|e| format!("chart URL `{entry_url}`: {e}"))
}

type IndexSlot = Arc<std::sync::OnceLock<Result<Arc<Index>, String>>>;

/// Fetches charts from Helm repositories, reading each index once per run.
pub struct HelmRepos<'a> {
    http: &'a Http,
    creds: &'a Credentials,
    indexes: Mutex<HashMap<String, IndexSlot>>,
}

impl<'a> HelmRepos<'a> {
    pub fn new(http: &'a Http, creds: &'a Credentials) -> HelmRepos<'a> {
        HelmRepos {
            http,
            creds,
            indexes: Mutex::new(HashMap::new()),
        }
    }

    /// Credentials of the repository's host, for requests to that host only.
    fn auth_for(&self, url: &Url) -> Option<Auth> {
        let host = host_key(url)?;
        let b = self.creds.for_host(&host)?;
        Some(Auth {
            header: format!(
                "Basic {}",
                encode_base64(format!("{}:{}", b.username, b.password).as_bytes())
            ),
            host,
        })
    }

    fn index(&self, repo: &str) -> Result<Arc<Index>, String> {
        // One slot per repository: the first caller downloads, the others of that
        // repository wait for it, other repositories' indexes load meanwhile.
        let slot = {
            let mut map = match self.indexes.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            map.entry(repo.to_string()).or_default().clone()
        };
        slot.get_or_init(|| self.load_index(repo)).clone()
    }

    fn load_index(&self, repo: &str) -> Result<Arc<Index>, String> {
        let url = resolve_chart_url(repo, "index.yaml")?;
        let auth = self.auth_for(&url);
        let resp = self.http.get(
            &url,
            &["application/x-yaml", "*/*"],
            auth.as_ref(),
            MAX_INDEX_BYTES,
        )?;
        if resp.status != 200 {
            return Err(format!("{url}: HTTP {}", resp.status));
        }
        let text = String::from_utf8(resp.body).map_err(|_| format!("{url}: not UTF-8"))?;
        parse_index(&text)
            .map(Arc::new)
            .map_err(|e| format!("{url}: {e}"))
    }

    /// Resolve `requested` for `chart` in `repo` and download the archive.
    pub fn fetch(&self, repo: &str, chart: &str, requested: &str) -> Result<Fetched, String> {
        let index = self.index(repo)?;
        let versions = index
            .entries
            .get(chart)
            .ok_or_else(|| format!("chart `{chart}` is not in {repo}/index.yaml"))?;
        let names: Vec<String> = versions.iter().map(|v| v.version.clone()).collect();
        let picked = versions::pick(requested, &names)
            .map_err(|e| format!("chart `{chart}` in {repo}: {e}"))?;
        let entry = versions
            .iter()
            .find(|v| v.version == picked)
            .ok_or("picked version vanished")?;
        let first = entry
            .urls
            .first()
            .ok_or_else(|| format!("chart `{chart}` {picked} in {repo}/index.yaml has no urls"))?;
        let url = resolve_chart_url(repo, first)?;
        // Helm sends the repository's credentials to the archive only on its host
        // (`--pass-credentials` is off by default); so do we.
        let auth = self.auth_for(&resolve_chart_url(repo, "index.yaml")?);
        let resp = self
            .http
            .get(&url, &[], auth.as_ref(), MAX_ARTIFACT_BYTES)?;
        if resp.status != 200 {
            return Err(format!("{url}: HTTP {}", resp.status));
        }
        let actual = digest_of(&resp.body);
        let origin = match &entry.digest {
            Some(d) if !d.trim().is_empty() => {
                let want = format!("sha256:{}", d.trim().to_ascii_lowercase());
                if want != actual {
                    return Err(format!(
                        "{url}: the archive hashes to {actual}, but {repo}/index.yaml says {want}"
                    ));
                }
                Some(want)
            }
            _ => None,
        };
        Ok(Fetched {
            resolved: picked.to_string(),
            bytes: resp.body,
            origin,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_chart_urls_resolve_against_the_repository_directory() {
        let r = |repo, u| resolve_chart_url(repo, u).unwrap().to_string();
        assert_eq!(
            r("https://charts.example.com/stable", "web-1.0.0.tgz"),
            "https://charts.example.com/stable/web-1.0.0.tgz"
        );
        assert_eq!(
            r("https://charts.example.com/stable/", "charts/web-1.0.0.tgz"),
            "https://charts.example.com/stable/charts/web-1.0.0.tgz"
        );
        assert_eq!(
            r("https://charts.example.com/stable", "/web-1.0.0.tgz"),
            "https://charts.example.com/web-1.0.0.tgz"
        );
        assert_eq!(
            r(
                "https://charts.example.com",
                "https://github.com/o/r/releases/download/web-1.0.0/web-1.0.0.tgz"
            ),
            "https://github.com/o/r/releases/download/web-1.0.0/web-1.0.0.tgz"
        );
    }

    #[test]
    fn an_index_is_read_and_a_non_index_refused() {
        let index = parse_index(
            "apiVersion: v1\nentries:\n  web:\n    - version: 1.10\n      urls: [web-1.10.tgz]\n      digest: 0123\n    - version: 1.10.0\n      urls: [web-1.10.0.tgz]\n      digest: ABC\n    - version: 1.9.0\n      urls: [web-1.9.0.tgz]\n    - name: broken\n",
        )
        .unwrap();
        let web = &index.entries["web"];
        assert_eq!(web.len(), 3);
        assert_eq!(web[0].version, "1.10");
        assert_eq!(web[0].digest.as_deref(), Some("0123"));
        assert_eq!(web[1].version, "1.10.0");
        assert_eq!(web[1].digest.as_deref(), Some("ABC"));
        assert!(
            parse_index("kind: ConfigMap\n")
                .unwrap_err()
                .contains("not a Helm repository index")
        );
        assert!(
            parse_index("entries: [unclosed\n")
                .unwrap_err()
                .contains("not valid YAML")
        );
    }
}
