//! Argo CD's tracking label overwritten, copied, too long or ambiguous.

use super::util::ForApp;
use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::util::{about, object_id};
use crate::finding::{Finding, Severity};
use crate::gitops::Model;

pub const ID: &str = "instance-label-clash";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Error,
            when: "the app name is longer than 63 characters under label tracking (every sync fails), or a Prometheus Operator selector matches the label value Argo CD overwrites",
        },
        Grade {
            severity: Severity::Info,
            when: "the app name is longer than 63 characters under annotation+label tracking (only the informational label is truncated), or, under annotation tracking, an object carries a committed tracking-id naming another app",
        },
    ],
    summary: "Argo CD tracking label overwritten, copied, too long or ambiguous",
    doc: include_str!("../../rules/instance-label-clash.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

const DEFAULT_KEY: &str = "app.kubernetes.io/instance";

/// Does any rendered object select objects by `key=value` through metadata labels
/// (ServiceMonitor/PodMonitor selectors, Prometheus selectors)?
fn selected_by(model: &Model, key: &str, value: &str) -> Option<String> {
    model.objects.iter().find_map(|mo| {
        let o = &mo.object;
        if !o.group().ends_with("monitoring.coreos.com") {
            return None;
        }
        let spec = o.root.get("spec")?;
        for sel in ["selector", "serviceMonitorSelector", "podMonitorSelector"] {
            if spec
                .get(sel)
                .and_then(|s| s.get("matchLabels"))
                .and_then(|m| m.get_str(key))
                == Some(value)
            {
                return Some(object_id(mo));
            }
        }
        None
    })
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    // Argo CD ≥ 3.0 tracks by annotation unless argocd-cm says otherwise, older releases by label
    // (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_tracking/): the release that
    // runs the app (`Model::argo_version`).
    for (app, argo) in model.argo_apps() {
        let default_method = if model.argo_version(app).before(3, 0) {
            "label"
        } else {
            "annotation"
        };
        // The settings of the instance that runs this app.
        let settings = model.argo_settings(app);
        let method = settings
            .tracking_method
            .as_deref()
            .unwrap_or(default_method);
        let key = settings
            .instance_label_key
            .as_deref()
            .unwrap_or(DEFAULT_KEY);
        let label_tracking = method == "label" || method == "annotation+label";
        if method == "annotation+label" && app.name.len() > 63 {
            let span = app.span.unwrap_or_default();
            out.push(Finding::new(ID, Severity::Info, format!("app name `{}` is {} characters: with annotation+label tracking Argo CD truncates the informational `{key}` label to 63", app.name, app.name.len()), span).label("label value truncated").for_app(app).help("Selectors on the full app name will not match the label; tracking itself uses the annotation."));
        }
        if method == "label" && app.name.len() > 63 {
            let span = app.span.unwrap_or_default();
            out.push(Finding::new(ID, Severity::Error, format!("app name `{}` is {} characters: label tracking writes it into the `{key}` label, which allows at most 63, so every sync fails", app.name, app.name.len()), span).label("too long for a label value").for_app(app).help("Shorten the Application name or switch to annotation tracking (application.resourceTrackingMethod: annotation)."));
        }
        for mo in model.objects_of(app).filter(|mo| model.applied_on_sync(mo)) {
            if label_tracking {
                let Some(entry) = mo
                    .object
                    .metadata()
                    .and_then(|m| m.get("labels"))
                    .and_then(|l| l.entry(key))
                else {
                    continue;
                };
                let value = entry.value.scalar_text().unwrap_or_default();
                if value == app.name {
                    continue;
                }
                let (severity, extra) = match selected_by(model, key, &value) {
                    Some(selector) => (
                        Severity::Error,
                        format!("; {selector} selects by `{key}: {value}` and stops matching"),
                    ),
                    None => (Severity::Warning, String::new()),
                };
                // annotation+label tracks by annotation but still writes the label.
                let how = match (method, settings.tracking_method.is_some()) {
                    ("label", true) => "tracks it with that label".to_string(),
                    // Say why: the release's default (label before 3.0).
                    ("label", false) => format!(
                        "{} tracks it with that label (the default before 3.0)",
                        model.argo_version(app).text
                    ),
                    _ => "writes that label beside its tracking annotation".to_string(),
                };
                let mut f = Finding::new(ID, severity, format!("{} sets `{key}: {value}`, but Argo CD {how} and overwrites it with `{}`{extra}", object_id(mo), app.name), entry.key.span.cover(entry.value.span))
                    .label("overwritten by Argo CD's tracking label")
                    .help("Keep Helm releaseName equal to the app name, do not put the tracking key in kustomize commonLabels, or use annotation tracking / application.instanceLabelKey: argocd.argoproj.io/instance.");
                if settings.tracking_method.is_none()
                    && let Some(at) = model.argo_version(app).span()
                {
                    f = f.secondary(at, "the Argo CD release judged with");
                }
                // A chart labelling with its release name: the line to edit is the
                // Application's releaseName.
                if let Some(release) = argo.sources.iter().find_map(|s| {
                    s.node
                        .get_path(&["helm", "releaseName"])
                        .filter(|n| n.scalar_text().as_deref() == Some(value.as_str()))
                }) {
                    f = f.secondary(release.span, "Helm release name differs from the app name");
                }
                out.push(about(f, app, mo));
            } else if let Some(ann) = mo
                .object
                .metadata()
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.entry("argocd.argoproj.io/tracking-id"))
            {
                let value = ann.value.as_str().unwrap_or_default();
                if !value.starts_with(&format!("{}:", app.name)) {
                    out.push(about(
                        Finding::new(ID, Severity::Info, format!("{} carries a committed tracking-id `{value}` that names another app (a copied manifest?)", object_id(mo)), ann.key.span.cover(ann.value.span))
                            .label("copied tracking annotation")
                            .help("Remove the tracking-id annotation; Argo CD sets it."),
                        app,
                        mo,
                    ));
                }
            }
        }
    }
}
