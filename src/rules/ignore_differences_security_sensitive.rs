//! Ignore entries that hide privilege, identity, code, RBAC, webhook or secret
//! fields, or human edits (managedFieldsManagers naming people's tools).

use super::util::ForApp;
use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::model::flux::FluxIgnore;
use crate::gitops::ignore::{IgnoreEntry, glob_match, jq_simple_path, pointer_segments};
use crate::gitops::{App, Model};

pub const ID: &str = "ignore-differences-security-sensitive";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Info,
            when: "the jq path expression selects one container by name (`select(.name == …)`, such as an injected sidecar)",
        },
    ],
    summary: "ignore hides privilege, image, RBAC, webhook or secret fields, or human edits",
    doc: include_str!("../../rules/ignore-differences-security-sensitive.md"),
    fix: FixAvailability::None,
    removal: false,
    security: true,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

const HUMAN_MANAGERS: &[&str] = &[
    "kubectl",
    "kubectl-edit",
    "kubectl-patch",
    "kubectl-client-side-apply",
    "kubectl-replace",
    "kubectl-set",
    "kubectl-label",
    "kubectl-annotate",
    "k9s",
    "Mozilla",
    "helm",
    "*",
];

/// Pod spec locations per workload kind.
fn pod_spec_bases(kind: &str) -> &'static [&'static [&'static str]] {
    match kind {
        "Pod" => &[&["spec"]],
        "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "Job"
        | "Rollout"
        | "ReplicationController" => &[&["spec", "template", "spec"]],
        "CronJob" => &[&["spec", "jobTemplate", "spec", "template", "spec"]],
        _ => &[],
    }
}

const POD_SENSITIVE: &[&[&str]] = &[
    &["securityContext"],
    &["hostNetwork"],
    &["hostPID"],
    &["hostIPC"],
    &["volumes"],
    &["serviceAccountName"],
    &["serviceAccount"],
    &["automountServiceAccountToken"],
    &["initContainers"],
    &["ephemeralContainers"],
    &["containers", "*", "securityContext"],
    &["containers", "*", "image"],
    &["containers", "*", "command"],
    &["containers", "*", "args"],
    &["containers", "*", "env"],
    &["containers", "*", "envFrom"],
    &["containers", "*", "volumeMounts"],
];

/// Sensitive paths of a kind, as (path, what it controls).
fn sensitive_paths(kind: &str) -> Vec<(Vec<String>, &'static str)> {
    let mut out = Vec::new();
    let own = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for base in pod_spec_bases(kind) {
        for s in POD_SENSITIVE {
            let mut p = own(base);
            p.extend(own(s));
            out.push((p, "pod privileges, identity or code"));
        }
    }
    let extra: &[(&[&str], &str)] = match kind {
        "Role" | "ClusterRole" => &[(&["rules"], "RBAC permissions")],
        "RoleBinding" | "ClusterRoleBinding" => &[
            (&["subjects"], "RBAC subjects"),
            (&["roleRef"], "RBAC role"),
        ],
        "NetworkPolicy" => &[(&["spec"], "network access")],
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => &[
            (&["webhooks", "*", "rules"], "admission scope"),
            (
                &["webhooks", "*", "clientConfig", "url"],
                "admission endpoint",
            ),
            (
                &["webhooks", "*", "clientConfig", "service"],
                "admission endpoint",
            ),
            (&["webhooks", "*", "failurePolicy"], "fail-open behaviour"),
            (&["webhooks", "*", "namespaceSelector"], "admission scope"),
            (&["webhooks", "*", "objectSelector"], "admission scope"),
        ],
        "ValidatingAdmissionPolicy" | "ValidatingAdmissionPolicyBinding" => {
            &[(&["spec"], "admission policy")]
        }
        "Secret" => &[
            (&["data"], "secret values"),
            (&["stringData"], "secret values"),
        ],
        "Namespace" => &[(
            &["metadata", "labels", "pod-security.kubernetes.io/*"],
            "pod security level",
        )],
        "Service" => &[(&["spec", "externalIPs"], "traffic interception")],
        "ClusterPolicy" | "Policy" | "ConstraintTemplate" => &[(&["spec"], "policy")],
        _ => &[],
    };
    for (p, why) in extra {
        out.push((own(p), *why));
    }
    out
}

const KNOWN_KINDS: &[&str] = &[
    "Pod",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
    "Rollout",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "NetworkPolicy",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "Secret",
    "Namespace",
    "Service",
];

fn seg_match(a: &str, b: &str) -> bool {
    a == "*" || b == "*" || glob_match(a, b) || glob_match(b, a)
}

/// Fields inside a sensitive area whose only differences are normalisations: the API server
/// rewrites their form (`divisor: 1m` → `1m`, `defaultMode: 0644` → `420`), while what the
/// container runs, mounts or is granted stays visible.
const NORMALISATION_LEAVES: &[&str] = &[
    "divisor",
    "defaultMode",
    "terminationMessagePath",
    "terminationMessagePolicy",
];

/// Does ignoring `ignored` hide `sensitive` (one covers the other)? A path below a
/// sensitive field that ends at a normalisation leaf hides nothing.
fn overlaps(ignored: &[String], sensitive: &[String]) -> bool {
    let n = ignored.len().min(sensitive.len());
    if ignored.len() > sensitive.len()
        && ignored
            .last()
            .is_some_and(|l| NORMALISATION_LEAVES.contains(&l.as_str()))
    {
        return false;
    }
    !ignored.is_empty() && (0..n).all(|i| seg_match(&ignored[i], &sensitive[i]))
}

/// A path below a sensitive field hides something only if the kind has it: `/spec/replicas`
/// on every kind (`*`) reaches no NetworkPolicy field. Kinds the schema table does not know
/// (custom resources) are assumed to have it.
fn exists_below(kind: &str, ignored: &[String], sensitive: &[String]) -> bool {
    ignored.len() <= sensitive.len()
        || crate::ownership::k8s_schema::kind_has_path(kind, ignored) != Some(false)
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for (app, argo) in model.argo_apps() {
        for e in &argo.ignores {
            check_entry(Some(app), e, out);
        }
    }
    for e in model.all_argo_settings().into_iter().flat_map(|s| &s.ignores) {
        check_entry(None, e, out);
    }
    for app in &model.apps {
        for rule in model.flux_ignores(app) {
            check_flux(model, app, rule, out);
        }
    }
}

/// Flux rules: the kinds of the app's objects the rule matches (when the app rendered
/// nothing, the kinds its `target.kind` regex admits), and their JSON pointers; `""` (the
/// whole document) hides everything.
fn check_flux(model: &Model, app: &App, rule: &FluxIgnore, out: &mut Vec<Finding>) {
    let kind_re = rule
        .target
        .as_ref()
        .and_then(|t| t.get("kind"))
        .map(|k| regex::Regex::new(&format!("^(?:{k})$")));
    let rendered: Vec<&str> = model
        .objects_of(app)
        .filter(|mo| rule.matches(&mo.object, &mo.namespace))
        .map(|mo| mo.object.kind.as_str())
        .collect();
    let kinds: Vec<&str> = KNOWN_KINDS
        .iter()
        .copied()
        .filter(|k| {
            if app.objects.is_empty() {
                match &kind_re {
                    None => true,
                    Some(Ok(re)) => re.is_match(k),
                    Some(Err(_)) => false,
                }
            } else {
                rendered.contains(k)
            }
        })
        .collect();
    for p in &rule.paths {
        let path = if p.text.is_empty() {
            vec!["*".to_string()]
        } else {
            match pointer_segments(&p.text) {
                Some(path) => path,
                None => continue,
            }
        };
        if path.last().is_some_and(|s| s == "caBundle") {
            continue;
        }
        let hit = kinds.iter().find_map(|k| {
            sensitive_paths(k)
                .into_iter()
                .find(|(s, _)| (overlaps(&path, s) && exists_below(k, &path, s)) || p.text.is_empty())
                .map(|(_, why)| (*k, why))
        });
        let Some((kind, why)) = hit else { continue };
        out.push(
            Finding::new(
                ID,
                Severity::Error,
                format!(
                    "Flux ignore path `{}` on {kind} hides {why}: a change there is never corrected",
                    if p.text.is_empty() { "\"\"" } else { p.text.as_str() }
                ),
                p.span,
            )
            .label(format!("hides {why}"))
            .for_app(app)
            .help("Do not hide fields that control privileges, identity or code. If a platform webhook sets it, put that policy in Git; otherwise fix the writer."),
        );
    }
}

fn check_entry(app: Option<&App>, e: &IgnoreEntry, out: &mut Vec<Finding>) {
    let kind_pattern = e.kind.clone().unwrap_or_default();
    let kinds: Vec<&str> = KNOWN_KINDS
        .iter()
        .copied()
        .filter(|k| glob_match(&kind_pattern, k))
        .collect();
    let exprs = e
        .json_pointers
        .iter()
        .map(|p| (p, pointer_segments(&p.text), false))
        .chain(e.jq_paths.iter().map(|p| {
            let named = p.text.contains("select(.name");
            (p, jq_simple_path(&p.text), named)
        }));
    for (expr, path, name_selected) in exprs {
        let Some(path) = path else { continue };
        if path.last().is_some_and(|s| s == "caBundle") {
            continue; // injected CA bundles are rule 7's business, not a privilege
        }
        let hit = kinds.iter().find_map(|k| {
            sensitive_paths(k)
                .into_iter()
                .find(|(s, _)| overlaps(&path, s) && exists_below(k, &path, s))
                .map(|(_, why)| (*k, why))
        });
        let Some((kind, why)) = hit else { continue };
        // A container selected by name (an injected sidecar) is a known false positive.
        let severity = if name_selected {
            Severity::Info
        } else {
            Severity::Error
        };
        let mut f = Finding::new(
            ID,
            severity,
            format!(
                "ignoring `{}` on {kind} hides {why}: a change there would never show as drift",
                expr.text
            ),
            expr.span,
        )
        .label(format!("hides {why}"))
        .help("Do not hide fields that control privileges, identity or code. If a platform webhook sets it, put that policy in Git or accept its value through server-side diff; otherwise fix the writer.");
        if let Some(app) = app {
            f = f.for_app(app);
        }
        out.push(f);
    }
    for m in &e.managers {
        if HUMAN_MANAGERS.contains(&m.text.as_str()) {
            let mut f = Finding::new(
                ID,
                Severity::Error,
                format!(
                    "managedFieldsManagers `{}` hides every change a person or generic tool makes by hand",
                    m.text
                ),
                m.span,
            )
            .label("hides manual edits")
            .help("List only the controller that legitimately owns the field (e.g. kube-controller-manager for HPA-scaled replicas).");
            if let Some(app) = app {
                f = f.for_app(app);
            }
            out.push(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn p(s: &str) -> Vec<String> {
        s.split('/').map(String::from).collect()
    }
    #[test]
    fn coverage_both_ways() {
        let s = p("spec/template/spec/containers/*/image");
        assert!(overlaps(&p("spec/template/spec"), &s));
        assert!(overlaps(&p("spec/template/spec/containers/0/image"), &s));
        assert!(!overlaps(&p("spec/replicas"), &s));
    }

    #[test]
    fn normalisations_inside_sensitive_fields_hide_nothing() {
        let env = p("spec/template/spec/containers/*/env");
        assert!(!overlaps(
            &p("spec/template/spec/containers/*/env/*/valueFrom/resourceFieldRef/divisor"),
            &env
        ));
        assert!(overlaps(
            &p("spec/template/spec/containers/*/env/*/value"),
            &env
        ));
        assert!(overlaps(&p("spec/template/spec/containers"), &env));
    }

    #[test]
    fn paths_a_kind_does_not_have_hide_nothing() {
        let spec = p("spec");
        assert!(!exists_below("NetworkPolicy", &p("spec/replicas"), &spec));
        assert!(exists_below("NetworkPolicy", &p("spec/podSelector"), &spec));
        assert!(exists_below("NetworkPolicy", &spec, &spec));
        // Custom kinds: no schema here, so assume the field exists.
        assert!(exists_below("Rollout", &p("spec/anything"), &spec));
    }
}
