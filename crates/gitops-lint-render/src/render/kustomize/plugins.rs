//! Generator and transformer configs kustomize would hand to a plugin: never run here.

use crate::yaml::Node;

/// Why a plugin config cannot be run offline (exec / container / starlark functions).
pub fn plugin_reason(doc: &Node) -> Option<&'static str> {
    let ann = doc.get_path(&["metadata", "annotations"]);
    if ann
        .and_then(|a| a.get("config.kubernetes.io/function"))
        .is_some()
        || ann.and_then(|a| a.get("config.k8s.io/function")).is_some()
    {
        return Some("is a KRM function; gitops-lint never runs plugins");
    }
    if doc
        .get("spec")
        .and_then(|s| s.get("exec").or(s.get("container")))
        .is_some()
    {
        return Some("is an exec/container plugin; gitops-lint never runs plugins");
    }
    None
}
