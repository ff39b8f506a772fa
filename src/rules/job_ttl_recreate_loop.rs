//! A non-hook Job with `ttlSecondsAfterFinished` in an Argo app: the TTL
//! controller deletes it, Argo sees it Missing and re-creates it, and it runs again.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::fixes::delete_entry;
use super::util::{about, entry_at, object_id};
use crate::finding::{Finding, Fix, Severity};

pub const ID: &str = "job-ttl-recreate-loop";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "the Argo CD Application does not sync automatically (the Job runs again at the next manual sync)",
        },
    ],
    summary: "non-hook Job with ttlSecondsAfterFinished is deleted, re-created and re-run",
    doc: include_str!("../../rules/job-ttl-recreate-loop.md"),
    fix: FixAvailability::Safe,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Of(&["batch/Job"]),
};

/// Hooks are not part of sync status, so their deletion never triggers a re-sync. Any
/// `argocd.argoproj.io/hook` value counts (invalid ones are `argocd-option-invalid`'s), and Helm
/// hooks are mapped to Argo hooks.
pub fn is_hook(obj: &crate::object::Object) -> bool {
    obj.annotation("argocd.argoproj.io/hook").is_some() || obj.annotation("helm.sh/hook").is_some()
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for mo in model.in_scope() {
        let o = &mo.object;
        if is_hook(o) {
            continue;
        }
        let app = model.app_of(mo);
        // Argo apps, and Flux Kustomizations (they re-apply missing objects every interval).
        let flux_reapplies = app
            .flux
            .as_ref()
            .is_some_and(|f| f.kind == crate::gitops::model::flux::FluxKind::Kustomization);
        if app.argo.is_none() && !flux_reapplies {
            continue;
        }
        // Kinds in argocd-cm `resource.exclusions` are neither synced nor compared.
        if let Some(argo) = &app.argo
            && model
                .argo_settings(app)
                .excludes(
                    o.group(),
                    &o.kind,
                    argo.destination_cluster.as_deref(),
                    model.argo_version(app),
                )
        {
            continue;
        }
        let Some(entry) = entry_at(&o.root, &["spec", "ttlSecondsAfterFinished"]) else {
            continue;
        };
        let (severity, what) = if app.enforces() {
            (
                Severity::Error,
                "the GitOps controller re-creates it after the TTL controller deletes it, and it runs again",
            )
        } else {
            (
                Severity::Warning,
                "after the TTL controller deletes it the app stays OutOfSync (Missing) and every sync runs it again",
            )
        };
        let mut f = Finding::new(
            ID,
            severity,
            format!(
                "{} is a plain resource with ttlSecondsAfterFinished: {what}",
                object_id(mo)
            ),
            entry.key.span.cover(entry.value.span),
        )
        .label("deleted this long after it finishes")
        .field("spec.ttlSecondsAfterFinished")
        .help(
            "Make the Job a hook (`argocd.argoproj.io/hook: PreSync` or `Sync` with a \
             `hook-delete-policy`): hooks are not part of sync status. Or drop \
             ttlSecondsAfterFinished, let prune remove old Jobs, and version the Job name.",
        );
        if let Some(edit) = delete_entry(&model.map, entry) {
            f = f.with_fix(Fix {
                title: "remove ttlSecondsAfterFinished (the Job stays until pruned)".into(),
                safe: true,
                edits: vec![edit],
            });
        }
        out.push(about(f, app, mo));
    }
}
