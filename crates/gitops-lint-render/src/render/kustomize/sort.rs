//! Output order: kustomize's legacy kind order (the default), or input order (`fifo`).

use super::resource::Resource;

const FIRST: [&str; 22] = [
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];
const LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

fn rank(kind: &str, first: &[String], last: &[String]) -> i64 {
    if let Some(i) = first.iter().position(|k| k == kind) {
        return -(first.len() as i64) + i as i64;
    }
    if let Some(i) = last.iter().position(|k| k == kind) {
        return 1 + i as i64;
    }
    0
}

/// Group, version and kind as kustomize prints a GVK for ordering (`~G` for the core group).
fn gvk_key(r: &Resource) -> String {
    let g = r.group();
    let g = if g.is_empty() { "~G".into() } else { g };
    let v = r.version();
    let v = if v.is_empty() { "~V".into() } else { v };
    format!("{g}_{v}_{}", r.kind())
}

pub fn legacy(
    resources: &mut [Resource],
    order_first: Option<&[String]>,
    order_last: Option<&[String]>,
) {
    let first: Vec<String> = order_first
        .map(<[String]>::to_vec)
        .unwrap_or_else(|| FIRST.iter().map(|s| s.to_string()).collect());
    let last: Vec<String> = order_last
        .map(<[String]>::to_vec)
        .unwrap_or_else(|| LAST.iter().map(|s| s.to_string()).collect());
    resources.sort_by_cached_key(|r| {
        let ns = r.namespace();
        let ns = if ns.is_empty() { "~X".into() } else { ns };
        // Same-GVK resources compare as kustomize's id string `…|namespace|name`.
        let name = r.name();
        let name = if name.is_empty() { "~N".into() } else { name };
        (
            rank(&r.kind(), &first, &last),
            gvk_key(r),
            format!("{ns}|{name}"),
        )
    });
}
