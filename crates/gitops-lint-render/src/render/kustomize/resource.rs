//! A resource while the build runs: its tree plus what kustomize tracks beside it (the names
//! it had before prefixes and hashes, whether a generator asked for a hash suffix).

use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};
use std::borrow::Cow;

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Behavior {
    #[default]
    Create,
    Merge,
    Replace,
}

#[derive(Clone, Debug)]
pub struct Resource {
    pub root: Node,
    /// (name, namespace) this resource had before each rename, oldest first.
    pub history: Vec<(String, String)>,
    /// Generated resource whose name gets a content hash suffix at the end of the build.
    pub needs_hash: bool,
    pub behavior: Behavior,
    /// The kustomization entry that produced the resource (for error locations).
    pub origin: Span,
    /// Name prefixes and suffixes applied so far, innermost first (to tell apart same-named
    /// resources of different overlays when fixing name references).
    pub prefixes: Vec<String>,
    pub suffixes: Vec<String>,
    /// Identity that survives renames (vars bind to the object, not to a name).
    pub uid: u64,
    /// Where it came from, for `buildMetadata: [originAnnotations]`.
    pub source: Option<SourceInfo>,
    /// Transformers that ran over it: (configured in, kind, (name, namespace) of a config).
    pub transformations: Vec<Transformation>,
}

/// (configured in, transformer kind, (name, namespace) of its config).
pub type Transformation = (String, String, Option<(String, String)>);

#[derive(Clone, Debug)]
pub enum SourceInfo {
    /// A manifest file (repo path).
    File(String),
    /// A generator configured in a file (repo path), with its kind and config name.
    Generator {
        configured_in: String,
        kind: String,
        name: Option<String>,
    },
}

static NEXT_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Resource {
    pub fn new(root: Node, origin: Span) -> Resource {
        Resource {
            root,
            history: Vec::new(),
            needs_hash: false,
            behavior: Behavior::Create,
            origin,
            prefixes: Vec::new(),
            suffixes: Vec::new(),
            uid: NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            source: None,
            transformations: Vec::new(),
        }
    }

    // The id fields are borrowed from the tree: kustomize compares ids across pairs of
    // resources (duplicates, name references), and a copy per read allocated on every
    // comparison.
    pub fn api_version(&self) -> Cow<'_, str> {
        self.scalar_at(&["apiVersion"])
    }
    pub fn kind(&self) -> Cow<'_, str> {
        self.scalar_at(&["kind"])
    }
    /// Cluster-scoped as kustomize sees it (`is_cluster_scoped`).
    pub fn is_cluster_scoped(&self) -> bool {
        is_cluster_scoped(&self.api_version(), &self.kind())
    }
    pub fn group(&self) -> Cow<'_, str> {
        self.api_version_part(|av| av.split_once('/').map_or("", |(g, _)| g))
    }
    pub fn version(&self) -> Cow<'_, str> {
        self.api_version_part(|av| av.split_once('/').map_or(av, |(_, v)| v))
    }
    /// Group, version and kind, owned: for steps that then change the resource.
    pub fn gvk(&self) -> (String, String, String) {
        (
            self.group().into_owned(),
            self.version().into_owned(),
            self.kind().into_owned(),
        )
    }
    pub fn name(&self) -> Cow<'_, str> {
        self.scalar_at(&["metadata", "name"])
    }
    pub fn namespace(&self) -> Cow<'_, str> {
        self.scalar_at(&["metadata", "namespace"])
    }
    /// Namespace as kustomize compares ids: empty means `default`.
    pub fn effective_namespace(&self) -> Cow<'_, str> {
        let ns = self.namespace();
        if ns.is_empty() {
            Cow::Borrowed("default")
        } else {
            ns
        }
    }

    fn api_version_part(&self, part: impl Fn(&str) -> &str) -> Cow<'_, str> {
        match self.api_version() {
            Cow::Borrowed(av) => Cow::Borrowed(part(av)),
            Cow::Owned(av) => Cow::Owned(part(&av).to_string()),
        }
    }

    fn scalar_at(&self, path: &[&str]) -> Cow<'_, str> {
        self.root
            .get_path(path)
            .and_then(Node::scalar_str)
            .unwrap_or_default()
    }

    /// All names this resource had, including the current one.
    pub fn all_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.history.iter().map(|(n, _)| n.clone()).collect();
        v.push(self.name().into_owned());
        v
    }

    pub fn record_history(&mut self) {
        let cur = (self.name().into_owned(), self.namespace().into_owned());
        if self.history.last() != Some(&cur) {
            self.history.push(cur);
        }
    }

    pub fn set_name(&mut self, name: &str, span: Span) {
        self.record_history();
        if let Some(meta) = tree::entry_or_insert(&mut self.root, "metadata", || tree::map(span)) {
            match meta.get_mut("name") {
                Some(n) => tree::replace_scalar(n, Value::String(name.into()), span, "base value"),
                None => tree::set(meta, "name", tree::string(name, span)),
            }
        }
    }

    /// The id text kustomize prints in messages.
    pub fn id_string(&self) -> String {
        let ns = self.namespace();
        let g = self.group();
        // kustomize's ResId text: Kind.version.group/name.namespace.
        let gv = if g.is_empty() {
            format!("{}.[noGrp]", self.version())
        } else {
            format!("{}.{g}", self.version())
        };
        if ns.is_empty() {
            format!("{}.{}/{}.[noNs]", self.kind(), gv, self.name())
        } else {
            format!("{}.{}/{}.{}", self.kind(), gv, self.name(), ns)
        }
    }

    pub fn labels(&self) -> Vec<(String, String)> {
        string_map(self.root.get_path(&["metadata", "labels"]))
    }
    pub fn annotations(&self) -> Vec<(String, String)> {
        string_map(self.root.get_path(&["metadata", "annotations"]))
    }
}

pub fn string_map(node: Option<&Node>) -> Vec<(String, String)> {
    node.and_then(Node::as_map)
        .map(|m| {
            m.iter()
                .map(|e| {
                    (
                        e.key.key_str().into_owned(),
                        tree::text(&e.value).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Kinds kustomize v5.5 knows as cluster-scoped (a namespace is never set on them), by
/// apiVersion and kind as its built-in scope table (Kubernetes v1.21.2) has them: any other
/// apiVersion of the same kind, e.g. `flowcontrol.apiserver.k8s.io/v1` FlowSchema or
/// `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy, is unknown to it and treated
/// as namespaced. Measured against `kubectl kustomize` over every kind of the v1.33 schemas.
pub fn is_cluster_scoped(api_version: &str, kind: &str) -> bool {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let v1_or_beta = matches!(version, "v1" | "v1beta1");
    match (group, kind) {
        (
            "",
            "ComponentStatus" | "Namespace" | "Node" | "NodeProxyOptions" | "PersistentVolume",
        ) => version == "v1",
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        )
        | ("apiextensions.k8s.io", "CustomResourceDefinition")
        | ("apiregistration.k8s.io", "APIService")
        | ("certificates.k8s.io", "CertificateSigningRequest")
        | ("networking.k8s.io", "IngressClass")
        | ("node.k8s.io", "RuntimeClass")
        | ("rbac.authorization.k8s.io", "ClusterRole" | "ClusterRoleBinding")
        | ("scheduling.k8s.io", "PriorityClass")
        | ("storage.k8s.io", "CSIDriver" | "CSINode" | "StorageClass" | "VolumeAttachment") => {
            v1_or_beta
        }
        ("flowcontrol.apiserver.k8s.io", "FlowSchema" | "PriorityLevelConfiguration")
        | ("policy", "PodSecurityPolicy") => version == "v1beta1",
        _ => false,
    }
}

#[cfg(test)]
mod scope_tests {
    use super::is_cluster_scoped;

    #[test]
    fn scope_follows_kustomizes_table_by_api_version() {
        assert!(is_cluster_scoped("v1", "Namespace"));
        assert!(is_cluster_scoped(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole"
        ));
        assert!(is_cluster_scoped(
            "flowcontrol.apiserver.k8s.io/v1beta1",
            "FlowSchema"
        ));
        // versions kustomize's v1.21.2 table does not have are namespaced to it
        assert!(!is_cluster_scoped(
            "flowcontrol.apiserver.k8s.io/v1",
            "FlowSchema"
        ));
        assert!(!is_cluster_scoped(
            "flowcontrol.apiserver.k8s.io/v1",
            "PriorityLevelConfiguration"
        ));
        assert!(!is_cluster_scoped(
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicy"
        ));
        assert!(!is_cluster_scoped("example.com/v1", "Namespace"));
        assert!(!is_cluster_scoped("v1", "ConfigMap"));
    }
}
