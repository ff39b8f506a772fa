//! Ignore entries that are schema-invalid, silent no-ops, or break comparison.

use super::util::ForApp;
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::ignore::{ARGO_ITEM_KEYS, IgnoreEntry, IgnoreOrigin};
use crate::gitops::App;
use crate::source::Span;

pub const ID: &str = "ignore-differences-invalid";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[],
    summary: "ignoreDifferences entry is invalid, a silent no-op, or breaks comparison",
    doc: include_str!("../../rules/ignore-differences-invalid.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

/// Well-known kinds and the API group an ignore entry must name for them.
pub const KIND_GROUPS: &[(&str, &str)] = &[
    ("Deployment", "apps"),
    ("StatefulSet", "apps"),
    ("DaemonSet", "apps"),
    ("ReplicaSet", "apps"),
    ("Job", "batch"),
    ("CronJob", "batch"),
    ("HorizontalPodAutoscaler", "autoscaling"),
    ("Ingress", "networking.k8s.io"),
    ("NetworkPolicy", "networking.k8s.io"),
    (
        "MutatingWebhookConfiguration",
        "admissionregistration.k8s.io",
    ),
    (
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io",
    ),
    ("CustomResourceDefinition", "apiextensions.k8s.io"),
    ("APIService", "apiregistration.k8s.io"),
    ("Role", "rbac.authorization.k8s.io"),
    ("RoleBinding", "rbac.authorization.k8s.io"),
    ("ClusterRole", "rbac.authorization.k8s.io"),
    ("ClusterRoleBinding", "rbac.authorization.k8s.io"),
    ("PodDisruptionBudget", "policy"),
    ("Rollout", "argoproj.io"),
    ("Application", "argoproj.io"),
    ("Certificate", "cert-manager.io"),
    ("ScaledObject", "keda.sh"),
];

const CORE_KINDS: &[&str] = &[
    "Service",
    "ConfigMap",
    "Secret",
    "Pod",
    "ServiceAccount",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "Namespace",
    "Endpoints",
    "LimitRange",
    "ResourceQuota",
];

pub use crate::object::CLUSTER_SCOPED_KINDS as CLUSTER_SCOPED;

/// Keys people write by mistake, and what Argo CD actually reads.
fn suggestion(key: &str) -> Option<&'static str> {
    Some(match key {
        "jsonPathReplicas" | "jsonPath" | "jsonPaths" | "jsonPointer" | "jsonpointers"
        | "JsonPointers" => "jsonPointers",
        "jqPathExpression" | "jqPath" | "jq" | "jqPaths" | "jqExpressions" => "jqPathExpressions",
        "managedFieldManagers" | "managedFieldsManager" | "managers" => "managedFieldsManagers",
        "paths" | "target" => "jsonPointers (this is Flux's syntax; Argo CD items are flat)",
        "reason" | "comment" | "description" => {
            "a YAML comment above the item (a key here is pruned or rejected)"
        }
        _ => return None,
    })
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for (app, argo) in model.argo_apps() {
        for entry in &argo.ignores {
            check_item(Some(app), entry, out);
        }
    }
    for entry in model.all_argo_settings().into_iter().flat_map(|s| &s.ignores) {
        check_paths(None, entry, out);
    }
    for app in &model.apps {
        if model.flux_ignore_unread(app) {
            unread_flux_ignore(model, app, out);
        }
        for rule in model.flux_ignores(app) {
            flux_paths(app, rule, out);
        }
    }
    for (span, msg) in model.all_argo_settings().into_iter().flat_map(|s| &s.override_errors) {
        out.push(
            Finding::new(
                ID,
                Severity::Error,
                format!("argocd-cm: {msg}; Argo CD cannot load resource overrides, so every Application goes to sync and health status Unknown"),
                *span,
            )
            .label("breaks every app's comparison")
            .help("Valid keys are resource.customizations.<health|useOpenLibs|actions|ignoreDifferences|ignoreResourceUpdates|knownTypeFields>.<group_Kind>, and their values are YAML strings."),
        );
    }
}

/// A Kustomization's `spec.ignore` under a Flux release before 2.9: its CRD has no such
/// field, so the rules never reach kustomize-controller.
fn unread_flux_ignore(model: &Scope, app: &App, out: &mut Vec<Finding>) {
    let Some(flux) = &app.flux else {
        return;
    };
    let Some(entry) = flux.decl.root.get("spec").and_then(|s| s.entry("ignore")) else {
        return;
    };
    let version = model.flux_version(app);
    let (major, minor) = crate::gitops::model::versions::KUSTOMIZATION_IGNORE_SINCE;
    push(
        out,
        Some(app),
        entry.key.span,
        format!(
            "Kustomization `{}` sets `spec.ignore`, which kustomize-controller reads from Flux {major}.{minor}; it runs under {}, whose Kustomization CRD has no such field (the apply refuses or drops it), so nothing is ignored and the fields it names are still corrected",
            app.name,
            version.describe(&model.map)
        ),
        "not read before Flux 2.9",
        "Upgrade Flux to 2.9 or later, or stop declaring the fields another writer owns; if the release the tool judged with is wrong, set `profile.flux-version` (or `--flux-version`).",
    );
}

/// Flux ignore paths are RFC 6901 JSON pointers, as Argo CD's `jsonPointers` are; `""`
/// (the whole object) is valid there and is `ignore-differences-broad`'s.
fn flux_paths(app: &App, rule: &crate::gitops::model::flux::FluxIgnore, out: &mut Vec<Finding>) {
    for p in &rule.paths {
        if p.text.is_empty() {
            continue;
        }
        // Argo CD drops a first segment without `/`; what Flux does with one is not
        // documented, so only the fact is stated.
        let problem = if p.text.starts_with('/') {
            pointer_problem(&p.text)
        } else {
            Some("does not start with `/`".to_string())
        };
        if let Some(problem) = problem {
            push(
                out,
                Some(app),
                p.span,
                format!(
                    "ignore path `{}` {problem}; it is not the JSON pointer Flux needs, so the field it means is still corrected",
                    p.text
                ),
                "invalid JSON pointer",
                "Flux ignore `paths` are JSON Pointers (RFC 6901): they start with `/`, have no wildcards (a list element is its index, `/spec/template/spec/containers/0/resources`), and escape `/` in keys as `~1`.",
            );
        }
    }
}

fn push(
    out: &mut Vec<Finding>,
    app: Option<&App>,
    span: Span,
    msg: String,
    label: &str,
    help: &str,
) {
    let mut f = Finding::new(ID, Severity::Error, msg, span)
        .label(label)
        .help(help);
    if let Some(app) = app {
        f = f.for_app(app);
    }
    out.push(f);
}

fn check_item(app: Option<&App>, e: &IgnoreEntry, out: &mut Vec<Finding>) {
    let item = &e.node;
    let Some(entries) = item.as_map() else {
        push(
            out,
            app,
            e.span,
            "ignoreDifferences item is not a mapping".into(),
            "not an item",
            "Each item is a mapping with group, kind, name, namespace and jsonPointers / jqPathExpressions / managedFieldsManagers.",
        );
        return;
    };
    // 1. Unknown keys: pruned silently by Argo's client-side sync, rejected by kubectl/SSA.
    for en in entries {
        let key = en.key.key_str();
        if ARGO_ITEM_KEYS.contains(&key.as_ref()) {
            continue;
        }
        let hint = suggestion(&key)
            .map(|s| format!("use `{s}`"))
            .unwrap_or_else(|| format!("valid keys: {}", ARGO_ITEM_KEYS.join(", ")));
        push(
            out,
            app,
            en.key.span,
            format!(
                "`{key}` is not an ignoreDifferences key: Argo CD drops it silently, so this item ignores nothing (and kubectl or server-side apply reject it)"
            ),
            &format!("unknown key; {hint}"),
            "Valid item keys are exactly group, kind, name, namespace, jsonPointers, jqPathExpressions, managedFieldsManagers. A reason belongs in a YAML comment above the item.",
        );
    }
    // 2. kind
    match (&e.kind, item.get("kind")) {
        (None, _) => push(
            out,
            app,
            e.span,
            "ignoreDifferences item has no `kind` (required)".into(),
            "missing kind",
            "Add the kind the item applies to, e.g. `kind: Deployment`.",
        ),
        (Some(kind), Some(node)) => {
            let known = KIND_GROUPS
                .iter()
                .map(|(k, _)| *k)
                .chain(CORE_KINDS.iter().copied())
                .find(|k| k.eq_ignore_ascii_case(kind) && k != kind);
            if let Some(proper) = known {
                push(
                    out,
                    app,
                    node.span,
                    format!("kind `{kind}` never matches: kinds are case-sensitive"),
                    &format!("use `{proper}`"),
                    "Kinds are matched case-sensitively.",
                );
            }
        }
        _ => {}
    }
    // 3. No paths at all: accepted but a no-op.
    if item.get("jsonPointers").is_none()
        && item.get("jqPathExpressions").is_none()
        && item.get("managedFieldsManagers").is_none()
    {
        push(out, app, e.span, "ignoreDifferences item names no jsonPointers, jqPathExpressions or managedFieldsManagers: it ignores nothing".into(), "no-op item", "Add the exact field to ignore, e.g. `jsonPointers: [/spec/replicas]`.");
    }
    // 4. group
    let group_node = item.get("group");
    if let Some(group) = &e.group
        && group.contains('/')
    {
        let fixed = group.split('/').next().unwrap_or("");
        push(
            out,
            app,
            group_node.map(|n| n.span).unwrap_or(e.span),
            format!("group `{group}` includes a version and never matches"),
            &format!("use `group: {fixed}`"),
            "group is the API group only (`apps`, not `apps/v1`).",
        );
    } else if let Some(kind) = &e.kind
        && let Some((_, want)) = KIND_GROUPS.iter().find(|(k, _)| k == kind)
    {
        let have = e.group.as_deref().unwrap_or("");
        if have != *want && have != "*" && !have.contains('*') {
            let (span, msg) = match group_node {
                None => (
                    item.get("kind").map(|n| n.span).unwrap_or(e.span),
                    format!(
                        "no `group` means the core group, so this item never matches {kind} (group {want})"
                    ),
                ),
                Some(n) => (
                    n.span,
                    format!("group `{have}` never matches {kind} (group {want})"),
                ),
            };
            push(
                out,
                app,
                span,
                msg,
                &format!("add `group: {want}`"),
                "An omitted group means the core group \"\" only (argo-cd#28590).",
            );
        }
    }
    // 7. name/namespace are exact matches
    for key in ["name", "namespace"] {
        if let Some(n) = item.get(key)
            && let Some(v) = n.as_str()
            && v.contains(['*', '?', '['])
        {
            push(
                out,
                app,
                n.span,
                format!("`{key}: {v}` is compared exactly, not as a glob: it matches nothing"),
                "glob in an exact field",
                "Only group and kind accept globs; list one item per name.",
            );
        }
    }
    if let (Some(kind), Some(ns)) = (&e.kind, item.get("namespace"))
        && CLUSTER_SCOPED.contains(&kind.as_str())
        && ns.as_str().is_some_and(|s| !s.is_empty())
    {
        push(
            out,
            app,
            ns.span,
            format!("{kind} is cluster-scoped: an item with a namespace never matches it"),
            "namespace on a cluster-scoped kind",
            "Remove `namespace`.",
        );
    }
    check_paths(app, e, out);
}

/// Pointer and jq checks (5, 6), shared with system-level entries.
fn check_paths(app: Option<&App>, e: &IgnoreEntry, out: &mut Vec<Finding>) {
    let system = matches!(e.origin, IgnoreOrigin::System { .. });
    let scope = if system { "every app" } else { "this app" };
    for p in &e.json_pointers {
        if let Some(problem) = pointer_problem(&p.text) {
            push(
                out,
                app,
                p.span,
                format!(
                    "JSON pointer `{}` {problem}; Argo CD skips it silently",
                    p.text
                ),
                "invalid JSON pointer",
                "JSON Pointers (RFC 6901) start with `/`, have no wildcards, and escape `/` in keys as `~1`. For list elements use jqPathExpressions, e.g. `.webhooks[]?.clientConfig.caBundle`.",
            );
        }
    }
    for p in &e.jq_paths {
        if p.text.starts_with('/') {
            push(
                out,
                app,
                p.span,
                format!(
                    "`{}` is a JSON pointer, not a jq expression: the jq parse error fails the diff of {scope} (ComparisonError)",
                    p.text
                ),
                "pointer in jqPathExpressions",
                "Move it to jsonPointers, or write it as jq (`.spec.replicas`).",
            );
        } else if let Some(problem) = jq_syntax_problem(&p.text) {
            push(
                out,
                app,
                p.span,
                format!(
                    "jq expression `{}` does not parse ({problem}): Argo CD fails the diff of {scope} (ComparisonError)",
                    p.text
                ),
                "invalid jq",
                "Fix the expression; test it with `jq 'del(EXPR)'`.",
            );
        }
    }
}

/// Why Argo would not resolve a pointer, if it would not.
pub fn pointer_problem(p: &str) -> Option<String> {
    if p.is_empty() || p == "/" {
        return Some("is a no-op (it does not mean \"the whole object\")".into());
    }
    if !p.starts_with('/') {
        return Some("does not start with `/` (its first segment is silently dropped)".into());
    }
    for seg in p[1..].split('/') {
        if seg == "*" || seg.contains("[") || seg.contains('{') {
            return Some(format!("uses wildcard or index syntax (`{seg}`)"));
        }
        let mut chars = seg.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '~' && !matches!(chars.peek(), Some('0') | Some('1')) {
                return Some("has `~` not followed by 0 or 1".into());
            }
        }
    }
    if p.contains('.') && !p[1..].contains('/') {
        return Some("looks like a dotted path, not a pointer".into());
    }
    // Label/annotation keys with a `/` written unescaped: `/metadata/labels/app.kubernetes.io/name`.
    let segs: Vec<&str> = p[1..].split('/').collect();
    for w in segs.windows(2) {
        if matches!(w[0], "labels" | "annotations") && w.len() == 2 {
            let idx = segs
                .iter()
                .position(|s| std::ptr::eq(*s, w[0]))
                .unwrap_or(0);
            if segs.len() > idx + 2 && segs[idx + 1].contains('.') {
                return Some(format!(
                    "splits the key `{}/{}` at its `/` (write it `{}~1{}`)",
                    segs[idx + 1],
                    segs[idx + 2],
                    segs[idx + 1],
                    segs[idx + 2]
                ));
            }
        }
    }
    None
}

/// A light syntax check of a jq expression: balanced brackets and quotes, and it starts
/// like a jq filter. (Full gojq compatibility is not checked.)
pub fn jq_syntax_problem(expr: &str) -> Option<String> {
    let t = expr.trim();
    if t.is_empty() {
        return Some("empty expression".into());
    }
    let mut stack = Vec::new();
    let mut in_str = false;
    let mut escaped = false;
    for c in t.chars() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => stack.push(c),
            ')' | ']' | '}' => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.pop() != Some(want) {
                    return Some(format!("unbalanced `{c}`"));
                }
            }
            _ => {}
        }
    }
    if in_str {
        return Some("unterminated string".into());
    }
    if let Some(c) = stack.last() {
        return Some(format!("unclosed `{c}`"));
    }
    if t.ends_with('|') || t.ends_with('.') && t.len() > 1 && t.ends_with("..") {
        return Some("ends in the middle of a pipe".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_problems() {
        assert!(pointer_problem("/spec/replicas").is_none());
        assert!(pointer_problem("/spec/template/spec/containers/-1/image").is_none());
        assert!(pointer_problem("").is_some());
        assert!(pointer_problem("/").is_some());
        assert!(pointer_problem("spec/replicas").is_some());
        assert!(pointer_problem("/webhooks/*/clientConfig/caBundle").is_some());
        assert!(pointer_problem("/a/~2").is_some());
        assert!(pointer_problem("/metadata/labels/app.kubernetes.io/name").is_some());
        assert!(pointer_problem("/metadata/labels/app.kubernetes.io~1name").is_none());
    }

    #[test]
    fn jq_problems() {
        assert!(jq_syntax_problem(".spec.replicas").is_none());
        assert!(jq_syntax_problem(".webhooks[]?.clientConfig.caBundle").is_none());
        assert!(jq_syntax_problem(".a[] | select(.name == \"x\"").is_some());
        assert!(jq_syntax_problem(".a |").is_some());
    }
}
