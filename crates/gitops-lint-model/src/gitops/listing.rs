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
                "judged-with": judged_with(model, a),
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

/// The releases and settings an app is judged with: the controller's release (and how it
/// was found), and for Argo CD apps the instance's tracking and diff settings.
fn judged_with(model: &Model, app: &super::App) -> Value {
    use super::model::versions::How;
    let release = |j: &super::model::versions::Judged| {
        let (how, at) = match &j.how {
            How::Flag => ("flag", None),
            How::Config(span) => ("config", Some(*span)),
            How::Repo(span, _) => ("repository", Some(*span)),
            How::Latest => ("latest", None),
        };
        json!({
            "version": j.text,
            "from": how,
            "file": at.map(|s| model.map.path(s.file)),
            "line": at.map(|s| model.map.line_col(s).line),
        })
    };
    match app.controller() {
        super::Controller::Argocd => {
            let s = model.argo_settings(app);
            json!({
                "argocd": release(model.argo_version(app)),
                "tracking-method": s.tracking_method,
                "instance-label-key": s.instance_label_key,
                "server-side-diff": s.server_side_diff,
                "argocd-cm": s.decl.as_ref().map(|d| model.map.path(d.root.span.file)),
            })
        }
        super::Controller::FluxKustomize | super::Controller::FluxHelm => {
            json!({ "flux": release(model.flux_version(app)) })
        }
        super::Controller::None => Value::Null,
    }
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
    let line = coverage_summary(model);
    let line = match versions_line(model) {
        Some(versions) => format!("{line}\n{versions}"),
        None => line,
    };
    match unfetched_apps(model) {
        0 => line,
        n => format!(
            "{line}\n{n} app(s) use remote charts or bases that are not fetched: `gitops-lint fetch` downloads them (the only command that uses the network), then lint renders them"
        ),
    }
}

/// The coverage line without the releases judged with and the hint to run `fetch` (what
/// `fetch` itself reports after it ran): apps, kustomization directories, clusters.
pub fn coverage_summary(model: &Model) -> String {
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
    let line = match kustomization_coverage(model) {
        Some(dirs) => format!("{line}\n{dirs}"),
        None => line,
    };
    let clusters = model.clusters();
    if clusters.len() > 1 {
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
    }
}

/// `judged with Argo CD 2.14.2 (…), Flux 2.9.4 (the latest release; …)`: the releases of
/// the controllers the repo's apps run under, and how each was found (per cluster where
/// they differ).
fn versions_line(model: &Model) -> Option<String> {
    use super::model::versions::Product;
    let runs_under = |a: &super::App, product| Product::of(a.controller()) == Some(product);
    let mut parts = Vec::new();
    for product in [Product::ArgoCd, Product::Flux] {
        if !model.apps.iter().any(|a| runs_under(a, product)) {
            continue;
        }
        let per_cluster = model.versions.per_cluster(product);
        let default = model.versions.default_for(product);
        if !per_cluster.iter().any(|(_, j)| j.text != default.text) {
            let judged = per_cluster.first().map_or(default, |(_, j)| j);
            parts.push(judged.describe(&model.map));
            continue;
        }
        let mut text = per_cluster
            .iter()
            .map(|(c, j)| format!("{c}: {}", j.describe(&model.map)))
            .collect::<Vec<_>>()
            .join("; ");
        let named = |a: &super::App| {
            a.home.is_known() && per_cluster.iter().any(|(c, _)| c == a.home.name())
        };
        if model
            .apps
            .iter()
            .any(|a| runs_under(a, product) && !named(a))
        {
            text.push_str(&format!("; elsewhere {}", default.describe(&model.map)));
        }
        parts.push(text);
    }
    (!parts.is_empty()).then(|| format!("judged with {}", parts.join(", ")))
}

/// `kustomization directories: 40, 35 linted, 2 only in partly rendered apps, 3 not linted
/// (2 only in apps that did not render, 1 built by no app)`: a directory counts as linted
/// when the build of an app that rendered entered it (its own, a base, a component).
fn kustomization_coverage(model: &Model) -> Option<String> {
    let dirs = model.kustomization_dirs();
    if dirs.is_empty() {
        return None;
    }
    // The best status of any app whose build entered the directory.
    let mut best: BTreeMap<&str, RenderStatus> = BTreeMap::new();
    for app in &model.apps {
        let status = app.status().0;
        for d in &app.kustomize_dirs {
            let entry = best.entry(d.as_str()).or_insert(status);
            if rank(status) < rank(*entry) {
                *entry = status;
            }
        }
    }
    let (mut linted, mut partly, mut failed, mut unbuilt) = (0, 0, 0, 0);
    for d in &dirs {
        match best.get(d.as_str()) {
            Some(RenderStatus::Rendered) => linted += 1,
            Some(RenderStatus::Partial) => partly += 1,
            Some(RenderStatus::NotRendered) => failed += 1,
            None => unbuilt += 1,
        }
    }
    let mut line = format!("kustomization directories: {}, {linted} linted", dirs.len());
    if partly > 0 {
        line.push_str(&format!(", {partly} only in partly rendered apps"));
    }
    if failed + unbuilt > 0 {
        let mut why = Vec::new();
        if failed > 0 {
            why.push(format!("{failed} only in apps that did not render"));
        }
        if unbuilt > 0 {
            why.push(format!("{unbuilt} built by no app"));
        }
        line.push_str(&format!(
            ", {} not linted ({})",
            failed + unbuilt,
            why.join(", ")
        ));
    }
    Some(line)
}

fn rank(s: RenderStatus) -> u8 {
    match s {
        RenderStatus::Rendered => 0,
        RenderStatus::Partial => 1,
        RenderStatus::NotRendered => 2,
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
