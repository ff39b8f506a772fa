//! Field specs: "this path, in resources of this group/version/kind" — how kustomize's
//! builtin transformers know where labels, namespaces, names and images live. The default
//! tables follow kustomize's builtin configuration; `configurations:` files add to them.

use super::resource::Resource;
use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};
use std::sync::{Arc, OnceLock};

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl Gvk {
    /// Does a resource of this group, version and kind match this (partially filled)
    /// selector?
    pub fn selects_gvk(&self, group: &str, version: &str, kind: &str) -> bool {
        (self.kind.is_empty() || self.kind == kind)
            && (self.group.is_empty() || self.group == group)
            && (self.version.is_empty() || self.version == version)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct FieldSpec {
    pub gvk: Gvk,
    pub path: Vec<String>,
    pub create: bool,
}

impl FieldSpec {
    /// Read `{path, create, group, version, kind}` from a config node.
    pub fn from_node(n: &Node) -> Option<FieldSpec> {
        let path = n.get("path").and_then(tree::text)?;
        Some(FieldSpec {
            gvk: Gvk {
                group: n.get("group").and_then(tree::text).unwrap_or_default(),
                version: n.get("version").and_then(tree::text).unwrap_or_default(),
                kind: n.get("kind").and_then(tree::text).unwrap_or_default(),
            },
            path: split_path(&path),
            create: n.get("create").and_then(Node::as_bool).unwrap_or(false),
        })
    }

    pub fn list_from(n: Option<&Node>) -> Vec<FieldSpec> {
        n.and_then(Node::as_seq)
            .map(|s| s.iter().filter_map(FieldSpec::from_node).collect())
            .unwrap_or_default()
    }
}

/// Split a `a/b\/c/d` path, honouring escaped slashes.
pub fn split_path(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'/') {
            cur.push('/');
            chars.next();
        } else if c == '/' {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out.retain(|s| !s.is_empty());
    out
}

/// Visit every leaf at `path` below `node`. Sequences met on the way are traversed item by
/// item (`x[]` says so explicitly). Missing fields are created when `make_leaf` is given
/// (intermediate maps included), except below sequences.
pub fn visit(
    node: &mut Node,
    path: &[String],
    span: Span,
    make_leaf: Option<&dyn Fn() -> Node>,
    f: &mut dyn FnMut(&mut Node),
) {
    if let Value::Seq(items) = &mut node.value {
        for item in items {
            visit(item, path, span, make_leaf, f);
        }
        return;
    }
    let Some((first, rest)) = path.split_first() else {
        f(node);
        return;
    };
    let (key, is_seq) = match first.strip_suffix("[]") {
        Some(k) => (k, true),
        None => (first.as_str(), false),
    };
    if !matches!(node.value, Value::Map(_)) {
        return;
    }
    let exists = node.get(key).is_some_and(|v| !v.is_null());
    if !exists {
        let Some(make) = make_leaf else { return };
        if is_seq {
            return;
        }
        let child = if rest.is_empty() {
            make()
        } else {
            tree::map(span)
        };
        tree::set(node, key, child);
    }
    let Some(child) = node.get_mut(key) else {
        return;
    };
    if is_seq {
        if let Value::Seq(items) = &mut child.value {
            for item in items {
                visit(item, rest, span, make_leaf, f);
            }
        }
        return;
    }
    visit(child, rest, span, make_leaf, f);
}

/// The first node `path` ends on that is a map or a sequence, for field specs that must name
/// scalars (sequences on the way are searched item by item, as `visit` walks them).
pub fn non_scalar_leaf<'a>(node: &'a Node, path: &[String]) -> Option<&'a Node> {
    let Some((first, rest)) = path.split_first() else {
        return matches!(node.value, Value::Map(_) | Value::Seq(_)).then_some(node);
    };
    match &node.value {
        Value::Seq(items) => items.iter().find_map(|i| non_scalar_leaf(i, path)),
        Value::Map(_) => {
            let key = first.strip_suffix("[]").unwrap_or(first);
            non_scalar_leaf(node.get(key)?, rest)
        }
        _ => None,
    }
}

/// Apply `f` at every field spec matching the resource.
pub fn apply_specs(
    r: &mut Resource,
    specs: &[FieldSpec],
    span: Span,
    make_leaf: &dyn Fn() -> Node,
    f: &mut dyn FnMut(&mut Node),
) {
    let (g, v, k) = r.gvk();
    let mut seen: Vec<&Vec<String>> = Vec::new();
    for fs in specs {
        if !fs.gvk.selects_gvk(&g, &v, &k) || seen.contains(&&fs.path) {
            continue;
        }
        seen.push(&fs.path);
        let make = if fs.create { Some(make_leaf) } else { None };
        visit(&mut r.root, &fs.path, span, make, f);
    }
}

/// A back reference: fields that hold the name of a resource of kind `gvk`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NameBackRef {
    pub gvk: Gvk,
    pub referrers: Vec<FieldSpec>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransformerConfig {
    pub name_prefix: Vec<FieldSpec>,
    pub name_suffix: Vec<FieldSpec>,
    pub namespace: Vec<FieldSpec>,
    pub common_labels: Vec<FieldSpec>,
    pub template_labels: Vec<FieldSpec>,
    /// Extra fields for every `labels:` entry (a `labels:` key in a configurations file).
    pub labels: Vec<FieldSpec>,
    pub common_annotations: Vec<FieldSpec>,
    pub images: Vec<FieldSpec>,
    pub replicas: Vec<FieldSpec>,
    pub var_reference: Vec<FieldSpec>,
    pub name_reference: Vec<NameBackRef>,
}

/// Append the specs of `from` that `to` lacks, keeping first occurrences only (either list
/// may repeat itself). Builds merge the same default lists over and over, so nothing is
/// cloned unless it is added.
fn add_unique(to: &mut Vec<FieldSpec>, from: &[FieldSpec]) {
    if from.is_empty() || std::ptr::eq(to.as_slice(), from) {
        return;
    }
    let mut to_repeats = false;
    let missing: Vec<FieldSpec> = {
        let mut seen: std::collections::HashSet<&FieldSpec> =
            std::collections::HashSet::with_capacity(to.len() + from.len());
        for fs in to.iter() {
            to_repeats |= !seen.insert(fs);
        }
        from.iter().filter(|fs| seen.insert(fs)).cloned().collect()
    };
    if to_repeats {
        let mut once = std::collections::HashSet::new();
        to.retain(|fs| once.insert(fs.clone()));
    }
    to.extend(missing);
}

impl TransformerConfig {
    pub fn merge(&mut self, other: &TransformerConfig) {
        add_unique(&mut self.name_prefix, &other.name_prefix);
        add_unique(&mut self.name_suffix, &other.name_suffix);
        add_unique(&mut self.namespace, &other.namespace);
        add_unique(&mut self.common_labels, &other.common_labels);
        add_unique(&mut self.template_labels, &other.template_labels);
        add_unique(&mut self.labels, &other.labels);
        add_unique(&mut self.common_annotations, &other.common_annotations);
        add_unique(&mut self.images, &other.images);
        add_unique(&mut self.replicas, &other.replicas);
        add_unique(&mut self.var_reference, &other.var_reference);
        for nb in &other.name_reference {
            match self.name_reference.iter_mut().find(|x| x.gvk == nb.gvk) {
                Some(x) => add_unique(&mut x.referrers, &nb.referrers),
                None => self.name_reference.push(nb.clone()),
            }
        }
    }

    /// A `configurations:` file.
    pub fn from_node(n: &Node) -> TransformerConfig {
        let l = |k: &str| FieldSpec::list_from(n.get(k));
        let mut c = TransformerConfig {
            name_prefix: l("namePrefix"),
            name_suffix: l("nameSuffix"),
            namespace: l("namespace"),
            common_labels: l("commonLabels"),
            template_labels: l("templateLabels"),
            labels: l("labels"),
            common_annotations: l("commonAnnotations"),
            images: l("images"),
            replicas: l("replicas"),
            var_reference: l("varReference"),
            name_reference: Vec::new(),
        };
        for nb in n.get("nameReference").and_then(Node::as_seq).unwrap_or(&[]) {
            c.name_reference.push(NameBackRef {
                gvk: Gvk {
                    group: nb.get("group").and_then(tree::text).unwrap_or_default(),
                    version: nb.get("version").and_then(tree::text).unwrap_or_default(),
                    kind: nb.get("kind").and_then(tree::text).unwrap_or_default(),
                },
                referrers: FieldSpec::list_from(nb.get("fieldSpecs")),
            });
        }
        c
    }

    /// The defaults as every accumulator starts with them: one allocation for the process,
    /// copied only by a build that adds to it (`configurations:`, `crds:`).
    pub fn shared_defaults() -> &'static Arc<TransformerConfig> {
        static CELL: OnceLock<Arc<TransformerConfig>> = OnceLock::new();
        CELL.get_or_init(|| Arc::new(build_defaults()))
    }

    /// `to.merge(from)` on shared configurations. A configuration merged with itself is
    /// unchanged (merges keep first occurrences, and the defaults repeat nothing), so the
    /// usual case, a base and an overlay both on the defaults, copies nothing.
    pub fn merge_shared(to: &mut Arc<TransformerConfig>, from: &Arc<TransformerConfig>) {
        if !Arc::ptr_eq(to, from) {
            Arc::make_mut(to).merge(from);
        }
    }
}

/// One compact line per spec: `path [+] [k=Kind] [g=group] [v=version]` (`+` = create).
fn specs(text: &str) -> Vec<FieldSpec> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut fs = FieldSpec::default();
            for (i, part) in l.split_whitespace().enumerate() {
                if i == 0 {
                    fs.path = split_path(part);
                } else if part == "+" {
                    fs.create = true;
                } else if let Some(k) = part.strip_prefix("k=") {
                    fs.gvk.kind = k.into();
                } else if let Some(g) = part.strip_prefix("g=") {
                    fs.gvk.group = g.into();
                } else if let Some(v) = part.strip_prefix("v=") {
                    fs.gvk.version = v.into();
                }
            }
            fs
        })
        .collect()
}

const TEMPLATE_LABELS: &str = "
metadata/labels +
spec/template/metadata/labels + v=v1 k=ReplicationController
spec/template/metadata/labels + k=Deployment
spec/template/metadata/labels + k=ReplicaSet
spec/template/metadata/labels + k=DaemonSet
spec/template/metadata/labels + g=apps k=StatefulSet
spec/template/metadata/labels + g=batch k=Job
spec/jobTemplate/metadata/labels + g=batch k=CronJob
spec/jobTemplate/spec/template/metadata/labels + g=batch k=CronJob
";

const SELECTOR_LABELS: &str = "
spec/selector + v=v1 k=Service
spec/selector + v=v1 k=ReplicationController
spec/selector/matchLabels + k=Deployment
spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels g=apps k=Deployment
spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels g=apps k=Deployment
spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels g=apps k=Deployment
spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels g=apps k=Deployment
spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels g=apps k=Deployment
spec/selector/matchLabels + k=ReplicaSet
spec/selector/matchLabels + k=DaemonSet
spec/selector/matchLabels + g=apps k=StatefulSet
spec/volumeClaimTemplates[]/metadata/labels + g=apps k=StatefulSet
spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels g=apps k=StatefulSet
spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels g=apps k=StatefulSet
spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels g=apps k=StatefulSet
spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels g=apps k=StatefulSet
spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels g=apps k=StatefulSet
spec/selector/matchLabels g=batch k=Job
spec/jobTemplate/spec/selector/matchLabels g=batch k=CronJob
spec/selector/matchLabels g=policy k=PodDisruptionBudget
spec/podSelector/matchLabels g=networking.k8s.io k=NetworkPolicy
spec/ingress/from/podSelector/matchLabels g=networking.k8s.io k=NetworkPolicy
spec/egress/to/podSelector/matchLabels g=networking.k8s.io k=NetworkPolicy
";

const NAMESPACE: &str = "
metadata/namespace +
metadata/name k=Namespace
spec/conversion/webhook/clientConfig/service/namespace k=CustomResourceDefinition
";

const ANNOTATIONS: &str = "
metadata/annotations +
spec/template/metadata/annotations + v=v1 k=ReplicationController
spec/template/metadata/annotations + k=Deployment
spec/template/metadata/annotations + k=ReplicaSet
spec/template/metadata/annotations + k=DaemonSet
spec/template/metadata/annotations + g=apps k=StatefulSet
spec/template/metadata/annotations + g=batch k=Job
spec/jobTemplate/metadata/annotations + g=batch k=CronJob
spec/jobTemplate/spec/template/metadata/annotations + g=batch k=CronJob
";

const IMAGES: &str = "
spec/containers[]/image +
spec/initContainers[]/image +
spec/template/spec/containers[]/image +
spec/template/spec/initContainers[]/image +
";

const REPLICAS: &str = "
spec/replicas + k=Deployment
spec/replicas + k=ReplicationController
spec/replicas + k=ReplicaSet
spec/replicas + k=StatefulSet
";

const VAR_REFERENCE: &str = "
metadata/labels
metadata/annotations
spec/template/metadata/annotations
spec/ports/port k=Service
spec/ports/targetPort k=Service
spec/rules/host k=Ingress
spec/tls/hosts k=Ingress
spec/tls/secretName k=Ingress
data k=ConfigMap
spec/volumeClaimTemplates/spec/nfs/server k=StatefulSet
spec/nfs/server k=PersistentVolume
spec/jobTemplate/spec/template/volumes/nfs/server k=CronJob
";

/// Workload kinds whose pod spec sits at the same path prefix.
const POD_PREFIXES: &[(&str, &str)] = &[
    ("Pod", "spec"),
    ("PodTemplate", "template/spec"),
    ("Deployment", "spec/template/spec"),
    ("ReplicaSet", "spec/template/spec"),
    ("DaemonSet", "spec/template/spec"),
    ("StatefulSet", "spec/template/spec"),
    ("Job", "spec/template/spec"),
    ("CronJob", "spec/jobTemplate/spec/template/spec"),
];

fn pod_refs(suffixes: &[&str]) -> String {
    let mut out = String::new();
    for (kind, prefix) in POD_PREFIXES {
        for s in suffixes {
            let v = if *kind == "Pod" { " v=v1" } else { "" };
            out.push_str(&format!("{prefix}/{s} k={kind}{v}\n"));
        }
    }
    out
}

fn build_defaults() -> TransformerConfig {
    let cm = pod_refs(&[
        "volumes/configMap/name",
        "containers/env/valueFrom/configMapKeyRef/name",
        "initContainers/env/valueFrom/configMapKeyRef/name",
        "containers/envFrom/configMapRef/name",
        "initContainers/envFrom/configMapRef/name",
        "volumes/projected/sources/configMap/name",
    ]) + "
spec/configSource/configMap k=Node
rules/resourceNames k=Role
rules/resourceNames k=ClusterRole
metadata/annotations/nginx.ingress.kubernetes.io\\/fastcgi-params-configmap k=Ingress
";
    let secret = pod_refs(&[
        "volumes/secret/secretName",
        "containers/env/valueFrom/secretKeyRef/name",
        "initContainers/env/valueFrom/secretKeyRef/name",
        "containers/envFrom/secretRef/name",
        "initContainers/envFrom/secretRef/name",
        "imagePullSecrets/name",
        "volumes/projected/sources/secret/name",
    ]) + "
spec/tls/secretName k=Ingress
metadata/annotations/ingress.kubernetes.io\\/auth-secret k=Ingress
metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret k=Ingress
metadata/annotations/nginx.ingress.kubernetes.io\\/auth-tls-secret k=Ingress
imagePullSecrets/name k=ServiceAccount
parameters/secretName k=StorageClass
parameters/adminSecretName k=StorageClass
parameters/userSecretName k=StorageClass
parameters/secretRef k=StorageClass
rules/resourceNames k=Role
rules/resourceNames k=ClusterRole
spec/template/spec/containers/env/valueFrom/secretKeyRef/name k=Service g=serving.knative.dev v=v1
spec/azureFile/secretName k=PersistentVolume
";
    let workloads_sa = "
subjects k=RoleBinding g=rbac.authorization.k8s.io
subjects k=ClusterRoleBinding g=rbac.authorization.k8s.io
spec/serviceAccountName k=Pod
spec/template/spec/serviceAccountName k=StatefulSet
spec/template/spec/serviceAccountName k=Deployment
spec/template/spec/serviceAccountName k=ReplicationController
spec/jobTemplate/spec/template/spec/serviceAccountName k=CronJob
spec/template/spec/serviceAccountName k=Job
spec/template/spec/serviceAccountName k=DaemonSet
";
    let pvc = "
spec/volumes/persistentVolumeClaim/claimName k=Pod
spec/template/spec/volumes/persistentVolumeClaim/claimName k=StatefulSet
spec/template/spec/volumes/persistentVolumeClaim/claimName k=Deployment
spec/template/spec/volumes/persistentVolumeClaim/claimName k=ReplicationController
spec/jobTemplate/spec/template/spec/volumes/persistentVolumeClaim/claimName k=CronJob
spec/template/spec/volumes/persistentVolumeClaim/claimName k=Job
spec/template/spec/volumes/persistentVolumeClaim/claimName k=DaemonSet
";
    let priority = "
spec/priorityClassName k=Pod
spec/template/spec/priorityClassName k=StatefulSet
spec/template/spec/priorityClassName k=Deployment
spec/template/spec/priorityClassName k=ReplicationController
spec/jobTemplate/spec/template/spec/priorityClassName k=CronJob
spec/template/spec/priorityClassName k=Job
spec/template/spec/priorityClassName k=DaemonSet
";
    let hpa = "spec/scaleTargetRef/name k=HorizontalPodAutoscaler";
    let nb = |kind: &str, group: &str, version: &str, text: &str| NameBackRef {
        gvk: Gvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        },
        referrers: specs(text),
    };
    let mut common_labels = specs(SELECTOR_LABELS);
    common_labels.extend(specs(TEMPLATE_LABELS));
    TransformerConfig {
        name_prefix: specs("metadata/name"),
        name_suffix: specs("metadata/name"),
        namespace: specs(NAMESPACE),
        common_labels,
        template_labels: specs(TEMPLATE_LABELS),
        labels: Vec::new(),
        common_annotations: specs(ANNOTATIONS),
        images: specs(IMAGES),
        replicas: specs(REPLICAS),
        var_reference: {
            let mut v = specs(VAR_REFERENCE);
            v.extend(specs(&pod_refs(&[
                "containers/args",
                "containers/command",
                "containers/env/value",
                "containers/volumeMounts/mountPath",
                "containers/workingDir",
                "initContainers/args",
                "initContainers/command",
                "initContainers/env/value",
                "initContainers/volumeMounts/mountPath",
                "volumes/nfs/server",
            ])));
            v
        },
        name_reference: vec![
            nb("Deployment", "", "", hpa),
            nb("ReplicationController", "", "", hpa),
            nb("ReplicaSet", "", "", hpa),
            nb("StatefulSet", "", "", hpa),
            nb("ConfigMap", "", "v1", &cm),
            nb("Secret", "", "v1", &secret),
            nb(
                "Service",
                "",
                "v1",
                "
spec/serviceName k=StatefulSet g=apps
spec/rules/http/paths/backend/serviceName k=Ingress
spec/backend/serviceName k=Ingress
spec/rules/http/paths/backend/service/name k=Ingress
spec/defaultBackend/service/name k=Ingress
spec/service/name k=APIService g=apiregistration.k8s.io
webhooks/clientConfig/service k=ValidatingWebhookConfiguration g=admissionregistration.k8s.io
webhooks/clientConfig/service k=MutatingWebhookConfiguration g=admissionregistration.k8s.io
spec/rules/backendRefs/name k=HTTPRoute
",
            ),
            nb(
                "Role",
                "rbac.authorization.k8s.io",
                "",
                "roleRef/name k=RoleBinding g=rbac.authorization.k8s.io",
            ),
            nb(
                "ClusterRole",
                "rbac.authorization.k8s.io",
                "",
                "roleRef/name k=RoleBinding g=rbac.authorization.k8s.io\nroleRef/name k=ClusterRoleBinding g=rbac.authorization.k8s.io",
            ),
            nb("ServiceAccount", "", "v1", workloads_sa),
            nb("PersistentVolumeClaim", "", "v1", pvc),
            nb(
                "PersistentVolume",
                "",
                "v1",
                "spec/volumeName k=PersistentVolumeClaim\nrules/resourceNames k=ClusterRole",
            ),
            nb(
                "StorageClass",
                "storage.k8s.io",
                "v1",
                "spec/storageClassName k=PersistentVolume\nspec/storageClassName k=PersistentVolumeClaim\nspec/volumeClaimTemplates/spec/storageClassName k=StatefulSet",
            ),
            nb("PriorityClass", "scheduling.k8s.io", "v1", priority),
            nb(
                "ValidatingAdmissionPolicy",
                "admissionregistration.k8s.io",
                "",
                "spec/policyName k=ValidatingAdmissionPolicyBinding",
            ),
            nb(
                "IngressClass",
                "networking.k8s.io/v1",
                "v1",
                "spec/ingressClassName k=Ingress",
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_slash_stays_in_segment() {
        assert_eq!(
            split_path("metadata/annotations/a.b\\/c"),
            vec!["metadata", "annotations", "a.b/c"]
        );
    }

    /// `merge_shared` skips merging a configuration with itself: that is only right while
    /// such a merge changes nothing, i.e. while the defaults repeat no spec.
    #[test]
    fn the_defaults_merged_with_themselves_are_unchanged() {
        let defaults = TransformerConfig::shared_defaults();
        let mut merged = TransformerConfig::clone(defaults);
        merged.merge(&TransformerConfig::clone(defaults));
        assert_eq!(&merged, defaults.as_ref());
        let mut with_extra = TransformerConfig::clone(defaults);
        with_extra.merge(&TransformerConfig {
            images: vec![FieldSpec {
                path: vec!["spec".into(), "image".into()],
                ..FieldSpec::default()
            }],
            ..TransformerConfig::default()
        });
        assert_ne!(
            &with_extra,
            defaults.as_ref(),
            "a merge that adds a spec shows"
        );
    }
}
