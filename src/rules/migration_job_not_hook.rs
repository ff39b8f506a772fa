//! An ordering-critical Job (a schema migration, or one ordered before the
//! workloads by sync wave) is a plain resource instead of a PreSync hook.

use super::{FixAvailability, Kinds, RuleMeta, Scope};
use super::util::{about, object_id};
use crate::finding::{Finding, Severity};
use crate::gitops::ModelObject;
use crate::yaml::Node;
use regex::Regex;
use std::sync::OnceLock;

pub const ID: &str = "migration-job-not-hook";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[],
    summary: "ordering-critical Job (migration) is a plain wave resource instead of a PreSync hook",
    doc: include_str!("../../rules/migration-job-not-hook.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Of(&["batch/Job", "argoproj.io/Workflow", "Pod"]),
};

fn migration_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)migrat|flyway|liquibase|alembic|db[-_:]?(upgrade|migrate)|prisma\s+migrate|manage\.py\s+migrate|rails\s+db:migrate|rake\s+db:migrate|goose|sqitch|atlas\s+(schema|migrate)|knex\s+migrate|sequelize\s+db:migrate|dbmate|golang-migrate",
        )
        .ok()
    })
    .as_ref()
}

/// Does a Helm hook annotation map to PreSync or Sync (Argo runs those before/with the
/// workloads)?
fn helm_hook_runs_first(obj: &crate::object::Object) -> bool {
    obj.annotation("helm.sh/hook").is_some_and(|v| {
        v.split(',')
            .any(|h| matches!(h.trim(), "pre-install" | "pre-upgrade"))
    })
}

fn wave(mo: &ModelObject) -> i64 {
    mo.object
        .annotation("argocd.argoproj.io/sync-wave")
        .and_then(|w| w.trim().parse().ok())
        .unwrap_or(0)
}

/// The text a migration is recognized by: name, labels, images, commands, args.
fn job_text(mo: &ModelObject) -> String {
    let mut parts = vec![mo.object.name.clone()];
    if let Some(labels) = mo.object.metadata().and_then(|m| m.get("labels")) {
        parts.extend(
            labels
                .as_map()
                .unwrap_or_default()
                .iter()
                .filter_map(|e| e.value.scalar_text()),
        );
    }
    let pod = match mo.object.kind.as_str() {
        "Pod" => mo.object.root.get("spec"),
        _ => mo.object.root.get_path(&["spec", "template", "spec"]),
    };
    for key in ["initContainers", "containers"] {
        for c in pod
            .and_then(|p| p.get(key))
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            parts.extend(c.get("image").and_then(Node::scalar_text));
            for k in ["command", "args"] {
                for w in c.get(k).and_then(Node::as_seq).unwrap_or_default() {
                    parts.extend(w.scalar_text());
                }
            }
        }
    }
    parts.join(" ")
}

/// Does the Job's name carry its image's version (`db-migrate-3-4-0` for `api:3.4.0`)? Then
/// each release is a new Job: nothing immutable is changed in place and it runs once per
/// release, in its wave, which is what the ordering asks for.
fn named_per_version(mo: &ModelObject) -> bool {
    let name = mo.object.name.to_ascii_lowercase();
    let pod = match mo.object.kind.as_str() {
        "Pod" => mo.object.root.get("spec"),
        _ => mo.object.root.get_path(&["spec", "template", "spec"]),
    };
    let images: Vec<String> = ["initContainers", "containers"]
        .iter()
        .flat_map(|k| pod.and_then(|p| p.get(k)).and_then(Node::as_seq).unwrap_or_default())
        .filter_map(|c| c.get("image").and_then(Node::scalar_text))
        .collect();
    !images.is_empty()
        && images.iter().all(|image| {
            let image = image.split('@').next().unwrap_or("");
            let last = image.rsplit('/').next().unwrap_or("");
            let Some((_, tag)) = last.rsplit_once(':') else {
                return false;
            };
            let tag = tag.trim_start_matches('v').to_ascii_lowercase();
            let dns: String = tag
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            tag.len() >= 3
                && tag != "latest"
                && tag.chars().any(|c| c.is_ascii_digit())
                && (name.contains(&tag) || name.contains(&dns))
        })
}

/// A Job, Workflow or Pod (the rule's kinds) that runs in the sync itself.
fn is_candidate(mo: &ModelObject) -> bool {
    let o = &mo.object;
    o.annotation("argocd.argoproj.io/hook").is_none() && !helm_hook_runs_first(o)
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for mo in model.in_scope() {
        if !is_candidate(mo) {
            continue;
        }
        let app = model.app_of(mo);
        if app.argo.is_none() || named_per_version(mo) {
            continue;
        }
        let text = job_text(mo);
        let is_migration = migration_re().is_some_and(|re| re.is_match(&text));
        // A workload in the same app ordered after the Job (ordering intent).
        let later_workload = model.objects_of(app).find(|w| {
            matches!(
                (w.object.group(), w.object.kind.as_str()),
                ("apps", "Deployment" | "StatefulSet") | ("argoproj.io", "Rollout")
            ) && wave(w) > wave(mo)
        });
        if !is_migration && later_workload.is_none() {
            continue;
        }
        let name_span = mo.object.name_span();
        let why = if is_migration {
            "looks like a schema migration"
        } else {
            "is ordered before the app's workloads by sync wave"
        };
        let mut f = Finding::new(
            ID,
            Severity::Warning,
            format!(
                "{} {why} but is a plain resource, not a PreSync hook: its pod template is \
                 immutable (the next image bump fails the sync), a completed Job never re-runs, \
                 and self-heal syncs skip ordering",
                object_id(mo)
            ),
            name_span,
        )
        .label("plain resource, not a hook")
        .help(
            "Run it as `argocd.argoproj.io/hook: PreSync` with \
             `argocd.argoproj.io/hook-delete-policy: BeforeHookCreation` (the default). A failing \
             PreSync hook already aborts the sync; there is no hook-failure-policy annotation. \
             Keep the migration idempotent and backward compatible (expand/contract).",
        );
        if let Some(w) = later_workload
            && let Some(ann) = w
                .object
                .metadata()
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.entry("argocd.argoproj.io/sync-wave"))
        {
            f = f.secondary(
                ann.key.span.cover(ann.value.span),
                format!("{} waits for it (later wave)", object_id(w)),
            );
        }
        out.push(about(f, app, mo));
    }
}
