//! Template calls whose random, time-based or cluster-dependent result reaches
//! the rendered manifest. Found by taint (the template engine marks every output byte that
//! depends on such a call, through variables, include, tpl and every function), so a call
//! in a branch the app's values never take is not reported, and `sha256sum` of
//! deterministic input (checksum/config) stays clean.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::util::{about, object_id};
use crate::finding::{Finding, Severity};
use crate::gitops::{AppKind, ModelObject};
use crate::render::helm::provenance::TAINT_LABEL;
use crate::source::Span;
use std::collections::BTreeSet;

pub const ID: &str = "helm-nondeterministic-function";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "the object is a hook or is not deployed by an Argo CD Application, or a HelmRelease's chart computes or branches on `.Release.IsInstall`, `.IsUpgrade` or `.Revision`",
        },
        Grade {
            severity: Severity::Info,
            when: "helm-controller renders the chart and the value comes from `lookup`, or from a call in the else-branch of a `lookup` (helm-controller's lookup finds the live object)",
        },
    ],
    summary: "a chart's random, time or cluster-dependent call reaches the rendered manifest",
    doc: include_str!("../../rules/helm-nondeterministic-function.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

const HELP: &str = "Make the render a pure function of Git: set the value explicitly (a chart value or existingSecret), source secrets from External Secrets / Sealed Secrets / SOPS, issue certificates with cert-manager instead of gen*, replace `rollme` with a checksum/config of the inputs, sort keys with sortAlpha. Under Argo CD `lookup` always returns an empty map, so lookup-based \"keep the existing secret\" logic regenerates on every render.";

fn is_hook(mo: &ModelObject) -> bool {
    mo.object.annotation("helm.sh/hook").is_some()
        || mo.object.annotation("argocd.argoproj.io/hook").is_some()
}

/// The lookup-or-generate pattern: the call sits in the `else` of an `if` that tests
/// `lookup` (looked for in the template text before the call).
fn in_lookup_else(text: &str, call: usize) -> bool {
    let before = &text[..call.min(text.len())];
    let window = &before[before.len().saturating_sub(1500)..];
    match (window.rfind("lookup"), window.rfind("else")) {
        (Some(l), Some(e)) => l < e,
        _ => false,
    }
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    nondeterministic_calls(model, out);
    release_state_under_flux(model, out);
}

/// helm-controller really installs and upgrades: `.Release.IsInstall`/`.IsUpgrade` flip after the
/// install and `.Release.Revision` grows with every upgrade, so a field computed from them (or
/// inside a branch on them) changes between releases of the same commit. Under Argo CD they are
/// constants (`helm-install-hook-every-sync` reports the install-only logic there).
fn release_state_under_flux(model: &Scope, out: &mut Vec<Finding>) {
    for (index, mo) in model.in_scope_indexed() {
        let app = model.app_of(mo);
        if app.kind != AppKind::FluxHelmRelease {
            continue;
        }
        let mut seen: BTreeSet<Span> = BTreeSet::new();
        for read in model.marks(index).into_iter().flat_map(|m| &m.release_reads) {
            if !seen.insert(read.at) {
                continue;
            }
            let (name, field) = (&read.name, &read.field);
            let changes = if name == ".Release.Revision" {
                "changes with every upgrade (helm-controller increments the revision)"
            } else {
                "differs between the install and every later upgrade (helm-controller runs real Helm installs and upgrades; an upgrade deletes what the new manifest no longer holds)"
            };
            let message = if read.branch {
                format!(
                    "{} is rendered inside a branch on `{name}`, which {changes}",
                    read.subject(&object_id(mo))
                )
            } else {
                format!(
                    "`{name}` makes {} `{field}` change: it {changes}",
                    object_id(mo)
                )
            };
            let f = Finding::new(ID, Severity::Warning, message, read.at)
                .label(format!("`{name}` differs between releases"))
                .secondary(read.node, format!("reaches {field}"))
                .field(field.clone())
                .help("Render the same object on install and upgrade: do one-time work in a `pre-install,pre-upgrade` hook that is idempotent, keep generated secrets with `lookup` or outside the chart, and keep `.Release.Revision` out of pod templates (each upgrade would restart the pods).");
            out.push(about(f, app, mo));
        }
    }
}

fn nondeterministic_calls(model: &Scope, out: &mut Vec<Finding>) {
    let mut seen: BTreeSet<(usize, Span)> = BTreeSet::new();
    for (index, mo) in model.in_scope_indexed() {
        let app = model.app_of(mo);
        let tainted = model.marks(index).into_iter().flat_map(|m| &m.tainted);
        for (field, node) in tainted {
            let Some(related) = &node.related else { continue };
            for r in related.iter() {
                let Some(func) = r.label.strip_prefix(TAINT_LABEL) else { continue };
                if !seen.insert((index, r.span)) {
                    continue;
                }
                let hook = is_hook(mo);
                let controller = app.controller();
                let in_else = func != "lookup"
                    && (in_lookup_else(&model.map.get(r.span.file).text, r.span.start as usize)
                        || in_lookup_else(&model.map.get(node.span.file).text, node.span.start as usize));
                // helm-controller installs and upgrades against the cluster: its `lookup`
                // finds the live object, so "keep the existing value" logic works there.
                let live_lookup = controller == super::util::Controller::FluxHelm
                    && (func == "lookup" || in_else);
                let severity = match app.kind {
                    _ if live_lookup => Severity::Info,
                    AppKind::Argo | AppKind::ArgoAppSet if !hook => Severity::Error,
                    _ => Severity::Warning,
                };
                let text = model.map.get(r.span.file);
                let message = if live_lookup && func == "lookup" {
                    format!("`lookup` reads the live cluster when helm-controller installs or upgrades (offline it is empty); its result reaches {} `{field}`", object_id(mo))
                } else if live_lookup {
                    format!("`{func}` generates {} `{field}` in the else-branch of a `lookup`: helm-controller's lookup finds the existing object on upgrades, so a value is generated on the first install only", object_id(mo))
                } else if func == "lookup" {
                    format!("`lookup` always returns an empty map under `helm template` and in Argo CD's repo-server; its result reaches {} `{field}`", object_id(mo))
                } else if in_lookup_else(&text.text, r.span.start as usize)
                    || in_lookup_else(&model.map.get(node.span.file).text, node.span.start as usize)
                {
                    format!("`{func}` generates {} `{field}` in the else-branch of a `lookup`: lookup is always empty under `helm template` and Argo CD, so a new value is generated on every render", object_id(mo))
                } else if func == "keys" || func == "values" {
                    format!("`{func}` returns map entries in random order and the order reaches {} `{field}`; sort it with sortAlpha", object_id(mo))
                } else {
                    let when = if hook { "on every sync (hook)" } else { "on every render, so the app is never in sync" };
                    format!("`{func}` makes {} `{field}` change {when}", object_id(mo))
                };
                let mut f = Finding::new(ID, severity, message, r.span)
                    .label(format!("`{func}` is non-deterministic"))
                    .secondary(node.span, format!("reaches {field}"))
                    .field(field.clone())
                    .help(HELP);
                for other in related.iter().filter(|o| !o.label.starts_with(TAINT_LABEL)) {
                    f = f.secondary(other.span, other.label.clone());
                }
                out.push(about(f, app, mo));
            }
        }
    }
}
