//! An object written in an API version the cluster no longer serves: the apply fails
//! ("no matches for kind ... in version ...") and so does every sync after it. The cluster's
//! version is `profile.kube-version` (the Kubernetes version Helm renders for), else the
//! renderer's default, so a chart that picks its API version from
//! `.Capabilities.APIVersions` is judged against the cluster it was rendered for.
//! The removals are the Kubernetes deprecation guide's
//! (https://kubernetes.io/docs/reference/using-api/deprecation-guide/).

use super::util::about;
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};

pub const ID: &str = "api-removed";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[],
    summary: "an object's apiVersion is no longer served by the cluster's Kubernetes version (profile.kube-version)",
    doc: include_str!("../../rules/api-removed.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.2.0",
    kinds: Kinds::Of(KINDS),
};

/// One removal: `apiVersion` and kind, the minor release (1.x) that stopped serving it, and
/// what to write instead (`None`: no replacement).
struct Removal {
    api_version: &'static str,
    kind: &'static str,
    removed_in: u64,
    instead: Option<&'static str>,
}

const fn r(
    api_version: &'static str,
    kind: &'static str,
    removed_in: u64,
    instead: Option<&'static str>,
) -> Removal {
    Removal {
        api_version,
        kind,
        removed_in,
        instead,
    }
}

const REMOVALS: &[Removal] = &[
    // v1.32
    r("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", 32, Some("flowcontrol.apiserver.k8s.io/v1")),
    r("flowcontrol.apiserver.k8s.io/v1beta3", "PriorityLevelConfiguration", 32, Some("flowcontrol.apiserver.k8s.io/v1")),
    // v1.29
    r("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", 29, Some("flowcontrol.apiserver.k8s.io/v1")),
    r("flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration", 29, Some("flowcontrol.apiserver.k8s.io/v1")),
    // v1.27
    r("storage.k8s.io/v1beta1", "CSIStorageCapacity", 27, Some("storage.k8s.io/v1")),
    // v1.26
    r("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema", 26, Some("flowcontrol.apiserver.k8s.io/v1")),
    r("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration", 26, Some("flowcontrol.apiserver.k8s.io/v1")),
    r("autoscaling/v2beta2", "HorizontalPodAutoscaler", 26, Some("autoscaling/v2")),
    // v1.25
    r("batch/v1beta1", "CronJob", 25, Some("batch/v1")),
    r("discovery.k8s.io/v1beta1", "EndpointSlice", 25, Some("discovery.k8s.io/v1")),
    r("events.k8s.io/v1beta1", "Event", 25, Some("events.k8s.io/v1")),
    r("autoscaling/v2beta1", "HorizontalPodAutoscaler", 25, Some("autoscaling/v2")),
    r("policy/v1beta1", "PodDisruptionBudget", 25, Some("policy/v1")),
    r("policy/v1beta1", "PodSecurityPolicy", 25, None),
    r("node.k8s.io/v1beta1", "RuntimeClass", 25, Some("node.k8s.io/v1")),
    // v1.22
    r("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration", 22, Some("admissionregistration.k8s.io/v1")),
    r("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration", 22, Some("admissionregistration.k8s.io/v1")),
    r("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", 22, Some("apiextensions.k8s.io/v1")),
    r("apiregistration.k8s.io/v1beta1", "APIService", 22, Some("apiregistration.k8s.io/v1")),
    r("authentication.k8s.io/v1beta1", "TokenReview", 22, Some("authentication.k8s.io/v1")),
    r("authorization.k8s.io/v1beta1", "LocalSubjectAccessReview", 22, Some("authorization.k8s.io/v1")),
    r("authorization.k8s.io/v1beta1", "SelfSubjectAccessReview", 22, Some("authorization.k8s.io/v1")),
    r("authorization.k8s.io/v1beta1", "SubjectAccessReview", 22, Some("authorization.k8s.io/v1")),
    r("certificates.k8s.io/v1beta1", "CertificateSigningRequest", 22, Some("certificates.k8s.io/v1")),
    r("coordination.k8s.io/v1beta1", "Lease", 22, Some("coordination.k8s.io/v1")),
    r("extensions/v1beta1", "Ingress", 22, Some("networking.k8s.io/v1")),
    r("networking.k8s.io/v1beta1", "Ingress", 22, Some("networking.k8s.io/v1")),
    r("networking.k8s.io/v1beta1", "IngressClass", 22, Some("networking.k8s.io/v1")),
    r("rbac.authorization.k8s.io/v1beta1", "ClusterRole", 22, Some("rbac.authorization.k8s.io/v1")),
    r("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding", 22, Some("rbac.authorization.k8s.io/v1")),
    r("rbac.authorization.k8s.io/v1beta1", "Role", 22, Some("rbac.authorization.k8s.io/v1")),
    r("rbac.authorization.k8s.io/v1beta1", "RoleBinding", 22, Some("rbac.authorization.k8s.io/v1")),
    r("scheduling.k8s.io/v1beta1", "PriorityClass", 22, Some("scheduling.k8s.io/v1")),
    r("storage.k8s.io/v1beta1", "CSIDriver", 22, Some("storage.k8s.io/v1")),
    r("storage.k8s.io/v1beta1", "CSINode", 22, Some("storage.k8s.io/v1")),
    r("storage.k8s.io/v1beta1", "StorageClass", 22, Some("storage.k8s.io/v1")),
    r("storage.k8s.io/v1beta1", "VolumeAttachment", 22, Some("storage.k8s.io/v1")),
    // v1.16
    r("extensions/v1beta1", "NetworkPolicy", 16, Some("networking.k8s.io/v1")),
    r("extensions/v1beta1", "PodSecurityPolicy", 16, Some("policy/v1beta1 (itself removed in 1.25)")),
    r("extensions/v1beta1", "DaemonSet", 16, Some("apps/v1")),
    r("apps/v1beta2", "DaemonSet", 16, Some("apps/v1")),
    r("extensions/v1beta1", "Deployment", 16, Some("apps/v1")),
    r("apps/v1beta1", "Deployment", 16, Some("apps/v1")),
    r("apps/v1beta2", "Deployment", 16, Some("apps/v1")),
    r("apps/v1beta1", "StatefulSet", 16, Some("apps/v1")),
    r("apps/v1beta2", "StatefulSet", 16, Some("apps/v1")),
    r("extensions/v1beta1", "ReplicaSet", 16, Some("apps/v1")),
    r("apps/v1beta1", "ReplicaSet", 16, Some("apps/v1")),
    r("apps/v1beta2", "ReplicaSet", 16, Some("apps/v1")),
];

/// The (group, kind) pairs of [`REMOVALS`], as the runner selects objects.
const KINDS: &[&str] = &[
    "flowcontrol.apiserver.k8s.io/FlowSchema",
    "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration",
    "storage.k8s.io/CSIStorageCapacity",
    "autoscaling/HorizontalPodAutoscaler",
    "batch/CronJob",
    "discovery.k8s.io/EndpointSlice",
    "events.k8s.io/Event",
    "policy/PodDisruptionBudget",
    "policy/PodSecurityPolicy",
    "node.k8s.io/RuntimeClass",
    "admissionregistration.k8s.io/MutatingWebhookConfiguration",
    "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
    "apiextensions.k8s.io/CustomResourceDefinition",
    "apiregistration.k8s.io/APIService",
    "authentication.k8s.io/TokenReview",
    "authorization.k8s.io/LocalSubjectAccessReview",
    "authorization.k8s.io/SelfSubjectAccessReview",
    "authorization.k8s.io/SubjectAccessReview",
    "certificates.k8s.io/CertificateSigningRequest",
    "coordination.k8s.io/Lease",
    "extensions/Ingress",
    "networking.k8s.io/Ingress",
    "networking.k8s.io/IngressClass",
    "rbac.authorization.k8s.io/ClusterRole",
    "rbac.authorization.k8s.io/ClusterRoleBinding",
    "rbac.authorization.k8s.io/Role",
    "rbac.authorization.k8s.io/RoleBinding",
    "scheduling.k8s.io/PriorityClass",
    "storage.k8s.io/CSIDriver",
    "storage.k8s.io/CSINode",
    "storage.k8s.io/StorageClass",
    "storage.k8s.io/VolumeAttachment",
    "extensions/NetworkPolicy",
    "extensions/PodSecurityPolicy",
    "extensions/DaemonSet",
    "apps/DaemonSet",
    "extensions/Deployment",
    "apps/Deployment",
    "apps/StatefulSet",
    "extensions/ReplicaSet",
    "apps/ReplicaSet",
];

/// The cluster's minor version: `profile.kube-version`, else the version Helm renders for
/// by default (what every chart of the run was rendered against).
fn cluster_minor(model: &crate::gitops::Model) -> Option<(u64, String)> {
    let text = model.profile.kube_version.clone().unwrap_or_else(|| {
        crate::render::helm::builtins::KubeVersion::default_version().version
    });
    let mut parts = text.trim_start_matches('v').split('.');
    let major: u64 = parts.next()?.parse().ok()?;
    let minor: u64 = parts.next()?.trim_end_matches('+').parse().ok()?;
    (major == 1).then_some((minor, text))
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let Some((minor, version)) = cluster_minor(model) else {
        return;
    };
    let source = if model.profile.kube_version.is_some() {
        "profile.kube-version"
    } else {
        "Helm's default; set `profile.kube-version` to the cluster's"
    };
    for mo in model.in_scope() {
        let o = &mo.object;
        let Some(removal) = REMOVALS
            .iter()
            .find(|r| r.api_version == o.api_version && r.kind == o.kind)
        else {
            continue;
        };
        if removal.removed_in > minor {
            continue;
        }
        let at = o
            .root
            .get("apiVersion")
            .map_or(o.root.span, |n| n.span);
        let instead = match removal.instead {
            Some(v) => format!("write `apiVersion: {v}`"),
            None => format!("{} has no replacement API: remove it", o.kind),
        };
        let app = model.app_of(mo);
        out.push(about(
            Finding::new(
                ID,
                META.severity,
                format!(
                    "{} `{}` is not served since Kubernetes 1.{} and the cluster runs {version} ({source}): applying it fails with \"no matches for kind\"",
                    o.kind, o.api_version, removal.removed_in
                ),
                at,
            )
            .label("removed API version")
            .help(format!("{instead}; see https://kubernetes.io/docs/reference/using-api/deprecation-guide/ for the fields that changed with it."))
            .field("apiVersion"),
            app,
            mo,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_removal_kind_is_selected() {
        for r in REMOVALS {
            let group = r.api_version.split_once('/').map_or("", |(g, _)| g);
            let kind = format!("{group}/{}", r.kind);
            assert!(KINDS.contains(&kind.as_str()), "{kind} missing from KINDS");
        }
    }
}
