//! Gatekeeper `Assign` mutations as writers (catalog A8.3): `applyTo` kinds, `match`,
//! `location`, `parameters.assign`, and `pathTests` (`MustNotExist` on the field or a parent
//! means add-if-absent).

use super::path::Pattern;
use super::{Firing, Mode, Mutator, Scope, Write};
use crate::object::Object;
use crate::yaml::Node;

pub fn mutators(obj: &Object, out: &mut Vec<Mutator>) {
    if obj.group() != "mutations.gatekeeper.sh" || obj.kind != "Assign" {
        return;
    }
    let Some(spec) = obj.root.get("spec") else {
        return;
    };
    let Some(loc_node) = spec.get("location") else {
        return;
    };
    let Some(location) = loc_node
        .scalar_text()
        .and_then(|l| Pattern::parse_dotted(&l))
    else {
        return;
    };
    let params = spec.get("parameters");
    let absent_only = params
        .and_then(|p| p.get("pathTests"))
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .any(|t| {
            t.get_str("condition") == Some("MustNotExist")
                && t.get("subPath")
                    .and_then(Node::scalar_text)
                    .and_then(|s| Pattern::parse_dotted(&s))
                    .is_some_and(|sub| sub.is_prefix_of(&location))
        });
    let assign = params.and_then(|p| p.get("assign"));
    let value = assign
        .and_then(|a| a.get("value"))
        .and_then(Node::scalar_text);
    let mut kinds = Vec::new();
    for a in spec
        .get("applyTo")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let groups = list(a.get("groups"));
        for k in list(a.get("kinds")) {
            if groups.is_empty() {
                kinds.push((None, k.clone()));
            }
            for g in &groups {
                kinds.push((Some(g.clone()), k.clone()));
            }
        }
    }
    let m = spec.get("match");
    let get = |k: &str| m.and_then(|m| m.get(k));
    let mut names = Vec::new();
    names.extend(get("name").and_then(Node::scalar_text));
    out.push(Mutator {
        owner: format!("Gatekeeper Assign {}", obj.name),
        span: loc_node.span,
        firing: Firing::Admission { on_update: true },
        match_any: vec![Scope {
            kinds,
            names,
            namespaces: list(get("namespaces")),
            excluded_namespaces: list(get("excludedNamespaces")),
            object_selector: get("labelSelector").cloned(),
            namespace_selector: get("namespaceSelector").cloned(),
            opaque: false,
        }],
        match_all: Vec::new(),
        exclude: Vec::new(),
        exclude_all: Vec::new(),
        own_namespace: None,
        conditional: false,
        autogen: Vec::new(),
        cluster: None,
        writes: vec![Write {
            path: location,
            mode: if absent_only {
                Mode::AddIfAbsent
            } else {
                Mode::Overwrite
            },
            value,
            span: assign.map(|a| a.full_span()).unwrap_or(loc_node.span),
        }],
    });
}

fn list(node: Option<&Node>) -> Vec<String> {
    node.and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::scalar_text)
        .collect()
}
