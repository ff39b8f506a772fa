//! Duplicate strategic-merge keys in built-in lists (two `env` entries with
//! one name, two ports with one number) and duplicate keys in YAML maps. Argo CD's diff
//! fails with "$setElementOrder" ComparisonErrors; strict decoding rejects duplicates.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::fixes::delete_seq_item;
use super::util::{about, object_id};
use crate::finding::{Finding, Fix, Severity};
use crate::gitops::{Model, ModelObject};
use crate::ownership::kb::in_argo_scheme;
use crate::yaml::{Node, Value};
use std::borrow::Cow;

pub const ID: &str = "duplicate-merge-key";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Error,
            when: "an Argo CD Application deploys the object (its strategic-merge diff fails with a ComparisonError)",
        },
    ],
    summary: "duplicate list keys (env names, ports…) → $setElementOrder ComparisonError",
    doc: include_str!("../../rules/duplicate-merge-key.md"),
    fix: FixAvailability::Safe,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// The merge key of a list, by the key that holds it and where (`ports` differ between a
/// container and a Service).
fn merge_key(list_key: &str, parent_path: &[Cow<'_, str>], kind: &str) -> Option<&'static [&'static str]> {
    Some(match list_key {
        "containers" | "initContainers" | "ephemeralContainers" => &["name"],
        "env" | "volumes" | "imagePullSecrets" => &["name"],
        "volumeMounts" => &["mountPath"],
        "hostAliases" => &["ip"],
        "ports" if parent_path.iter().any(|k| k.ends_with("ontainers")) => {
            &["containerPort", "protocol"]
        }
        "ports" if kind == "Service" && parent_path == ["spec"] => &["port", "protocol"],
        _ => return None,
    })
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
    for mo in model.in_scope() {
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
    path: &mut Vec<Cow<'a, str>>,
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
                path.push(e.key.key_str());
                walk(model, mo, typed_lists, &e.value, path, out);
                path.pop();
            }
        }
        Value::Seq(items) => {
            if typed_lists
                && let Some((list_key, parent)) = path.split_last()
                && let Some(fields) = merge_key(list_key, parent, &mo.object.kind)
            {
                list_duplicates(model, mo, items, fields, path, out);
            }
            for (i, item) in items.iter().enumerate() {
                path.push(Cow::Owned(i.to_string()));
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
            if let Some(first) = entries[..i].iter().position(|p| p.key.key_is(&key)) {
                repeated.push((i, first));
            }
        }
        return repeated;
    }
    let keys: Vec<Cow<'_, str>> = entries.iter().map(|e| e.key.key_str()).collect();
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

/// What the duplicate does under the controller (and release) that applies the object.
fn consequence(model: &Model, mo: &ModelObject) -> String {
    let app = model.app_of(mo);
    match app.controller() {
        super::util::Controller::Argocd => {
            "Argo CD's strategic-merge diff fails ($setElementOrder ComparisonError) and Kubernetes keeps only one".into()
        }
        super::util::Controller::FluxKustomize => {
            "server-side apply rejects duplicate entries for a list key, so the Flux apply of this object fails".into()
        }
        // helm-controller installs with server-side apply from Flux 2.8 (Helm 4) unless the
        // HelmRelease says `install.serverSideApply: false`; a release installed before keeps
        // client-side apply (https://github.com/fluxcd/flux2/releases/tag/v2.8.0,
        // https://github.com/fluxcd/helm-controller/pull/1384).
        super::util::Controller::FluxHelm => {
            let version = model.flux_version(app);
            let install_ssa = app.flux.as_ref().and_then(|f| {
                f.decl
                    .root
                    .get_path(&["spec", "install", "serverSideApply"])
                    .and_then(crate::yaml::Node::as_bool)
            });
            let helm3_defaults =
                crate::gitops::versions::helm_controller_gate(model, app, "UseHelm3Defaults");
            if install_ssa == Some(false) {
                "helm-controller applies this release client-side (`install.serverSideApply: false`), so Kubernetes keeps only one and the other is silently lost".into()
            } else if install_ssa.is_none() && helm3_defaults.is_some() {
                "helm-controller runs with the UseHelm3Defaults feature gate, so it applies client-side (Helm 3) and Kubernetes keeps only one: the other is silently lost".into()
            } else if version.before(2, 8) && install_ssa.is_none() {
                format!(
                    "helm-controller of {} applies client-side (Helm 3), so Kubernetes keeps only one and the other is silently lost",
                    version.describe(&model.map)
                )
            } else {
                "helm-controller installs new releases with server-side apply (Flux 2.8 and later), which rejects duplicate entries for a list key, so the install fails (a release installed before 2.8 keeps client-side apply, and Kubernetes keeps only one)".into()
            }
        }
        super::util::Controller::None => {
            "Kubernetes keeps only one, and server-side apply rejects the object".into()
        }
    }
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
    path: &[Cow<'_, str>],
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
        let list = path.last().map(Cow::as_ref).unwrap_or("list");
        let mut f = Finding::new(
            ID,
            severity(model, mo),
            format!(
                "{} declares `{list}` entry {}={k} twice{}; {}",
                object_id(mo),
                fields.join("+"),
                if exact { " (identical)" } else { " with different values" },
                consequence(model, mo)
            ),
            at,
        )
        .label("duplicate")
        .secondary(first.span, "first declared here")
        .field(format!("{}[{i}]", path.join(".")))
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
    path: &[Cow<'_, str>],
) -> Finding {
    let key = e.key.key_str().into_owned();
    let f = Finding::new(
        ID,
        severity(model, mo),
        format!(
            "{} declares the key `{key}` twice in one map{}; Kubernetes keeps the last, strict \
             decoding (kubectl, server-side apply) rejects the object",
            object_id(mo),
            if path.is_empty() {
                String::new()
            } else {
                format!(" at {}", path.join("."))
            }
        ),
        e.key.span.cover(e.value.span),
    )
    .label("duplicate key")
    .secondary(first.key.span, "first declared here")
    .help(format!("Keep one `{key}` entry."));
    about(f, model.app_of(mo), mo)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map with `len` keys where key 2 repeats key 0 and the last repeats key 1.
    fn map_with_repeats(len: usize) -> Node {
        let mut text = String::new();
        for i in 0..len {
            let key = match i {
                2 => 0,
                _ if i == len - 1 => 1,
                _ => i,
            };
            text.push_str(&format!("k{key}: v{i}\n"));
        }
        crate::yaml::parse_str(&text, crate::source::FileId(0), &Default::default())
            .docs
            .remove(0)
            .root
    }

    #[test]
    fn small_and_large_maps_find_the_same_repeated_keys() {
        for len in [5, PAIRWISE_MAP_LEN, PAIRWISE_MAP_LEN + 8] {
            let root = map_with_repeats(len);
            let entries = root.as_map().unwrap_or_default();
            assert_eq!(entries.len(), len);
            assert_eq!(repeated_keys(entries), [(2, 0), (len - 1, 1)], "{len} keys");
        }
    }
}
