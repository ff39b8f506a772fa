//! An enforcing owner (Argo self-heal, Flux) declares a field a legitimate
//! controller owns: aggregated ClusterRole `rules`, Secrets cert-manager writes, finalizers
//! on custom resources, multi-metric HPAs (the controller reorders them).

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::fixes::delete_entry;
use super::util::{about, entry_at, object_id};
use crate::finding::{Finding, Fix, Severity};
use crate::gitops::{App, Model, ModelObject};
use crate::ownership::covering_ignore;
use crate::ownership::kb::{cert_manager_secret, finalizer_in_group_domain, is_builtin_group};
use crate::ownership::operators::OperatorWrite;
use crate::source::Span;
use crate::yaml::{Entry, Node};

pub const ID: &str = "selfheal-external-owner";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Error,
            when: "an aggregated ClusterRole declares `rules` and its app heals drift (Argo CD self-heal, a Flux Kustomization, a HelmRelease with drift detection, or objects no app deploys), so the aggregation controller and the app loop",
        },
        Grade {
            severity: Severity::Info,
            when: "the app does not heal drift (Argo CD without self-heal, a HelmRelease without drift detection), or the field is an HPA's list of several metrics, which the controller may reorder",
        },
    ],
    summary: "self-heal/drift-correction on fields a legitimate controller owns",
    doc: include_str!("../../rules/selfheal-external-owner.md"),
    fix: FixAvailability::Safe,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// Does the owner correct drift continuously (Argo self-heal, Flux, standalone)?
fn heals(app: &App) -> bool {
    match &app.argo {
        Some(a) => a.sync.self_heal,
        None => app.enforces(),
    }
}

/// Does the repo's argocd-cm set `resource.compareoptions: ignoreAggregatedRoles: true`?
fn ignores_aggregated_roles(model: &Model) -> bool {
    let Some(text) = model
        .argo
        .decl
        .as_ref()
        .and_then(|cm| cm.root.get_path(&["data", "resource.compareoptions"]))
        .and_then(Node::as_str)
    else {
        return false;
    };
    text.lines().any(|l| {
        let l = l.trim();
        l.strip_prefix("ignoreAggregatedRoles:")
            .is_some_and(|v| v.trim().trim_matches(['"', '\'']) == "true")
    })
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let aggregated_ok = ignores_aggregated_roles(model);
    for mo in model.in_scope() {
        let o = &mo.object;
        let app = model.app_of(mo);
        let heal = heals(app);
        // Aggregated ClusterRole: the aggregation controller owns `rules`.
        if o.group() == "rbac.authorization.k8s.io"
            && o.kind == "ClusterRole"
            && o.root.get("aggregationRule").is_some()
            && !aggregated_ok
            && let Some(entry) = o.root.entry("rules")
        {
            let agg = o
                .root
                .entry("aggregationRule")
                .map(|e| e.key.span)
                .unwrap_or(o.span());
            let severity = if heal {
                Severity::Error
            } else {
                Severity::Info
            };
            let mut f = report(
                model,
                mo,
                entry,
                &["rules".into()],
                severity,
                "the clusterrole-aggregation controller",
                (
                    agg,
                    "aggregationRule: the controller fills rules from matching roles".into(),
                ),
            );
            if let Some(edit) = delete_entry(&model.map, entry) {
                f = f.map(|f| {
                    f.with_fix(Fix {
                        title: "remove `rules` (the aggregation controller owns them)".into(),
                        safe: true,
                        edits: vec![edit],
                    })
                });
            }
            out.extend(f);
            continue;
        }
        let severity = if heal {
            Severity::Warning
        } else {
            Severity::Info
        };
        // Secrets cert-manager writes (Certificate.spec.secretName, ingress-shim).
        if o.group().is_empty()
            && o.kind == "Secret"
            && let Some((who, span)) = cert_manager_secret(model, &mo.namespace, &o.name)
        {
            for key in ["data", "stringData"] {
                if let Some(entry) = o.root.entry(key) {
                    out.extend(report(
                        model,
                        mo,
                        entry,
                        &[key.into()],
                        severity,
                        "cert-manager",
                        (span, format!("{who} issues this Secret")),
                    ));
                }
            }
        }
        let operators = model.ownership().operator_writes(model, mo);
        // Finalizers on custom resources: controllers append theirs; lists align by index.
        // Argo CD and Flux objects declare their own deletion finalizers by design.
        let gitops_kind = o.group() == "argoproj.io" || o.group().ends_with(".fluxcd.io");
        let finalizer_writer = operators
            .iter()
            .find(|w| w.field.fact.path == "metadata.finalizers");
        let own_finalizer = finalizer_writer.and_then(OperatorWrite::value);
        if !is_builtin_group(o.group())
            && !gitops_kind
            && let Some(entry) = entry_at(&o.root, &["metadata", "finalizers"])
            && !entry.value.is_empty_value()
            && let Some(appended) = finalizer_appended(o.group(), own_finalizer, &entry.value)
        {
            out.extend(report(
                model,
                mo,
                entry,
                &["metadata".into(), "finalizers".into()],
                severity,
                finalizer_writer.map_or("the resource's controller", |w| &w.operator.name),
                (entry.key.span, appended),
            ));
        }
        // Everything else the knowledge base's operators write (Knative's webhook `rules`,
        // Kyverno's own webhook configurations). CA bundles and failure policies are
        // injected-field-declared's; finalizers are above.
        for w in &operators {
            let handled = w.field.fact.path == "metadata.finalizers"
                || w.field.fact.path.ends_with("caBundle")
                || w.field.fact.path.ends_with("failurePolicy");
            if handled {
                continue;
            }
            for hit in crate::ownership::kb::declared(&o.root, &w.path) {
                out.extend(report(
                    model,
                    mo,
                    hit.entry,
                    &hit.path,
                    severity,
                    &w.operator.name,
                    (w.evidence, w.evidence_label.clone()),
                ));
            }
        }
        // HPA with several metrics: the controller reorders them (info).
        if o.group() == "autoscaling"
            && o.kind == "HorizontalPodAutoscaler"
            && let Some(entry) = entry_at(&o.root, &["spec", "metrics"])
            && entry.value.as_seq().is_some_and(|m| m.len() > 1)
        {
            out.extend(report(
                model,
                mo,
                entry,
                &["spec".into(), "metrics".into()],
                Severity::Info,
                "the HPA controller",
                (
                    entry.key.span,
                    "the controller may store the metrics in another order".into(),
                ),
            ));
        }
    }
}

/// What the resource's controller appends to the declared finalizers, or `None` when Git
/// already declares the controller's own: it adds its finalizer only when missing, so the
/// live list is Git's and there is nothing to put back. The controller's finalizer is the
/// one the knowledge base names for the object, else any named in the group's domain.
fn finalizer_appended(group: &str, own: Option<&str>, declared: &Node) -> Option<String> {
    let names: Vec<String> = declared
        .as_seq()
        .unwrap_or_default()
        .iter()
        .filter_map(Node::scalar_text)
        .collect();
    match own {
        Some(own) if names.iter().any(|n| n == own) => None,
        Some(own) => Some(format!("the controller appends `{own}` here")),
        None if names.iter().any(|n| finalizer_in_group_domain(group, n)) => None,
        None => Some("controllers append their finalizers here".into()),
    }
}

fn report(
    model: &Model,
    mo: &ModelObject,
    entry: &Entry,
    path: &[String],
    severity: Severity,
    owner: &str,
    evidence: (Span, String),
) -> Option<Finding> {
    let ignore = covering_ignore(model, mo, path);
    if ignore.is_some_and(|(_, respected)| respected) {
        return None;
    }
    let app = model.app_of(mo);
    let field = crate::ownership::path::dotted(path);
    let f = Finding::new(
        ID,
        severity,
        format!(
            "{} declares {field}, which {owner} writes; {}",
            object_id(mo),
            if heals(app) && app.flux.is_some() {
                "kustomize-controller puts Git's value back on every reconciliation and the controller rewrites it, in a loop"
            } else if heals(app) && app.argo.is_none() {
                "every apply puts Git's value back and the controller rewrites it, in a loop"
            } else if heals(app) {
                "self-heal puts Git's value back and the controller rewrites it, in a loop"
            } else {
                "every sync resets it (self-heal is off, so this is noise, not a loop)"
            }
        ),
        crate::ownership::edit_span(entry),
    )
    .label(format!("{field} declared here"))
    .secondary(evidence.0, evidence.1)
    .field(field.clone())
    .help(match app.controller() {
        super::util::Controller::Argocd => format!(
            "Decide who owns {field}. If {owner} owns it: stop declaring it, or scope self-heal \
             with a narrow ignoreDifferences entry + RespectIgnoreDifferences=true. For \
             aggregated ClusterRoles remove `rules` or set resource.compareoptions: \
             ignoreAggregatedRoles: true in argocd-cm."
        ),
        super::util::Controller::FluxKustomize | super::util::Controller::FluxHelm => format!(
            "Decide who owns {field}. If {owner} owns it: stop declaring it, annotate the object \
             kustomize.toolkit.fluxcd.io/ssa: Merge or IfNotPresent, or add a drift ignore rule \
             (Kustomization spec.ignore, HelmRelease driftDetection.ignore)."
        ),
        super::util::Controller::None => format!(
            "Decide who owns {field}. If {owner} owns it: stop declaring it, or scope the \
             applier's drift correction to leave it (Argo CD: ignoreDifferences + \
             RespectIgnoreDifferences=true; Flux: kustomize.toolkit.fluxcd.io/ssa: IfNotPresent)."
        ),
    });
    Some(about(f, app, mo))
}
