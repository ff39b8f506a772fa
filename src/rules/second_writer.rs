//! CI workflows, scripts and Makefiles that apply, patch or override what a
//! GitOps controller also owns — two writers, and every sync is a coin flip.

use super::util::ForApp;
use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::{App, Model};
use crate::ownership::ci::{Command, commands, is_ci_file, kind_matches};
use crate::source::{Origin, Span, normalize_relative};
use crate::yaml::Node;

pub const ID: &str = "second-writer";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "a CI command writes what an app deploys and the app does not re-apply Git on its own (an Argo CD Application without automated sync, a HelmRelease without drift detection)",
        },
    ],
    summary: "CI or tooling applies/patches what a GitOps controller also owns",
    doc: include_str!("../../rules/second-writer.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// Namespaces of the GitOps controllers themselves: bootstrapping them is not a fight.
const BOOTSTRAP_NAMESPACES: &[&str] = &["argocd", "flux-system"];

/// Repo paths an app renders (Argo source paths, Flux Kustomization `spec.path`).
fn app_paths(app: &App) -> Vec<(String, Option<Span>)> {
    let mut out = Vec::new();
    if let Some(argo) = &app.argo {
        for s in &argo.sources {
            if s.chart.is_none()
                && let Some(p) = s.path.as_deref().and_then(normalize_relative)
            {
                out.push((p, s.path_span));
            }
        }
    }
    if let Some(flux) = &app.flux
        && let Some(node) = flux.decl.root.get_path(&["spec", "path"])
        && let Some(p) = node.scalar_text().as_deref().and_then(normalize_relative)
    {
        out.push((p, Some(node.span)));
    }
    out
}

fn is_gitops(app: &App) -> bool {
    app.argo.is_some() || app.flux.is_some()
}

fn overlaps(a: &str, b: &str) -> bool {
    use crate::source::is_within;
    !a.is_empty() && !b.is_empty() && (is_within(b, a) || is_within(a, b))
}

/// The GitOps app this command writes into, with the evidence span and a description.
fn overlap<'a>(model: &'a Model, cmd: &Command) -> Option<(&'a App, Option<Span>, String)> {
    if cmd
        .namespace
        .as_deref()
        .is_some_and(|ns| BOOTSTRAP_NAMESPACES.contains(&ns))
    {
        return None;
    }
    for raw in &cmd.paths {
        let Some(path) = normalize_relative(raw.trim_end_matches('/')) else {
            continue;
        };
        for app in model.apps.iter().filter(|a| is_gitops(a)) {
            for (app_path, span) in app_paths(app) {
                if overlaps(&path, &app_path) {
                    return Some((
                        app,
                        span.or(app.span),
                        format!(
                            "applies {path}, which app {} renders from {app_path}",
                            app.name
                        ),
                    ));
                }
            }
        }
    }
    for (kind, name) in &cmd.objects {
        let hit = model.objects.iter().find(|mo| {
            mo.object.name == *name
                && kind_matches(kind, &mo.object.kind)
                && cmd.namespace.as_deref().is_none_or(|ns| ns == mo.namespace)
                && is_gitops(model.app_of(mo))
        });
        if let Some(mo) = hit {
            let app = model.app_of(mo);
            let span = mo
                .object
                .metadata()
                .and_then(|m| m.get("name"))
                .map(|n| n.span);
            return Some((
                app,
                span,
                format!(
                    "changes {} {}/{}, which app {} deploys",
                    mo.object.kind, mo.namespace, mo.object.name, app.name
                ),
            ));
        }
    }
    if let Some(release) = &cmd.helm_release {
        for app in model.apps.iter().filter(|a| a.argo.is_some()) {
            let names_release = app.argo.as_ref().is_some_and(|argo| {
                argo.sources.iter().any(|s| {
                    s.node
                        .get_path(&["helm", "releaseName"])
                        .and_then(Node::scalar_text)
                        .map_or(app.name == *release, |r| r == *release)
                })
            });
            let same_ns = cmd.namespace.is_none() || cmd.namespace == app.destination_namespace;
            if names_release && same_ns {
                return Some((
                    app,
                    app.span,
                    format!(
                        "writes Helm release {release}, which app {} renders",
                        app.name
                    ),
                ));
            }
        }
        // Flux HelmRelease: spec.releaseName, else [targetNamespace-]name.
        for app in &model.apps {
            let Some(flux) = &app.flux else { continue };
            if flux.kind != crate::gitops::model::flux::FluxKind::HelmRelease {
                continue;
            }
            let decl = &flux.decl;
            let spec = decl.root.get("spec");
            let target_ns = spec
                .and_then(|s| s.get("targetNamespace"))
                .and_then(Node::scalar_text);
            let name = spec
                .and_then(|s| s.get("releaseName"))
                .and_then(Node::scalar_text)
                .unwrap_or_else(|| match &target_ns {
                    Some(ns) => format!("{ns}-{}", decl.name),
                    None => decl.name.clone(),
                });
            let ns = target_ns.or_else(|| decl.namespace.clone());
            if name == *release && (cmd.namespace.is_none() || cmd.namespace == ns) {
                return Some((
                    app,
                    app.span,
                    format!(
                        "writes Helm release {release}, which HelmRelease {} manages",
                        decl.name
                    ),
                ));
            }
        }
    }
    if let Some(name) = &cmd.argo_app
        && let Some(app) = model
            .apps
            .iter()
            .find(|a| a.argo.is_some() && a.name == *name)
    {
        return Some((
            app,
            app.span,
            format!(
                "overrides app {name} outside Git (parameter overrides take precedence over Git)"
            ),
        ));
    }
    None
}

const IMAGE_LIST: &str = "argocd-image-updater.argoproj.io/image-list";
const WRITE_BACK: &str = "argocd-image-updater.argoproj.io/write-back-method";

/// Argo CD Image Updater writing parameter overrides into an Application that something
/// else re-renders: the generating ApplicationSet or a self-healing app-of-apps parent
/// reverts every update
/// (https://github.com/argoproj-labs/argocd-image-updater/pull/751).
fn image_updater(model: &Scope, out: &mut Vec<Finding>) {
    for mo in model.in_scope() {
        let o = &mo.object;
        if o.group() != "argoproj.io" {
            continue;
        }
        let (annotations, reverter) = match o.kind.as_str() {
            "ApplicationSet" => {
                let sync = o
                    .root
                    .get_path(&["spec", "syncPolicy", "applicationsSync"])
                    .and_then(Node::as_str);
                let tolerated = o
                    .root
                    .get_path(&["spec", "ignoreApplicationDifferences"])
                    .is_some_and(|n| !n.is_empty_value());
                if tolerated || sync == Some("create-only") {
                    continue;
                }
                (
                    o.root
                        .get_path(&["spec", "template", "metadata", "annotations"]),
                    (
                        o.span(),
                        format!(
                            "ApplicationSet {} re-renders the Applications it generates",
                            o.name
                        ),
                    ),
                )
            }
            "Application" => {
                let parent = model.app_of(mo);
                let heals = parent.argo.as_ref().is_some_and(|a| a.sync.self_heal);
                if !heals {
                    continue;
                }
                (
                    o.metadata().and_then(|m| m.get("annotations")),
                    (
                        parent.span.unwrap_or(o.span()),
                        format!("app {} self-heals this Application", parent.name),
                    ),
                )
            }
            _ => continue,
        };
        let Some(annotations) = annotations else {
            continue;
        };
        let Some(list) = annotations.entry(IMAGE_LIST) else {
            continue;
        };
        let method = annotations.get_str(WRITE_BACK).unwrap_or("argocd");
        if !method.starts_with("argocd") {
            continue; // `git` write-back commits to the repo: one writer
        }
        out.push(
            Finding::new(
                ID,
                Severity::Error,
                format!(
                    "Argo CD Image Updater writes image overrides into {} {} (write-back-method \
                     {method}), and {}: every update is reverted, then written again",
                    o.kind, o.name, reverter.1
                ),
                list.key.span.cover(list.value.span),
            )
            .label("image updates written to the live Application")
            .secondary(reverter.0, reverter.1)
            .help(
                "Use `argocd-image-updater.argoproj.io/write-back-method: git` so updates are \
                 commits, or (ApplicationSet) list the parameters under \
                 spec.ignoreApplicationDifferences.",
            ),
        );
    }
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    image_updater(model, out);
    for id in model.map.ids() {
        let file = model.map.get(id);
        if file.origin != Origin::Repo || !is_ci_file(&file.path) {
            continue;
        }
        for cmd in commands(&model.map, id) {
            let Some((app, evidence, what)) = overlap(model, &cmd) else {
                continue;
            };
            let severity = if app.enforces() {
                Severity::Error
            } else {
                Severity::Warning
            };
            let mut f = Finding::new(
                ID,
                severity,
                format!(
                    "`{}` in {} {what}: two writers, so every sync is a coin flip",
                    cmd.what, file.path
                ),
                cmd.span,
            )
            .label(format!("{} writes to the cluster", cmd.what))
            .help(format!(
                "Only the GitOps controller writes what app {} deploys. Replace this step with a \
                 Git change (a commit or PR, or Image Updater write-back-method: git), then \
                 `argocd app sync {}` / `flux reconcile` if you need it now; use `argocd app \
                 diff` / `flux diff` for previews. Break-glass: a manual workflow that first \
                 disables auto-sync and records the change.",
                app.name, app.name
            ))
            .for_app(app);
            if let Some(span) = evidence {
                f = f.secondary(span, format!("app {} owns this", app.name));
            }
            out.push(f);
        }
    }
}
