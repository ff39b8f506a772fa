//! Flux objects read from the repo (catalog A4): Kustomizations, HelmReleases and their
//! sources, ignore rules and drift-detection settings.

use super::ignore::PathExpr;
use crate::object::Object;
use crate::source::Span;
use crate::yaml::Node;
use std::collections::BTreeMap;

pub fn is_flux_kustomization(o: &Object) -> bool {
    o.group() == "kustomize.toolkit.fluxcd.io" && o.kind == "Kustomization"
}
pub fn is_helm_release(o: &Object) -> bool {
    o.group() == "helm.toolkit.fluxcd.io" && o.kind == "HelmRelease"
}
pub fn is_git_repository(o: &Object) -> bool {
    o.group() == "source.toolkit.fluxcd.io" && o.kind == "GitRepository"
}

#[derive(Clone, Debug, PartialEq)]
pub enum FluxKind {
    Kustomization,
    HelmRelease,
}

/// A Flux ignore rule (`spec.ignore[]` of a Kustomization, `driftDetection.ignore[]` of a
/// HelmRelease): JSON pointers plus an optional regex target; no target means every object.
#[derive(Clone, Debug)]
pub struct FluxIgnore {
    pub paths: Vec<PathExpr>,
    pub target: Option<BTreeMap<String, String>>,
    pub span: Span,
}

impl FluxIgnore {
    fn from_node(n: &Node) -> FluxIgnore {
        let paths = n
            .get("paths")
            .and_then(Node::as_seq)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|p| p.scalar_text().map(|text| PathExpr { text, span: p.span }))
                    .collect()
            })
            .unwrap_or_default();
        let target = n.get("target").and_then(Node::as_map).map(|entries| {
            entries
                .iter()
                .filter_map(|e| Some((e.key.key_str().into_owned(), e.value.scalar_text()?)))
                .collect()
        });
        FluxIgnore {
            paths,
            target,
            span: n.full_span(),
        }
    }

    /// Flux target fields are anchored regular expressions.
    pub fn matches(&self, obj: &Object, namespace: &str) -> bool {
        let Some(target) = &self.target else {
            return true;
        };
        let version = obj.api_version.rsplit('/').next().unwrap_or("");
        target.iter().all(|(k, pattern)| {
            let value = match k.as_str() {
                "group" => obj.group(),
                "version" => version,
                "kind" => obj.kind.as_str(),
                "name" => obj.name.as_str(),
                "namespace" => namespace,
                // label/annotation selectors are not evaluated here: assume they match.
                _ => return true,
            };
            regex::Regex::new(&format!("^(?:{pattern})$")).is_ok_and(|re| re.is_match(value))
        })
    }

    pub fn covers(&self, path: &[&str]) -> bool {
        self.paths.iter().any(|p| {
            super::ignore::pointer_segments(&p.text).is_some_and(|segs| {
                segs.len() <= path.len() && segs.iter().zip(path).all(|(a, b)| a == b)
            }) || p.text.is_empty()
        })
    }
}

#[derive(Clone, Debug)]
pub struct FluxApp {
    pub decl: Object,
    pub kind: FluxKind,
    pub ignores: Vec<FluxIgnore>,
    /// HelmRelease `spec.driftDetection.mode` (`enabled` corrects drift).
    pub drift_mode: Option<String>,
    pub prune: bool,
    /// Problems found by post-build substitution (rule §28).
    pub subst_problems: Vec<super::envsubst::SubstProblem>,
    /// `substituteStrategy: WithVariables` with no variable defined: nothing substituted.
    pub substitution_skipped: bool,
}

impl FluxApp {
    pub fn read(decl: &Object) -> FluxApp {
        let spec = decl.root.get("spec");
        let (kind, ignores) = if is_helm_release(decl) {
            (
                FluxKind::HelmRelease,
                spec.and_then(|s| s.get_path(&["driftDetection", "ignore"])),
            )
        } else {
            (FluxKind::Kustomization, spec.and_then(|s| s.get("ignore")))
        };
        FluxApp {
            decl: decl.clone(),
            kind,
            ignores: ignores
                .and_then(Node::as_seq)
                .map(|items| items.iter().map(FluxIgnore::from_node).collect())
                .unwrap_or_default(),
            drift_mode: spec
                .and_then(|s| s.get_path(&["driftDetection", "mode"]))
                .and_then(Node::scalar_text),
            prune: spec.and_then(|s| s.get("prune")).and_then(Node::as_bool) == Some(true),
            subst_problems: Vec::new(),
            substitution_skipped: false,
        }
    }
}

/// Variables for `postBuild`: `substituteFrom` ConfigMaps/Secrets found in the repo (in
/// order, later overwrite earlier), then inline `substitute` (wins). Missing non-optional
/// references are returned for `offline-unrenderable-input`.
pub fn post_build_vars(
    spec: &Node,
    find: impl Fn(&str, &str) -> Option<Object>,
) -> (BTreeMap<String, String>, Vec<(Span, String)>) {
    let mut vars = BTreeMap::new();
    let mut missing = Vec::new();
    let Some(pb) = spec.get("postBuild") else {
        return (vars, missing);
    };
    for from in pb
        .get("substituteFrom")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let kind = from.get_str("kind").unwrap_or("ConfigMap");
        let name = from.get_str("name").unwrap_or("");
        match find(kind, name) {
            Some(obj) => {
                let secret = kind == "Secret";
                for key in ["data", "stringData"] {
                    if let Some(entries) = obj.root.get(key).and_then(Node::as_map) {
                        for e in entries {
                            let mut v = e.value.scalar_text().unwrap_or_default();
                            if secret && key == "data" {
                                v = decode_base64(&v).unwrap_or(v);
                            }
                            vars.insert(e.key.key_str().into_owned(), v);
                        }
                    }
                }
            }
            None if from.get("optional").and_then(Node::as_bool) == Some(true) => {}
            None => missing.push((
                from.full_span(),
                format!("postBuild.substituteFrom {kind}/{name} is not in the repository; its variables are unknown"),
            )),
        }
    }
    if let Some(entries) = pb.get("substitute").and_then(Node::as_map) {
        for e in entries {
            vars.insert(
                e.key.key_str().into_owned(),
                e.value.scalar_text().unwrap_or_default(),
            );
        }
    }
    (vars, missing)
}

pub(super) fn decode_base64(s: &str) -> Option<String> {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut buf = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=') {
        let v = T.iter().position(|&t| t == c)? as u32;
        buf = (buf << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
            buf &= (1 << bits) - 1;
        }
    }
    String::from_utf8(out).ok()
}

/// With no git remote, the URLs the repo's own Flux bootstrap syncs from: a GitRepository
/// in a `gotk-sync.yaml`, or the GitRepository a root Kustomization uses — one declared
/// under `clusters/`, or one whose `spec.path` holds its own file (it manages itself).
pub fn bootstrap_urls(plain: &[(Object, String)]) -> Vec<String> {
    let url_of = |o: &Object| {
        o.root
            .get_path(&["spec", "url"])
            .and_then(Node::scalar_text)
    };
    let mut urls: Vec<String> = plain
        .iter()
        .filter(|(o, f)| {
            is_git_repository(o) && (f == "gotk-sync.yaml" || f.ends_with("/gotk-sync.yaml"))
        })
        .filter_map(|(o, _)| url_of(o))
        .collect();
    for (o, file) in plain.iter().filter(|(o, _)| is_flux_kustomization(o)) {
        let path = o
            .root
            .get_path(&["spec", "path"])
            .and_then(Node::scalar_text)
            .and_then(|p| crate::source::normalize_relative(&p))
            .unwrap_or_default();
        let self_managed = path.is_empty() || file.starts_with(&format!("{path}/"));
        if !(self_managed || file.starts_with("clusters/")) {
            continue;
        }
        let spec = o.root.get("spec");
        let src = |k: &str| {
            spec.and_then(|s| s.get_path(&["sourceRef", k]))
                .and_then(Node::scalar_text)
        };
        if src("kind").as_deref() != Some("GitRepository") {
            continue;
        }
        let (Some(name), ns) = (
            src("name"),
            src("namespace").or_else(|| o.namespace.clone()),
        ) else {
            continue;
        };
        if let Some(url) = plain
            .iter()
            .find(|(g, _)| {
                is_git_repository(g)
                    && g.name == name
                    && (ns.is_none() || g.namespace.is_none() || g.namespace == ns)
            })
            .and_then(|(g, _)| url_of(g))
        {
            urls.push(url);
        }
    }
    urls
}

/// `spec.dependsOn`: `name`, or `namespace/name` when another namespace is named.
pub fn depends_on(o: &Object) -> Vec<String> {
    o.root
        .get_path(&["spec", "dependsOn"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|d| {
            let name = d.get("name").and_then(Node::scalar_text)?;
            Some(match d.get("namespace").and_then(Node::scalar_text) {
                Some(ns) if Some(&ns) != o.namespace.as_ref() => format!("{ns}/{name}"),
                _ => name,
            })
        })
        .collect()
}
