//! Namespace labels known from the repo: `Namespace` objects and Argo
//! `managedNamespaceMetadata` of apps that create their namespace, over the cluster's labels
//! from `.gitops-lint.yaml` `profile.namespaces`. Unknown namespaces stay unknown, so
//! selectors on them are "may match".

use super::selector::{Labels, labels_of};
use crate::gitops::Model;
use crate::yaml::Node;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct NamespaceLabels {
    known: BTreeMap<String, (Labels, Option<crate::source::Span>)>,
    /// Where each `(namespace, label key)` is declared.
    label_spans: BTreeMap<(String, String), crate::source::Span>,
}

impl NamespaceLabels {
    pub fn from_model(model: &Model) -> NamespaceLabels {
        let mut known: BTreeMap<String, (Labels, Option<crate::source::Span>)> = BTreeMap::new();
        let mut label_spans = BTreeMap::new();
        // `.gitops-lint.yaml` `profile.namespaces`: the labels namespaces have in the cluster.
        // What the repo declares below is applied over them (an apply keeps labels it does
        // not declare).
        for ns in &model.profile.namespaces {
            let slot = known.entry(ns.name.clone()).or_default();
            for (key, value, span) in &ns.labels {
                slot.0.insert(key.clone(), value.clone());
                label_spans.insert((ns.name.clone(), key.clone()), *span);
            }
            slot.1 = Some(ns.span);
        }
        for mo in &model.objects {
            let o = &mo.object;
            if o.kind == "Namespace" && o.group().is_empty() && !o.name.is_empty() {
                let labels_node = o.metadata().and_then(|m| m.get("labels"));
                for e in labels_node.and_then(Node::as_map).unwrap_or_default() {
                    label_spans.insert(
                        (o.name.clone(), e.key.key_str().into_owned()),
                        e.key.span.cover(e.value.span),
                    );
                }
                let slot = known.entry(o.name.clone()).or_default();
                slot.0.extend(labels_of(labels_node));
                if labels_node.is_some() || slot.1.is_none() {
                    slot.1 = Some(labels_node.map(|n| n.span).unwrap_or(o.span()));
                }
            }
        }
        for (app, argo) in model.argo_apps() {
            let Some(ns) = &app.destination_namespace else {
                continue;
            };
            if !argo.sync.has_option("CreateNamespace=true") {
                continue;
            }
            let Some(meta) =
                argo.decl
                    .root
                    .get_path(&["spec", "syncPolicy", "managedNamespaceMetadata"])
            else {
                continue;
            };
            let slot = known.entry(ns.clone()).or_default();
            slot.0.extend(labels_of(meta.get("labels")));
            if slot.1.is_none() {
                slot.1 = meta.get("labels").map(|n: &Node| n.span);
            }
        }
        for (name, (labels, _)) in known.iter_mut() {
            // The API server sets this label on every namespace.
            labels.insert("kubernetes.io/metadata.name".into(), name.clone());
        }
        NamespaceLabels { known, label_spans }
    }

    /// The namespace's labels, when the repo declares the namespace.
    pub fn labels(&self, ns: &str) -> Option<&Labels> {
        self.known.get(ns).map(|(l, _)| l)
    }

    /// Where a namespace label is declared.
    pub fn label_span(&self, ns: &str, key: &str) -> Option<crate::source::Span> {
        self.label_spans
            .get(&(ns.to_string(), key.to_string()))
            .copied()
    }

    /// Where the namespace's labels are declared (a secondary label on findings).
    pub fn span(&self, ns: &str) -> Option<crate::source::Span> {
        self.known.get(ns).and_then(|(_, s)| *s)
    }
}
