//! The argo-cd Helm chart (argoproj/argo-helm, `charts/argo-cd`) when it is not fetched: the
//! ConfigMaps it would render from the values the repo gives it, so that the settings of an
//! Argo CD installed by the chart are read all the same.
//!
//! The chart writes `argocd-cm` from `configs.cm` (unless `configs.cm.create` is false) and
//! `argocd-cmd-params-cm` from `configs.params`, one data key per values key (the keys are
//! flat, dotted: `application.resourceTrackingMethod`), minus `create` and `annotations`;
//! each value is written as a string and an empty one is left out. Its own default values set
//! `application.instanceLabelKey: argocd.argoproj.io/instance` (since chart 1.0). The namespace
//! is `namespaceOverride`, else the release namespace.
//! (https://github.com/argoproj/argo-helm/tree/main/charts/argo-cd, templates/argocd-configs/.)

use super::units::HelmUnit;
use crate::object::Object;
use crate::remote::RemoteRef;
use crate::source::{RepoFs, Span};
use crate::yaml::{Entry, Limits, Node, Value, parse_str};

/// The chart's default for the tracking label key (values.yaml `configs.cm`).
const DEFAULT_INSTANCE_LABEL_KEY: &str = "argocd.argoproj.io/instance";

/// Does the reference name the argo-cd chart (a Helm repository's `argo-cd`, or an OCI
/// reference ending in `/argo-cd`)?
pub fn is_argo_cd_chart(reference: &RemoteRef) -> bool {
    reference.chart == "argo-cd"
        || (reference.chart.is_empty()
            && reference.source.trim_end_matches('/').ends_with("/argo-cd"))
}

/// One values layer as written in the repo: a values file or an inline document.
fn layers(fs: &dyn RepoFs, unit: &HelmUnit) -> Vec<Node> {
    let mut out = Vec::new();
    for (path, _) in &unit.value_files {
        let Ok(id) = fs.read(path) else {
            continue;
        };
        let text = fs.source_map().get(id).text.clone();
        let parsed = parse_str(&text, id, &Limits::default());
        if parsed.error.is_some() {
            continue;
        }
        out.extend(parsed.docs.into_iter().next().map(|d| d.root));
    }
    for n in &unit.inline_values {
        match n.as_str() {
            // `helm.values` is a string of YAML: read where it stands, so a value keeps its line.
            Some(text) => {
                if let Ok(roots) = super::in_place::located_roots(
                    &super::units::written_node(n),
                    text,
                    false,
                    fs.source_map(),
                ) {
                    out.extend(roots);
                }
            }
            None => out.push(n.clone()),
        }
    }
    for layer in &unit.values_layers {
        // `valuesObject`, Flux `values`; a `valuesFrom` target path sets no `configs` table.
        if let crate::render::helm::layers::ValuesLayer::Docs { roots, .. } = layer {
            out.extend(roots.iter().cloned());
        }
    }
    out
}

/// The values under `configs.<section>` after every layer: key → value node (where written),
/// later layers winning; a `null` deletes the key as Helm's coalescing does.
fn section(layers: &[Node], name: &str) -> (Vec<Entry>, bool, Vec<String>) {
    let mut entries: Vec<Entry> = Vec::new();
    let mut deleted: Vec<String> = Vec::new();
    let mut create = true;
    for layer in layers {
        let Some(map) = layer
            .get("configs")
            .and_then(|c| c.get(name))
            .and_then(Node::as_map)
        else {
            continue;
        };
        for e in map {
            let key = e.key.key_str().into_owned();
            if key == "create" {
                create = e.value.scalar_text().as_deref() != Some("false");
                continue;
            }
            entries.retain(|x| x.key.key_str() != key);
            deleted.retain(|x| *x != key);
            if e.value.is_null() {
                deleted.push(key);
            } else if key != "annotations" {
                entries.push(e.clone());
            }
        }
    }
    // Written as strings; an empty value leaves the key out.
    entries.retain(|e| e.value.scalar_text().is_none_or(|t| !t.is_empty()));
    (entries, create, deleted)
}

fn scalar(text: &str, span: Span) -> Node {
    Node::new(Value::String(text.to_string()), span)
}

fn entry(key: &str, value: Node) -> Entry {
    Entry {
        key: scalar(key, value.span),
        value,
    }
}

fn config_map(name: &str, namespace: &str, data: Vec<Entry>, at: Span) -> Option<Object> {
    let metadata = Node::new(
        Value::Map(vec![
            entry("name", scalar(name, at)),
            entry("namespace", scalar(namespace, at)),
        ]),
        at,
    );
    let root = Node::new(
        Value::Map(vec![
            entry("apiVersion", scalar("v1", at)),
            entry("kind", scalar("ConfigMap", at)),
            entry("metadata", metadata),
            entry("data", Node::new(Value::Map(data), at)),
        ]),
        at,
    );
    Object::from_node(root)
}

/// The argocd-cm and argocd-cmd-params-cm the chart renders for `unit`'s values; `at` (the
/// app's `chart:` line) stands for what the chart's defaults write.
pub fn config_maps(fs: &dyn RepoFs, unit: &HelmUnit, at: Span) -> Vec<Object> {
    let layers = layers(fs, unit);
    let namespace = layers
        .iter()
        .rev()
        .find_map(|l| l.get("namespaceOverride").and_then(Node::scalar_text))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| unit.namespace.clone());
    let mut out = Vec::new();
    let (mut cm, create_cm, deleted) = section(&layers, "cm");
    if create_cm {
        let key = "application.instanceLabelKey";
        if !cm.iter().any(|e| e.key.key_str() == key) && !deleted.iter().any(|d| d == key) {
            cm.push(entry(
                "application.instanceLabelKey",
                scalar(DEFAULT_INSTANCE_LABEL_KEY, at),
            ));
        }
        out.extend(config_map("argocd-cm", &namespace, cm, at));
    }
    let (params, create_params, _) = section(&layers, "params");
    if create_params {
        out.extend(config_map("argocd-cmd-params-cm", &namespace, params, at));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::first_doc as doc;

    fn keys(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| e.key.key_str().into_owned())
            .collect()
    }

    #[test]
    fn later_layers_win_null_deletes_empty_is_left_out() {
        let layers = [
            doc("configs:\n  cm:\n    a: one\n    b: two\n    annotations: {x: y}\n"),
            doc("configs:\n  cm:\n    a: null\n    b: three\n    c: \"\"\n    d: true\n"),
        ];
        let (entries, create, deleted) = section(&layers, "cm");
        assert!(create);
        assert_eq!(keys(&entries), vec!["b", "d"]);
        assert_eq!(entries[0].value.scalar_text().as_deref(), Some("three"));
        assert_eq!(deleted, vec!["a".to_string()]);
    }

    #[test]
    fn create_false_makes_no_config_map() {
        let layers = [doc("configs:\n  cm:\n    create: false\n    a: one\n")];
        let (_, create, _) = section(&layers, "cm");
        assert!(!create);
    }

    #[test]
    fn the_chart_is_named_argo_cd() {
        assert!(is_argo_cd_chart(&RemoteRef::helm(
            "https://argoproj.github.io/argo-helm",
            "argo-cd",
            "8.1.2"
        )));
        assert!(is_argo_cd_chart(&RemoteRef::oci(
            "ghcr.io/argoproj/argo-helm/argo-cd",
            "",
            "8.1.2"
        )));
        assert!(!is_argo_cd_chart(&RemoteRef::helm(
            "https://argoproj.github.io/argo-helm",
            "argo-rollouts",
            "2.0.0"
        )));
    }
}
