//! A Kubernetes object as every stage after rendering sees it: its identity plus the
//! span-carrying tree (whose spans point at the files a person edits).

use crate::source::Span;
use crate::yaml::Node;

#[derive(Clone, Debug)]
pub struct Object {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// As declared (`None` when the object does not say; the app may default it).
    pub namespace: Option<String>,
    pub root: Node,
}

impl Object {
    /// An object from a parsed document, when it looks like a Kubernetes resource
    /// (a map with string `apiVersion` and `kind`).
    pub fn from_node(root: Node) -> Option<Object> {
        let api_version = root.get_str("apiVersion")?.to_string();
        let kind = root.get_str("kind")?.to_string();
        let meta = root.get("metadata");
        let name = meta
            .and_then(|m| m.get_str("name"))
            .unwrap_or_default()
            .to_string();
        let namespace = meta
            .and_then(|m| m.get_str("namespace"))
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        Some(Object {
            api_version,
            kind,
            name,
            namespace,
            root,
        })
    }

    /// API group (`apps` for `apps/v1`, `""` for `v1`).
    pub fn group(&self) -> &str {
        match self.api_version.split_once('/') {
            Some((g, _)) => g,
            None => "",
        }
    }

    pub fn metadata(&self) -> Option<&Node> {
        self.root.get("metadata")
    }

    pub fn label(&self, key: &str) -> Option<&str> {
        self.metadata()?.get("labels")?.get_str(key)
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata()?.get("annotations")?.get_str(key)
    }

    /// `Kind/name` or `Kind/namespace/name`, as findings name objects.
    pub fn display_id(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{}/{}", self.kind, ns, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }

    /// Where the object is declared (its root node's span).
    /// The `name: …` entry, where findings point to say "this object" (the whole object when
    /// it has none).
    pub fn name_span(&self) -> Span {
        self.metadata()
            .and_then(|m| m.entry("name"))
            .map(|e| e.key.span.cover(e.value.span))
            .unwrap_or(self.span())
    }

    pub fn span(&self) -> Span {
        self.root.span
    }
}

/// Built-in cluster-scoped kinds (namespaces are never defaulted onto them).
pub const CLUSTER_SCOPED_KINDS: &[&str] = &[
    "Namespace",
    "Node",
    "PersistentVolume",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "StorageClass",
    "PriorityClass",
    "APIService",
    "IngressClass",
    "ClusterIssuer",
    "RuntimeClass",
    "CSIDriver",
    "ClusterPolicy",
    "ClusterSecretStore",
    "ConstraintTemplate",
];

impl Object {
    pub fn is_cluster_scoped(&self) -> bool {
        CLUSTER_SCOPED_KINDS.contains(&self.kind.as_str())
    }
}
