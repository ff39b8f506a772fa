//! `kubectl get -o yaml` leftovers committed to Git.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Edit, Finding, Fix, Severity};
use super::util::{Controller, about, entry_span, object_id};
use crate::gitops::{Model, ModelObject};
use crate::yaml::{Entry, Node};

pub const ID: &str = "committed-live-state";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Error,
            when: "the field is `metadata.resourceVersion` (the apply conflicts once the live object changes) or `metadata.ownerReferences` (garbage collection can delete the object)",
        },
        Grade {
            severity: Severity::Info,
            when: "the field is `metadata.creationTimestamp` or the pod template's `kubectl.kubernetes.io/restartedAt` annotation, or a `status` no Argo CD compares (Argo CD 3.0 or later, a CRD, argocd-cm setting `ignoreResourceStatusField`, or an app Argo CD does not run)",
        },
    ],
    summary: "live-object fields (uid, resourceVersion, managedFields, status...) committed",
    doc: include_str!("../../rules/committed-live-state.md"),
    fix: FixAvailability::Safe,
    removal: true,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

const HELP: &str = "These are live-object fields from `kubectl get -o yaml`; remove them from Git.";

/// Metadata fields, their severity and why.
const METADATA: &[(&str, Severity, &str)] = &[
    ("uid", Severity::Warning, "identifies one live object"),
    (
        "resourceVersion",
        Severity::Error,
        "is an optimistic-concurrency precondition: the apply conflicts once the live object has changed",
    ),
    (
        "generation",
        Severity::Warning,
        "is maintained by the API server",
    ),
    (
        "selfLink",
        Severity::Warning,
        "is maintained by the API server",
    ),
    (
        "managedFields",
        Severity::Warning,
        "is maintained by the API server (a Flux server-side apply fails on it)",
    ),
    (
        "deletionTimestamp",
        Severity::Warning,
        "is set by the API server",
    ),
    (
        "deletionGracePeriodSeconds",
        Severity::Warning,
        "is set by the API server",
    ),
    (
        "ownerReferences",
        Severity::Error,
        "references a live UID: garbage collection can delete the object",
    ),
    (
        "creationTimestamp",
        Severity::Info,
        "is set by the API server (Argo CD strips it before diffing)",
    ),
];

const ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
    "control-plane.alpha.kubernetes.io/leader",
    "volume.kubernetes.io/storage-provisioner",
    "volume.beta.kubernetes.io/storage-provisioner",
    "endpoints.kubernetes.io/last-change-trigger-time",
];
const ANNOTATION_PREFIXES: &[&str] = &["pv.kubernetes.io/", "autoscaling.alpha.kubernetes.io/"];

#[allow(clippy::too_many_arguments)] // one call shape for every field kind
fn emit(
    out: &mut Vec<Finding>,
    model: &Model,
    mo: &ModelObject,
    entry: &Entry,
    field: &str,
    sev: Severity,
    why: &str,
    safe: bool,
) {
    let span = entry_span(entry);
    let mut f = Finding::new(
        ID,
        sev,
        format!("{} commits `{field}`, which {why}", object_id(mo)),
        span,
    )
    .label("live state, not desired state")
    .field(field)
    .help(HELP);
    if span.file == entry.value.span.file {
        f = f.with_fix(Fix {
            title: format!("remove `{field}`"),
            safe,
            edits: vec![Edit {
                span,
                replacement: String::new(),
            }],
        });
    }
    out.push(about(f, model.app_of(mo), mo));
}

/// Does the repo's argocd-cm set `ignoreResourceStatusField` itself (then the release's
/// default does not apply)?
fn status_field_configured(model: &Model) -> bool {
    model
        .argo
        .decl
        .as_ref()
        .and_then(|cm| cm.root.get_path(&["data", "resource.compareoptions"]))
        .and_then(Node::as_str)
        .is_some_and(|text| text.contains("ignoreResourceStatusField"))
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for mo in model.in_scope() {
        let Some(meta) = mo.object.metadata() else {
            continue;
        };
        for (field, sev, why) in METADATA {
            if let Some(e) = meta.entry(field) {
                if *field == "creationTimestamp" && e.value.is_null() {
                    continue; // `creationTimestamp: null` is what client tools emit; harmless
                }
                emit(
                    out,
                    model,
                    mo,
                    e,
                    &format!("metadata.{field}"),
                    *sev,
                    why,
                    *field != "ownerReferences",
                );
            }
        }
        if let Some(ann) = meta.get("annotations").and_then(Node::as_map) {
            for e in ann {
                let k = e.key.key_str();
                if ANNOTATIONS.contains(&k.as_ref())
                    || ANNOTATION_PREFIXES.iter().any(|p| k.starts_with(p))
                {
                    emit(
                        out,
                        model,
                        mo,
                        e,
                        &format!("metadata.annotations.{k}"),
                        Severity::Warning,
                        "is written by kubectl or a controller on the live object",
                        true,
                    );
                }
            }
        }
        if let Some(e) = mo.object.root.entry("status")
            && !e.value.is_empty_value()
        {
            // Argo CD ≥ 3.0 ignores status by default (ignoreResourceStatusField: all); before 3.0
            // the default `crd` compares it on everything but CRDs
            // (https://argo-cd.readthedocs.io/en/stable/operator-manual/argocd-cm-yaml/).
            let app = model.app_of(mo);
            let compared_by = Some(model.argo_version(app))
                .filter(|v| v.before(3, 0) && app.argo.is_some())
                .filter(|_| mo.object.kind != "CustomResourceDefinition")
                .filter(|_| !status_field_configured(model));
            match compared_by {
                Some(v) => emit(
                    out,
                    model,
                    mo,
                    e,
                    "status",
                    Severity::Warning,
                    &format!(
                        "is written by controllers; {} compares it \
                         (ignoreResourceStatusField defaults to crd before 3.0), so the app stays OutOfSync",
                        v.describe(&model.map)
                    ),
                    true,
                ),
                None => emit(
                    out,
                    model,
                    mo,
                    e,
                    "status",
                    Severity::Info,
                    match model.app_of(mo).controller() {
                        Controller::Argocd | Controller::None => {
                            "is written by controllers (Argo CD ≥ 3.0 ignores it by default; older versions and ignoreResourceStatusField: crd|none compare it)"
                        }
                        // Server-side apply sends it, the status subresource drops it.
                        Controller::FluxKustomize | Controller::FluxHelm => {
                            "is written by controllers; the API server ignores it on apply where the kind has a status subresource, so Git shows a state the cluster does not have"
                        }
                    },
                    true,
                ),
            }
        }
        if let Some(e) = mo
            .object
            .root
            .get_path(&["spec", "template", "metadata", "annotations"])
            .and_then(|a| a.entry("kubectl.kubernetes.io/restartedAt"))
        {
            emit(
                out,
                model,
                mo,
                e,
                "spec.template.metadata.annotations.kubectl.kubernetes.io/restartedAt",
                Severity::Info,
                "is written by `kubectl rollout restart`",
                true,
            );
        }
    }
}
