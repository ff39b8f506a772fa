//! `gitops-lint apps`: every app of the model with its controller, source, parent, render
//! status and reason, as a table or JSON, and the one-line coverage summary the human lint
//! report ends with.

use super::{Model, RenderStatus};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// `apps --format json`: `{"version": 1, "apps": [...]}`.
pub fn apps_json(model: &Model) -> Value {
    let apps: Vec<Value> = model
        .apps
        .iter()
        .map(|a| {
            let (status, reason) = a.status();
            json!({
                "name": a.name,
                "kind": a.kind.as_str(),
                "controller": a.controller().as_str(),
                "cluster": a.cluster.is_known().then(|| a.cluster.name()),
                "sources": a.sources,
                "repository": a.repository.as_ref().map(|j| json!({
                    "url": j.url,
                    "this-repository": j.local,
                    "rule": j.rule.describe(),
                })),
                "parent": a.parent,
                "generated-by": a.generated_by,
                "depends-on": a.depends_on,
                "status": status.as_str(),
                "reason": reason.as_ref().map(|(code, _)| *code),
                "reason-message": reason.as_ref().map(|(_, m)| m.as_str()),
                "objects": a.objects.len(),
                "remotes": a.remotes.iter().map(|u| {
                    let file = model.map.get(u.span.file);
                    json!({
                        "kind": u.reference.kind.as_str(),
                        "source": u.reference.source,
                        "chart": Some(&u.reference.chart).filter(|c| !c.is_empty()),
                        "requested": u.reference.requested,
                        "file": file.path,
                        "line": file.line_col(u.span.start as usize).line,
                    })
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "version": 1, "apps": apps })
}

/// The human table: one line per app.
pub fn apps_table(model: &Model) -> String {
    let mut text = format!(
        "{:<32} {:<18} {:<20} {:<24} {:>7}  {:<12}  {}\n",
        "APP", "KIND", "CLUSTER", "PARENT", "OBJECTS", "STATUS", "SOURCE"
    );
    for app in &model.apps {
        let (status, reason) = app.status();
        let mut source = app.sources.join(", ");
        if let Some(j) = &app.repository {
            source.push_str(&format!(" [{}]", j.describe()));
        }
        if let Some((code, _)) = reason {
            source.push_str(&format!(" ({code})"));
        }
        text.push_str(&format!(
            "{:<32} {:<18} {:<20} {:<24} {:>7}  {:<12}  {}\n",
            app.name,
            app.kind.as_str(),
            if app.cluster.is_known() {
                app.cluster.name()
            } else {
                "-"
            },
            app.parent.as_deref().unwrap_or("-"),
            app.objects.len(),
            status.as_str(),
            source
        ));
    }
    text
}

/// `coverage: 12 apps, 9 rendered, 1 partly rendered (1 remote-base), 2 not rendered
/// (1 external-source, 1 remote-chart)`: what is partial or unlinted, and why.
pub fn coverage_line(model: &Model) -> String {
    let mut rendered = 0;
    let mut partial: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut not: BTreeMap<&'static str, usize> = BTreeMap::new();
    for app in &model.apps {
        let (status, reason) = app.status();
        let code = reason.map_or("unknown", |(code, _)| code);
        match status {
            RenderStatus::Rendered => rendered += 1,
            RenderStatus::Partial => *partial.entry(code).or_default() += 1,
            RenderStatus::NotRendered => *not.entry(code).or_default() += 1,
        }
    }
    // `2 not rendered (1 external-source, 1 remote-chart)`
    let part = |reasons: &BTreeMap<&'static str, usize>, words: &str| {
        let total: usize = reasons.values().sum();
        if total == 0 {
            return format!("0 {words}");
        }
        let why: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        format!("{total} {words} ({})", why.join(", "))
    };
    let line = format!(
        "coverage: {} apps, {rendered} rendered, {}, {}",
        model.apps.len(),
        part(&partial, "partly rendered"),
        part(&not, "not rendered"),
    );
    let clusters = model.clusters();
    let line = if clusters.len() > 1 {
        let per_cluster: Vec<String> = clusters
            .iter()
            .map(|c| {
                let apps: Vec<_> = model.apps.iter().filter(|a| &a.cluster == *c).collect();
                let rendered = apps
                    .iter()
                    .filter(|a| a.status().0 == RenderStatus::Rendered)
                    .count();
                format!("{} {} apps ({rendered} rendered)", c.name(), apps.len())
            })
            .collect();
        format!(
            "{line}\n{} clusters: {}",
            clusters.len(),
            per_cluster.join("; ")
        )
    } else {
        line
    };
    match unfetched_apps(model) {
        0 => line,
        n => format!(
            "{line}\n{n} app(s) use remote charts or bases that are not fetched: `gitops-lint fetch` downloads them (the only command that uses the network), then lint renders them"
        ),
    }
}

/// Apps that would render more once `gitops-lint fetch` has filled the cache.
fn unfetched_apps(model: &Model) -> usize {
    model
        .apps
        .iter()
        .filter(|a| {
            a.skipped
                .iter()
                .any(|s| matches!(s.reason, "remote-chart" | "remote-base" | "remote-file"))
        })
        .count()
}
