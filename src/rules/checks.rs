//! The repository's own checks (`checks:` in `.gitops-lint.yaml`, parsed and compiled by
//! `config::checks`): each runs over the objects its `match` selects, the same objects the
//! rules see (what the controller applies on sync), with CEL over the object, its app, its
//! namespace and the app's other objects; a finding where the expression is false, on the line
//! its `field` names. Evaluations are metered: each has a cost limit, and all of a lint share
//! a budget; a check that reaches either is reported where it stopped.

use super::util::{about, object_id};
use crate::config::checks::cel::{self, Outcome};
use crate::config::checks::{Check, CheckLimits, ControllerKind, Match};
use crate::finding::{Finding, Severity};
use crate::gitops::{App, Controller, Model, ModelObject};
use crate::glob::glob_match;
use crate::ownership::namespaces::NamespaceLabels;
use serde_json::{Value as Json, json};

/// Run every check over the model. Order: apps, their objects, the checks (so one object's
/// values are built once for all checks that match it).
pub fn run(model: &Model, checks: &[Check], limits: CheckLimits) -> Vec<Finding> {
    let mut out = Vec::new();
    if checks.is_empty() {
        return out;
    }
    let namespaces = NamespaceLabels::from_model(model);
    let mut by_app: Vec<Vec<usize>> = vec![Vec::new(); model.apps.len()];
    for (i, mo) in model.objects.iter().enumerate() {
        if model.applied_on_sync(mo)
            && let Some(list) = by_app.get_mut(mo.app)
        {
            list.push(i);
        }
    }
    let mut run = Run {
        limits,
        left: limits.per_lint,
        stopped: vec![false; checks.len()],
    };
    for (app_index, objects) in by_app.iter().enumerate() {
        let Some(app) = model.apps.get(app_index) else {
            continue;
        };
        let mut work: Vec<(usize, Vec<usize>)> = Vec::new();
        for &i in objects {
            let mo = &model.objects[i];
            let matching: Vec<usize> = checks
                .iter()
                .enumerate()
                .filter(|(_, c)| matches(&c.matcher, model, app, mo, &namespaces))
                .map(|(ci, _)| ci)
                .collect();
            if !matching.is_empty() {
                work.push((i, matching));
            }
        }
        if work.is_empty() {
            continue;
        }
        let reads_objects = work
            .iter()
            .flat_map(|(_, cs)| cs)
            .any(|&ci| checks[ci].program.reads_objects);
        let objects_value = if reads_objects {
            let cost: u64 = objects.iter().map(|&i| size(&model.objects[i])).sum();
            if !run.spend(cost) {
                out.push(run.exhausted(&checks[work[0].1[0]]));
                return out;
            }
            Some(::cel::Value::List(std::sync::Arc::new(
                objects
                    .iter()
                    .map(|&i| cel::json_value(&model.objects[i].served_json()))
                    .collect(),
            )))
        } else {
            None
        };
        let app_json = app_json(app);
        let app_value = cel::json_value(&app_json);
        let app_scope = cel::app_scope(objects_value);
        for (i, matching) in &work {
            let mo = &model.objects[*i];
            if !run.spend(size(mo)) {
                out.push(run.exhausted(&checks[matching[0]]));
                return out;
            }
            let object = mo.served_json();
            let namespace = namespace_json(&mo.namespace, &namespaces);
            let scope = cel::object_scope(
                &app_scope,
                cel::json_value(&object),
                app_value.clone(),
                cel::json_value(&namespace),
            );
            for &ci in matching {
                let check = &checks[ci];
                if run.stopped[ci] {
                    continue;
                }
                if run.left == 0 {
                    out.push(run.exhausted(check));
                    return out;
                }
                let limit = limits.per_evaluation.min(run.left);
                let vars = Vars {
                    object: &object,
                    app: &app_json,
                    namespace: &namespace,
                };
                match check.program.evaluate(&scope, limit) {
                    Outcome::Value { value, used } => {
                        run.left = run.left.saturating_sub(used);
                        if !value {
                            out.push(finding(check, app, mo, &vars));
                        }
                    }
                    Outcome::Error { message, used } => {
                        run.left = run.left.saturating_sub(used);
                        out.push(undecided(check, app, mo, &message));
                    }
                    Outcome::OverBudget { .. } => {
                        if limit < limits.per_evaluation {
                            run.left = 0;
                            out.push(run.exhausted(check));
                            return out;
                        }
                        run.left = run.left.saturating_sub(limit);
                        run.stopped[ci] = true;
                        out.push(run.over_limit(check, app, mo));
                    }
                }
            }
        }
    }
    out
}

struct Run {
    limits: CheckLimits,
    /// Cost units left of the lint's budget.
    left: u64,
    /// Checks that reached their per-evaluation limit: not run again.
    stopped: Vec<bool>,
}

impl Run {
    /// Charge building an input; false when the budget does not cover it.
    fn spend(&mut self, units: u64) -> bool {
        if units > self.left {
            self.left = 0;
            return false;
        }
        self.left -= units;
        true
    }

    fn exhausted(&self, check: &Check) -> Finding {
        Finding::new(
            check.id,
            Severity::Error,
            format!(
                "checks stopped: the cost budget of all checks in one lint ({} units, `limits.max-checks-cost`) is used up, at check `{}`; the objects after this point were not checked",
                self.limits.per_lint, check.id
            ),
            check.expr_span,
        )
        .label("the budget ran out here")
        .help("Narrow the checks' `match` so they run on fewer objects, make their expressions cheaper (no loops over `objects` inside loops), or raise the budget with `--limit max-checks-cost=N` in the workflow.")
    }

    fn over_limit(&self, check: &Check, app: &App, mo: &ModelObject) -> Finding {
        let f = Finding::new(
            check.id,
            Severity::Error,
            format!(
                "check `{}` stopped at its cost limit ({} units, `limits.max-check-cost`) on {}: its expression was not decided here, and the check does not run on the objects after it",
                check.id,
                self.limits.per_evaluation,
                object_id(mo)
            ),
            mo.object.span(),
        )
        .label("stopped here")
        .secondary(check.expr_span, "this expression")
        .help("The expression does too much work for one object (loops inside loops over large lists, values copied in every iteration). Filter before nesting, or raise the limit with `--limit max-check-cost=N` in the workflow.");
        about(f, app, mo)
    }
}

/// The variables a message reads.
struct Vars<'a> {
    object: &'a Json,
    app: &'a Json,
    namespace: &'a Json,
}

fn finding(check: &Check, app: &App, mo: &ModelObject, vars: &Vars) -> Finding {
    let message = check.message.render(&[
        ("object", vars.object),
        ("app", vars.app),
        ("namespace", vars.namespace),
    ]);
    // The named field's line (a patch or values line when one wrote it), else the object's.
    let at = check
        .field
        .as_ref()
        .and_then(|f| f.locate(&mo.object.root))
        .unwrap_or_else(|| mo.object.span());
    let mut f = Finding::new(check.id, check.severity, message, at)
        .label(format!("fails check `{}`", check.id));
    f = f.help(check.help.clone().unwrap_or_else(|| {
        "A check of this repository (`checks:` in its gitops-lint configuration).".to_string()
    }));
    if let Some(field) = &check.field {
        f = f.field(field.dotted());
    }
    about(f, app, mo)
}

fn undecided(check: &Check, app: &App, mo: &ModelObject, error: &str) -> Finding {
    let f = Finding::new(
        check.id,
        check.severity,
        format!(
            "check `{}` could not be evaluated on {}: {error}",
            check.id,
            object_id(mo)
        ),
        mo.object.span(),
    )
    .label("not decided")
    .secondary(check.expr_span, "this expression")
    .help("Reading a field the object does not have is an error in CEL: guard it with `has(object.spec.x)`, or narrow the check's `match`.");
    about(f, app, mo)
}

/// Whether a check's `match` selects this object.
fn matches(m: &Match, model: &Model, app: &App, mo: &ModelObject, ns: &NamespaceLabels) -> bool {
    let o = &mo.object;
    let any = |globs: &[String], text: &str| {
        globs.is_empty() || globs.iter().any(|g| glob_match(g, text))
    };
    if !m.kinds.is_empty()
        && !m
            .kinds
            .iter()
            .any(|(g, k)| glob_match(g, o.group()) && glob_match(k, &o.kind))
    {
        return false;
    }
    if !any(&m.namespaces, &mo.namespace) || !any(&m.names, &o.name) {
        return false;
    }
    if !m.labels.iter().all(|(k, v)| o.label(k) == Some(v.as_str())) {
        return false;
    }
    if !m.namespace_labels.is_empty() {
        let Some(labels) = ns.labels(&mo.namespace) else {
            return false;
        };
        if !m
            .namespace_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
        {
            return false;
        }
    }
    if !m.controllers.is_empty() && !m.controllers.contains(&controller_kind(app.controller())) {
        return false;
    }
    if !any(&m.clusters, app.cluster.name()) {
        return false;
    }
    if let Some(paths) = &m.path_set
        && !paths.is_match(model.map.path(o.span().file))
    {
        return false;
    }
    true
}

fn controller_kind(c: Controller) -> ControllerKind {
    match c {
        Controller::Argocd => ControllerKind::Argo,
        Controller::FluxKustomize | Controller::FluxHelm => ControllerKind::Flux,
        Controller::None => ControllerKind::None,
    }
}

/// Cost of building an object's value: its nodes.
fn size(mo: &ModelObject) -> u64 {
    let mut n = 0u64;
    mo.object.root.walk(|_, _| n += 1);
    n
}

/// `{name, labels}`: the labels the repository and `profile.namespaces` give the namespace
/// (none when nothing describes it).
fn namespace_json(name: &str, ns: &NamespaceLabels) -> Json {
    let labels: serde_json::Map<String, Json> = ns
        .labels(name)
        .map(|l| {
            l.iter()
                .map(|(k, v)| (k.clone(), Json::String(v.clone())))
                .collect()
        })
        .unwrap_or_default();
    json!({"name": name, "labels": labels})
}

/// Flux spec fields about how and when the controller applies.
const FLUX_SYNC_FIELDS: &[&str] = &[
    "interval",
    "retryInterval",
    "timeout",
    "prune",
    "force",
    "wait",
    "suspend",
    "deletionPolicy",
    "driftDetection",
    "install",
    "upgrade",
    "rollback",
    "uninstall",
];

/// `app`: name, cluster, controller (`argo`, `flux`, `none`), the kind and `spec` of its
/// declaration, its destination namespace, and its sync policy (Argo CD `spec.syncPolicy`;
/// Flux: the spec fields on how it applies, `prune`, `force`, `driftDetection`, ...).
fn app_json(app: &App) -> Json {
    let controller = match controller_kind(app.controller()) {
        ControllerKind::Argo => "argo",
        ControllerKind::Flux => "flux",
        ControllerKind::None => "none",
    };
    let (kind, spec) = if let Some(argo) = &app.argo {
        let spec = argo.decl.root.get("spec");
        let spec = if argo.decl.kind == "ApplicationSet" {
            spec.and_then(|s| s.get_path(&["template", "spec"]))
        } else {
            spec
        };
        (argo.decl.kind.clone(), spec.map(|s| s.to_json()))
    } else if let Some(flux) = &app.flux {
        (
            flux.decl.kind.clone(),
            flux.decl.root.get("spec").map(|s| s.to_json()),
        )
    } else {
        (String::new(), None)
    };
    let spec = spec.unwrap_or_else(|| json!({}));
    let sync_policy = if app.argo.is_some() {
        spec.get("syncPolicy").cloned().unwrap_or_else(|| json!({}))
    } else {
        let picked: serde_json::Map<String, Json> = FLUX_SYNC_FIELDS
            .iter()
            .filter_map(|k| spec.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        Json::Object(picked)
    };
    json!({
        "name": app.name,
        "cluster": app.cluster.name(),
        "controller": controller,
        "kind": kind,
        "namespace": app.destination_namespace.clone().unwrap_or_default(),
        "syncPolicy": sync_policy,
        "spec": spec,
    })
}

#[cfg(test)]
mod tests {
    use crate::finding::Severity;
    use crate::lint::{LintResult, lint_memory};
    use crate::source::MemTree;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn lint(files: &[(&str, &str)], config: &str) -> LintResult {
        let mut tree = MemTree::new();
        for (path, text) in files {
            tree.insert(path, text.as_bytes().to_vec());
        }
        match lint_memory(PathBuf::from("repo"), Arc::new(tree), Some(config)) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// `rule severity path:line` of the findings of `rule`.
    fn of(result: &LintResult, rule: &str) -> Vec<String> {
        result
            .findings
            .iter()
            .filter(|f| f.rule == rule)
            .map(|f| {
                format!(
                    "{} {}:{}",
                    f.severity.as_str(),
                    result.map.path(f.primary.span.file),
                    result.map.line_col(f.primary.span).line
                )
            })
            .collect()
    }

    const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  replicas: 3\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n        - name: web\n          image: web:1.0\n";
    const PDB: &str = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels: {app: web}\n";

    const PDB_CHECK: &str = "checks:\n  - id: deployment-has-pdb\n    match: {kinds: [apps/Deployment]}\n    expr: |\n      objects.exists(o, o.kind == 'PodDisruptionBudget'\n        && o.metadata.namespace == object.metadata.namespace\n        && o.spec.selector.matchLabels.all(k, k in object.spec.template.metadata.labels\n             && object.spec.template.metadata.labels[k] == o.spec.selector.matchLabels[k]))\n    message: \"Deployment {{ object.metadata.name }} has no PodDisruptionBudget selecting its pods\"\n";

    #[test]
    fn a_check_over_the_apps_objects_sees_relations() {
        let bad = lint(&[("apps/shop/web.yaml", WEB)], PDB_CHECK);
        assert_eq!(
            of(&bad, "deployment-has-pdb"),
            ["warning apps/shop/web.yaml:1"]
        );
        let f = bad.findings.iter().find(|f| f.rule == "deployment-has-pdb");
        assert_eq!(
            f.map(|f| f.message.as_str()),
            Some("Deployment web has no PodDisruptionBudget selecting its pods")
        );
        assert_eq!(
            f.and_then(|f| f.object.as_deref()),
            Some("Deployment/shop/web")
        );
        let clean = lint(
            &[("apps/shop/web.yaml", WEB), ("apps/shop/pdb.yaml", PDB)],
            PDB_CHECK,
        );
        assert!(of(&clean, "deployment-has-pdb").is_empty());
        let other_labels = PDB.replace("{app: web}", "{app: api}");
        let wrong = lint(
            &[
                ("apps/shop/web.yaml", WEB),
                ("apps/shop/pdb.yaml", &other_labels),
            ],
            PDB_CHECK,
        );
        assert_eq!(of(&wrong, "deployment-has-pdb").len(), 1);
    }

    #[test]
    fn checks_are_suppressed_and_overridden_like_rules() {
        let config = "rules:\n  no-pinned-replicas: error\nchecks:\n  - id: no-pinned-replicas\n    match: {kinds: [apps/Deployment], namespaces: [shop]}\n    expr: '!has(object.spec.replicas)'\n    message: '{{ object.metadata.name }} pins {{ object.spec.replicas }} replicas'\n";
        let r = lint(&[("apps/web.yaml", WEB)], config);
        assert_eq!(of(&r, "no-pinned-replicas"), ["error apps/web.yaml:1"]);
        assert_eq!(
            r.findings
                .iter()
                .find(|f| f.rule == "no-pinned-replicas")
                .map(|f| f.message.as_str()),
            Some("web pins 3 replicas")
        );
        let suppressed = WEB.replacen(
            "apiVersion",
            "# gitops-lint: ignore[no-pinned-replicas] the HPA is off here\napiVersion",
            1,
        );
        let r = lint(&[("apps/web.yaml", &suppressed)], config);
        assert!(of(&r, "no-pinned-replicas").is_empty());
        assert!(of(&r, "suppression-unknown-rule").is_empty());
        let off = config.replace("no-pinned-replicas: error", "no-pinned-replicas: off");
        assert!(of(&lint(&[("apps/web.yaml", WEB)], &off), "no-pinned-replicas").is_empty());
        let other_ns = config.replace("namespaces: [shop]", "namespaces: [prod-*]");
        assert!(
            of(
                &lint(&[("apps/web.yaml", WEB)], &other_ns),
                "no-pinned-replicas"
            )
            .is_empty()
        );
    }

    #[test]
    fn an_error_in_the_expression_is_reported_on_the_object() {
        let config = "checks:\n  - id: replicas-small\n    expr: 'object.spec.replicas < 5'\n    message: too many\n    match: {kinds: ['*/*', Pod]}\n";
        let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: []\n";
        let r = lint(&[("web.yaml", WEB), ("pod.yaml", pod)], config);
        assert_eq!(of(&r, "replicas-small"), ["warning pod.yaml:1"]);
        let f = r.findings.iter().find(|f| f.rule == "replicas-small");
        assert!(
            f.is_some_and(|f| f
                .message
                .contains("could not be evaluated on Pod/default/p")
                && f.message.contains("replicas")),
            "{f:?}"
        );
    }

    #[test]
    fn runaway_expressions_stop_at_their_limits_with_located_findings() {
        let many: String = (0..300)
            .map(|i| format!("        - name: c{i}\n          image: web:1.0\n"))
            .collect();
        let big = WEB.replace("        - name: web\n          image: web:1.0\n", &many);
        let looping = "checks:\n  - id: loops\n    match: {kinds: [apps/Deployment]}\n    expr: |\n      object.spec.template.spec.containers.all(a,\n        object.spec.template.spec.containers.all(b,\n          object.spec.template.spec.containers.all(c, a.name + b.name + c.name != '')))\n    message: m\n";
        let started = std::time::Instant::now();
        let r = lint(
            &[
                ("a/web.yaml", &big),
                (
                    "b/web.yaml",
                    &big.replace("name: web\n  namespace", "name: web2\n  namespace"),
                ),
            ],
            looping,
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        // One finding, on the first object: the check does not run on the second.
        assert_eq!(of(&r, "loops"), ["error a/web.yaml:1"]);
        let f = r.findings.iter().find(|f| f.rule == "loops");
        assert!(f.is_some_and(|f| {
            f.message
                .contains("stopped at its cost limit (1000000 units")
        }));
        // The lint's budget: lowered below what two objects need, it stops at the expression.
        let budget = format!(
            "limits:\n  max-checks-cost: 100\n{}",
            "checks:\n  - id: names\n    expr: \"object.metadata.name.size() > 0\"\n    message: m\n"
        );
        let files: Vec<(String, String)> = (0..40)
            .map(|i| (format!("d/cm{i}.yaml"), format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\ndata:\n  a: '1'\n")))
            .collect();
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let r = lint(&files, &budget);
        assert_eq!(of(&r, "names"), ["error .gitops-lint.yaml:5"]);
        assert!(r.findings.iter().any(|f| f.rule == "names"
            && f.severity == Severity::Error
            && f.message.contains("max-checks-cost")));
    }
}
