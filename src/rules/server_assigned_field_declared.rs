//! Fields the API server or a controller allocates, declared in Git.

use super::{FixAvailability, Kinds, RuleMeta, Scope};
use super::util::{about, entry_at, entry_span, object_id};
use crate::finding::{Edit, Finding, Fix, Severity};
use crate::gitops::{Model, ModelObject};
use crate::yaml::{Entry, Node};

pub const ID: &str = "server-assigned-field-declared";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[],
    summary: "server-allocated fields (clusterIP, volumeName, nodeName, Job selectors...) declared",
    doc: include_str!("../../rules/server-assigned-field-declared.md"),
    fix: FixAvailability::Safe,
    removal: true,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Of(&[
        "Service",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "Pod",
        "ServiceAccount",
        "batch/Job",
    ]),
};

const JOB_LABELS: &[&str] = &[
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
    "job-name",
    "batch.kubernetes.io/job-name",
];

/// Why a declared `volumeName` drifts: empty (the binder writes it) or a provisioned
/// volume's `pvc-<uid>` name (copied from a live claim). A chosen name is static binding.
fn volume_name_problem(value: &str) -> Option<&'static str> {
    let value = value.trim();
    if value.is_empty() {
        return Some("is empty, and the binder writes the bound volume's name into it");
    }
    let uid = value.strip_prefix("pvc-")?;
    let is_uid = uid.len() == 36
        && uid.chars().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        });
    is_uid.then_some(
        "names a dynamically provisioned volume (`pvc-<claim uid>`), copied from a live claim: a new claim never binds to it",
    )
}

fn report(
    out: &mut Vec<Finding>,
    model: &Model,
    mo: &ModelObject,
    entry: &Entry,
    field: &str,
    why: &str,
    fix: bool,
) {
    let span = entry_span(entry);
    let mut f = Finding::new(
        ID,
        Severity::Error,
        format!("{} declares `{field}`, which {why}", object_id(mo)),
        span,
    )
    .label(format!("{field} is assigned by the cluster"))
    .field(field)
    .help(format!("Do not render `{field}`; the cluster assigns it. (Only render clusterIP when it is `None` for a headless Service or a deliberately pinned IP.)"));
    if fix && span.file == entry.value.span.file {
        f = f.with_fix(Fix {
            title: format!("remove `{field}`"),
            safe: true,
            edits: vec![Edit {
                span,
                replacement: String::new(),
            }],
        });
    }
    out.push(about(f, model.app_of(mo), mo));
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for mo in model.in_scope() {
        let o = &mo.object;
        let root = &o.root;
        match (o.group(), o.kind.as_str()) {
            ("", "Service") => {
                if let Some(e) = entry_at(root, &["spec", "clusterIP"]) {
                    match e.value.scalar_text().as_deref() {
                        Some("None") | None => {}
                        Some("") => report(
                            out,
                            model,
                            mo,
                            e,
                            "spec.clusterIP",
                            "is allocated by the API server and immutable: `\"\"` makes every sync try to clear it (\"field is immutable\")",
                            true,
                        ),
                        Some(_) => report(
                            out,
                            model,
                            mo,
                            e,
                            "spec.clusterIP",
                            "pins an allocated, immutable address (fine only for a deliberately pinned IP such as cluster DNS)",
                            false,
                        ),
                    }
                }
                for f in ["clusterIPs", "healthCheckNodePort"] {
                    if let Some(e) = entry_at(root, &["spec", f]) {
                        report(
                            out,
                            model,
                            mo,
                            e,
                            &format!("spec.{f}"),
                            "is allocated by the API server",
                            f == "clusterIPs",
                        );
                    }
                }
            }
            ("", "PersistentVolumeClaim") => {
                // A claim that names its volume (static binding to a PersistentVolume a
                // person created) keeps that name; the binder fills `volumeName` only when
                // it is empty. What it fills in is `pvc-<claim uid>`, the name a dynamically
                // provisioned volume gets: committed, it binds nowhere else.
                if let Some(e) = entry_at(root, &["spec", "volumeName"])
                    && let Some(why) = e.value.scalar_text().and_then(|v| volume_name_problem(&v))
                {
                    report(out, model, mo, e, "spec.volumeName", why, false);
                }
            }
            ("", "PersistentVolume") => {
                for f in ["uid", "resourceVersion"] {
                    if let Some(e) = entry_at(root, &["spec", "claimRef", f]) {
                        report(
                            out,
                            model,
                            mo,
                            e,
                            &format!("spec.claimRef.{f}"),
                            "belongs to a live claim binding",
                            true,
                        );
                    }
                }
            }
            ("", "Pod") => {
                if let Some(e) = entry_at(root, &["spec", "nodeName"]) {
                    report(
                        out,
                        model,
                        mo,
                        e,
                        "spec.nodeName",
                        "is set by the scheduler",
                        false,
                    );
                }
            }
            ("", "ServiceAccount") => {
                if let Some(e) = root.entry("secrets") {
                    report(
                        out,
                        model,
                        mo,
                        e,
                        "secrets",
                        "is written by the legacy token controller",
                        true,
                    );
                }
            }
            ("batch", "Job") => {
                let manual = root
                    .get_path(&["spec", "manualSelector"])
                    .and_then(Node::as_bool)
                    == Some(true);
                if !manual && let Some(e) = entry_at(root, &["spec", "selector"]) {
                    report(
                        out,
                        model,
                        mo,
                        e,
                        "spec.selector",
                        "is generated by the Job controller (applying it fails without manualSelector)",
                        true,
                    );
                }
                if let Some(labels) = root.get_path(&["spec", "template", "metadata", "labels"]) {
                    for l in JOB_LABELS {
                        if let Some(e) = labels.entry(l) {
                            report(
                                out,
                                model,
                                mo,
                                e,
                                &format!("spec.template.metadata.labels.{l}"),
                                "is generated for each Job run",
                                true,
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }
}
