//! Ignore entries that match no rendered object, or whose path no matched
//! object declares (and no known writer touches).

use super::util::ForApp;
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::Model;
use crate::gitops::ignore::{IgnoreOrigin, declares, declares_where, jq_select_filters, pointer_segments};

pub const ID: &str = "ignore-differences-stale";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Info,
    graded: &[],
    summary: "ignore entry matches nothing the app renders",
    doc: include_str!("../../rules/ignore-differences-stale.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

/// Paths other writers fill in even when Git does not declare them (the controller knowledge
/// base of `ownership::kb`).
fn written_by_others(path: &[String]) -> bool {
    matches!(
        path.last().map(String::as_str),
        Some("caBundle" | "replicas" | "failurePolicy" | "status" | "clusterIP" | "rules")
    ) || path.first().map(String::as_str) == Some("status")
        || path
            .iter()
            .any(|p| p == "annotations" || p == "labels" || p == "finalizers")
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    check_flux(model, out);
    for (app, argo) in model.argo_apps() {
        // An app whose render is incomplete may render what the entry matches.
        if !app.issues.is_empty() || app.objects.is_empty() {
            continue;
        }
        for e in &argo.ignores {
            if e.origin != IgnoreOrigin::App {
                continue;
            }
            let matched: Vec<_> = model
                .objects_of(app)
                .filter(|mo| e.matches(&mo.object, &mo.namespace))
                .collect();
            if matched.is_empty() {
                out.push(
                    Finding::new(
                        ID,
                        Severity::Info,
                        format!(
                            "ignoreDifferences entry for {} matches no object this app renders",
                            e.kind.as_deref().unwrap_or("?")
                        ),
                        e.span,
                    )
                    .label("matches nothing")
                    .for_app(app)
                    .help("Remove the unused entry, or fix its group/kind/name/namespace."),
                );
                continue;
            }
            for (path, span) in e.paths() {
                if path.is_empty() || written_by_others(&path) {
                    continue;
                }
                let jq = e.jq_paths.iter().find(|p| p.span == span);
                // Argo compares a custom resource's lists index by index (no merge keys),
                // so an element a controller appends needs its ignore although Git never
                // declares it: a list-element jq on a custom resource is never stale.
                let custom = matched
                    .iter()
                    .any(|mo| !crate::ownership::kb::is_builtin_group(mo.object.group()));
                if jq.is_some() && custom && path.iter().any(|s| s == "*") {
                    continue;
                }
                let filters = jq.map(|p| jq_select_filters(&p.text)).unwrap_or_default();
                if !matched
                    .iter()
                    .any(|mo| declares_where(&mo.object.root, &path, &filters))
                {
                    out.push(Finding::new(ID, Severity::Info, format!("no matched object declares `/{}` and no known controller writes it", path.join("/")), span).label("nothing to ignore here").for_app(app).help("Remove the path if nothing writes it any more."));
                }
            }
        }
    }
}

/// Flux `spec.ignore[]` / `driftDetection.ignore[]` rules: same questions, with Flux's
/// regex targets and JSON pointers (`""` is the whole document: never stale).
fn check_flux(model: &Model, out: &mut Vec<Finding>) {
    for app in &model.apps {
        if app.flux.is_none() || !app.issues.is_empty() || app.objects.is_empty() {
            continue;
        }
        for rule in model.flux_ignores(app) {
            let matched: Vec<_> = model
                .objects_of(app)
                .filter(|mo| rule.matches(&mo.object, &mo.namespace))
                .collect();
            if matched.is_empty() {
                out.push(
                    Finding::new(
                        ID,
                        Severity::Info,
                        "Flux ignore rule matches no object this app renders".to_string(),
                        rule.span,
                    )
                    .label("matches nothing")
                    .for_app(app)
                    .help("Remove the unused rule, or fix its target."),
                );
                continue;
            }
            for p in &rule.paths {
                let Some(path) = pointer_segments(&p.text) else {
                    continue;
                };
                if written_by_others(&path) {
                    continue;
                }
                if !matched.iter().any(|mo| declares(&mo.object.root, &path)) {
                    out.push(
                        Finding::new(
                            ID,
                            Severity::Info,
                            format!(
                                "no matched object declares `{}` and no known controller writes it",
                                p.text
                            ),
                            p.span,
                        )
                        .label("nothing to ignore here")
                        .for_app(app)
                        .help("Remove the path if nothing writes it any more."),
                    );
                }
            }
        }
    }
}
