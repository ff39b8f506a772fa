//! Install-only Helm hooks, which Argo CD runs on every sync, and templates
//! whose output depends on `.Release.IsInstall`/`.IsUpgrade`/`.Revision`, which `helm
//! template` fixes to a first install: the install-only side is applied on every sync.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::util::{about, object_id};
use crate::finding::{Finding, Severity};
use crate::render::helm::provenance::TAINT_LABEL;
use crate::source::Span;
use std::collections::BTreeSet;

pub const ID: &str = "helm-install-hook-every-sync";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Error,
            when: "the install-only hook holds data a random, clock or key-generating template call made, so every sync re-creates it with new data",
        },
    ],
    summary: "install-only Helm hooks and install/upgrade branches run on every Argo CD sync",
    doc: include_str!("../../rules/helm-install-hook-every-sync.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    install_only_hooks(model, out);
    install_state_logic(model, out);
}

/// A template that branches on (or computes from) the release's install/upgrade state, in a
/// chart an Argo app renders: reported at the read, once per object it shapes.
fn install_state_logic(model: &Scope, out: &mut Vec<Finding>) {
    for (index, mo) in model.in_scope_indexed() {
        let app = model.app_of(mo);
        if app.argo.is_none() {
            continue;
        }
        let mut seen: BTreeSet<Span> = BTreeSet::new();
        for read in model.marks(index).into_iter().flat_map(|m| &m.release_reads) {
            if !read.is_logic() || !seen.insert(read.at) {
                continue;
            }
            let (name, field) = (&read.name, &read.field);
            let how = if read.branch {
                format!("is rendered inside a branch on `{name}`")
            } else {
                format!("is computed from `{name}`")
            };
            out.push(about(
                Finding::new(ID, Severity::Warning, format!("{} {how}: Argo CD renders with `helm template`, where every sync is a first install (IsInstall=true, IsUpgrade=false, Revision=1), so install-only logic is applied on every sync and upgrade-only logic never", read.subject(&object_id(mo))), read.at)
                    .label("always a first install under Argo CD")
                    .secondary(read.node, format!("reaches {field}"))
                    .field(field.clone())
                    .help("Render the same object on every sync: move one-time work into an idempotent hook, generate secrets outside the chart (External Secrets, Sealed Secrets, cert-manager) or take them from a value, and do not rely on .Release.IsInstall, .IsUpgrade or .Revision under Argo CD."),
                app,
                mo,
            ));
        }
    }
}

fn install_only_hooks(model: &Scope, out: &mut Vec<Finding>) {
    for mo in model.in_scope() {
        let app = model.app_of(mo);
        if app.argo.is_none() || mo.object.annotation("argocd.argoproj.io/hook").is_some() {
            continue;
        }
        let Some(entry) = mo
            .object
            .metadata()
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.entry("helm.sh/hook"))
        else {
            continue;
        };
        let hooks: Vec<String> = entry
            .value
            .scalar_text()
            .unwrap_or_default()
            .split(',')
            .map(|h| h.trim().to_string())
            .collect();
        for (install, upgrade) in [
            ("pre-install", "pre-upgrade"),
            ("post-install", "post-upgrade"),
        ] {
            if hooks.iter().any(|h| h == install) && !hooks.iter().any(|h| h == upgrade) {
                // Re-created on every sync: generated data in it is regenerated every time.
                let (severity, what) = match generated_by(mo) {
                    Some((func, span)) => (
                        Severity::Error,
                        Some((
                            span,
                            format!("`{func}` generates new data in it on every sync"),
                        )),
                    ),
                    None => (Severity::Warning, None),
                };
                let mut f = Finding::new(ID, severity, format!("{} is a `{install}` hook: Argo CD cannot tell install from upgrade and runs it on every sync{}", object_id(mo), if what.is_some() { ", re-creating it with newly generated data each time" } else { "" }), entry.value.span)
                    .label("runs on every sync under Argo CD")
                    .help("Make the hook idempotent, generate secrets outside the chart (External Secrets, Sealed Secrets, cert-manager), and do not rely on .Release.IsInstall under Argo CD.");
                if let Some((span, text)) = what {
                    f = f.secondary(span, text);
                }
                out.push(about(f, app, mo));
            }
        }
    }
}

/// The first non-deterministic call (random, clock, generated key) whose result is in the
/// object, as the chart renderer traced it.
fn generated_by(mo: &crate::gitops::ModelObject) -> Option<(String, Span)> {
    let mut found = None;
    mo.object.root.walk(|_, node| {
        if found.is_some() {
            return;
        }
        found = node.related.as_ref().and_then(|rel| {
            rel.iter().find_map(|r| {
                let func = r.label.strip_prefix(TAINT_LABEL)?;
                Some((func.to_string(), r.span))
            })
        });
    });
    found
}
