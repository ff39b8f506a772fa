//! A custom resource declares a field its CRD's structural schema (found in
//! the repo) does not know. The API server prunes it: Argo's client-side sync succeeds and
//! the app stays OutOfSync forever; kubectl, server-side apply, Flux and Helm fail.

use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use super::util::{Controller, about, object_id};
use crate::ownership::crd::{crd_schemas, unknown_fields};

pub const ID: &str = "schema-pruned-field";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[],
    summary: "field unknown to the schema: apply fails or Argo's client-side sync drops it (permanent OutOfSync)",
    doc: include_str!("../../rules/schema-pruned-field.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// Keys inside ignore entries are `ignore-differences-invalid`'s (reported once there).
pub(crate) fn owned_by_other_rule(group: &str, kind: &str, path: &[String]) -> bool {
    let under = |prefix: &[&str]| {
        path.len() > prefix.len() + 1 && path.iter().zip(prefix).all(|(a, b)| a == b)
    };
    match (group, kind) {
        ("argoproj.io", "Application") => under(&["spec", "ignoreDifferences"]),
        ("argoproj.io", "ApplicationSet") => {
            under(&["spec", "ignoreApplicationDifferences"])
                || under(&["spec", "template", "spec", "ignoreDifferences"])
        }
        ("kustomize.toolkit.fluxcd.io", "Kustomization") => under(&["spec", "ignore"]),
        ("helm.toolkit.fluxcd.io", "HelmRelease") => under(&["spec", "driftDetection", "ignore"]),
        _ => false,
    }
}

/// What the controller that applies the object does with a field the schema does not have.
fn consequence(controller: Controller) -> &'static str {
    match controller {
        Controller::Argocd => {
            "the API server prunes it, so Argo CD's sync succeeds and the app stays OutOfSync (Argo's normalization of the whole object is off too)"
        }
        Controller::FluxKustomize => {
            "kustomize-controller's server-side apply rejects it (field not declared in schema), so the Kustomization fails to apply"
        }
        Controller::FluxHelm => {
            "Helm's schema validation rejects it, so helm-controller's install or upgrade fails"
        }
        Controller::None => {
            "the API server prunes it on a client-side apply, and server-side apply, Flux and Helm reject the object"
        }
    }
}

/// A SOPS `sops:` block left on an object whose app does not decrypt it (those that do
/// lose it before the rules run, see `sops.rs`).
fn sops_message(controller: Controller) -> &'static str {
    match controller {
        Controller::FluxKustomize => {
            "is SOPS-encrypted, but the Flux Kustomization applying it configures no `spec.decryption`: kustomize-controller refuses it (\"is SOPS encrypted, configuring decryption is required\")"
        }
        _ => {
            "is SOPS-encrypted and nothing decrypts it before it is applied: the ciphertext and the `sops:` block reach the API server"
        }
    }
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    builtin(model, out);
    let schemas = crd_schemas(model);
    if schemas.is_empty() {
        return;
    }
    for mo in model.in_scope() {
        let o = &mo.object;
        let version = o.api_version.rsplit('/').next().unwrap_or("");
        let Some(crd) = schemas
            .iter()
            .find(|s| s.group == o.group() && s.kind == o.kind && s.version == version)
        else {
            continue;
        };
        let skip = |p: &[String]| owned_by_other_rule(o.group(), &o.kind, p);
        for unknown in unknown_fields(&o.root, crd.schema, &skip) {
            let key = unknown.key.key.key_str().into_owned();
            let field = unknown.path.join(".");
            let f = Finding::new(
                ID,
                Severity::Error,
                format!(
                    "{} declares {field}, which is not part of {}/{} {} (CRD {}): {}",
                    object_id(mo),
                    crd.group,
                    crd.version,
                    crd.kind,
                    crd.crd_name,
                    consequence(model.app_of(mo).controller())
                ),
                unknown.key.key.span,
            )
            .label(format!("`{key}` is not in the schema"))
            .secondary(crd.span, format!("schema of {} {}", crd.kind, crd.version))
            .field(field)
            .help(
                "Fix the field name or its indentation, or upgrade the CRD if the field is newer \
                 than the schema in this repo.",
            );
            out.push(about(f, model.app_of(mo), mo));
        }
    }
}

/// Built-in kinds against the Kubernetes schema bundled with the tool.
fn builtin(model: &Scope, out: &mut Vec<Finding>) {
    use crate::ownership::k8s_schema::{KUBERNETES_VERSION, knows, unknown_fields};
    for mo in model.in_scope() {
        let o = &mo.object;
        if !knows(o) {
            continue;
        }
        for unknown in unknown_fields(o) {
            let key = unknown.key.key.key_str().into_owned();
            let field = unknown.path.join(".");
            let controller = model.app_of(mo).controller();
            let message = if field == "sops" {
                format!("{} {}", object_id(mo), sops_message(controller))
            } else {
                format!(
                    "{} declares {field}, which is not a field of {} {} (Kubernetes \
                     {KUBERNETES_VERSION}): {}",
                    object_id(mo),
                    o.api_version,
                    o.kind,
                    consequence(controller)
                )
            };
            let f = Finding::new(ID, Severity::Error, message, unknown.key.key.span)
                .label(format!("`{key}` is not a {} field here", o.kind))
                .field(field)
                .help(
                    "Fix the field name or its indentation. If the field is newer than Kubernetes \
                 v1.33, turn this rule down for the object with a reason until the tool's \
                 schema catches up.",
                );
            out.push(about(f, model.app_of(mo), mo));
        }
    }
}
