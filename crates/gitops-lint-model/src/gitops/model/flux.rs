//! The Flux part of the model: a Kustomization's or HelmRelease's ignore rules, drift
//! detection, pruning and post-build substitution, as read from its declaration.

use super::kinds::is_helm_release;
use crate::gitops::envsubst::SubstProblem;
use crate::gitops::ignore::{PathExpr, pointer_segments};
use crate::object::Object;
use crate::source::Span;
use crate::yaml::Node;
use std::collections::BTreeMap;

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
            pointer_segments(&p.text).is_some_and(|segs| {
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
    /// Problems found by post-build substitution (`flux-substitution-undefined`).
    pub subst_problems: Vec<SubstProblem>,
    /// `substituteStrategy: WithVariables` with no variable defined: nothing substituted.
    pub substitution_skipped: bool,
    /// `postBuild.substituteFrom` entries and what the repository knows of their keys.
    pub substitute_from: Vec<SubstSource>,
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
            substitute_from: Vec::new(),
        }
    }
}

/// What the repository knows of the keys of a ConfigMap or Secret a Flux reference names.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceKeys {
    /// Written in the repository in clear text: its keys and values are known.
    Written,
    /// Every key is known, values may not be: a SOPS-encrypted Secret, or a Secret a
    /// SealedSecret or an ExternalSecret listing its keys makes. `how` says which
    /// ("SOPS-encrypted", "made by ExternalSecret db").
    Closed { how: String, keys: Vec<String> },
    /// Made in the cluster with keys this repository does not list (ExternalSecret
    /// `dataFrom`, `templateFrom`): any key may be there.
    Open { how: String },
    /// Not in the repository: nothing is known of it.
    Missing,
}

/// One `postBuild.substituteFrom` entry and what is known of its keys.
#[derive(Clone, Debug, PartialEq)]
pub struct SubstSource {
    /// `Kind/name` as the reference writes it.
    pub reference: String,
    pub keys: SourceKeys,
}
