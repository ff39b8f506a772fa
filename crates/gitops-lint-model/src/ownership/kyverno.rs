//! Kyverno `ClusterPolicy` / `Policy` mutate rules as writers
//! (https://kyverno.io/docs/writing-policies/mutate/): `patchStrategicMerge` with anchors,
//! `patchesJson6902`, `foreach`, background `targets`, and auto-generation of Pod rules for pod
//! controllers.

use super::path::{Pattern, Seg};
use super::{Effect, Firing, Mode, Mutator, Scope, Write};
use crate::object::Object;
use crate::source::Span;
use crate::yaml::{Limits, Node, parse_str};

/// Pod controllers Kyverno auto-generates rules for (its default set).
const AUTOGEN_DEFAULT: &[&str] = &[
    "DaemonSet",
    "Deployment",
    "Job",
    "StatefulSet",
    "ReplicaSet",
    "ReplicationController",
    "CronJob",
];

pub fn mutators(obj: &Object, out: &mut Vec<Mutator>) {
    let is_policy =
        obj.group() == "kyverno.io" && matches!(obj.kind.as_str(), "ClusterPolicy" | "Policy");
    if !is_policy {
        return;
    }
    let autogen_annotation = obj.annotation("pod-policies.kyverno.io/autogen-controllers");
    for rule in obj
        .root
        .get_path(&["spec", "rules"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let Some(mutate) = rule.get("mutate") else {
            continue;
        };
        let rule_name = rule
            .get("name")
            .and_then(Node::scalar_text)
            .unwrap_or_default();
        let span = rule
            .entry("name")
            .map(|e| e.key.span.cover(e.value.span))
            .unwrap_or(rule.span);
        let mut m = Mutator {
            owner: format!("{} {} rule `{rule_name}`", obj.kind, obj.name),
            span,
            firing: Firing::Admission { on_update: true },
            match_any: Vec::new(),
            match_all: Vec::new(),
            exclude: Vec::new(),
            exclude_all: Vec::new(),
            own_namespace: (obj.kind == "Policy")
                .then(|| obj.namespace.clone().unwrap_or_else(|| "default".into())),
            match_conditions: Vec::new(),
            // Evaluated per object (`preconditions.rs`); undecidable forms are "maybe".
            preconditions: rule
                .get("preconditions")
                .filter(|p| !p.is_empty_value())
                .cloned(),
            conditional: false,
            autogen: Vec::new(),
            deployed_by: None,
            writes: Vec::new(),
        };
        if let Some(matcher) = rule.get("match") {
            read_match(matcher, &mut m.match_any, &mut m.match_all, &mut m.firing);
        }
        if let Some(exclude) = rule.get("exclude") {
            // Operations in an exclusion do not change when the rule fires.
            let mut firing = m.firing;
            read_match(exclude, &mut m.exclude, &mut m.exclude_all, &mut firing);
        }
        if let Some(targets) = mutate.get("targets").and_then(Node::as_seq) {
            // Background mutation of existing objects: the targets are the scope.
            m.firing = Firing::Background;
            m.match_any = targets.iter().map(target_scope).collect();
            m.match_all.clear();
        } else if only_pods(&m) && autogen_annotation != Some("none") {
            m.autogen = match autogen_annotation {
                Some(list) => list.split(',').map(|s| s.trim().to_string()).collect(),
                None => AUTOGEN_DEFAULT.iter().map(|s| s.to_string()).collect(),
            };
        }
        let mut conditional = false;
        if let Some(p) = mutate.get("patchStrategicMerge") {
            smp_writes(p, &mut Vec::new(), &mut m.writes, &mut conditional);
        }
        if let Some(p) = mutate.get("patchesJson6902") {
            json6902_writes(p, &mut m.writes);
        }
        for each in mutate
            .get("foreach")
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            if let Some(p) = each.get("patchStrategicMerge") {
                smp_writes(p, &mut Vec::new(), &mut m.writes, &mut conditional);
            }
            if let Some(p) = each.get("patchesJson6902") {
                json6902_writes(p, &mut m.writes);
            }
            if each
                .get("preconditions")
                .is_some_and(|p| !p.is_empty_value())
            {
                conditional = true;
            }
        }
        m.conditional |= conditional;
        if !m.writes.is_empty() {
            out.push(m);
        }
    }
}

/// Auto-gen applies to rules that select only Pods and filter by nothing a controller
/// does not carry (names, object selectors, annotations).
fn only_pods(m: &Mutator) -> bool {
    let scopes: Vec<&Scope> = m.match_any.iter().chain(&m.match_all).collect();
    !scopes.is_empty()
        && scopes.iter().all(|s| {
            !s.kinds.is_empty()
                && s.kinds.iter().all(|(_, k)| k == "Pod")
                && s.names.is_empty()
                && s.object_selector.is_none()
        })
}

fn read_match(node: &Node, any: &mut Vec<Scope>, all: &mut Vec<Scope>, firing: &mut Firing) {
    for f in node.get("any").and_then(Node::as_seq).unwrap_or_default() {
        any.push(filter_scope(f, firing));
    }
    for f in node.get("all").and_then(Node::as_seq).unwrap_or_default() {
        all.push(filter_scope(f, firing));
    }
    if node.get("resources").is_some() {
        any.push(filter_scope(node, firing));
    }
}

/// A Kyverno `ResourceFilter` (`resources` plus request `subjects`/`roles`).
fn filter_scope(filter: &Node, firing: &mut Firing) -> Scope {
    let r = filter.get("resources");
    let list = |k: &str| strings(r.and_then(|r| r.get(k)));
    let ops = list("operations");
    if !ops.is_empty() && !ops.iter().any(|o| o == "UPDATE") {
        *firing = Firing::Admission { on_update: false };
    }
    let never = !ops.is_empty() && !ops.iter().any(|o| o == "CREATE" || o == "UPDATE");
    Scope {
        kinds: list("kinds").iter().map(|k| parse_kind(k)).collect(),
        names: {
            let mut n = list("names");
            n.extend(r.and_then(|r| r.get("name")).and_then(Node::scalar_text));
            n
        },
        namespaces: list("namespaces"),
        annotations: Vec::new(),
        excluded_namespaces: Vec::new(),
        object_selector: r.and_then(|r| r.get("selector")).cloned(),
        namespace_selector: r.and_then(|r| r.get("namespaceSelector")).cloned(),
        opaque: ["subjects", "roles", "clusterRoles"]
            .iter()
            .any(|k| filter.get(k).is_some_and(|n| !n.is_empty_value()))
            || r.and_then(|r| r.get("annotations")).is_some(),
        never,
    }
}

fn target_scope(t: &Node) -> Scope {
    let api = t.get_str("apiVersion").unwrap_or("");
    let group = api.split_once('/').map(|(g, _)| g).unwrap_or("");
    Scope {
        kinds: t
            .get_str("kind")
            .map(|k| vec![(Some(group.to_string()), k.to_string())])
            .unwrap_or_default(),
        names: t
            .get("name")
            .and_then(Node::scalar_text)
            .into_iter()
            .collect(),
        namespaces: t
            .get("namespace")
            .and_then(Node::scalar_text)
            .into_iter()
            .collect(),
        ..Scope::default()
    }
}

/// `Pod`, `v1/Pod`, `apps/v1/Deployment`, `apps/*/Deployment`, `*`.
fn parse_kind(text: &str) -> (Option<String>, String) {
    let parts: Vec<&str> = text.split('/').collect();
    match parts.as_slice() {
        [kind] => (None, kind.to_string()),
        [gv, kind] if gv.starts_with('v') && gv[1..].starts_with(|c: char| c.is_ascii_digit()) => {
            (Some(String::new()), kind.to_string())
        }
        [gv, kind] => (Some(gv.to_string()), kind.to_string()),
        [group, _version, kind] => (Some(group.to_string()), kind.to_string()),
        _ => (None, text.rsplit('/').next().unwrap_or(text).to_string()),
    }
}

fn strings(node: Option<&Node>) -> Vec<String> {
    node.and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::scalar_text)
        .collect()
}

/// The anchor of a patch key: `(k)` condition, `=(k)` equality, `X(k)` negation, `<(k)`
/// global, `^(k)` existence, `+(k)` add-if-absent.
enum Anchor<'a> {
    Plain(&'a str),
    AddIfAbsent,
    Condition(&'a str),
}

fn anchor(key: &str) -> Anchor<'_> {
    fn inner(s: &str) -> Option<&str> {
        s.strip_prefix('(').and_then(|s| s.strip_suffix(')'))
    }
    if key.strip_prefix('+').and_then(inner).is_some() {
        return Anchor::AddIfAbsent;
    }
    for p in ["", "=", "X", "<", "^"] {
        if let Some(k) = key.strip_prefix(p).and_then(inner) {
            return Anchor::Condition(k);
        }
    }
    Anchor::Plain(key)
}

fn literal(node: &Node) -> Option<String> {
    node.scalar_text().filter(|v| !v.contains("{{"))
}

/// Is a condition value one that holds for anything (`"*"`, `"?*"`, a template)?
fn trivially_true(node: &Node) -> bool {
    node.scalar_text()
        .is_some_and(|v| v == "*" || v == "?*" || v.contains("{{"))
}

/// Walk a strategic-merge patch: plain keys overwrite, `+(k)` only adds, anchors in list
/// items select the elements, a plain `name` in a list item is the merge key.
fn smp_writes(node: &Node, prefix: &mut Vec<Seg>, out: &mut Vec<Write>, conditional: &mut bool) {
    if prefix.len() > 64 {
        return;
    }
    for e in node.as_map().unwrap_or_default() {
        let key = e.key.key_str();
        match anchor(&key) {
            Anchor::AddIfAbsent => {}
            Anchor::Condition(_) => {
                if !trivially_true(&e.value) {
                    *conditional = true;
                }
            }
            Anchor::Plain(k) => {
                prefix.push(Seg::Key(k.to_string()));
                match &e.value.value {
                    crate::yaml::Value::Map(_) => smp_writes(&e.value, prefix, out, conditional),
                    crate::yaml::Value::Seq(items)
                        if items.iter().all(|i| i.as_map().is_some()) && !items.is_empty() =>
                    {
                        for item in items {
                            let filters = element_filters(item);
                            prefix.push(Seg::Each(filters));
                            smp_item_writes(item, prefix, out, conditional);
                            prefix.pop();
                        }
                    }
                    _ => out.push(Write {
                        path: Pattern(prefix.clone()),
                        mode: Mode::Overwrite,
                        value: literal(&e.value),
                        span: e.key.span.cover(e.value.full_span()),
                        effect: Effect::Set,
                    }),
                }
                prefix.pop();
            }
        }
    }
}

/// The fields that select which list elements a patch item merges into.
fn element_filters(item: &Node) -> Vec<(String, String)> {
    let mut filters = Vec::new();
    for e in item.as_map().unwrap_or_default() {
        let key = e.key.key_str();
        match anchor(&key) {
            Anchor::Condition(k) => filters.push((
                k.to_string(),
                e.value.scalar_text().unwrap_or_else(|| "*".into()),
            )),
            Anchor::Plain("name") => filters.push((
                "name".into(),
                e.value.scalar_text().unwrap_or_else(|| "*".into()),
            )),
            _ => {}
        }
    }
    filters
}

fn smp_item_writes(
    item: &Node,
    prefix: &mut Vec<Seg>,
    out: &mut Vec<Write>,
    conditional: &mut bool,
) {
    // The merge key and anchors are selectors, not writes.
    let mut rest = item.clone();
    if let crate::yaml::Value::Map(entries) = &mut rest.value {
        entries.retain(|e| {
            let k = e.key.key_str();
            matches!(anchor(&k), Anchor::Plain(p) if p != "name")
                || matches!(anchor(&k), Anchor::AddIfAbsent)
        });
    }
    smp_writes(&rest, prefix, out, conditional);
}

/// `patchesJson6902`: a YAML string holding a list of operations.
fn json6902_writes(node: &Node, out: &mut Vec<Write>) {
    let parsed;
    let ops: &[Node] = match node.as_str() {
        Some(text) => {
            parsed = parse_str(text, node.span.file, &Limits::default());
            match parsed.docs.first().and_then(|d| d.root.as_seq()) {
                Some(items) => items,
                None => return,
            }
        }
        None => node.as_seq().unwrap_or_default(),
    };
    for op in ops {
        let kind = op.get_str("op").unwrap_or("");
        if !matches!(kind, "add" | "replace" | "remove") {
            continue;
        }
        let Some(path) = op.get_str("path").and_then(Pattern::parse_pointer) else {
            continue;
        };
        out.push(Write {
            path,
            mode: Mode::Overwrite,
            value: if kind == "remove" {
                None
            } else {
                op.get("value").and_then(literal)
            },
            span: embedded_span(node),
            effect: Effect::Set,
        });
    }
}

/// Spans inside an embedded string are relative to the string; point at the whole value.
fn embedded_span(node: &Node) -> Span {
    node.span
}
