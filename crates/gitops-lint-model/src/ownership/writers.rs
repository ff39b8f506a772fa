//! One question for every rule: for a rendered object, who else writes which of its
//! fields? Policies and platform facts (through [`Ownership`]), autoscalers
//! and the controller knowledge base (`kb.rs`), whether or not Git declares the field.

use super::kb;
use super::path::Pattern;
use super::selector::Tri;
use super::{Mode, Ownership};
use crate::gitops::{Model, ModelObject};
use crate::source::Span;

/// What kind of party writes the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriterKind {
    /// A mutating policy or webhook (repo or platform facts).
    Admission,
    /// A background mutation or a controller acting after apply.
    Controller,
    /// An autoscaler writing `spec.replicas`.
    Autoscaler,
    /// The API server allocating a value.
    ApiServer,
}

#[derive(Clone, Debug)]
pub struct FieldWriter {
    pub path: Pattern,
    pub owner: String,
    pub kind: WriterKind,
    /// Only sets the field when absent (never fights a declared value).
    pub add_if_absent: bool,
    /// `Maybe` when the repo cannot tell whether it applies.
    pub applies: Tri,
    /// Where the repo says so.
    pub span: Option<Span>,
}

fn controller(
    path: Option<Pattern>,
    owner: &str,
    kind: WriterKind,
    span: Option<Span>,
) -> Option<FieldWriter> {
    Some(FieldWriter {
        path: path?,
        owner: owner.to_string(),
        kind,
        add_if_absent: false,
        applies: Tri::Yes,
        span,
    })
}

/// Everyone the repo shows writing fields of `mo`.
pub fn field_writers(model: &Model, ownership: &Ownership, mo: &ModelObject) -> Vec<FieldWriter> {
    let mut out = Vec::new();
    let o = &mo.object;
    for m in &ownership.mutators {
        let (applies, prefix) = ownership.applies(model, m, mo);
        if applies == Tri::No {
            continue;
        }
        for w in &m.writes {
            out.push(FieldWriter {
                path: w.path.under(prefix),
                owner: m.owner.clone(),
                kind: match m.firing {
                    super::Firing::Background => WriterKind::Controller,
                    super::Firing::Admission { .. } => WriterKind::Admission,
                },
                add_if_absent: w.mode == Mode::AddIfAbsent,
                applies,
                span: Some(m.span),
            });
        }
    }
    for s in &ownership.replica_writers {
        let targets = s.namespace == mo.namespace
            && s.name == o.name
            && s.kind == o.kind
            && (s.group.is_empty() || s.group == o.group());
        if targets {
            out.extend(controller(
                Some(Pattern::keys(&["spec", "replicas"])),
                &s.owner,
                WriterKind::Autoscaler,
                Some(s.span),
            ));
        }
    }
    // Patch Jobs only matter for webhook configurations and other injectables; looking
    // them up for every object would be quadratic.
    let injectable = kb::ca_bundle_path(o.group(), &o.kind).is_some();
    let patchers = if injectable {
        kb::webhook_patchers(model, mo.app)
    } else {
        Vec::new()
    };
    let operator_writes = ownership.operator_writes(model, mo);
    let injected_on_request = operator_writes.iter().any(|w| w.requested_by_annotation());
    if !injected_on_request && let Some(p) = patchers.first() {
        out.extend(controller(
            kb::ca_bundle_path(o.group(), &o.kind),
            &format!("webhook patch Job {}", p.name),
            WriterKind::Controller,
            Some(p.span),
        ));
    }
    let flips_failure_policy = operator_writes
        .iter()
        .any(|w| w.field.fact.path == "webhooks[*].failurePolicy");
    for w in operator_writes {
        out.extend(controller(
            Some(w.path),
            &w.operator.name,
            WriterKind::Controller,
            Some(w.evidence),
        ));
    }
    if !flips_failure_policy
        && o.kind.ends_with("WebhookConfiguration")
        && let Some(p) = patchers.iter().find(|p| p.failure_policy.is_some())
    {
        out.extend(controller(
            Pattern::parse_dotted("webhooks[*].failurePolicy"),
            &format!("webhook patch Job {}", p.name),
            WriterKind::Controller,
            Some(p.span),
        ));
    }
    if o.kind == "ClusterRole" && o.root.get("aggregationRule").is_some() {
        out.extend(controller(
            Some(Pattern::keys(&["rules"])),
            "clusterrole-aggregation controller",
            WriterKind::Controller,
            o.root.entry("aggregationRule").map(|e| e.key.span),
        ));
    }
    if o.kind == "Secret"
        && let Some((who, span)) = kb::cert_manager_secret(model, &mo.namespace, &o.name)
    {
        for p in [&["data"][..], &["metadata", "annotations"][..]] {
            out.extend(controller(
                Some(Pattern::keys(p)),
                &format!("cert-manager ({who})"),
                WriterKind::Controller,
                Some(span),
            ));
        }
    }
    // Argo CD and Flux objects declare their own deletion finalizers by design.
    let gitops_kind = o.group() == "argoproj.io" || o.group().ends_with(".fluxcd.io");
    if !kb::is_builtin_group(o.group()) && !gitops_kind {
        out.extend(controller(
            Some(Pattern::keys(&["metadata", "finalizers"])),
            "the resource's controller",
            WriterKind::Controller,
            None,
        ));
    }
    if o.group() == "autoscaling" && o.kind == "HorizontalPodAutoscaler" {
        out.extend(controller(
            Some(Pattern::keys(&["spec", "metrics"])),
            "the HPA controller (reorders)",
            WriterKind::Controller,
            None,
        ));
    }
    if o.group().is_empty() && o.kind == "Service" {
        for f in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            out.extend(controller(
                Some(Pattern::keys(&["spec", f])),
                "the API server",
                WriterKind::ApiServer,
                None,
            ));
        }
    }
    out
}

/// Does anyone but Git write `path` of `mo` (for rules asking "is this ignore still
/// needed", "is this field contested")?
pub fn written_by_others(
    model: &Model,
    ownership: &Ownership,
    mo: &ModelObject,
    path: &[String],
) -> bool {
    field_writers(model, ownership, mo)
        .iter()
        .any(|w| w.touches(path))
}

impl FieldWriter {
    /// Does this writer write `path`, a parent of it, or something below it?
    pub fn touches(&self, path: &[String]) -> bool {
        self.applies != Tri::No && (self.path.covers(path) || pattern_below(&self.path, path))
    }
}

/// A writer of a field below `path` (an ignore of `/spec/template` covers a policy's
/// `spec.template.spec.containers[*].imagePullPolicy`).
fn pattern_below(pattern: &Pattern, path: &[String]) -> bool {
    let prefix = Pattern(pattern.0.iter().take(path.len()).cloned().collect());
    pattern.0.len() > path.len() && prefix.covers(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_cover_concrete_paths() {
        let p = Pattern::parse_dotted("spec.template.spec.containers[name:*].imagePullPolicy");
        let path: Vec<String> = [
            "spec",
            "template",
            "spec",
            "containers",
            "0",
            "imagePullPolicy",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert!(p.as_ref().is_some_and(|p| p.covers(&path)));
        assert!(p.as_ref().is_some_and(|p| pattern_below(p, &path[..2])));
        assert!(!Pattern::keys(&["spec", "replicas"]).covers(&path));
    }
}
