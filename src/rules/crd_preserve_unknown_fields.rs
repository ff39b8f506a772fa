//! CRDs that write `spec.preserveUnknownFields: false`: in `apiextensions.k8s.io/v1` it is
//! the default and the only allowed value, so the API server drops it and the live CRD never
//! has it. Argo CD before 3.0 ignored the field by default; 3.0 removed that default, so the
//! CRD is OutOfSync for good under a text diff.

use super::fixes::delete_entry;
use super::util::{about, object_id};
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Fix, Severity};
use crate::ownership::{covering_ignore, edit_span, server_side_diff};
use crate::yaml::Value;

pub const ID: &str = "crd-preserve-unknown-fields";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[],
    summary: "a v1 CRD declares preserveUnknownFields: false, which the server drops (OutOfSync on Argo CD 3.0+)",
    doc: include_str!("../../rules/crd-preserve-unknown-fields.md"),
    fix: FixAvailability::Safe,
    removal: false,
    security: false,
    since: "0.2.0",
    kinds: Kinds::Of(&["apiextensions.k8s.io/CustomResourceDefinition"]),
};

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let path = ["spec".to_string(), "preserveUnknownFields".to_string()];
    for mo in model.in_scope() {
        let o = &mo.object;
        if o.api_version != "apiextensions.k8s.io/v1" {
            continue; // v1beta1 stores `false` (there it is not the default)
        }
        let Some(entry) = o.root.get("spec").and_then(|s| s.entry("preserveUnknownFields")) else {
            continue;
        };
        if entry.value.value != Value::Bool(false) {
            continue; // `true` is rejected by the API server: the apply fails loudly
        }
        let app = model.app_of(mo);
        // Argo CD 2.x ignored the field by default (https://argo-cd.readthedocs.io/en/stable/operator-manual/upgrading/2.14-3.0/).
        let version = model.argo_version(app);
        if version.before(3, 0) {
            continue;
        }
        // Only Argo CD compares text: Flux's dry-run and a server-side diff see the stored
        // form on both sides.
        if app.argo.is_none()
            || server_side_diff(model, mo)
            || covering_ignore(model, mo, &path).is_some()
        {
            continue;
        }
        let version = version.named_or("3.0 and later");
        let mut f = Finding::new(
            ID,
            Severity::Warning,
            format!(
                "{} declares `spec.preserveUnknownFields: false`: in apiextensions.k8s.io/v1 that is the default, which the API server does not store, and Argo CD {version} no longer ignores the field, so the CRD stays OutOfSync",
                object_id(mo)
            ),
            edit_span(entry),
        )
        .label("dropped by the API server")
        .field("spec.preserveUnknownFields")
        .help("Remove the line (false is the only value a v1 CRD allows), or add an ignoreDifferences entry for this CRD with jsonPointers: [/spec/preserveUnknownFields].");
        if let Some(edit) = delete_entry(&model.map, entry) {
            f = f.with_fix(Fix {
                title: "remove `preserveUnknownFields: false`".into(),
                safe: true,
                edits: vec![edit],
            });
        }
        out.push(about(f, app, mo));
    }
}
