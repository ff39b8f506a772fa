//! Catalog §20: fields the API server or a controller allocates, declared in Git.

use super::{FixAvailability, RuleMeta};
use super::util::{about, entry_at, entry_span, object_id};
use crate::finding::{Edit, Finding, Fix, Severity};
use crate::gitops::{Model, ModelObject};
use crate::yaml::{Entry, Node};

pub const ID: &str = "server-assigned-field-declared";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    summary: "server-allocated fields (clusterIP, volumeName, nodeName, Job selectors...) declared",
    doc: include_str!("../../rules/server-assigned-field-declared.md"),
    fix: FixAvailability::Safe,
    removal: true,
    since: "0.1.0",
};

const JOB_LABELS: &[&str] = &[
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
    "job-name",
    "batch.kubernetes.io/job-name",
];

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

pub fn check(model: &Model, out: &mut Vec<Finding>) {
    for mo in &model.objects {
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
                if let Some(e) = entry_at(root, &["spec", "volumeName"]) {
                    report(
                        out,
                        model,
                        mo,
                        e,
                        "spec.volumeName",
                        "is set when the claim binds (static binding is fine with a reason)",
                        false,
                    );
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
