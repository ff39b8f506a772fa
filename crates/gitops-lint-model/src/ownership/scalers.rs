//! Autoscalers in the repo and what they own: HPA, KEDA ScaledObject, VPA,
//! Argo Rollouts `workloadRef`.

use crate::gitops::{Model, ModelObject};
use crate::source::Span;
use crate::yaml::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalerKind {
    Hpa,
    Keda,
    Vpa,
    RolloutWorkloadRef,
}

/// A scaler with its target (`group`, `kind`, `name` in the scaler's namespace).
pub struct Scaler<'a> {
    pub kind: ScalerKind,
    pub obj: &'a ModelObject,
    pub target: (String, String, String),
    /// The line naming the target.
    pub target_span: Span,
    /// HPA: resources it scales on (`cpu`, `memory`); VPA: resources it controls.
    pub resources: Vec<String>,
    /// VPA: does it change running pods (`Recreate`, `Auto`, `InPlaceOrRecreate`, unset)?
    pub active: bool,
    /// VPA: the `updateMode` line, when written.
    pub mode_span: Option<Span>,
}

impl Scaler<'_> {
    pub fn describe(&self) -> String {
        let what = match self.kind {
            ScalerKind::Hpa => "HorizontalPodAutoscaler",
            ScalerKind::Keda => "KEDA ScaledObject",
            ScalerKind::Vpa => "VerticalPodAutoscaler",
            ScalerKind::RolloutWorkloadRef => "Rollout (workloadRef)",
        };
        format!("{what} {}/{}", self.obj.namespace, self.obj.object.name)
    }
}

fn group_of(api_version: &str) -> String {
    api_version
        .split_once('/')
        .map(|(g, _)| g.to_string())
        .unwrap_or_default()
}

fn hpa_resources(o: &crate::object::Object) -> Vec<String> {
    if o.api_version == "autoscaling/v1" {
        return vec!["cpu".into()];
    }
    let metrics = o.root.get_path(&["spec", "metrics"]).and_then(Node::as_seq);
    let Some(metrics) = metrics else {
        // autoscaling/v2 without metrics defaults to 80% CPU.
        return vec!["cpu".into()];
    };
    metrics
        .iter()
        .filter_map(|m| {
            let ty = m.get_str("type")?;
            let inner = match ty {
                "Resource" => m.get("resource")?,
                "ContainerResource" => m.get("containerResource")?,
                _ => return None,
            };
            inner.get("name").and_then(Node::scalar_text)
        })
        .collect()
}

fn vpa_resources(spec: &Node) -> Vec<String> {
    let policies = spec
        .get_path(&["resourcePolicy", "containerPolicies"])
        .and_then(Node::as_seq)
        .unwrap_or_default();
    let mut out = Vec::new();
    for p in policies {
        match p.get("controlledResources").and_then(Node::as_seq) {
            Some(list) => out.extend(list.iter().filter_map(Node::scalar_text)),
            // A policy without the list controls both.
            None => {
                if p.get_str("mode") != Some("Off") {
                    out.extend(["cpu".to_string(), "memory".to_string()]);
                }
            }
        }
    }
    if policies.is_empty() {
        out.extend(["cpu".to_string(), "memory".to_string()]);
    }
    out.sort();
    out.dedup();
    out
}

pub fn scaler_of(mo: &ModelObject) -> Option<Scaler<'_>> {
    let o = &mo.object;
    let spec = o.root.get("spec")?;
    let (kind, reference, default_api, default_kind) = match (o.group(), o.kind.as_str()) {
        ("autoscaling", "HorizontalPodAutoscaler") => {
            (ScalerKind::Hpa, spec.get("scaleTargetRef")?, "", "")
        }
        ("keda.sh", "ScaledObject") => {
            if o.annotation("autoscaling.keda.sh/paused") == Some("true") {
                return None;
            }
            (
                ScalerKind::Keda,
                spec.get("scaleTargetRef")?,
                "apps/v1",
                "Deployment",
            )
        }
        ("autoscaling.k8s.io", "VerticalPodAutoscaler") => {
            (ScalerKind::Vpa, spec.get("targetRef")?, "", "")
        }
        ("argoproj.io", "Rollout") => {
            let r = spec.get("workloadRef")?;
            (ScalerKind::RolloutWorkloadRef, r, "apps/v1", "Deployment")
        }
        _ => return None,
    };
    let name = reference.get("name")?;
    let mode = spec.get_path(&["updatePolicy", "updateMode"]);
    let active = !matches!(mode.and_then(Node::as_str), Some("Off") | Some("Initial"));
    Some(Scaler {
        kind,
        obj: mo,
        target: (
            group_of(reference.get_str("apiVersion").unwrap_or(default_api)),
            reference
                .get_str("kind")
                .unwrap_or(default_kind)
                .to_string(),
            name.scalar_text()?,
        ),
        target_span: name.span,
        resources: match kind {
            ScalerKind::Hpa => hpa_resources(o),
            ScalerKind::Vpa => vpa_resources(spec),
            _ => Vec::new(),
        },
        active,
        mode_span: mode.map(|m| m.span),
    })
}

pub fn scalers(model: &Model) -> Vec<Scaler<'_>> {
    model.objects.iter().filter_map(scaler_of).collect()
}
