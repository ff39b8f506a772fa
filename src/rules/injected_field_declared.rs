//! Git declares a field that cert-manager's cainjector or a self-patching
//! webhook writes at runtime (`caBundle`, istiod's `failurePolicy`).

use super::{FixAvailability, Kinds, RuleMeta, Scope};
use super::fixes::delete_entry;
use super::util::{about, object_id};
use crate::finding::{Finding, Fix, Severity};
use crate::gitops::{Model, ModelObject};
use crate::ownership::kb::{ca_bundle_path, declared, is_placeholder_ca, webhook_patchers};
use crate::ownership::path::{Hit, Pattern};
use crate::ownership::{covering_ignore, edit_span};
use crate::source::Span;

pub const ID: &str = "injected-field-declared";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[],
    summary: "caBundle/failurePolicy written by cainjector or self-patching webhooks is declared in Git",
    doc: include_str!("../../rules/injected-field-declared.md"),
    fix: FixAvailability::Safe,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Of(&[
        "admissionregistration.k8s.io/MutatingWebhookConfiguration",
        "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
        "apiregistration.k8s.io/APIService",
        "apiextensions.k8s.io/CustomResourceDefinition",
    ]),
};

/// Who writes the field, with the evidence in the repo.
struct Writer {
    who: String,
    evidence: Span,
    evidence_label: String,
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for mo in model.in_scope() {
        let o = &mo.object;
        let Some(pattern) = ca_bundle_path(o.group(), &o.kind) else {
            continue;
        };
        let patchers = webhook_patchers(model, mo.app);
        let operators = model.ownership().operator_writes(model, mo);
        // caBundle: an injector the object asks for by annotation writes any declared value;
        // a patch Job or a self-signing operator fills only a placeholder (a real bundle in
        // Git means the CA is managed another way).
        for hit in declared(&o.root, &pattern) {
            let placeholder = is_placeholder_ca(&hit.entry.value);
            let by_operator = |requested: bool| {
                operators.iter().find(|w| {
                    w.path == pattern && w.requested_by_annotation() == requested
                })
            };
            let writer = if let Some(w) = by_operator(true) {
                Writer {
                    who: w.operator.name.clone(),
                    evidence: w.evidence,
                    evidence_label: w.evidence_label.clone(),
                }
            } else if placeholder && let Some(p) = patchers.first() {
                Writer {
                    who: format!("the webhook patch Job {}", p.name),
                    evidence: p.span,
                    evidence_label: "patches the CA bundle at runtime (kube-webhook-certgen)"
                        .into(),
                }
            } else if placeholder && let Some(w) = by_operator(false) {
                Writer {
                    who: w.operator.name.clone(),
                    evidence: w.evidence,
                    evidence_label: w.evidence_label.clone(),
                }
            } else {
                continue; // a pinned static CA bundle: nobody else writes it
            };
            if let Some(f) = finding(model, mo, &hit, &writer, true) {
                out.push(f);
            }
        }
        // failurePolicy: operators that set their own (istiod flips its validator to Fail);
        // patch Jobs set the policy their command line names.
        let fp = Pattern::parse_dotted("webhooks[*].failurePolicy");
        for hit in fp.as_ref().map(|p| declared(&o.root, p)).unwrap_or_default() {
            let declared_value = hit.entry.value.scalar_text().unwrap_or_default();
            let by_operator = operators.iter().find(|w| {
                Some(&w.path) == fp.as_ref() && w.value().is_some_and(|v| v != declared_value)
            });
            let writer = if let Some(w) = by_operator {
                Writer {
                    who: w.operator.name.clone(),
                    evidence: w.evidence,
                    evidence_label: w.evidence_label.clone(),
                }
            } else if let Some(p) = patchers.iter().find(|p| {
                p.failure_policy
                    .as_deref()
                    .is_some_and(|v| v != declared_value)
            }) {
                Writer {
                    who: format!("the webhook patch Job {}", p.name),
                    evidence: p.span,
                    evidence_label: format!(
                        "sets failurePolicy: {}",
                        p.failure_policy.as_deref().unwrap_or("?")
                    ),
                }
            } else {
                continue;
            };
            if let Some(f) = finding(model, mo, &hit, &writer, false) {
                out.push(f);
            }
        }
    }
}

fn finding(
    model: &Model,
    mo: &ModelObject,
    hit: &Hit,
    writer: &Writer,
    ca_bundle: bool,
) -> Option<Finding> {
    let ignore = covering_ignore(model, mo, &hit.path);
    if ignore.is_some_and(|(_, respected)| respected) {
        return None;
    }
    let controller = model.app_of(mo).controller();
    let key = hit.entry.key.key_str().into_owned();
    let value = hit.entry.value.scalar_text().unwrap_or_default();
    let shown = if value.is_empty() {
        "\"\"".to_string()
    } else if value.len() > 16 {
        format!("{}…", &value.chars().take(12).collect::<String>())
    } else {
        value.clone()
    };
    let mut f = Finding::new(
        ID,
        Severity::Error,
        format!(
            "{} declares {} ({key}: {shown}), which {} writes at runtime: every {} puts Git's \
             value back{}",
            object_id(mo),
            hit.dotted(),
            writer.who,
            if controller.is_flux() {
                "reconciliation"
            } else {
                "sync"
            },
            if ca_bundle {
                " and breaks TLS to the webhook until the injector runs again"
            } else {
                ", and the app is OutOfSync once the writer flips it"
            }
        ),
        edit_span(hit.entry),
    )
    .label(format!("{key} declared here"))
    .secondary(writer.evidence, writer.evidence_label.clone())
    .field(hit.dotted())
    .help(if ca_bundle && controller.is_flux() {
        "Do not render caBundle (leave it absent; keep the injection annotation), or annotate \
         the object kustomize.toolkit.fluxcd.io/ssa: IfNotPresent so that it is created once and \
         the injected value stays."
    } else if ca_bundle {
        "Do not render caBundle (leave it absent; keep the injection annotation). Add a \
         system-level rule once: resource.customizations.ignoreDifferences.\
         admissionregistration.k8s.io_MutatingWebhookConfiguration: {jqPathExpressions: \
         ['.webhooks[]?.clientConfig.caBundle']} (same for Validating…, \
         apiregistration.k8s.io_APIService /spec/caBundle, \
         apiextensions.k8s.io_CustomResourceDefinition \
         /spec/conversion/webhook/clientConfig/caBundle) and RespectIgnoreDifferences=true on \
         apps that must still declare it."
    } else if controller.is_flux() {
        "Render the value the writer sets (Istio: failurePolicy: Fail, chart value \
         base.validationFailurePolicy) or add a drift ignore rule for `/webhooks/0/failurePolicy` \
         (Kustomization spec.ignore, HelmRelease driftDetection.ignore)."
    } else {
        "Render the value the writer sets (Istio: failurePolicy: Fail, chart value \
         base.validationFailurePolicy) or ignore `.webhooks[]?.failurePolicy` for this object \
         with RespectIgnoreDifferences=true."
    });
    if let Some((span, _)) = ignore {
        f = f.secondary(
            span,
            "ignored for status only: without RespectIgnoreDifferences=true the next sync writes Git's value back",
        );
    }
    // Deleting a placeholder caBundle is safe: the injector owns the field.
    if ca_bundle
        && is_placeholder_ca(&hit.entry.value)
        && let Some(edit) = delete_entry(&model.map, hit.entry)
    {
        f = f.with_fix(Fix {
            title: "remove the placeholder caBundle (the injector fills it)".into(),
            safe: true,
            edits: vec![edit],
        });
    }
    Some(about(f, model.app_of(mo), mo))
}
