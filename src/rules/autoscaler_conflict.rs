//! Several scalers on one workload — two HPAs, HPA + KEDA, an active VPA with
//! an HPA on cpu/memory, an HPA on the Deployment a Rollout has taken over.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::util::about;
use crate::finding::{Finding, Severity};
use crate::gitops::Model;
use crate::ownership::scalers::{Scaler, ScalerKind, scaler_of};

pub const ID: &str = "autoscaler-conflict";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Error,
            when: "KEDA is one of the scalers: a ScaledObject and an HPA it does not adopt, or two ScaledObjects, on one workload (in the repository or in `profile.autoscalers`)",
        },
    ],
    summary: "several scalers on one workload (HPA+KEDA, HPA+VPA on cpu/memory)",
    doc: include_str!("../../rules/autoscaler-conflict.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Of(&[
        "autoscaling/HorizontalPodAutoscaler",
        "keda.sh/ScaledObject",
        "autoscaling.k8s.io/VerticalPodAutoscaler",
        "argoproj.io/Rollout",
    ]),
};

/// KEDA adopting an existing HPA on purpose (`scaledobject.keda.sh/transfer-hpa-ownership`
/// with the HPA's name in `advanced.horizontalPodAutoscalerConfig.name`).
fn keda_adopts(keda: &Scaler, hpa: &Scaler) -> bool {
    let o = &keda.obj.object;
    o.annotation("scaledobject.keda.sh/transfer-hpa-ownership") == Some("true")
        && o.root
            .get_path(&["spec", "advanced", "horizontalPodAutoscalerConfig", "name"])
            .and_then(crate::yaml::Node::scalar_text)
            .as_deref()
            == Some(hpa.obj.object.name.as_str())
}

fn same_target(a: &Scaler, b: &Scaler) -> bool {
    a.obj.namespace == b.obj.namespace
        && a.target.2 == b.target.2
        && a.target.1 == b.target.1
        && (a.target.0 == b.target.0 || a.target.0.is_empty() || b.target.0.is_empty())
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let all: Vec<Scaler> = model.in_scope().filter_map(scaler_of).collect();
    for (i, s) in all.iter().enumerate() {
        for other in &all[..i] {
            if let Some(f) = conflict(model, other, s) {
                out.push(f);
            }
        }
        for p in &model.profile.autoscalers {
            out.extend(conflict_with_profile(model, s, p));
        }
        // An HPA on the Deployment a Rollout scales down (workloadRef).
        if s.kind == ScalerKind::Hpa
            && let Some(rollout) = all
                .iter()
                .find(|r| {
                    r.kind == ScalerKind::RolloutWorkloadRef
                        && same_target(r, s)
                        && !super::util::in_other_clusters(model, r.obj, s.obj)
                })
        {
            let f = Finding::new(
                ID,
                Severity::Warning,
                format!(
                    "{} scales Deployment {}, which {} has taken over (workloadRef): point the HPA at the Rollout",
                    s.describe(),
                    s.target.2,
                    rollout.describe()
                ),
                s.target_span,
            )
            .label("targets the Deployment")
            .secondary(rollout.target_span, format!("{} references it", rollout.describe()))
            .help("Set scaleTargetRef to apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: <rollout>.");
            out.push(about(f, model.app_of(s.obj), s.obj));
        }
    }
}

/// A horizontal scaler in the repo on the same workload as one the cluster has outside it
/// (`profile.autoscalers`): the finding lands on the repo's scaler, the profile entry is the
/// related line.
fn conflict_with_profile(
    model: &Model,
    s: &Scaler,
    p: &crate::config::ProfileAutoscaler,
) -> Option<Finding> {
    let same_target = s.obj.namespace == p.namespace
        && s.target.2 == p.target_name
        && s.target.1 == p.target_kind
        && (s.target.0 == p.target_group || s.target.0.is_empty());
    if !same_target {
        return None;
    }
    let why = match (s.kind, p.kind.as_str()) {
        (ScalerKind::Hpa, "HorizontalPodAutoscaler") => {
            "two HPAs write spec.replicas of one workload and fight each other"
        }
        (ScalerKind::Hpa, _) | (ScalerKind::Keda, "HorizontalPodAutoscaler") => {
            "KEDA creates its own HPA (keda-hpa-<name>) for the target, so two HPAs fight"
        }
        (ScalerKind::Keda, _) => "two ScaledObjects each create an HPA for one workload",
        _ => return None,
    };
    let severity = if s.kind == ScalerKind::Hpa && p.kind == "HorizontalPodAutoscaler" {
        Severity::Warning
    } else {
        Severity::Error
    };
    let f = Finding::new(
        ID,
        severity,
        format!(
            "{} and {} both scale {} {}/{}: {why}",
            s.describe(),
            p.describe(),
            p.target_kind,
            p.namespace,
            p.target_name
        ),
        s.target_span,
    )
    .label("second scaler for the same workload")
    .secondary(p.span, format!("{} targets it too", p.describe()))
    .help(
        "One horizontal scaler per workload: remove this one, or the one outside the repo \
         (and its profile entry).",
    );
    Some(about(f, model.app_of(s.obj), s.obj))
}

/// One object in the cluster: a base rendered by several apps (one overlay per cluster)
/// gives copies of one HPA, and an API object is its group, kind, namespace and name, so
/// copies are one autoscaler. Whether two apps may both own it is `shared-resource`'s question.
fn same_object(a: &Scaler, b: &Scaler) -> bool {
    let (x, y) = (&a.obj.object, &b.obj.object);
    x.group() == y.group() && x.kind == y.kind && x.name == y.name && a.obj.namespace == b.obj.namespace
}

/// `a` came first in the repo; the finding lands on `b`.
fn conflict(model: &Model, a: &Scaler, b: &Scaler) -> Option<Finding> {
    if !same_target(a, b)
        || same_object(a, b)
        || super::util::in_other_clusters(model, a.obj, b.obj)
    {
        return None;
    }
    let target = format!("{} {}/{}", a.target.1, b.obj.namespace, a.target.2);
    let (severity, why, at) = match (a.kind, b.kind) {
        (ScalerKind::Hpa, ScalerKind::Hpa) => (
            Severity::Warning,
            "two HPAs write spec.replicas of one workload and fight each other".to_string(),
            b.target_span,
        ),
        (ScalerKind::Hpa, ScalerKind::Keda) | (ScalerKind::Keda, ScalerKind::Hpa)
            if !(keda_adopts(a, b) || keda_adopts(b, a)) =>
        {
            (
                Severity::Error,
                "KEDA creates its own HPA (keda-hpa-<name>) for the target, so two HPAs fight"
                    .to_string(),
                b.target_span,
            )
        }
        (ScalerKind::Keda, ScalerKind::Keda) => (
            Severity::Error,
            "two ScaledObjects each create an HPA for one workload".to_string(),
            b.target_span,
        ),
        (ScalerKind::Vpa, ScalerKind::Hpa) | (ScalerKind::Hpa, ScalerKind::Vpa) => {
            let (vpa, hpa) = if a.kind == ScalerKind::Vpa {
                (a, b)
            } else {
                (b, a)
            };
            if !vpa.active {
                return None;
            }
            let shared: Vec<&String> = hpa
                .resources
                .iter()
                .filter(|r| matches!(r.as_str(), "cpu" | "memory") && vpa.resources.contains(r))
                .collect();
            let first = shared.first()?;
            (
                Severity::Warning,
                format!(
                    "the VPA changes {first} requests while the HPA scales on {first} utilization, \
                     so each undoes the other's signal"
                ),
                vpa.mode_span.unwrap_or(vpa.target_span),
            )
        }
        _ => return None,
    };
    let f = Finding::new(
        ID,
        severity,
        format!(
            "{} and {} both scale {target}: {why}",
            a.describe(),
            b.describe()
        ),
        at,
    )
    .label("second scaler for the same workload")
    .secondary(a.target_span, format!("{} targets it too", a.describe()))
    .help(
        "One horizontal scaler per workload. With a VPA: updateMode Off/Initial, or scale the \
         HPA on custom/external metrics, or limit the VPA's controlledResources to the \
         resource the HPA does not use.",
    );
    Some(about(f, model.app_of(b.obj), b.obj))
}
