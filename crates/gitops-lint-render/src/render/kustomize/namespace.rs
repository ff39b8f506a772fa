//! The namespace transformer (`namespace:`, NamespaceTransformer configs, and
//! ValueAddTransformer's `metadata/namespace`): objects, RoleBinding subjects, and the ids
//! name references follow.

use super::acc::{Acc, Fail, failed};
use super::fieldspec::{FieldSpec, visit};
use super::resource::Resource;
use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};

pub fn namespace(
    acc: &mut Acc,
    ns: &str,
    span: Span,
    specs: &[FieldSpec],
    unset_only: bool,
    mode: SubjectMode,
) -> Result<(), Fail> {
    // kustomize's NamespaceTransformer does nothing without a namespace.
    if ns.is_empty() {
        return Ok(());
    }
    for r in &mut acc.resources {
        namespace_one(r, ns, span, specs, unset_only, mode)?;
    }
    Ok(())
}

/// How a namespace change reaches RoleBinding subjects (`setRoleBindingSubjects`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SubjectMode {
    /// Only subjects named `default` (kustomize's default).
    DefaultOnly,
    AllServiceAccounts,
    None,
}

fn is_role_binding(kind: &str) -> bool {
    matches!(kind, "RoleBinding" | "ClusterRoleBinding")
}

/// The namespace filter with no field specs of its own (ValueAddTransformer's
/// `metadata/namespace`): the object's namespace, unless cluster-scoped, and the subjects.
pub fn namespace_meta(r: &mut Resource, ns: &str, span: Span) -> Result<(), Fail> {
    let meta = FieldSpec {
        gvk: Default::default(),
        path: vec!["metadata".into(), "namespace".into()],
        create: true,
    };
    namespace_one(r, ns, span, &[meta], false, SubjectMode::DefaultOnly)
}

fn namespace_one(
    r: &mut Resource,
    ns: &str,
    span: Span,
    specs: &[FieldSpec],
    unset_only: bool,
    mode: SubjectMode,
) -> Result<(), Fail> {
    let cluster = r.is_cluster_scoped();
    // kustomize records the id before a namespace change on every resource, moved or not:
    // name references look only at resources with a previous id.
    r.history
        .push((r.name().into_owned(), r.namespace().into_owned()));
    let (g, v, kind) = r.gvk();
    let core = r.api_version() == "v1";
    if is_role_binding(&kind) {
        namespace_subjects(r, ns, span, unset_only, mode);
    }
    for fs in specs {
        if !fs.gvk.selects_gvk(&g, &v, &kind) {
            continue;
        }
        let is_meta = fs.path == ["metadata", "namespace"];
        if is_meta && cluster {
            continue;
        }
        // Binding subjects' namespaces follow the subject mode above, not field specs; a
        // Namespace's own name changes only for core ones.
        if is_role_binding(&kind)
            && is_role_binding(&fs.gvk.kind)
            && fs.path == ["subjects", "namespace"]
        {
            continue;
        }
        if fs.path == ["metadata", "name"] && !(kind == "Namespace" && core) {
            continue;
        }
        if !is_meta && let Some(bad) = super::fieldspec::non_scalar_leaf(&r.root, &fs.path) {
            let got = if bad.as_seq().is_some() {
                "SequenceNode"
            } else {
                "MappingNode"
            };
            return Err(failed(
                span,
                format!(
                    "namespace field specs must target scalar nodes: considering field '{}' of object {}: wrong node kind: expected ScalarNode but got {got}: node contents:\n{}",
                    fs.path.join("/"),
                    r.id_string(),
                    crate::yaml::emit::to_yaml(bad)
                ),
            ));
        }
        let make = || tree::string(ns, span);
        let mk: Option<&dyn Fn() -> Node> = if fs.create { Some(&make) } else { None };
        visit(&mut r.root, &fs.path, span, mk, &mut |n: &mut Node| {
            if unset_only && tree::text(n).is_some_and(|t| !t.is_empty()) {
                return;
            }
            if n.as_map().is_none() && n.as_seq().is_none() {
                tree::replace_scalar(n, Value::String(ns.into()), span, "base value");
            }
        });
    }
    Ok(())
}

/// `setRoleBindingSubjects`: which RoleBinding subjects get the namespace.
fn namespace_subjects(r: &mut Resource, ns: &str, span: Span, unset_only: bool, mode: SubjectMode) {
    if mode == SubjectMode::None {
        return;
    }
    let Some(Value::Seq(subjects)) = r.root.get_mut("subjects").map(|s| &mut s.value) else {
        return;
    };
    for s in subjects {
        let hit = match mode {
            SubjectMode::DefaultOnly => s.get_str("name") == Some("default"),
            SubjectMode::AllServiceAccounts => s.get_str("kind") == Some("ServiceAccount"),
            SubjectMode::None => false,
        };
        if !hit {
            continue;
        }
        if unset_only && s.get_str("namespace").is_some_and(|x| !x.is_empty()) {
            continue;
        }
        match s.get_mut("namespace") {
            Some(n) => tree::replace_scalar(n, Value::String(ns.into()), span, "base value"),
            None => tree::set(s, "namespace", tree::string(ns, span)),
        }
    }
}
