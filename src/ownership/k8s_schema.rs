//! Field names of built-in Kubernetes types (v1.33.0, generated from the shared JSON
//! Schemas into `k8s-fields-v1.33.txt`): which fields of a built-in object the API server
//! would drop (`schema-pruned-field`).

use super::crd::Unknown;
use crate::object::Object;
use crate::yaml::Node;
use std::collections::HashMap;
use std::sync::OnceLock;

pub const KUBERNETES_VERSION: &str = "v1.33";

static DATA: &str = include_str!("k8s-fields-v1.33.txt");

struct Table {
    /// `group/version/Kind` → type name.
    roots: HashMap<&'static str, &'static str>,
    /// type name → (field, field type).
    types: HashMap<&'static str, HashMap<&'static str, &'static str>>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut roots = HashMap::new();
        let mut types: HashMap<&str, HashMap<&str, &str>> = HashMap::new();
        let mut current: Option<&str> = None;
        for line in DATA.lines() {
            if let Some(rest) = line.strip_prefix("G ") {
                if let Some((gvk, ty)) = rest.split_once(' ') {
                    roots.insert(gvk, ty);
                }
            } else if let Some(ty) = line.strip_prefix("T ") {
                current = Some(ty);
                types.entry(ty).or_default();
            } else if let Some(field) = line.strip_prefix("  ")
                && let Some(ty) = current
            {
                let (name, fty) = field.split_once(' ').unwrap_or((field, ""));
                types.entry(ty).or_default().insert(name, fty);
            }
        }
        Table { roots, types }
    })
}

/// Is this a built-in kind the table knows?
pub fn knows(obj: &Object) -> bool {
    table().roots.contains_key(gvk(obj).as_str())
}

fn gvk(obj: &Object) -> String {
    let (group, version) = match obj.api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", obj.api_version.as_str()),
    };
    format!("{group}/{version}/{}", obj.kind)
}

/// Declared fields of a built-in object that its type does not have. `status` is left to
/// `committed-live-state`.
pub fn unknown_fields(obj: &Object) -> Vec<Unknown<'_>> {
    let t = table();
    let mut out = Vec::new();
    let Some(root_type) = t.roots.get(gvk(obj).as_str()) else {
        return out;
    };
    let mut stack: Vec<(&Node, &str, Vec<String>)> = vec![(&obj.root, root_type, Vec::new())];
    while let Some((node, ty, path)) = stack.pop() {
        if path.len() > 64 {
            continue;
        }
        if let Some(item) = ty.strip_prefix('[') {
            for (i, n) in node.as_seq().unwrap_or_default().iter().enumerate() {
                let mut p = path.clone();
                p.push(i.to_string());
                stack.push((n, item, p));
            }
            continue;
        }
        if let Some(value) = ty.strip_prefix('{') {
            for e in node.as_map().unwrap_or_default() {
                let mut p = path.clone();
                p.push(e.key.key_str().into_owned());
                stack.push((&e.value, value, p));
            }
            continue;
        }
        // Scalars, unchecked objects and types without a field list.
        let Some(fields) = t.types.get(ty) else {
            continue;
        };
        for e in node.as_map().unwrap_or_default() {
            let key = e.key.key_str().into_owned();
            if path.is_empty() && key == "status" {
                continue;
            }
            let mut p = path.clone();
            p.push(key.clone());
            match fields.get(key.as_str()) {
                Some(child) => stack.push((&e.value, child, p)),
                None => out.push(Unknown { key: e, path: p }),
            }
        }
    }
    out.sort_by_key(|u| u.key.key.span.start);
    out
}

/// Does the API server keep an empty `{}` at `path` of a built-in object? Struct-typed fields
/// (`resources`, `affinity`, `securityContext`) serialise as `{}` when set, so Git's `{}` is
/// what the server stores; empty maps, lists and strings (`omitempty`) are dropped.
pub fn keeps_empty_object(obj: &Object, path: &[String]) -> bool {
    let t = table();
    let Some(mut ty) = t.roots.get(gvk(obj).as_str()).copied() else {
        return false;
    };
    for seg in path {
        if let Some(item) = ty.strip_prefix('[') {
            ty = item;
            continue;
        }
        if let Some(value) = ty.strip_prefix('{') {
            ty = value;
            continue;
        }
        match t.types.get(ty).and_then(|f| f.get(seg.as_str())) {
            Some(child) => ty = child,
            None => return false,
        }
    }
    t.types.contains_key(ty)
}

/// Does the built-in kind `kind` (in any group and version of the table) have the field at
/// `path` (`*` or an index steps into a list or map)? None when the table has no such kind.
pub fn kind_has_path(kind: &str, path: &[String]) -> Option<bool> {
    let t = table();
    let suffix = format!("/{kind}");
    let mut known = false;
    for (gvk, root) in &t.roots {
        if !gvk.ends_with(&suffix) {
            continue;
        }
        known = true;
        let mut ty: &str = root;
        let mut found = true;
        for seg in path {
            if let Some(item) = ty.strip_prefix('[') {
                ty = item;
            } else if let Some(value) = ty.strip_prefix('{') {
                ty = value;
            } else if ty == "*" {
                break; // unchecked below here: it may hold anything
            } else if let Some(child) = t.types.get(ty).and_then(|f| f.get(seg.as_str())) {
                ty = child;
            } else {
                found = false;
                break;
            }
        }
        if found {
            return Some(true);
        }
    }
    known.then_some(false)
}

/// The schema's type of every quantity (`resource.Quantity`).
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Declared entries of a built-in object whose schema type is a quantity (`resources.limits.*`,
/// `emptyDir.sizeLimit`, `ResourceQuota.spec.hard.*`, HPA targets, …), with their paths.
pub fn quantity_entries(obj: &Object) -> Vec<(&crate::yaml::Entry, Vec<String>)> {
    let t = table();
    let mut out = Vec::new();
    let Some(root_type) = t.roots.get(gvk(obj).as_str()) else {
        return out;
    };
    let mut stack: Vec<(&Node, &str, Vec<String>)> = vec![(&obj.root, root_type, Vec::new())];
    while let Some((node, ty, path)) = stack.pop() {
        if path.len() > 64 {
            continue;
        }
        if let Some(item) = ty.strip_prefix('[') {
            for (i, n) in node.as_seq().unwrap_or_default().iter().enumerate() {
                let mut p = path.clone();
                p.push(i.to_string());
                stack.push((n, item, p));
            }
            continue;
        }
        let fields = t.types.get(ty);
        let map_value = ty.strip_prefix('{');
        if fields.is_none() && map_value.is_none() {
            continue;
        }
        for e in node.as_map().unwrap_or_default() {
            let key = e.key.key_str();
            let child = match (map_value, fields) {
                (Some(v), _) => Some(v),
                (None, Some(f)) => f.get(key.as_ref()).copied(),
                _ => None,
            };
            let Some(child) = child else { continue };
            let mut p = path.clone();
            p.push(key.into_owned());
            if child == QUANTITY {
                out.push((e, p));
            } else {
                stack.push((&e.value, child, p));
            }
        }
    }
    out.sort_by_key(|(e, _)| e.key.span.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;
    use crate::yaml::{Limits, parse_str};

    #[test]
    fn finds_misplaced_fields_in_built_in_objects() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  label: {a: b}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: web\n          image: web:1\n          imagePullpolicy: Always\n          env:\n            - name: A\n              valueFrom: {fieldRef: {fieldPath: metadata.name}}\n";
        let root = parse_str(text, FileId(0), &Limits::default())
            .docs
            .into_iter()
            .next()
            .map(|d| d.root);
        let obj = root.and_then(Object::from_node);
        let paths: Vec<String> = obj
            .as_ref()
            .map(|o| unknown_fields(o).iter().map(|u| u.path.join(".")).collect())
            .unwrap_or_default();
        assert_eq!(
            paths,
            [
                "metadata.label",
                "spec.template.spec.containers.0.imagePullpolicy"
            ]
        );
    }

    #[test]
    fn struct_fields_keep_their_empty_object() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";
        let obj = parse_str(text, FileId(0), &Limits::default())
            .docs
            .into_iter()
            .next()
            .and_then(|d| Object::from_node(d.root));
        let Some(obj) = obj else {
            panic!("no object");
        };
        let path = |p: &str| p.split('.').map(String::from).collect::<Vec<_>>();
        assert!(keeps_empty_object(
            &obj,
            &path("spec.template.spec.containers.0.resources")
        ));
        assert!(keeps_empty_object(
            &obj,
            &path("spec.template.spec.affinity")
        ));
        assert!(!keeps_empty_object(
            &obj,
            &path("spec.template.spec.nodeSelector")
        ));
        assert!(!keeps_empty_object(&obj, &path("metadata.labels")));
    }

    #[test]
    fn quantity_fields_come_from_the_schema() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          resources:\n            limits: {cpu: 1000m}\n          env:\n            - name: limits\n              value: 1000m\n      volumes:\n        - name: tmp\n          emptyDir: {sizeLimit: 1024Mi}\n";
        let obj = parse_str(text, FileId(0), &Limits::default())
            .docs
            .into_iter()
            .next()
            .and_then(|d| Object::from_node(d.root));
        let paths: Vec<String> = obj
            .as_ref()
            .map(|o| {
                quantity_entries(o)
                    .iter()
                    .map(|(_, p)| p.join("."))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(
            paths,
            [
                "spec.template.spec.containers.0.resources.limits.cpu",
                "spec.template.spec.volumes.0.emptyDir.sizeLimit"
            ]
        );
    }
}
