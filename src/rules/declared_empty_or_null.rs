//! `null` and empty values that the API server drops or controllers fill, so
//! the live object never matches Git.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::fixes::delete_entry;
use super::util::{about, object_id};
use crate::finding::{Finding, Fix, Severity};
use crate::gitops::{Controller, Model, ModelObject};
use crate::ownership::kb::in_argo_scheme;
use crate::ownership::writers::{FieldWriter, field_writers};
use crate::ownership::{Ownership, edit_span};
use crate::yaml::{Entry, Node, Value};
use std::borrow::Cow;

pub const ID: &str = "declared-empty-or-null";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Info,
            when: "no other writer claims the field, and it is a null on a built-in kind without unknown fields, or an empty value outside a pod template's metadata (empty labels or annotations: only on such a built-in kind); or a Flux controller applies the object (it compares a server-side dry run with the live object, where the dropped value is gone too)",
        },
    ],
    summary: "null/empty values the server drops or controllers fill",
    doc: include_str!("../../rules/declared-empty-or-null.md"),
    fix: FixAvailability::Safe,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// Keys whose empty value is reported.
const EMPTY_KEYS: &[&str] = &[
    "labels",
    "annotations",
    "tolerations",
    "nodeSelector",
    "affinity",
    "imagePullSecrets",
    "env",
    "envFrom",
    "volumes",
    "volumeMounts",
    "args",
    "command",
    "resources",
    "loadBalancerSourceRanges",
    "externalIPs",
    "finalizers",
    "data",
    "stringData",
];

/// Empties that mean something (`emptyDir: {}`, "select everything", no provisioning).
const MEANINGFUL_EMPTY: &[&str] = &[
    "emptyDir",
    "podSelector",
    "namespaceSelector",
    "objectSelector",
    "storageClassName",
];

/// Reported by other rules: `clusterIP` (`server-assigned-field-declared`), `caBundle`
/// (`injected-field-declared`); `creationTimestamp: null` is stripped by Argo before diffing.
const OTHER_RULES: &[&str] = &["clusterIP", "caBundle", "creationTimestamp"];

fn is_empty(node: &Node) -> bool {
    match &node.value {
        Value::Map(m) => m.is_empty(),
        Value::Seq(s) => s.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// Keys whose values are opaque data (chart values, policy patches and patterns, schemas),
/// not fields of the object: nothing under them is walked.
pub fn opaque_key(key: &str) -> bool {
    matches!(
        key,
        "values"
            | "valuesObject"
            | "valuesInline"
            | "openAPIV3Schema"
            | "mutate"
            | "validate"
            | "generate"
            | "patches"
            | "patchesStrategicMerge"
    )
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let ownership = model.ownership();
    for mo in model.in_scope() {
        let mut walk = Walk {
            model,
            ownership,
            mo,
            context: None,
            path: Vec::new(),
            out: &mut *out,
        };
        walk.node(&mo.object.root);
    }
}

/// What judging an entry of one object needs beyond the entry.
struct ObjectContext {
    /// Argo normalizes built-in kinds, unless an unknown field makes it fall back to the raw
    /// object (gitops-engine's diff:
    /// https://github.com/argoproj/gitops-engine/blob/master/pkg/diff/diff.go).
    builtin: bool,
    /// Fields someone else writes: an empty or null there is filled in after apply.
    writers: Vec<FieldWriter>,
}

/// One object's walk: one path buffer for every entry, and the object's context worked out
/// only when an entry is null or empty (most objects have none).
struct Walk<'m, 'o> {
    model: &'m Model,
    ownership: &'m Ownership,
    mo: &'m ModelObject,
    context: Option<ObjectContext>,
    /// Keys borrowed from the tree: an entry's key is copied only when it is judged.
    path: Vec<Cow<'m, str>>,
    out: &'o mut Vec<Finding>,
}

impl<'m> Walk<'m, '_> {
    fn node(&mut self, node: &'m Node) {
        if self.path.len() > 64 {
            return;
        }
        match &node.value {
            Value::Map(entries) => {
                for e in entries {
                    let key = e.key.key_str();
                    // Opaque data is judged as a value, never walked into.
                    let walk_into = !opaque_key(&key);
                    let judged = candidate(e, &key);
                    self.path.push(key);
                    if judged {
                        self.judge_entry(e);
                    }
                    if walk_into {
                        self.node(&e.value);
                    }
                    self.path.pop();
                }
            }
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Cow::Owned(i.to_string()));
                    self.node(item);
                    self.path.pop();
                }
            }
            _ => {}
        }
    }

    fn judge_entry(&mut self, e: &Entry) {
        let (model, mo) = (self.model, self.mo);
        let ownership = self.ownership;
        let context = self.context.get_or_insert_with(|| ObjectContext {
            builtin: in_argo_scheme(mo.object.group())
                && !crate::ownership::k8s_schema::has_unknown_fields(&mo.object),
            writers: field_writers(model, ownership, mo),
        });
        let path: Vec<String> = self.path.iter().map(|k| k.to_string()).collect();
        if let Some(f) = judge(model, mo, e, &path, context.builtin, &context.writers) {
            self.out.push(f);
        }
    }
}

/// Could `judge` report this entry? (A null, or an empty value of a key that is reported.)
fn candidate(e: &Entry, key: &str) -> bool {
    e.value.is_null() || (is_empty(&e.value) && EMPTY_KEYS.contains(&key))
}

fn judge(
    model: &Model,
    mo: &ModelObject,
    e: &Entry,
    path: &[String],
    builtin: bool,
    writers: &[FieldWriter],
) -> Option<Finding> {
    let key = path.last()?.as_str();
    if OTHER_RULES.contains(&key) || MEANINGFUL_EMPTY.contains(&key) {
        return None;
    }
    let pod_template_meta = path.len() >= 2
        && path[path.len() - 2] == "metadata"
        && path.iter().any(|k| k == "template");
    let claimed_here = writers.iter().any(|w| w.touches(path));
    // A null produced by a failed Flux substitution is flux-substitution-undefined's.
    if e.value.is_null() && model.map.text(e.value.span).contains("${") {
        return None;
    }
    let (severity, what) = if e.value.is_null() {
        // Argo's typed normalization drops nulls on built-in kinds.
        let sev = if builtin && !claimed_here {
            Severity::Info
        } else {
            Severity::Warning
        };
        (sev, "null")
    } else if is_empty(&e.value) && EMPTY_KEYS.contains(&key) {
        // The server keeps `{}` of a struct-typed field (`resources`, `affinity`) and a custom
        // resource's `resources` as written: a diff only where a writer fills it.
        let kept = e.value.as_map().is_some()
            && (crate::ownership::k8s_schema::keeps_empty_object(&mo.object, path)
                || (key == "resources" && !crate::ownership::k8s_schema::knows(&mo.object)));
        if kept && !claimed_here {
            return None;
        }
        if claimed_here
            || pod_template_meta
            || (!builtin && matches!(key, "labels" | "annotations"))
        {
            (Severity::Warning, "empty")
        } else {
            (Severity::Info, "empty")
        }
    } else {
        return None;
    };
    // kustomize-controller (and helm-controller's drift detection) compares a server-side
    // dry-run apply with the live object (fluxcd/pkg ssa `Diff`): what the API server drops,
    // or a webhook or another field manager fills, is the same on both sides, so no drift.
    let app = model.app_of(mo);
    let dry_run_diff = match app.controller() {
        Controller::FluxKustomize => Some("kustomize-controller compares"),
        Controller::FluxHelm => Some("helm-controller's drift detection compares"),
        Controller::Argocd | Controller::None => None,
    };
    let (severity, message) = match dry_run_diff {
        Some(compares) => (
            Severity::Info,
            format!(
                "{} declares `{key}` as {what}: the API server drops it or a controller fills it, \
                 so Git does not show what the cluster holds ({compares} a server-side dry run \
                 with the live object, so it is no drift there)",
                object_id(mo)
            ),
        ),
        None => (
            severity,
            format!(
                "{} declares `{key}` as {what}: the API server drops it or a controller fills it, \
                 so the live object never matches Git",
                object_id(mo)
            ),
        ),
    };
    let mut f = Finding::new(ID, severity, message, edit_span(e))
        .label(format!("{what} `{key}`"))
        .field(path.join("."))
        .help(
            "Omit the key instead of rendering it empty (Helm: `{{- with .Values.x }}…{{- end }}`).",
        );
    if let Some(edit) = delete_entry(&model.map, e) {
        f = f.with_fix(Fix {
            title: format!("remove the {what} `{key}`"),
            safe: true,
            edits: vec![edit],
        });
    }
    Some(about(f, app, mo))
}
