//! A Kyverno / Gatekeeper policy or a platform webhook overwrites a field the
//! app declares (the A8 algorithm, through the ownership engine).

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use super::util::{Controller, about, object_id};
use crate::gitops::{Model, ModelObject};
use crate::ownership::selector::Tri;
use crate::ownership::{Claim, Firing, Ownership, covering_ignore, edit_span, server_side_diff};

pub const ID: &str = "mutation-policy-conflict";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "the policy may not apply to the object (its match depends on what the repository cannot know), or it mutates at admission only on CREATE or where Argo CD diffs server-side, or the app does not re-apply Git on its own",
        },
        Grade {
            severity: Severity::Info,
            when: "the policy mutates at admission and a Flux controller applies the object (its server-side dry-run passes through admission too, so nothing loops)",
        },
    ],
    summary: "a Kyverno/Gatekeeper/admission policy in the repo overwrites a field the app declares",
    doc: include_str!("../../rules/mutation-policy-conflict.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let ownership = model.ownership();
    if ownership.mutators.is_empty() {
        return;
    }
    for mo in model.in_scope() {
        for claim in ownership.claims(model, mo) {
            if claim.agrees() {
                continue;
            }
            let ignore = covering_ignore(model, mo, &claim.hit.path);
            if ignore.is_some_and(|(_, respected)| respected) {
                continue; // Argo keeps the live value on sync: no fight
            }
            out.push(finding(
                model,
                ownership,
                mo,
                &claim,
                ignore.map(|(s, _)| s),
            ));
        }
    }
}

fn severity(model: &Model, mo: &ModelObject, claim: &Claim) -> Severity {
    let controller = model.app_of(mo).controller();
    match claim.mutator.firing {
        // Background mutation rewrites the live object after every apply: a loop under
        // every controller.
        Firing::Background if claim.applies == Tri::Maybe => Severity::Warning,
        Firing::Background => Severity::Error,
        // kustomize-controller's and helm-controller's drift checks are server-side
        // dry-runs that pass through admission: both sides carry the
        // rewrite, so nothing loops; Git merely states a value that never exists.
        Firing::Admission { .. } if controller.is_flux() => Severity::Info,
        _ if claim.applies == Tri::Maybe => Severity::Warning,
        Firing::Admission { on_update } => {
            // Server-side diff sees an UPDATE mutation on both sides (hidden drift); a
            // CREATE-only mutation is undone by the next sync, which is an update.
            if !on_update || server_side_diff(model, mo) {
                Severity::Warning
            } else if model.app_of(mo).enforces() {
                Severity::Error
            } else {
                Severity::Warning
            }
        }
    }
}

fn finding(
    model: &Model,
    ownership: &Ownership,
    mo: &ModelObject,
    claim: &Claim,
    ignore_without_respect: Option<crate::source::Span>,
) -> Finding {
    let app = model.app_of(mo);
    let field = claim.hit.dotted();
    let declared = claim
        .hit
        .entry
        .value
        .scalar_text()
        .unwrap_or_else(|| "a value".into());
    let key = claim.hit.entry.key.key_str().into_owned();
    let does = claim.write.describe(&field);
    let written = match (&claim.write.effect, &claim.write.value) {
        (crate::ownership::Effect::Set, Some(v)) => format!("`{v}`"),
        (crate::ownership::Effect::Set, None) => "a value the repo cannot predict".into(),
        _ => "its own value".into(),
    };
    let owner = &claim.mutator.owner;
    let controller = app.controller();
    let may = match (claim.applies, claim.mutator.undecided_condition(mo)) {
        (Tri::Maybe, Some(c)) => {
            format!(" (may apply: {c} reads what the repo cannot know or cannot be evaluated)")
        }
        (Tri::Maybe, None) => {
            " (may apply: namespace labels or preconditions are not known from the repo)"
                .to_string()
        }
        _ => String::new(),
    };
    let flux_admission =
        controller.is_flux() && matches!(claim.mutator.firing, Firing::Admission { .. });
    let consequence = if flux_admission {
        format!(
            ": {}'s drift check is a server-side dry-run through admission, so this is no loop, but Git states a value that never exists in the cluster",
            controller.name()
        )
    } else {
        String::new()
    };
    let mut f = Finding::new(
        ID,
        severity(model, mo, claim),
        format!(
            "{owner} {does} on {}, which declares `{declared}`{may}{consequence}",
            object_id(mo)
        ),
        edit_span(claim.hit.entry),
    )
    .label(format!("{key}: {declared} declared here"))
    .secondary(claim.mutator.span, format!("{owner} writes {written}"))
    .field(field.clone())
    .help(match controller {
        Controller::Argocd => format!(
            "Pick one owner of {field}: (a) the policy is authoritative → remove `{key}` from Git; \
             (b) Git is authoritative → make the policy add-if-absent (Kyverno `+({key})`, \
             Gatekeeper `pathTests: [{{subPath: …, condition: MustNotExist}}]`) or exclude this \
             namespace/object; (c) admission-time only → add \
             `argocd.argoproj.io/compare-options: ServerSideDiff=true` to the Application; \
             (d) last resort → a narrow ignoreDifferences entry with RespectIgnoreDifferences=true \
             and a reason."
        ),
        _ if flux_admission => format!(
            "Declare the value the policy writes, or remove `{key}` from Git, so that Git reads \
             as the cluster is."
        ),
        _ => format!(
            "Pick one owner of {field}: (a) the policy is authoritative → remove `{key}` from Git; \
             (b) Git is authoritative → make the policy add-if-absent (Kyverno `+({key})`) or \
             exclude this namespace/object; (c) last resort → a narrow drift-detection ignore \
             rule (Flux `spec.ignore` / HelmRelease `driftDetection.ignore`) with a reason."
        ),
    });
    if let Some((span, text)) = namespace_evidence(ownership, mo, claim) {
        f = f.secondary(span, text);
    }
    if let Some(related) = &claim.hit.entry.value.related {
        for r in related.iter() {
            f = f.secondary(r.span, r.label.clone());
        }
    }
    if let Some(span) = ignore_without_respect {
        f = f.secondary(
            span,
            "ignored for status only: without RespectIgnoreDifferences=true every sync re-applies Git's value",
        );
    }
    about(f, app, mo)
}

/// The namespace label that makes a namespace selector match (else the labels block).
fn namespace_evidence(
    ownership: &Ownership,
    mo: &ModelObject,
    claim: &Claim,
) -> Option<(crate::source::Span, String)> {
    let selectors = claim
        .mutator
        .match_any
        .iter()
        .chain(&claim.mutator.match_all)
        .filter_map(|s| s.namespace_selector.as_ref());
    for sel in selectors {
        let keys = sel
            .get("matchLabels")
            .and_then(crate::yaml::Node::as_map)
            .unwrap_or_default()
            .iter()
            .map(|e| e.key.key_str().into_owned())
            .chain(
                sel.get("matchExpressions")
                    .and_then(crate::yaml::Node::as_seq)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|e| e.get("key").and_then(crate::yaml::Node::scalar_text)),
            );
        for key in keys {
            if let Some(span) = ownership.namespaces.label_span(&mo.namespace, &key) {
                return Some((
                    span,
                    format!(
                        "namespace {} carries the label the policy selects",
                        mo.namespace
                    ),
                ));
            }
        }
    }
    let span = ownership.namespaces.span(&mo.namespace)?;
    Some((span, format!("labels of namespace {}", mo.namespace)))
}
