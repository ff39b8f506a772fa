//! Field names of built-in Kubernetes types (v1.33.0, generated from the shared JSON
//! Schemas into `k8s-fields-v1.33.txt`): which fields of a built-in object the API server
//! would drop (`schema-pruned-field`).

use super::crd::Unknown;
use crate::hash::{FastMap as HashMap, FastSet};
use crate::object::Object;
use crate::yaml::{Entry, Node};
use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::OnceLock;

pub const KUBERNETES_VERSION: &str = "v1.33";

static DATA: &str = include_str!("k8s-fields-v1.33.txt");

struct Table {
    /// `group/version/Kind` → type name.
    roots: HashMap<&'static str, &'static str>,
    /// type name → (field, field type).
    types: HashMap<&'static str, HashMap<&'static str, &'static str>>,
    /// Types with a `Quantity` somewhere below them (the quantity walk skips the others).
    holds_quantity: FastSet<&'static str>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut roots = HashMap::default();
        let mut types: HashMap<&str, HashMap<&str, &str>> = HashMap::default();
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
        let holds_quantity = types_holding_quantity(&types);
        Table {
            roots,
            types,
            holds_quantity,
        }
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
    // Joined, not `format!`ed (~1,400 instructions a call): several rules look up every object.
    [group, version, obj.kind.as_str()].join("/")
}

/// Declared fields of a built-in object that its type does not have. `status` is left to
/// `committed-live-state`.
pub fn unknown_fields(obj: &Object) -> Vec<Unknown<'_>> {
    let mut out = Vec::new();
    // The visitor never breaks: every unknown field is collected.
    let _ = visit_unknown(obj, &mut |key, path| {
        out.push(Unknown {
            key,
            path: path.iter().map(|step| step.to_string()).collect(),
        });
        ControlFlow::Continue(())
    });
    out.sort_by_key(|u| u.key.key.span.start);
    out
}

/// Does a built-in object declare a field its type does not have? (Argo CD then diffs the
/// raw object.) Stops at the first one.
pub fn has_unknown_fields(obj: &Object) -> bool {
    visit_unknown(obj, &mut |_, _| ControlFlow::Break(())).is_break()
}

/// What `visit_unknown` calls with each unknown field and its path.
type UnknownVisitor<'a, 'f> = dyn FnMut(&'a Entry, &[Cow<'a, str>]) -> ControlFlow<()> + 'f;

/// Calls `found` with each unknown field and its path; one path buffer serves the whole walk,
/// and it borrows the keys (rules call this for every object).
fn visit_unknown<'a>(obj: &'a Object, found: &mut UnknownVisitor<'a, '_>) -> ControlFlow<()> {
    let t = table();
    let Some(root_type) = t.roots.get(gvk(obj).as_str()) else {
        return ControlFlow::Continue(());
    };
    let mut path = Vec::new();
    walk_unknown(t, &obj.root, root_type, &mut path, found)
}

fn walk_unknown<'a>(
    t: &Table,
    node: &'a Node,
    ty: &str,
    path: &mut Vec<Cow<'a, str>>,
    found: &mut UnknownVisitor<'a, '_>,
) -> ControlFlow<()> {
    if path.len() > 64 {
        return ControlFlow::Continue(());
    }
    // A list or a map of `item`: every element has that type.
    if let Some(item) = ty.strip_prefix('[') {
        for (i, n) in node.as_seq().unwrap_or_default().iter().enumerate() {
            path.push(Cow::Owned(i.to_string()));
            let flow = walk_unknown(t, n, item, path, found);
            path.pop();
            flow?;
        }
        return ControlFlow::Continue(());
    }
    if let Some(value) = ty.strip_prefix('{') {
        for e in node.as_map().unwrap_or_default() {
            path.push(e.key.key_str());
            let flow = walk_unknown(t, &e.value, value, path, found);
            path.pop();
            flow?;
        }
        return ControlFlow::Continue(());
    }
    // Scalars, unchecked objects and types without a field list.
    let Some(fields) = t.types.get(ty) else {
        return ControlFlow::Continue(());
    };
    for e in node.as_map().unwrap_or_default() {
        let key = e.key.key_str();
        if path.is_empty() && key == "status" {
            continue;
        }
        let child = fields.get(key.as_ref()).copied();
        path.push(key);
        let flow = match child {
            Some(child) => walk_unknown(t, &e.value, child, path, found),
            None => found(e, path),
        };
        path.pop();
        flow?;
    }
    ControlFlow::Continue(())
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
    walk_quantities(t, &obj.root, root_type, &mut Vec::new(), &mut out);
    out.sort_by_key(|(e, _)| e.key.span.start);
    out
}

fn walk_quantities<'a>(
    t: &Table,
    node: &'a Node,
    ty: &str,
    path: &mut Vec<String>,
    out: &mut Vec<(&'a Entry, Vec<String>)>,
) {
    if path.len() > 64 || !t.holds_quantity.contains(element_type(ty)) {
        return;
    }
    if let Some(item) = ty.strip_prefix('[') {
        for (i, n) in node.as_seq().unwrap_or_default().iter().enumerate() {
            path.push(i.to_string());
            walk_quantities(t, n, item, path, out);
            path.pop();
        }
        return;
    }
    let fields = t.types.get(ty);
    let map_value = ty.strip_prefix('{');
    for e in node.as_map().unwrap_or_default() {
        let key = e.key.key_str();
        let child = match (map_value, fields) {
            (Some(v), _) => Some(v),
            (None, Some(f)) => f.get(key.as_ref()).copied(),
            _ => None,
        };
        let Some(child) = child else { continue };
        path.push(key.into_owned());
        if child == QUANTITY {
            out.push((e, path.clone()));
        } else {
            walk_quantities(t, &e.value, child, path, out);
        }
        path.pop();
    }
}

/// The type inside list (`[T`) and map (`{T`) markers.
fn element_type(ty: &str) -> &str {
    ty.trim_start_matches(['[', '{'])
}

/// The types from which a `Quantity` can be reached, to a fixed point over the field table.
fn types_holding_quantity(
    types: &HashMap<&'static str, HashMap<&'static str, &'static str>>,
) -> FastSet<&'static str> {
    let mut holds = FastSet::from_iter([QUANTITY]);
    loop {
        let before = holds.len();
        for (ty, fields) in types {
            if !holds.contains(ty) && fields.values().any(|f| holds.contains(element_type(f))) {
                holds.insert(ty);
            }
        }
        if holds.len() == before {
            return holds;
        }
    }
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
