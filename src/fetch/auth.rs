//! Credentials for private repositories and registries, each keyed by one host (`host` or
//! `host:port`) and sent only to that host. Read from `GITOPS_LINT_AUTH`, Helm's registry
//! config and Docker's `config.json` (`auths`, base64 `user:password`). Credential helpers
//! (`credsStore`, `credHelpers`) are programs: fetch runs none, so those hosts go anonymous.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Most bytes of a credentials file read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

#[derive(Clone, PartialEq, Eq)]
pub struct Basic {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Basic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Basic({}:***)", self.username)
    }
}

/// Credentials by host.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    by_host: BTreeMap<String, Basic>,
}

/// Where credentials are read from (the environment's values; tests set them).
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// `GITOPS_LINT_AUTH`: lines of `host=user:password`.
    pub env: Option<String>,
    /// Docker's config.json (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`).
    pub docker_config: Option<PathBuf>,
    /// Helm's registry config (`$HELM_REGISTRY_CONFIG`, else
    /// `$XDG_CONFIG_HOME/helm/registry/config.json`, else `~/.config/helm/registry/config.json`).
    pub helm_registry_config: Option<PathBuf>,
}

impl Sources {
    /// The process environment's sources.
    pub fn from_env() -> Sources {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME");
        Sources {
            env: std::env::var("GITOPS_LINT_AUTH").ok(),
            docker_config: var("DOCKER_CONFIG")
                .map(|d| d.join("config.json"))
                .or_else(|| home.as_ref().map(|h| h.join(".docker/config.json"))),
            helm_registry_config: var("HELM_REGISTRY_CONFIG").or_else(|| {
                var("XDG_CONFIG_HOME")
                    .or_else(|| home.as_ref().map(|h| h.join(".config")))
                    .map(|c| c.join("helm/registry/config.json"))
            }),
        }
    }
}

/// A config key (`https://index.docker.io/v1/`, `ghcr.io`, `127.0.0.1:5000`) as a host key.
fn normalise_host(key: &str) -> String {
    let key = key.trim();
    let key = key.split_once("://").map(|(_, r)| r).unwrap_or(key);
    let host = key
        .split('/')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let host = host.strip_suffix(":443").unwrap_or(&host).to_string();
    // Docker names Docker Hub by its index; the registry API is served elsewhere.
    match host.as_str() {
        "index.docker.io" | "docker.io" => "registry-1.docker.io".to_string(),
        _ => host,
    }
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in text.trim().bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return None,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Encode for an `Authorization: Basic` header.
pub use crate::base64::encode as encode_base64;

impl Credentials {
    /// Read every source; later sources do not override earlier ones (the environment wins,
    /// then Helm's file, then Docker's). Problems are notes, never fatal: the host then goes
    /// anonymous.
    pub fn load(sources: &Sources) -> (Credentials, Vec<String>) {
        let mut creds = Credentials::default();
        let mut notes = Vec::new();
        if let Some(env) = &sources.env {
            for (n, line) in env.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                match line.split_once('=').and_then(|(h, up)| {
                    let (u, p) = up.split_once(':')?;
                    Some((h, u, p))
                }) {
                    Some((host, user, pass)) if !host.trim().is_empty() => {
                        creds.add(host, user, pass);
                    }
                    _ => notes.push(format!(
                        "GITOPS_LINT_AUTH line {}: not `host=user:password`, ignored",
                        n + 1
                    )),
                }
            }
        }
        for path in [&sources.helm_registry_config, &sources.docker_config]
            .into_iter()
            .flatten()
        {
            creds.read_config_json(path, &mut notes);
        }
        (creds, notes)
    }

    fn add(&mut self, host: &str, user: &str, pass: &str) {
        self.by_host
            .entry(normalise_host(host))
            .or_insert_with(|| Basic {
                username: user.to_string(),
                password: pass.to_string(),
            });
    }

    /// Docker's config format (Helm's registry config is the same): `auths.<host>.auth`.
    fn read_config_json(&mut self, path: &std::path::Path, notes: &mut Vec<String>) {
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if meta.len() > MAX_CONFIG_BYTES {
            notes.push(format!(
                "{}: over {MAX_CONFIG_BYTES} bytes, ignored",
                path.display()
            ));
            return;
        }
        let parsed = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|b| {
                serde_json::from_slice::<serde_json::Value>(&b).map_err(|e| e.to_string())
            });
        let json = match parsed {
            Ok(j) => j,
            Err(e) => {
                notes.push(format!(
                    "{}: {e}; its credentials are not used",
                    path.display()
                ));
                return;
            }
        };
        if let Some(auths) = json.get("auths").and_then(|a| a.as_object()) {
            for (host, entry) in auths {
                let Some(auth) = entry.get("auth").and_then(|a| a.as_str()) else {
                    continue;
                };
                let decoded = decode_base64(auth).and_then(|b| String::from_utf8(b).ok());
                match decoded.as_deref().and_then(|d| d.split_once(':')) {
                    Some((u, p)) => self.add(host, u, p),
                    None => notes.push(format!(
                        "{}: `auths.{host}.auth` is not base64 `user:password`, ignored",
                        path.display()
                    )),
                }
            }
        }
        if json.get("credsStore").is_some() || json.get("credHelpers").is_some() {
            notes.push(format!(
                "{}: credential helpers are programs and fetch runs none; hosts only they know are fetched anonymously",
                path.display()
            ));
        }
    }

    /// The credentials for exactly this host key (`host` or `host:port`).
    pub fn for_host(&self, host: &str) -> Option<&Basic> {
        self.by_host.get(&normalise_host(host))
    }

    pub fn is_empty(&self) -> bool {
        self.by_host.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_belong_to_one_host_and_port() {
        let dir = tempfile::tempdir().unwrap();
        let docker = dir.path().join("config.json");
        let auth = encode_base64(b"robot:s3cret");
        std::fs::write(
            &docker,
            format!(
                r#"{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{auth}"}}, "127.0.0.1:5000": {{"auth": "{auth}"}}, "bad.example": {{"auth": "!!"}}}}, "credsStore": "desktop"}}"#
            ),
        )
        .unwrap();
        let (creds, notes) = Credentials::load(&Sources {
            env: Some("ghcr.io=me:token\nnot a line\nregistry.example:8443=a:b:c".into()),
            docker_config: Some(docker),
            helm_registry_config: Some(dir.path().join("absent.json")),
        });
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert_eq!(creds.for_host("ghcr.io").unwrap().password, "token");
        assert_eq!(creds.for_host("GHCR.IO").unwrap().username, "me");
        assert!(creds.for_host("ghcr.io.evil.example").is_none());
        assert!(creds.for_host("evil.ghcr.io").is_none());
        assert_eq!(
            creds.for_host("registry.example:8443").unwrap().password,
            "b:c"
        );
        assert!(creds.for_host("registry.example").is_none());
        assert_eq!(creds.for_host("127.0.0.1:5000").unwrap().username, "robot");
        assert!(creds.for_host("127.0.0.1:5001").is_none());
        assert_eq!(
            creds.for_host("registry-1.docker.io").unwrap().password,
            "s3cret"
        );
        assert!(!format!("{creds:?}").contains("s3cret"));
    }

    #[test]
    fn base64_round_trips() {
        for s in ["", "a", "ab", "abc", "user:p@ss/w+rd"] {
            assert_eq!(
                decode_base64(&encode_base64(s.as_bytes())).unwrap(),
                s.as_bytes()
            );
        }
        assert_eq!(encode_base64(b"robot:s3cret"), "cm9ib3Q6czNjcmV0");
    }
}
