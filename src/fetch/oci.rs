//! Helm charts in OCI registries through the distribution API's few calls: tags, manifest,
//! blob. Anonymous bearer tokens (the `WWW-Authenticate` challenge names the token service),
//! or the host's credentials (Basic, or traded for a token at a service on the same host).
//! Manifest and layer are checked against their digests.

use super::Fetched;
use super::auth::{Credentials, encode_base64};
use super::http::{Auth, Http, Response};
use super::policy::host_key;
use super::versions;
use crate::remote::{MAX_ARTIFACT_BYTES, digest_of};
use reqwest::Url;
use std::collections::HashMap;
use std::sync::Mutex;

pub const HELM_CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
pub const HELM_CHART_LAYER_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// What charts pushed before Helm 3.8 carry.
const LEGACY_CHART_LAYER_MEDIA_TYPE: &str = "application/tar+gzip";
const MANIFEST_MEDIA_TYPES: &[&str] = &[
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
];

const MAX_MANIFEST_BYTES: u64 = 4 << 20;
const MAX_TAG_LIST_BYTES: u64 = 8 << 20;
const MAX_TAG_PAGES: usize = 50;
const MAX_TOKEN_BYTES: u64 = 1 << 20;

/// `oci://host[:port]/path/name` split into the registry's API base and the repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OciName {
    pub registry: String,
    pub repository: String,
}

impl OciName {
    pub fn parse(source: &str) -> Result<OciName, String> {
        let rest = source
            .strip_prefix("oci://")
            .ok_or_else(|| format!("`{source}` is not an oci:// reference"))?;
        let (registry, repository) = rest
            .split_once('/')
            .ok_or_else(|| format!("`{source}` names a registry but no chart"))?;
        let valid = |s: &str| {
            !s.is_empty()
                && s.split('/').all(|p| {
                    !p.is_empty()
                        && p.bytes().all(|b| {
                            b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b)
                        })
                })
        };
        if registry.is_empty() || registry.contains(['@', '?', '#']) || !valid(repository) {
            return Err(format!(
                "`{source}` is not a valid OCI repository reference"
            ));
        }
        // Docker Hub is named docker.io, its API is served by registry-1.docker.io.
        let registry = match registry {
            "docker.io" | "index.docker.io" => "registry-1.docker.io".to_string(),
            r => r.to_ascii_lowercase(),
        };
        Ok(OciName {
            registry,
            repository: repository.to_string(),
        })
    }

    /// The API base: HTTPS, or plain HTTP for a loopback registry (as `helm --plain-http`).
    fn url(&self, path: &str) -> Result<Url, String> {
        let host = self.registry.split(':').next().unwrap_or_default();
        let plain = host.starts_with("127.") || self.registry.starts_with("[::1]");
        let scheme = if plain { "http" } else { "https" };
        Url::parse(&format!(
            "{scheme}://{}/v2/{}/{path}",
            self.registry, self.repository
        ))
        .map_err(|e| format!("oci://{}/{}: {e}", self.registry, self.repository))
    }
}

/// The tag and the digest a request names: `1.2.3`, `1.2.3@sha256:…`, `@sha256:…`, `sha256:…`.
pub fn split_request(requested: &str) -> (&str, Option<&str>) {
    let r = requested.trim();
    if r.starts_with("sha256:") {
        return ("", Some(r));
    }
    match r.split_once('@') {
        Some((tag, digest)) => (tag, Some(digest)),
        None => (r, None),
    }
}

/// A `WWW-Authenticate: Bearer realm=…,service=…,scope=…` challenge's parameters.
pub fn parse_challenge(header: &str) -> Option<(String, HashMap<String, String>)> {
    let (scheme, rest) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
    let mut params = HashMap::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let key = key
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, tail) = if let Some(q) = after.strip_prefix('"') {
            let end = q.find('"')?;
            (q[..end].to_string(), &q[end + 1..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (after[..end].trim().to_string(), &after[end..])
        };
        params.insert(key, value);
        rest = tail.trim_start().trim_start_matches(',').trim_start();
    }
    Some((scheme.to_ascii_lowercase(), params))
}

pub struct Registries<'a> {
    http: &'a Http,
    creds: &'a Credentials,
    /// Authorization per registry and repository, once a challenge was answered.
    tokens: Mutex<HashMap<(String, String), Auth>>,
}

impl<'a> Registries<'a> {
    pub fn new(http: &'a Http, creds: &'a Credentials) -> Registries<'a> {
        Registries {
            http,
            creds,
            tokens: Mutex::new(HashMap::new()),
        }
    }

    fn basic(&self, host: &str) -> Option<String> {
        let b = self.creds.for_host(host)?;
        Some(format!(
            "Basic {}",
            encode_base64(format!("{}:{}", b.username, b.password).as_bytes())
        ))
    }

    /// GET a registry path, answering one authentication challenge.
    fn get(
        &self,
        name: &OciName,
        path: &str,
        accept: &[&str],
        max: u64,
    ) -> Result<Response, String> {
        let url = name.url(path)?;
        let key = (name.registry.clone(), name.repository.clone());
        let known = self.tokens.lock().ok().and_then(|t| t.get(&key).cloned());
        let resp = self.http.get(&url, accept, known.as_ref(), max)?;
        if resp.status != 401 {
            return Ok(resp);
        }
        let challenge = resp
            .header("www-authenticate")
            .ok_or_else(|| format!("{url}: HTTP 401 without a WWW-Authenticate challenge"))?
            .to_string();
        let auth = self.answer(name, &url, &challenge)?;
        let resp = self.http.get(&url, accept, Some(&auth), max)?;
        if resp.status == 401 || resp.status == 403 {
            return Err(format!(
                "{url}: HTTP {} after authenticating{}",
                resp.status,
                if self.creds.for_host(&name.registry).is_some() {
                    " with this registry's credentials"
                } else {
                    " anonymously (no credentials for this host: GITOPS_LINT_AUTH, or docker/helm registry login)"
                }
            ));
        }
        if let Ok(mut t) = self.tokens.lock() {
            t.insert(key, auth);
        }
        Ok(resp)
    }

    /// The Authorization a challenge asks for. Credentials go to the token service only when
    /// it is on the registry's own host.
    fn answer(&self, name: &OciName, url: &Url, challenge: &str) -> Result<Auth, String> {
        let host = host_key(url).unwrap_or_default();
        let (scheme, params) = parse_challenge(challenge)
            .ok_or_else(|| format!("{url}: unreadable challenge `{challenge}`"))?;
        match scheme.as_str() {
            "basic" => {
                let header = self.basic(&host).ok_or_else(|| {
                    format!("{url}: the registry asks for a password and no credentials for {host} are configured (GITOPS_LINT_AUTH, docker or helm registry login)")
                })?;
                Ok(Auth { host, header })
            }
            "bearer" => {
                let realm = params
                    .get("realm")
                    .ok_or_else(|| format!("{url}: bearer challenge without a realm"))?;
                let mut token_url =
                    Url::parse(realm).map_err(|e| format!("{url}: token realm `{realm}`: {e}"))?;
                {
                    let mut q = token_url.query_pairs_mut();
                    if let Some(s) = params.get("service") {
                        q.append_pair("service", s);
                    }
                    let scope = params
                        .get("scope")
                        .cloned()
                        .unwrap_or_else(|| format!("repository:{}:pull", name.repository));
                    q.append_pair("scope", &scope);
                }
                let realm_host = host_key(&token_url).unwrap_or_default();
                let creds = (realm_host == host)
                    .then(|| self.basic(&host))
                    .flatten()
                    .map(|header| Auth {
                        host: host.clone(),
                        header,
                    });
                let resp = self.http.get(
                    &token_url,
                    &["application/json"],
                    creds.as_ref(),
                    MAX_TOKEN_BYTES,
                )?;
                if resp.status != 200 {
                    return Err(format!(
                        "{token_url}: token request answered HTTP {}",
                        resp.status
                    ));
                }
                let json: serde_json::Value = serde_json::from_slice(&resp.body)
                    .map_err(|e| format!("{token_url}: token response is not JSON: {e}"))?;
                let token = json
                    .get("token")
                    .or_else(|| json.get("access_token"))
                    .and_then(|t| t.as_str())
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| format!("{token_url}: token response has no token"))?;
                Ok(Auth {
                    host,
                    header: format!("Bearer {token}"),
                })
            }
            other => Err(format!(
                "{url}: unsupported authentication scheme `{other}`"
            )),
        }
    }

    /// Every tag of the repository (paginated by `Link: <…>; rel="next"`).
    fn tags(&self, name: &OciName) -> Result<Vec<String>, String> {
        let mut tags = Vec::new();
        let mut path = "tags/list?n=1000".to_string();
        for _ in 0..MAX_TAG_PAGES {
            let resp = self.get(name, &path, &["application/json"], MAX_TAG_LIST_BYTES)?;
            if resp.status != 200 {
                return Err(format!("{}: HTTP {}", resp.url, resp.status));
            }
            let json: serde_json::Value = serde_json::from_slice(&resp.body)
                .map_err(|e| format!("{}: tag list is not JSON: {e}", resp.url))?;
            if let Some(list) = json.get("tags").and_then(|t| t.as_array()) {
                tags.extend(list.iter().filter_map(|t| t.as_str().map(str::to_string)));
            }
            let next = resp.header("link").and_then(|l| {
                let (target, rel) = l.split_once(';')?;
                rel.contains("rel=\"next\"").then(|| {
                    target
                        .trim()
                        .trim_start_matches('<')
                        .trim_end_matches('>')
                        .to_string()
                })
            });
            match next.and_then(|n| {
                let prefix = format!("/v2/{}/", name.repository);
                n.strip_prefix(&prefix).map(str::to_string)
            }) {
                Some(n) => path = n,
                None => return Ok(tags),
            }
        }
        Err(format!(
            "oci://{}/{}: more than {MAX_TAG_PAGES} pages of tags",
            name.registry, name.repository
        ))
    }

    pub fn fetch(&self, source: &str, requested: &str) -> Result<Fetched, String> {
        let name = OciName::parse(source)?;
        let (tag, digest) = split_request(requested);
        if let Some(d) = digest
            && !(d.starts_with("sha256:")
                && d.len() == 71
                && d[7..].bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(format!("`{d}` is not a sha256 digest"));
        }
        // Helm stores `+` of a version as `_` in the tag.
        let (resolved, reference) = match (tag, digest) {
            (t, Some(d)) => (
                if t.is_empty() {
                    d.to_string()
                } else {
                    t.to_string()
                },
                d.to_string(),
            ),
            (t, None) if versions::is_exact(t) => (t.to_string(), t.replace('+', "_")),
            (t, None) => {
                let tags: Vec<String> = self
                    .tags(&name)?
                    .iter()
                    .map(|t| t.replace('_', "+"))
                    .collect();
                let picked = versions::pick(t, &tags).map_err(|e| format!("{source}: {e}"))?;
                (picked.to_string(), picked.replace('+', "_"))
            }
        };
        let resp = self.get(
            &name,
            &format!("manifests/{reference}"),
            MANIFEST_MEDIA_TYPES,
            MAX_MANIFEST_BYTES,
        )?;
        if resp.status == 404 {
            return Err(format!(
                "{source}: no tag or manifest `{reference}` in the registry"
            ));
        }
        if resp.status != 200 {
            return Err(format!("{}: HTTP {}", resp.url, resp.status));
        }
        let manifest_digest = digest_of(&resp.body);
        if let Some(said) = resp.header("docker-content-digest")
            && said != manifest_digest
        {
            return Err(format!(
                "{}: the manifest hashes to {manifest_digest}, the registry says {said}",
                resp.url
            ));
        }
        if let Some(d) = digest
            && d != manifest_digest
        {
            return Err(format!(
                "{source}: the manifest hashes to {manifest_digest}, not the requested {d}"
            ));
        }
        let layer = chart_layer(&resp.body).map_err(|e| format!("{source}:{reference}: {e}"))?;
        let blob = self.get(&name, &format!("blobs/{}", layer.0), &[], layer.1)?;
        if blob.status != 200 {
            return Err(format!("{}: HTTP {}", blob.url, blob.status));
        }
        let actual = digest_of(&blob.body);
        if actual != layer.0 || blob.body.len() as u64 != layer.1 {
            return Err(format!(
                "{source}:{reference}: the chart layer hashes to {actual} ({} bytes), the manifest says {} ({} bytes)",
                blob.body.len(),
                layer.0,
                layer.1
            ));
        }
        Ok(Fetched {
            resolved,
            bytes: blob.body,
            origin: Some(manifest_digest),
        })
    }
}

/// The chart layer's digest and size from a manifest, which must be a Helm chart's.
pub fn chart_layer(manifest: &[u8]) -> Result<(String, u64), String> {
    let json: serde_json::Value =
        serde_json::from_slice(manifest).map_err(|e| format!("the manifest is not JSON: {e}"))?;
    if json.get("manifests").is_some() {
        return Err("the reference is an index of manifests, not a Helm chart".into());
    }
    let config = json
        .get("config")
        .and_then(|c| c.get("mediaType"))
        .and_then(|m| m.as_str())
        .unwrap_or_default();
    if config != HELM_CONFIG_MEDIA_TYPE {
        return Err(format!(
            "not a Helm chart: its config media type is `{config}`, not {HELM_CONFIG_MEDIA_TYPE}"
        ));
    }
    let layers = json
        .get("layers")
        .and_then(|l| l.as_array())
        .ok_or("the manifest has no layers")?;
    let layer = layers
        .iter()
        .find(|l| {
            matches!(
                l.get("mediaType").and_then(|m| m.as_str()),
                Some(HELM_CHART_LAYER_MEDIA_TYPE | LEGACY_CHART_LAYER_MEDIA_TYPE)
            )
        })
        .ok_or_else(|| format!("the manifest has no {HELM_CHART_LAYER_MEDIA_TYPE} layer"))?;
    let digest = layer
        .get("digest")
        .and_then(|d| d.as_str())
        .filter(|d| d.starts_with("sha256:") && d.len() == 71)
        .ok_or("the chart layer has no sha256 digest")?;
    let size = layer
        .get("size")
        .and_then(|s| s.as_u64())
        .ok_or("the chart layer has no size")?;
    if size > MAX_ARTIFACT_BYTES {
        return Err(format!(
            "the chart layer is {size} bytes, over the {MAX_ARTIFACT_BYTES}-byte limit"
        ));
    }
    Ok((digest.to_ascii_lowercase(), size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oci_names_split_into_registry_and_repository() {
        assert_eq!(
            OciName::parse("oci://ghcr.io/org/charts/podinfo").unwrap(),
            OciName {
                registry: "ghcr.io".into(),
                repository: "org/charts/podinfo".into()
            }
        );
        let local = OciName::parse("oci://127.0.0.1:5000/charts/web").unwrap();
        assert_eq!(
            local.url("tags/list").unwrap().as_str(),
            "http://127.0.0.1:5000/v2/charts/web/tags/list"
        );
        let remote = OciName::parse("oci://registry.example:5000/web").unwrap();
        assert!(remote.url("x").unwrap().as_str().starts_with("https://"));
        assert_eq!(
            OciName::parse("oci://docker.io/bitnamicharts/redis")
                .unwrap()
                .registry,
            "registry-1.docker.io"
        );
        assert!(OciName::parse("oci://ghcr.io").is_err());
        assert!(OciName::parse("oci://ghcr.io/Org/../x").is_err());
        assert!(OciName::parse("https://ghcr.io/x").is_err());
    }

    #[test]
    fn requests_with_digests_and_challenges_are_read() {
        let d = format!("sha256:{}", "a".repeat(64));
        assert_eq!(split_request("1.2.3"), ("1.2.3", None));
        assert_eq!(
            split_request(&format!("1.2.3@{d}")),
            ("1.2.3", Some(d.as_str()))
        );
        assert_eq!(split_request(&format!("@{d}")), ("", Some(d.as_str())));
        assert_eq!(split_request(&d), ("", Some(d.as_str())));
        let (scheme, p) = parse_challenge(
            r#"Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:org/c:pull""#,
        )
        .unwrap();
        assert_eq!(scheme, "bearer");
        assert_eq!(p["realm"], "https://ghcr.io/token");
        assert_eq!(p["scope"], "repository:org/c:pull");
        assert_eq!(
            parse_challenge(r#"Basic realm="Registry Realm""#)
                .unwrap()
                .0,
            "basic"
        );
    }

    #[test]
    fn only_a_helm_chart_manifest_gives_a_layer() {
        let layer = format!("sha256:{}", "b".repeat(64));
        let chart = format!(
            r#"{{"schemaVersion":2,"config":{{"mediaType":"{HELM_CONFIG_MEDIA_TYPE}","digest":"sha256:00","size":1}},"layers":[{{"mediaType":"{HELM_CHART_LAYER_MEDIA_TYPE}","digest":"{layer}","size":42}}]}}"#
        );
        assert_eq!(chart_layer(chart.as_bytes()).unwrap(), (layer.clone(), 42));
        let image = chart.replace(
            HELM_CONFIG_MEDIA_TYPE,
            "application/vnd.oci.image.config.v1+json",
        );
        assert!(
            chart_layer(image.as_bytes())
                .unwrap_err()
                .contains("not a Helm chart")
        );
        let huge = chart.replace("\"size\":42", "\"size\":99999999999");
        assert!(chart_layer(huge.as_bytes()).unwrap_err().contains("over"));
        assert!(chart_layer(b"{nope").is_err());
    }
}
