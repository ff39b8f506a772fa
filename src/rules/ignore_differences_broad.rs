//! Ignore entries that cover a whole object, all of `/spec`, or every kind.

use super::util::ForApp;
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::model::flux::FluxIgnore;
use crate::gitops::ignore::{IgnoreEntry, IgnoreOrigin};
use crate::gitops::{App, Model};
use crate::source::Span;

pub const ID: &str = "ignore-differences-broad";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[],
    summary: "ignore covers a whole object, /spec, a whole template, or every kind",
    doc: include_str!("../../rules/ignore-differences-broad.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

const BROAD_POINTERS: &[&str] = &[
    "/spec",
    "/metadata",
    "/data",
    "/stringData",
    "/rules",
    "/webhooks",
    "/spec/template",
    "/spec/template/spec",
];
const BROAD_JQ: &[&str] = &[
    ".",
    ".spec",
    ".metadata",
    ".data",
    ".stringData",
    ".rules",
    ".webhooks",
    ".spec.template",
    ".spec.template.spec",
    ".spec.template.spec.containers",
    ".spec.template.spec.containers[]",
];

const HELP: &str = "Scope the entry to group/kind/name/namespace and the exact leaf; for list items use a name-keyed jq, e.g. `.spec.template.spec.containers[] | select(.name == \"app\") | .image`.";

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for (app, argo) in model.argo_apps() {
        for e in &argo.ignores {
            check_entry(model, Some(app), e, out);
        }
    }
    for e in model.all_argo_settings().into_iter().flat_map(|s| &s.ignores) {
        check_entry(model, None, e, out);
    }
    for app in &model.apps {
        if let Some(flux) = &app.flux {
            for rule in model.flux_ignores(app) {
                check_flux(app, rule, out);
            }
            drift_detection_opt_outs(model, app, flux, out);
        }
    }
}

/// helm-controller's per-object opt-out: the label or annotation
/// `helm.toolkit.fluxcd.io/driftDetection: disabled` takes an object out of drift detection
/// and correction. On a few objects it is a scoped exception; on this many, most of the
/// release is never corrected, which an ignore rule per path would say precisely.
const DRIFT_OPT_OUT: &str = "helm.toolkit.fluxcd.io/driftDetection";
const MANY_OPT_OUTS: usize = 3;

fn drift_detection_opt_outs(
    model: &Model,
    app: &App,
    flux: &crate::gitops::model::flux::FluxApp,
    out: &mut Vec<Finding>,
) {
    // With detection off (the default) the marker changes nothing.
    if !matches!(flux.drift_mode.as_deref(), Some("enabled" | "warn")) {
        return;
    }
    let markers: Vec<(String, Span)> = model
        .objects_of(app)
        .filter_map(|mo| {
            let meta = mo.object.metadata()?;
            let marker = ["labels", "annotations"].iter().find_map(|m| {
                let e = meta.get(m)?.entry(DRIFT_OPT_OUT)?;
                (e.value.as_str() == Some("disabled")).then_some(e)
            })?;
            // A marker a chart prints from its values is edited on the values line.
            let at = crate::render::helm::values::written_at(&marker.value);
            let span = if at == marker.value.span {
                marker.key.span.cover(marker.value.span)
            } else {
                at
            };
            Some((format!("{}/{}", mo.object.kind, mo.object.name), span))
        })
        .collect();
    if markers.len() < MANY_OPT_OUTS {
        return;
    }
    let (first, span) = &markers[0];
    let others: Vec<&str> = markers[1..].iter().map(|(o, _)| o.as_str()).collect();
    let mut f = Finding::new(
        ID,
        Severity::Warning,
        format!(
            "{} objects of this release opt out of drift detection (`{DRIFT_OPT_OUT}: disabled`): {first}, {}; helm-controller corrects none of their fields",
            markers.len(),
            others.join(", ")
        ),
        *span,
    )
    .label("turns drift detection off")
    .help("Keep drift detection on and ignore only the fields another writer owns: `spec.driftDetection.ignore: [{paths: [/spec/replicas], target: {kind: Deployment, name: <name>}}]`.")
    .for_app(app);
    for (what, other) in &markers[1..] {
        if other != span {
            f = f.secondary(*other, format!("{what} opts out too"));
        }
    }
    out.push(f);
}

/// Flux ignore rules: no `target` (the Flux docs warn it matches every object), a
/// `.*` target field, the whole document (`""`) or a whole subtree.
fn check_flux(app: &App, rule: &FluxIgnore, out: &mut Vec<Finding>) {
    for p in &rule.paths {
        let t = p.text.trim_end_matches('/');
        if p.text.is_empty() {
            emit(
                out,
                Some(app),
                p.span,
                "ignoring `\"\"` hides the whole document of every matched object".into(),
                "whole-document ignore",
            );
        } else if BROAD_POINTERS.contains(&t) {
            emit(
                out,
                Some(app),
                p.span,
                format!(
                    "ignoring `{}` hides every change below it, including real drift",
                    p.text
                ),
                "whole-subtree ignore",
            );
        }
    }
    match &rule.target {
        None => emit(
            out,
            Some(app),
            rule.span,
            "Flux ignore rule without `target` applies to every object of this app".into(),
            "applies to every object",
        ),
        Some(target) => {
            for (field, pattern) in target {
                if matches!(pattern.as_str(), ".*" | "^.*$" | ".+" | "^.+$") {
                    emit(
                        out,
                        Some(app),
                        rule.span,
                        format!("Flux ignore target `{field}: {pattern}` matches everything"),
                        "matches every value",
                    );
                }
            }
        }
    }
}

fn emit(out: &mut Vec<Finding>, app: Option<&App>, span: Span, msg: String, label: &str) {
    let mut f = Finding::new(ID, Severity::Warning, msg, span)
        .label(label)
        .help(HELP);
    if let Some(app) = app {
        f = f.for_app(app);
    }
    out.push(f);
}

fn check_entry(model: &Model, app: Option<&App>, e: &IgnoreEntry, out: &mut Vec<Finding>) {
    for p in &e.json_pointers {
        let t = p.text.trim_end_matches('/');
        if BROAD_POINTERS.contains(&t) {
            emit(
                out,
                app,
                p.span,
                format!(
                    "ignoring `{}` hides every change below it, including real drift",
                    p.text
                ),
                "whole-subtree ignore",
            );
        }
    }
    for p in &e.jq_paths {
        if BROAD_JQ.contains(&p.text.trim()) {
            emit(
                out,
                app,
                p.span,
                format!(
                    "ignoring `{}` hides every change below it, including real drift",
                    p.text
                ),
                "whole-subtree ignore",
            );
        }
    }
    let wildcard_kind = e.kind.as_deref().is_some_and(|k| k.contains('*'));
    let wildcard_group = e.group.as_deref() == Some("*");
    let only_status = !e.json_pointers.is_empty()
        && e.json_pointers.iter().all(|p| p.text == "/status")
        && e.jq_paths.is_empty()
        && e.managers.is_empty();
    if wildcard_kind && e.name.is_none() && !only_status {
        let what = if matches!(e.origin, IgnoreOrigin::System { .. }) {
            "system-wide ignore for every kind"
        } else if wildcard_group {
            "ignore for every group and kind"
        } else {
            "ignore for a wildcard kind"
        };
        let managers = if e.managers.is_empty() {
            String::new()
        } else {
            " (managedFieldsManagers on every kind hides every field that manager touches)".into()
        };
        emit(
            out,
            app,
            e.span,
            format!("{what} without a name{managers}"),
            "applies to every object",
        );
    }
    // An unnamed entry matching several rendered objects for a workload-specific path.
    if let Some(app) = app
        && e.name.is_none()
        && !wildcard_kind
    {
        let matched = model
            .objects_of(app)
            .filter(|mo| e.matches(&mo.object, &mo.namespace))
            .count();
        let specific = e.paths().iter().any(|(p, _)| {
            p.first().map(String::as_str) == Some("spec") && p.len() >= 2 && p[1] != "replicas"
        });
        if matched >= 3 && specific {
            emit(
                out,
                Some(app),
                e.span,
                format!(
                    "entry without `name` matches {matched} objects of this app for a workload-specific path"
                ),
                "unscoped entry",
            );
        }
    }
}
