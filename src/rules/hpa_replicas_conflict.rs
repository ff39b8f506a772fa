//! Git declares `spec.replicas` on a workload an autoscaler owns.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::util::{about, entry_at, object_id};
use crate::finding::{Edit, Finding, Fix, Severity};
use crate::gitops::ignore::IgnoreEntry;
use crate::gitops::{App, Model, ModelObject};
use crate::yaml::Node;

pub const ID: &str = "hpa-replicas-conflict";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "the app does not re-apply Git on its own: an Argo CD Application without automated sync, or a HelmRelease without drift detection",
        },
        Grade {
            severity: Severity::Info,
            when: "the autoscaler leaves the declared count as it is: an HPA whose minReplicas and maxReplicas both equal it, or `replicas: 0` (a pause) under a scaler whose minimum is above 0",
        },
    ],
    summary: "Git declares spec.replicas on a workload an autoscaler owns",
    doc: include_str!("../../rules/hpa-replicas-conflict.md"),
    fix: FixAvailability::Safe,
    removal: true,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

#[derive(Clone, Copy, PartialEq)]
enum ScalerKind {
    Hpa,
    Keda,
    RolloutWorkloadRef,
}

struct Scaler<'m> {
    kind: ScalerKind,
    /// The scaler in the repo (`None`: one the profile says the cluster has).
    obj: Option<&'m ModelObject>,
    /// The scaler's namespace (its target is in the same one).
    namespace: String,
    /// For messages: `HorizontalPodAutoscaler web/api`.
    who: String,
    target_group: String,
    target_kind: String,
    target_name: String,
    /// The node naming the target (secondary label).
    target_span: crate::source::Span,
    min_replicas: Option<i64>,
    max_replicas: Option<i64>,
}

fn group_of(api_version: &str) -> String {
    api_version
        .split_once('/')
        .map(|(g, _)| g.to_string())
        .unwrap_or_default()
}

fn scaler_of<'m>(mo: &'m ModelObject) -> Option<Scaler<'m>> {
    let o = &mo.object;
    let (kind, reference) = match (o.group(), o.kind.as_str()) {
        ("autoscaling", "HorizontalPodAutoscaler") => (
            ScalerKind::Hpa,
            o.root.get_path(&["spec", "scaleTargetRef"])?,
        ),
        ("keda.sh", "ScaledObject") => {
            if o.annotation("autoscaling.keda.sh/paused") == Some("true") {
                return None;
            }
            (
                ScalerKind::Keda,
                o.root.get_path(&["spec", "scaleTargetRef"])?,
            )
        }
        ("argoproj.io", "Rollout") => {
            let r = o.root.get_path(&["spec", "workloadRef"])?;
            // Only a Rollout that scales the referenced workload down takes it over.
            match r.get_str("scaleDown") {
                Some("onsuccess") | Some("progressively") => {}
                _ => return None,
            }
            (ScalerKind::RolloutWorkloadRef, r)
        }
        _ => return None,
    };
    let name_node = reference.get("name")?;
    let default_api = if kind == ScalerKind::Keda {
        "apps/v1"
    } else {
        ""
    };
    let default_kind = if kind == ScalerKind::Keda {
        "Deployment"
    } else {
        ""
    };
    let what = match kind {
        ScalerKind::Hpa => "HorizontalPodAutoscaler",
        ScalerKind::Keda => "KEDA ScaledObject",
        ScalerKind::RolloutWorkloadRef => "Rollout (workloadRef)",
    };
    Some(Scaler {
        kind,
        obj: Some(mo),
        namespace: mo.namespace.clone(),
        who: format!("{what} {}/{}", mo.namespace, o.name),
        target_group: group_of(reference.get_str("apiVersion").unwrap_or(default_api)),
        target_kind: reference
            .get_str("kind")
            .unwrap_or(default_kind)
            .to_string(),
        target_name: name_node.scalar_text()?,
        target_span: name_node.span,
        min_replicas: o
            .root
            .get_path(&["spec", "minReplicas"])
            .and_then(Node::as_i64)
            .or(o
                .root
                .get_path(&["spec", "minReplicaCount"])
                .and_then(Node::as_i64)),
        max_replicas: o
            .root
            .get_path(&["spec", "maxReplicas"])
            .and_then(Node::as_i64)
            .or(o
                .root
                .get_path(&["spec", "maxReplicaCount"])
                .and_then(Node::as_i64)),
    })
}

/// An autoscaler the cluster has but the repo does not (`profile.autoscalers`), located at
/// its entry in `.gitops-lint.yaml`.
fn profile_scaler<'m>(p: &crate::config::ProfileAutoscaler) -> Scaler<'m> {
    Scaler {
        obj: None,
        kind: if p.kind == "ScaledObject" {
            ScalerKind::Keda
        } else {
            ScalerKind::Hpa
        },
        namespace: p.namespace.clone(),
        who: p.describe(),
        target_group: p.target_group.clone(),
        target_kind: p.target_kind.clone(),
        target_name: p.target_name.clone(),
        target_span: p.span,
        min_replicas: p.min_replicas,
        max_replicas: p.max_replicas,
    }
}

/// An ignore entry that covers `/spec/replicas` of this object (A1.1 matching), and for a
/// plain HPA also `managedFieldsManagers: [kube-controller-manager]`.
fn covering_ignore<'a>(
    ignores: impl Iterator<Item = &'a IgnoreEntry>,
    mo: &ModelObject,
    scaler: ScalerKind,
) -> Option<&'a IgnoreEntry> {
    let target = ["spec".to_string(), "replicas".to_string()];
    ignores.into_iter().find(|e| {
        e.matches(&mo.object, &mo.namespace)
            && (e
                .paths()
                .iter()
                .any(|(p, _)| !p.is_empty() && target.starts_with(p))
                || (scaler == ScalerKind::Hpa
                    && e.managers
                        .iter()
                        .any(|m| m.text == "kube-controller-manager")))
    })
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let scalers: Vec<Scaler> = model
        .objects
        .iter()
        .filter_map(scaler_of)
        .chain(model.profile.autoscalers.iter().map(profile_scaler))
        .collect();
    if scalers.is_empty() {
        return;
    }
    for mo in model.in_scope() {
        let Some(entry) = entry_at(&mo.object.root, &["spec", "replicas"]) else {
            continue;
        };
        let Some(scaler) = scalers.iter().find(|s| {
            s.target_name == mo.object.name
                && s.target_kind == mo.object.kind
                && s.target_group == mo.object.group()
                && s.namespace == mo.namespace
                && !s
                    .obj
                    .is_some_and(|o| super::util::in_other_clusters(model, o, mo))
        }) else {
            continue;
        };
        let app = model.app_of(mo);
        let replicas = entry.value.as_i64();
        let mut severity = if app.enforces() {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut note = None;
        if model
            .flux_ignores(app)
            .iter()
            .any(|i| i.covers(&["spec", "replicas"]) && i.matches(&mo.object, &mo.namespace))
        {
            continue; // Flux strips or adopts the live value of ignored paths
        }
        if let Some(argo) = &app.argo {
            let ignores = argo.ignores.iter().chain(model.argo_settings(app).ignores.iter());
            if let Some(ignore) = covering_ignore(ignores, mo, scaler.kind) {
                if argo.sync.has_option("RespectIgnoreDifferences=true") {
                    continue; // protected: ignored for status and kept live on sync
                }
                note = Some(ignore.span);
            }
        }
        // Known false positives: a pinned size, or a deliberate pause at zero.
        if scaler.kind == ScalerKind::Hpa
            && replicas.is_some()
            && scaler.min_replicas == replicas
            && scaler.max_replicas == replicas
        {
            severity = Severity::Info;
        }
        if replicas == Some(0) && scaler.min_replicas.is_some_and(|m| m > 0) {
            severity = Severity::Info;
        }
        out.push(finding(model, app, mo, entry, scaler, severity, note));
    }
}

/// How to make the autoscaler the only writer, with the ignore the app's controller reads
/// for the step between (so removing `replicas` does not scale the workload down once).
fn help(model: &Model, app: &App, mo: &ModelObject) -> String {
    let group = if mo.object.group().is_empty() {
        "\"\""
    } else {
        mo.object.group()
    };
    let ignore = match app.flux.as_ref().map(|f| &f.kind) {
        Some(crate::gitops::model::flux::FluxKind::HelmRelease) => format!(
            "spec.driftDetection.ignore: [{{paths: [/spec/replicas], target: {{kind: {}, name: {}}}}}] on the HelmRelease",
            mo.object.kind, mo.object.name
        ),
        Some(crate::gitops::model::flux::FluxKind::Kustomization) => {
            let (major, minor) = crate::gitops::model::versions::KUSTOMIZATION_IGNORE_SINCE;
            let version = model.flux_version(app);
            let note = if version.before(major, minor) {
                format!(
                    " (read from Flux {major}.{minor}; {} does not read it, so skip this step there)",
                    version.text
                )
            } else {
                String::new()
            };
            format!(
                "spec.ignore: [{{paths: [/spec/replicas], target: {{kind: {}, name: {}}}}}] on the Kustomization{note}",
                mo.object.kind, mo.object.name
            )
        }
        None => format!(
            "ignoreDifferences: [{{group: {group}, kind: {}, name: {}, jsonPointers: [/spec/replicas]}}] with syncOptions: [RespectIgnoreDifferences=true]",
            mo.object.kind, mo.object.name
        ),
    };
    format!(
        "The autoscaler must be the only writer of spec.replicas on {}. Stop rendering it \
         (Helm: wrap it in `{{{{- if not .Values.autoscaling.enabled }}}}`; Kustomize: drop the \
         `replicas:` entry or patch). Do it in two steps to avoid a one-time scale-down to 1: \
         (1) add an ignore scoped to this object — {ignore}; (2) then remove replicas from Git.",
        object_id(mo)
    )
}

fn finding(
    model: &Model,
    app: &App,
    mo: &ModelObject,
    entry: &crate::yaml::Entry,
    scaler: &Scaler,
    severity: Severity,
    ignore_without_respect: Option<crate::source::Span>,
) -> Finding {
    let value = entry
        .value
        .scalar_text()
        .unwrap_or_else(|| "<value>".into());
    // Rendered values may come from another file than their key (a patch, a values file):
    // the line to edit is where the value was written.
    let primary = if entry.key.span.file == entry.value.span.file {
        entry.key.span.cover(entry.value.span)
    } else {
        entry.value.span
    };
    let who = &scaler.who;
    let loop_kind = match &app.argo {
        Some(a) if a.sync.self_heal => {
            "Argo CD self-heal re-applies it within seconds of every scale"
        }
        Some(a) if a.sync.automated => "every automated sync resets the scale",
        Some(_) => "the app stays OutOfSync and every manual sync resets the scale",
        None => "every apply resets the scale",
    };
    let mut f = Finding::new(
        ID,
        severity,
        format!(
            "{} declares spec.replicas: {value}, but {who} owns the replica count; {loop_kind}",
            object_id(mo)
        ),
        primary,
    )
    .label(format!("replicas: {value} declared here"))
    .secondary(scaler.target_span, format!("scaled by {who}"))
    .field("spec.replicas")
    .help(help(model, app, mo));
    if let Some(related) = &entry.value.related {
        for r in related.iter() {
            f = f.secondary(r.span, r.label.clone());
        }
    }
    if let Some(span) = ignore_without_respect {
        f = f.secondary(
            span,
            "ignored for status only: without RespectIgnoreDifferences=true every sync resets it",
        );
    }
    if let Some(fix) = step_one_fix(model, app, mo, scaler, ignore_without_respect.is_some()) {
        f = f.with_fix(fix);
    } else if entry.key.span.file == entry.value.span.file {
        f = f.with_fix(Fix {
            title: "remove `replicas` (after the scoped ignore is in effect)".into(),
            safe: false,
            edits: vec![Edit {
                span: primary,
                replacement: String::new(),
            }],
        });
    }
    about(f, app, mo)
}

/// The autofix, the safe step 1: an ignore scoped to this object's `/spec/replicas`
/// (with a reason comment) and `RespectIgnoreDifferences=true`, so Argo CD keeps the
/// autoscaler's count. Removing `replicas` from Git (step 2) stays a person's decision.
fn step_one_fix(
    model: &Model,
    app: &App,
    mo: &ModelObject,
    scaler: &Scaler,
    ignored: bool,
) -> Option<Fix> {
    use super::app_edits::{add_ignore_entry, add_sync_option, yaml_scalar};
    let argo = app.argo.as_ref()?;
    let mut edits = Vec::new();
    if !ignored {
        let item = [
            format!("group: {}", yaml_scalar(mo.object.group())),
            format!("kind: {}", yaml_scalar(&mo.object.kind)),
            format!("name: {}", yaml_scalar(&mo.object.name)),
            format!("namespace: {}", yaml_scalar(&mo.namespace)),
            "jsonPointers:".to_string(),
            "  - /spec/replicas".to_string(),
        ];
        let reason = format!(
            "{} owns spec.replicas; Argo CD keeps its count (gitops-lint fix; next: remove replicas from Git)",
            scaler.who
        );
        edits.extend(add_ignore_entry(&model.map, argo, &reason, &item)?);
    }
    if !argo.sync.has_option("RespectIgnoreDifferences=true") {
        edits.push(add_sync_option(
            &model.map,
            argo,
            "RespectIgnoreDifferences=true",
        )?);
    }
    Some(Fix {
        title: if ignored {
            "add `RespectIgnoreDifferences=true` so the existing ignore keeps the live count".into()
        } else {
            "ignore /spec/replicas for this object with RespectIgnoreDifferences=true (step 1)"
                .into()
        },
        safe: true,
        edits,
    })
}
