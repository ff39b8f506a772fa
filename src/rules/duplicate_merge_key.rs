//! Duplicate strategic-merge keys in built-in lists (two `env` entries with
//! one name, two ports with one number) and duplicate keys in YAML maps. Argo CD's diff
//! fails with "$setElementOrder" ComparisonErrors; strict decoding rejects duplicates.

use super::{FixAvailability, Kinds, RuleMeta, Scope};
use super::fixes::delete_seq_item;
use super::util::{about, object_id};
use crate::finding::{Finding, Fix, Severity};
use crate::gitops::{Model, ModelObject};
use crate::ownership::kb::in_argo_scheme;
use crate::yaml::{Node, Value};

pub const ID: &str = "duplicate-merge-key";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    summary: "duplicate list keys (env names, ports…) → $setElementOrder ComparisonError",
    doc: include_str!("../../rules/duplicate-merge-key.md"),
    fix: FixAvailability::Safe,
    removal: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// The merge key of a list, by the key that holds it and where (`ports` differ between a
/// container and a Service).
fn merge_key(list_key: &str, parent_path: &[Step<'_>], kind: &str) -> Option<&'static [&'static str]> {
    let is_key = |step: &Step<'_>, f: &dyn Fn(&str) -> bool| matches!(step, Step::Key(k) if f(k));
    Some(match list_key {
        "containers" | "initContainers" | "ephemeralContainers" => &["name"],
        "env" | "volumes" | "imagePullSecrets" => &["name"],
        "volumeMounts" => &["mountPath"],
        "hostAliases" => &["ip"],
        "ports" if parent_path.iter().any(|s| is_key(s, &|k| k.ends_with("ontainers"))) => {
            &["containerPort", "protocol"]
        }
        "ports" if kind == "Service" && matches!(parent_path, [s] if is_key(s, &|k| k == "spec")) => {
            &["port", "protocol"]
        }
        _ => return None,
    })
}

/// One step of the walk's path: a map key or a list index (text only for messages).
enum Step<'a> {
    Key(std::borrow::Cow<'a, str>),
    Index(usize),
}

/// The path as messages write it (`spec.template.spec.containers.0.env`).
fn joined(path: &[Step<'_>]) -> String {
    let steps: Vec<String> = path
        .iter()
        .map(|s| match s {
            Step::Key(k) => k.to_string(),
            Step::Index(i) => i.to_string(),
        })
        .collect();
    steps.join(".")
}

/// Maps up to this size are searched for a repeated key pairwise (no allocation); larger
/// ones through a hash map.
const PAIRWISE_MAP_LEN: usize = 32;

fn key_of(item: &Node, fields: &[&str]) -> Option<String> {
    let mut parts = Vec::new();
    for f in fields {
        match item.get(f).and_then(Node::scalar_text) {
            Some(v) => parts.push(v),
            // `protocol` defaults to TCP; a missing name is not a key.
            None if *f == "protocol" => parts.push("TCP".into()),
            None => return None,
        }
    }
    Some(parts.join("/"))
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for mo in &model.objects {
        let o = &mo.object;
        let typed_lists =
            in_argo_scheme(o.group()) || (o.group() == "argoproj.io" && o.kind == "Rollout");
        walk(model, mo, typed_lists, &o.root, &mut Vec::new(), out);
    }
}

fn walk<'a>(
    model: &Model,
    mo: &ModelObject,
    typed_lists: bool,
    node: &'a Node,
    path: &mut Vec<Step<'a>>,
    out: &mut Vec<Finding>,
) {
    if path.len() > 64 {
        return;
    }
    match &node.value {
        Value::Map(entries) => {
            for (i, first) in repeated_keys(entries) {
                out.push(map_duplicate(model, mo, &entries[i], &entries[first], path));
            }
            for e in entries {
                path.push(Step::Key(e.key.key_str()));
                walk(model, mo, typed_lists, &e.value, path, out);
                path.pop();
            }
        }
        Value::Seq(items) => {
            if typed_lists
                && let Some((Step::Key(list_key), parent)) = path.split_last()
                && let Some(fields) = merge_key(list_key, parent, &mo.object.kind)
            {
                list_duplicates(model, mo, items, fields, path, out);
            }
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                walk(model, mo, typed_lists, item, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Each entry whose key an earlier entry already has, with the index of the first one.
fn repeated_keys(entries: &[crate::yaml::Entry]) -> Vec<(usize, usize)> {
    let mut repeated = Vec::new();
    if entries.len() <= PAIRWISE_MAP_LEN {
        for (i, e) in entries.iter().enumerate().skip(1) {
            let key = e.key.key_str();
            if let Some(first) = entries[..i].iter().position(|p| p.key.key_str() == key) {
                repeated.push((i, first));
            }
        }
        return repeated;
    }
    let keys: Vec<std::borrow::Cow<'_, str>> = entries.iter().map(|e| e.key.key_str()).collect();
    let mut first_at: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        match first_at.get(key.as_ref()) {
            Some(&first) => repeated.push((i, first)),
            None => {
                first_at.insert(key.as_ref(), i);
            }
        }
    }
    repeated
}

fn severity(model: &Model, mo: &ModelObject) -> Severity {
    if model.app_of(mo).argo.is_some() {
        Severity::Error
    } else {
        Severity::Warning
    }
}

fn list_duplicates(
    model: &Model,
    mo: &ModelObject,
    items: &[Node],
    fields: &[&str],
    path: &[Step<'_>],
    out: &mut Vec<Finding>,
) {
    for (i, item) in items.iter().enumerate() {
        let Some(k) = key_of(item, fields) else {
            continue;
        };
        let Some(first) = items[..i]
            .iter()
            .find(|p| key_of(p, fields).as_deref() == Some(&k))
        else {
            continue;
        };
        let exact = first.to_json() == item.to_json();
        let at = item
            .entry(fields[0])
            .map(|e| e.key.span.cover(e.value.span))
            .unwrap_or(item.span);
        let list = match path.last() {
            Some(Step::Key(k)) => k.as_ref(),
            _ => "list",
        };
        let mut f = Finding::new(
            ID,
            severity(model, mo),
            format!(
                "{} declares `{list}` entry {}={k} twice{}; {}",
                object_id(mo),
                fields.join("+"),
                if exact { " (identical)" } else { " with different values" },
                match model.app_of(mo).controller() {
                    super::util::Controller::Argocd => {
                        "Argo CD's strategic-merge diff fails ($setElementOrder ComparisonError) and Kubernetes keeps only one"
                    }
                    super::util::Controller::FluxKustomize | super::util::Controller::FluxHelm => {
                        "server-side apply rejects duplicate entries for a list key, so the Flux apply of this object fails"
                    }
                    super::util::Controller::None => {
                        "Kubernetes keeps only one, and server-side apply rejects the object"
                    }
                }
            ),
            at,
        )
        .label("duplicate")
        .secondary(first.span, "first declared here")
        .field(format!("{}[{i}]", joined(path)))
        .help(format!(
            "Remove the duplicate `{list}` entry (often produced by merged Helm `env` lists); keep the value that should win."
        ));
        if exact && let Some(edit) = delete_seq_item(&model.map, item) {
            f = f.with_fix(Fix {
                title: "remove the identical duplicate".into(),
                safe: true,
                edits: vec![edit],
            });
        }
        out.push(about(f, model.app_of(mo), mo));
    }
}

fn map_duplicate(
    model: &Model,
    mo: &ModelObject,
    e: &crate::yaml::Entry,
    first: &crate::yaml::Entry,
    path: &[Step<'_>],
) -> Finding {
    let key = e.key.key_str().into_owned();
    let f = Finding::new(
        ID,
        severity(model, mo),
        format!(
            "{} declares the key `{key}` twice in one map{}; Kubernetes keeps the last, strict \
             decoding (kubectl, server-side apply, Flux) rejects the object",
            object_id(mo),
            if path.is_empty() {
                String::new()
            } else {
                format!(" at {}", joined(path))
            }
        ),
        e.key.span.cover(e.value.span),
    )
    .label("duplicate key")
    .secondary(first.key.span, "first declared here")
    .help(format!("Keep one `{key}` entry."));
    about(f, model.app_of(mo), mo)
}
