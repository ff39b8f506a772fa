//! An ignored path is still declared in Git and synced as-is, because the app
//! lacks `RespectIgnoreDifferences=true`.

use super::util::ForApp;
use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Fix, Severity};
use crate::gitops::ignore::{declares_where, jq_select_filters};

pub const ID: &str = "respect-ignore-differences-missing";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Error,
            when: "a controller rewrites the ignored path after every apply (`spec.replicas` of a Deployment, StatefulSet, ReplicaSet or Rollout; a webhook's `caBundle` or `failurePolicy`; an APIService's or CRD's `caBundle`; a ClusterRole's `rules`), so every sync resets it",
        },
    ],
    summary: "ignored path is still declared in Git and re-applied on every sync",
    doc: include_str!("../../rules/respect-ignore-differences-missing.md"),
    fix: FixAvailability::Safe,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

/// Paths a controller rewrites after apply (`ownership::kb`): ignoring them without Respect
/// means a reset on every sync, so the finding is an error.
fn controller_owned(kind: &str, path: &[String]) -> bool {
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    match kind {
        "Deployment" | "StatefulSet" | "ReplicaSet" | "Rollout" => p == ["spec", "replicas"],
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            p.last() == Some(&"caBundle") || p.last() == Some(&"failurePolicy")
        }
        "APIService" => p == ["spec", "caBundle"],
        "CustomResourceDefinition" => p.last() == Some(&"caBundle"),
        "ClusterRole" => p == ["rules"],
        _ => false,
    }
}

const RESPECT: &str = "RespectIgnoreDifferences=true";

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for (app, argo) in model.argo_apps() {
        if !argo.sync.automated || argo.sync.has_option(RESPECT) {
            continue;
        }
        for entry in argo.ignores.iter().chain(model.argo_settings(app).ignores.iter()) {
            for (path, span) in entry.paths() {
                if path.is_empty() {
                    continue;
                }
                // A jq `select(.name == "x")` ignores that element only.
                let filters = entry
                    .jq_paths
                    .iter()
                    .find(|p| p.span == span)
                    .map(|p| jq_select_filters(&p.text))
                    .unwrap_or_default();
                let declared: Vec<_> = model
                    .objects_of(app)
                    .filter(|mo| entry.matches(&mo.object, &mo.namespace))
                    .filter(|mo| declares_where(&mo.object.root, &path, &filters))
                    .collect();
                let Some(first) = declared.first() else {
                    continue;
                };
                let owned = declared
                    .iter()
                    .any(|mo| controller_owned(&mo.object.kind, &path));
                let shown = format!("/{}", path.join("/"));
                let mut f = Finding::new(
                    ID,
                    if owned { Severity::Error } else { Severity::Warning },
                    format!(
                        "`{shown}` is ignored for sync status only: {} still declares it and every sync re-applies Git's value (the app has no RespectIgnoreDifferences=true)",
                        super::util::object_id(first)
                    ),
                    span,
                )
                .label("ignored for status, not for sync")
                .for_app(app)
                .object(super::util::object_id(first))
                .field(path.join("."))
                .help(format!(
                    "Either stop declaring `{shown}` in Git (preferred), or add `RespectIgnoreDifferences=true` to spec.syncPolicy.syncOptions so syncs keep the live value. It only applies to resources that already exist, and list-element jq ignores are unreliable with it (argo-cd#11876)."
                ));
                if let Some(decl) = declared
                    .iter()
                    .find_map(|mo| crate::gitops::ignore::declares_span(&mo.object.root, &path))
                {
                    f = f.secondary(decl, "still declared here");
                }
                if let Some(sp) = argo.sync.span {
                    f = f.secondary(sp, "syncPolicy without RespectIgnoreDifferences=true");
                }
                // The autofix is safe: it only changes how ignored paths sync.
                if let Some(edit) = super::app_edits::add_sync_option(&model.map, argo, RESPECT) {
                    f = f.with_fix(Fix {
                        title: format!("add `{RESPECT}` to syncOptions"),
                        safe: true,
                        edits: vec![edit],
                    });
                }
                out.push(f);
            }
        }
    }
}
