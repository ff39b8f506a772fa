//! Gatekeeper mutators as writers
//! (https://open-policy-agent.github.io/gatekeeper/website/docs/mutation/): `Assign`
//! (`parameters.assign`), `ModifySet` (merge/prune list values) and `AssignImage`
//! (domain/path/tag), with `applyTo` kinds, `match`, `location`, and `pathTests` (`MustNotExist` on
//! the field or a parent means add-if-absent). `AssignMetadata` only adds labels and annotations
//! that are absent, so it never fights Git.

use super::path::Pattern;
use super::{Effect, Firing, Mode, Mutator, Scope, Write};
use crate::object::Object;
use crate::yaml::Node;

pub fn mutators(obj: &Object, out: &mut Vec<Mutator>) {
    if obj.group() != "mutations.gatekeeper.sh"
        || !matches!(obj.kind.as_str(), "Assign" | "ModifySet" | "AssignImage")
    {
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
    let param = |k: &str| params.and_then(|p| p.get(k)).and_then(Node::scalar_text);
    let (value, effect) = match obj.kind.as_str() {
        "ModifySet" => {
            let values = list(params.and_then(|p| p.get_path(&["values", "fromList"])));
            match param("operation").as_deref() {
                Some("prune") => (None, Effect::SetPrune(values)),
                _ => (None, Effect::SetMerge(values)),
            }
        }
        "AssignImage" => (
            None,
            Effect::Image {
                domain: param("assignDomain"),
                path: param("assignPath"),
                tag: param("assignTag"),
            },
        ),
        _ => (
            assign
                .and_then(|a| a.get("value"))
                .and_then(Node::scalar_text),
            Effect::Set,
        ),
    };
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
        owner: format!("Gatekeeper {} {}", obj.kind, obj.name),
        span: loc_node.span,
        firing: Firing::Admission { on_update: true },
        match_any: vec![Scope {
            kinds,
            names,
            namespaces: list(get("namespaces")),
            excluded_namespaces: list(get("excludedNamespaces")),
            object_selector: get("labelSelector").cloned(),
            namespace_selector: get("namespaceSelector").cloned(),
            ..Scope::default()
        }],
        match_all: Vec::new(),
        exclude: Vec::new(),
        exclude_all: Vec::new(),
        own_namespace: None,
        match_conditions: Vec::new(),
        preconditions: None,
        conditional: false,
        autogen: Vec::new(),
        deployed_by: None,
        writes: vec![Write {
            path: location,
            mode: if absent_only {
                Mode::AddIfAbsent
            } else {
                Mode::Overwrite
            },
            value,
            span: assign
                .or(params)
                .map(|a| a.full_span())
                .unwrap_or(loc_node.span),
            effect,
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
