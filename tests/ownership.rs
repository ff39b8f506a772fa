//! The ownership engine end to end: the pay-prod incident (background S4) and platform facts
//! from `.gitops-lint.yaml`.

use crate::common;

use common::copy_dir;
use gitops_lint::lint::{LintOptions, lint};
use gitops_lint::report::Severity;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

/// `rule severity file:line` for findings at warning or above, sorted.
fn findings_of(dir: &Path) -> Vec<String> {
    let result = match lint(&LintOptions {
        root: dir.to_path_buf(),
        config: None,
        ..Default::default()
    }) {
        Ok(r) => r,
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    common::located_findings(&result)
}

fn expected(dir: &Path) -> Vec<String> {
    common::expected_lines(&dir.join("expected.txt"))
}

/// The pay-prod incident (a Kyverno policy forcing `imagePullPolicy: Always` on the label
/// selected namespace) is reported on the declared line, beside the JSON 6902 defaults
/// policy's two writes (`/spec/replicas`, `/metadata/labels/team`).
#[test]
fn pay_prod_incident_is_one_conflict_on_the_declared_line() {
    let dir = fixture("rules/mutation-policy-conflict/bad");
    assert_eq!(
        findings_of(&dir),
        [
            "mutation-policy-conflict error apps/payments/prod/deployment.yaml:21",
            "mutation-policy-conflict error apps/payments/prod/deployment.yaml:6",
            "mutation-policy-conflict error apps/payments/prod/deployment.yaml:8",
        ]
    );
}

#[test]
fn pay_prod_without_the_namespace_label_is_clean() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    copy_dir(&fixture("rules/mutation-policy-conflict/bad"), tmp.path());
    let ns = tmp.path().join("platform/namespaces.yaml");
    let text = std::fs::read_to_string(&ns).unwrap_or_default();
    assert!(text.contains("policy.lab/image-pull: always"));
    let without: String = text
        .lines()
        .filter(|l| !l.contains("policy.lab/image-pull"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&ns, without).unwrap_or_else(|e| panic!("write: {e}"));
    // The image-pull policy no longer selects the namespace; the defaults policy, which
    // matches the namespace by name, still writes the replicas and the team label.
    assert_eq!(
        findings_of(tmp.path()),
        [
            "mutation-policy-conflict error apps/payments/prod/deployment.yaml:6",
            "mutation-policy-conflict error apps/payments/prod/deployment.yaml:8",
        ]
    );
}

#[test]
fn platform_owned_fields_from_config_find_webhooks_outside_the_repo() {
    let dir = fixture("ownership/platform-webhook");
    assert_eq!(findings_of(&dir), expected(&dir));
    // Without the platform fact the repo alone shows no writer.
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    copy_dir(&dir, tmp.path());
    std::fs::remove_file(tmp.path().join(".gitops-lint.yaml")).ok();
    assert_eq!(findings_of(tmp.path()), Vec::<String>::new());
}

// Enabled by the lead once the kustomize renderer feeds rendered objects into the model:
// the finding must then land on the overlay patch line.
#[test]

fn pay_prod_kustomize_overlay_reports_the_patch_line() {
    let dir = fixture("ownership/pay-prod-kustomize");
    assert_eq!(findings_of(&dir), expected(&dir));
}

/// The clean fixture's policies each stop fighting for one reason; undo that reason and
/// the conflict must appear on the staging Deployment's line.
#[test]
fn each_false_positive_guard_is_what_keeps_the_clean_fixture_clean() {
    let clean = fixture("rules/mutation-policy-conflict/clean");
    assert_eq!(findings_of(&clean), Vec::<String>::new());
    let policies = "platform/staging-policies.yaml";
    let deployment = "apps/payments/staging/deployment.yaml";
    let cases: [(&str, &str, &str); 5] = [
        // add-if-absent → overwrite
        (
            "+(imagePullPolicy): Always",
            "imagePullPolicy: Always",
            "21",
        ),
        // the value Git declares → another value
        ("runAsNonRoot: true\n---", "runAsNonRoot: false\n---", "23"),
        // auto-generation disabled → default controllers
        (
            "pod-policies.kyverno.io/autogen-controllers: none",
            "example.com/note: x",
            "26",
        ),
        // Gatekeeper MustNotExist → MustExist
        ("condition: MustNotExist", "condition: MustExist", "21"),
        // a JSON 6902 replace of the declared replica count → another count
        (
            "path: /spec/replicas\n            value: 1",
            "path: /spec/replicas\n            value: 3",
            "9",
        ),
    ];
    for (from, to, line) in cases {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        copy_dir(&clean, tmp.path());
        let path = tmp.path().join(policies);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(text.contains(from), "{from}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            findings_of(tmp.path()),
            [format!(
                "mutation-policy-conflict error {deployment}:{line}"
            )],
            "after replacing `{from}`"
        );
    }
}

fn write_repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    for (path, text) in files {
        let p = tmp.path().join(path);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).ok();
        }
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    tmp
}

const APP: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: argocd
{ANNOTATIONS}spec:
  project: default
  source: {repoURL: https://git.example.com/x.git, path: apps/web}
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  syncPolicy:
    automated: {selfHeal: true}
";

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: web:1
          imagePullPolicy: IfNotPresent
";

const NAMESPACE: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {pull: always}
";

fn policy(mutate: &str) -> String {
    format!(
        "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: pull
spec:
  rules:
    - name: pull
      match:
        any:
          - resources:
              kinds: [Deployment]
              namespaceSelector: {{matchLabels: {{pull: always}}}}
      mutate:
{mutate}"
    )
}

const SMP: &str = "        patchStrategicMerge:
          spec:
            template:
              spec:
                containers:
                  - (name): \"*\"
                    imagePullPolicy: Always
";

#[test]
fn unknown_namespace_labels_make_it_a_warning() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let repo = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/policy.yaml", &policy(SMP)),
    ]);
    assert_eq!(
        findings_of(repo.path()),
        ["mutation-policy-conflict warning apps/web/deployment.yaml:11"]
    );
}

#[test]
fn server_side_diff_downgrades_admission_but_not_background_mutation() {
    let app = APP.replace(
        "{ANNOTATIONS}",
        "  annotations: {argocd.argoproj.io/compare-options: ServerSideDiff=true}\n",
    );
    let repo = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", &policy(SMP)),
    ]);
    assert_eq!(
        findings_of(repo.path()),
        ["mutation-policy-conflict warning apps/web/deployment.yaml:11"]
    );
    let background = "        targets:
          - apiVersion: apps/v1
            kind: Deployment
            namespace: shop
            name: web
        patchStrategicMerge:
          spec:
            template:
              spec:
                containers:
                  - name: web
                    imagePullPolicy: Always
";
    let repo = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", &policy(background)),
    ]);
    assert_eq!(
        findings_of(repo.path()),
        ["mutation-policy-conflict error apps/web/deployment.yaml:11"]
    );
}

#[test]
fn json6902_replace_is_an_overwrite() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let patch = "        patchesJson6902: |-
          - op: replace
            path: /spec/template/spec/containers/0/imagePullPolicy
            value: Always
";
    let repo = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", &policy(patch)),
    ]);
    assert_eq!(
        findings_of(repo.path()),
        ["mutation-policy-conflict error apps/web/deployment.yaml:11"]
    );
}

/// `~1` is `/` in a JSON pointer, so an annotation key with a `/` is matched; appending with
/// `-` writes no field Git declares.
#[test]
fn json6902_escaped_pointer_and_append() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let deployment = DEPLOYMENT.replace(
        "  name: web\n",
        "  name: web\n  annotations:\n    example.com/tier: gold\n",
    );
    let patch = "        patchesJson6902: |-
          - op: replace
            path: /metadata/annotations/example.com~1tier
            value: silver
          - op: add
            path: /spec/template/spec/containers/-
            value: {name: audit, image: audit:1}
";
    let repo = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", &deployment),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", &policy(patch)),
    ]);
    assert_eq!(
        findings_of(repo.path()),
        ["mutation-policy-conflict error apps/web/deployment.yaml:6"]
    );
}

/// Safe fixes must do what they say: applied to a copy of the bad fixture, every finding
/// they fix disappears and the YAML still parses.
#[test]
fn safe_fixes_remove_their_findings_and_keep_yaml_valid() {
    let rules = [
        "job-ttl-recreate-loop",
        "declared-empty-or-null",
        "non-canonical-quantity",
        "injected-field-declared",
        "selfheal-external-owner",
    ];
    for rule in rules {
        let dir = fixture(&format!("rules/{rule}/bad"));
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        copy_dir(&dir, tmp.path());
        let result = lint(&LintOptions {
            root: tmp.path().to_path_buf(),
            config: None,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{rule}: {e}"));
        let mine: Vec<_> = result.findings.iter().filter(|f| f.rule == rule).collect();
        let fixed: Vec<_> = mine
            .iter()
            .filter_map(|f| f.fix.as_ref().filter(|x| x.safe))
            .collect();
        assert!(!fixed.is_empty(), "{rule}: no safe fix offered");
        // Apply edits per file, last first, so earlier offsets stay valid.
        let mut by_file: std::collections::BTreeMap<String, Vec<(usize, usize, String)>> =
            Default::default();
        for fix in &fixed {
            for e in &fix.edits {
                by_file
                    .entry(result.map.path(e.span.file))
                    .or_default()
                    .push((
                        e.span.start as usize,
                        e.span.end as usize,
                        e.replacement.clone(),
                    ));
            }
        }
        for (path, mut edits) in by_file {
            let file = tmp.path().join(&path);
            let mut text = std::fs::read_to_string(&file).unwrap_or_default();
            edits.sort_by_key(|e| std::cmp::Reverse(e.0));
            for (start, end, replacement) in edits {
                text.replace_range(start..end, &replacement);
            }
            std::fs::write(&file, text).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
        let after = findings_of(tmp.path());
        assert!(
            !after.iter().any(|l| l.starts_with("yaml-syntax")),
            "{rule}: fix broke YAML: {after:?}"
        );
        let remaining = after
            .iter()
            .filter(|l| l.starts_with(&format!("{rule} ")))
            .count();
        let before = mine
            .iter()
            .filter(|f| f.severity >= Severity::Warning)
            .count();
        let fixed_warn = mine
            .iter()
            .filter(|f| f.severity >= Severity::Warning && f.fix.as_ref().is_some_and(|x| x.safe))
            .count();
        assert_eq!(
            remaining,
            before - fixed_warn,
            "{rule}: after fixes {after:?}"
        );
    }
}

#[test]
fn identical_duplicates_get_a_safe_removal_conflicting_ones_none() {
    let deployment = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: web:1
          env:
            - name: A
              value: \"1\"
            - name: A
              value: \"1\"
            - name: B
              value: x
            - name: B
              value: y
";
    let repo = write_repo(&[("apps/web/deployment.yaml", deployment)]);
    let result = lint(&LintOptions {
        root: repo.path().to_path_buf(),
        config: None,
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let dups: Vec<_> = result
        .findings
        .iter()
        .filter(|f| f.rule == "duplicate-merge-key")
        .collect();
    assert_eq!(dups.len(), 2);
    let fixes: Vec<_> = dups.iter().filter_map(|f| f.fix.as_ref()).collect();
    assert_eq!(fixes.len(), 1, "only the identical duplicate is fixable");
    let edit = &fixes[0].edits[0];
    let file = result.map.get(edit.span.file);
    let mut text = file.text.to_string();
    text.replace_range(edit.span.start as usize..edit.span.end as usize, "");
    assert_eq!(text.matches("name: A").count(), 1);
    assert!(text.contains("            - name: B\n              value: x\n"));
}

#[test]
fn engine_answers_who_writes_a_declared_path() {
    use gitops_lint::ownership::Ownership;
    use gitops_lint::ownership::writers::{field_writers, written_by_others};
    let result = lint(&LintOptions {
        root: fixture("rules/mutation-policy-conflict/bad"),
        config: None,
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let model = &result.model;
    let ownership = Ownership::build(model);
    let deployment = model
        .objects
        .iter()
        .find(|mo| mo.object.kind == "Deployment")
        .unwrap_or_else(|| panic!("no Deployment"));
    let path = |p: &str| p.split('.').map(String::from).collect::<Vec<_>>();
    let pull = path("spec.template.spec.containers.0.imagePullPolicy");
    assert!(written_by_others(model, &ownership, deployment, &pull));
    assert!(!written_by_others(
        model,
        &ownership,
        deployment,
        &path("spec.template.spec.containers.0.image")
    ));
    let writers = field_writers(model, &ownership, deployment);
    assert!(
        writers
            .iter()
            .any(|w| w.owner.contains("force-image-pull-always") && w.path.covers(&pull))
    );
}

#[test]
fn namespace_labels_from_managed_namespace_metadata() {
    let app = APP.replace("{ANNOTATIONS}", "").replace(
        "    automated: {selfHeal: true}\n",
        "    automated: {selfHeal: true}\n    syncOptions: [CreateNamespace=true]\n    managedNamespaceMetadata:\n      labels: {pull: always}\n",
    );
    let repo = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/policy.yaml", &policy(SMP)),
    ]);
    assert_eq!(
        findings_of(repo.path()),
        ["mutation-policy-conflict error apps/web/deployment.yaml:11"]
    );
}

#[test]
fn a_namespaced_kyverno_policy_acts_only_in_its_namespace() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let namespaced = |ns: &str| {
        policy(SMP).replacen(
            "kind: ClusterPolicy\nmetadata:\n  name: pull\n",
            &format!("kind: Policy\nmetadata:\n  name: pull\n  namespace: {ns}\n"),
            1,
        )
    };
    let elsewhere = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", &namespaced("other")),
    ]);
    assert_eq!(findings_of(elsewhere.path()), Vec::<String>::new());
    let here = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", &namespaced("shop")),
    ]);
    assert_eq!(
        findings_of(here.path()),
        ["mutation-policy-conflict error apps/web/deployment.yaml:11"]
    );
}

#[test]
fn an_empty_field_a_policy_fills_is_a_warning_not_info() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let deployment = DEPLOYMENT.replace(
        "          imagePullPolicy: IfNotPresent\n",
        "      tolerations: []\n",
    );
    let fill = "        patchStrategicMerge:
          spec:
            template:
              spec:
                tolerations:
                  - key: dedicated
                    value: shop
";
    let without_policy = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", &deployment),
    ]);
    // Built-in kind, nobody fills it: info only (Argo normalizes the empty list away).
    assert_eq!(findings_of(without_policy.path()), Vec::<String>::new());
    let with_policy = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", &deployment),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", &policy(fill)),
    ]);
    assert_eq!(
        findings_of(with_policy.path()),
        ["declared-empty-or-null warning apps/web/deployment.yaml:11"]
    );
}

#[test]
fn a_policy_only_acts_in_the_cluster_its_app_deploys_it_to() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let platform_app = |server: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: platform
  namespace: argocd
spec:
  project: default
  source: {{repoURL: https://git.example.com/x.git, path: platform}}
  destination: {{server: {server}}}
  syncPolicy:
    automated: {{selfHeal: true}}
"
        )
    };
    let files = |server: &str| {
        write_repo(&[
            ("argocd/web.yaml", &app),
            ("argocd/platform.yaml", &platform_app(server)),
            ("apps/web/deployment.yaml", DEPLOYMENT),
            ("platform/ns.yaml", NAMESPACE),
            ("platform/policy.yaml", &policy(SMP)),
        ])
    };
    let other = files("https://staging.example.com");
    assert_eq!(findings_of(other.path()), Vec::<String>::new());
    let same = files("https://kubernetes.default.svc");
    assert_eq!(
        findings_of(same.path()),
        ["mutation-policy-conflict error apps/web/deployment.yaml:11"]
    );
}

#[test]
fn gatekeeper_modifyset_and_assignimage_fight_only_when_they_change_the_value() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let deployment = DEPLOYMENT.replace(
        "          imagePullPolicy: IfNotPresent\n",
        "          args: [--verbose]\n",
    );
    let modify = |values: &str| {
        format!(
            "apiVersion: mutations.gatekeeper.sh/v1
kind: ModifySet
metadata:
  name: args
spec:
  applyTo:
    - {{groups: [apps], kinds: [Deployment], versions: [v1]}}
  location: \"spec.template.spec.containers[name:*].args\"
  parameters:
    operation: merge
    values:
      fromList: [{values}]
"
        )
    };
    let present = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", &deployment),
        ("platform/modify.yaml", &modify("--verbose")),
    ]);
    assert_eq!(findings_of(present.path()), Vec::<String>::new());
    let missing = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", &deployment),
        ("platform/modify.yaml", &modify("--audit")),
    ]);
    assert_eq!(
        findings_of(missing.path()),
        ["mutation-policy-conflict error apps/web/deployment.yaml:11"]
    );
    let image = |domain: &str| {
        format!(
            "apiVersion: mutations.gatekeeper.sh/v1alpha1
kind: AssignImage
metadata:
  name: mirror
spec:
  applyTo:
    - {{groups: [apps], kinds: [Deployment], versions: [v1]}}
  location: \"spec.template.spec.containers[name:*].image\"
  parameters:
    assignDomain: {domain}
"
        )
    };
    let mirrored = DEPLOYMENT.replace("image: web:1", "image: mirror.example.com/web:1");
    let same = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", &mirrored),
        ("platform/image.yaml", &image("mirror.example.com")),
    ]);
    assert_eq!(findings_of(same.path()), Vec::<String>::new());
    let other = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", &mirrored),
        ("platform/image.yaml", &image("registry.internal")),
    ]);
    assert_eq!(
        findings_of(other.path()),
        ["mutation-policy-conflict error apps/web/deployment.yaml:10"]
    );
}

#[test]
fn platform_config_is_strict() {
    let err = |config: &str| {
        let repo = write_repo(&[(".gitops-lint.yaml", config)]);
        match lint(&LintOptions {
            root: repo.path().to_path_buf(),
            config: None,
            ..Default::default()
        }) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    };
    let unknown =
        err("platform:\n  owned-fields:\n    - owner: x\n      path: spec.a\n      colour: red\n");
    assert!(
        unknown.contains("colour") && unknown.contains(":5:"),
        "{unknown}"
    );
    let no_path = err("platform:\n  owned-fields:\n    - owner: x\n");
    assert!(no_path.contains("needs `owner` and `path`"), "{no_path}");
    let bad_path = err("platform:\n  owned-fields:\n    - owner: x\n      path: \"spec.a[b\"\n");
    assert!(bad_path.contains("not a field path"), "{bad_path}");
    let bad_selector = err(
        "platform:\n  owned-fields:\n    - owner: x\n      path: spec.a\n      selector: {kind: [Pod]}\n",
    );
    assert!(
        bad_selector.contains("unknown key `kind`"),
        "{bad_selector}"
    );
    assert_eq!(
        err("platform:\n  owned-fields:\n    - owner: x\n      path: spec.a\n"),
        ""
    );
}

#[test]
fn mutating_admission_policy_needs_its_binding() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let policy = r#"apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: always-pull
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [apps]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [deployments]
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: >
          Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{
            containers: [Object.spec.template.spec.containers{name: "web", imagePullPolicy: "Always"}]}}}}
"#;
    let binding = "apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: always-pull
spec:
  policyName: always-pull
  matchResources:
    namespaceSelector:
      matchLabels: {pull: always}
";
    let unbound = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", policy),
    ]);
    assert_eq!(findings_of(unbound.path()), Vec::<String>::new());
    let bound = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", policy),
        ("platform/binding.yaml", binding),
    ]);
    assert_eq!(
        findings_of(bound.path()),
        ["mutation-policy-conflict error apps/web/deployment.yaml:11"]
    );
}

/// `matchConditions` are evaluated with a CEL interpreter (issue 16, class 3): a condition
/// true for the object keeps the certain error, a false one removes the finding, and one
/// that reads the request is "may apply", naming the expression.
#[test]
fn mutating_admission_policy_match_conditions_are_evaluated() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let policy = |condition: &str| {
        format!(
            r#"apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: always-pull
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [apps]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [deployments]
  matchConditions:
    - name: which
      expression: "{condition}"
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: >
          Object{{spec: Object.spec{{template: Object.spec.template{{spec: Object.spec.template.spec{{
            containers: [Object.spec.template.spec.containers{{name: "web", imagePullPolicy: "Always"}}]}}}}}}}}
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: always-pull
spec:
  policyName: always-pull
"#
        )
    };
    let lint_with = |condition: &str| {
        let repo = write_repo(&[
            ("argocd/web.yaml", &app),
            ("apps/web/deployment.yaml", DEPLOYMENT),
            ("platform/policy.yaml", &policy(condition)),
        ]);
        let result = match lint(&LintOptions {
            root: repo.path().to_path_buf(),
            config: None,
            ..Default::default()
        }) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        result
            .findings
            .iter()
            .filter(|f| f.rule == "mutation-policy-conflict")
            .map(|f| format!("{} {}", f.severity.as_str(), f.message))
            .collect::<Vec<_>>()
    };
    let applies = lint_with("object.metadata.name == 'web'");
    assert!(
        applies.len() == 1 && applies[0].starts_with("error "),
        "{applies:?}"
    );
    assert_eq!(
        lint_with("object.metadata.name.startsWith('batch-')"),
        Vec::<String>::new()
    );
    let unknown = lint_with("request.userInfo.username != 'ci-bot'");
    assert!(
        unknown.len() == 1
            && unknown[0].starts_with("warning ")
            && unknown[0].contains("request.userInfo.username != 'ci-bot'"),
        "{unknown:?}"
    );
}

#[test]
fn an_unknown_field_turns_off_argo_normalization_of_a_built_in_object() {
    let with_cpu = DEPLOYMENT.replace(
        "          imagePullPolicy: IfNotPresent\n",
        "          resources:\n            requests:\n              cpu: 1000m\n",
    );
    let normalized = write_repo(&[("apps/web/deployment.yaml", &with_cpu)]);
    assert_eq!(findings_of(normalized.path()), Vec::<String>::new());
    let typo = with_cpu.replace(
        "          image: web:1\n",
        "          image: web:1\n          imagePullpolicy: Always\n",
    );
    let raw = write_repo(&[("apps/web/deployment.yaml", &typo)]);
    assert_eq!(
        findings_of(raw.path()),
        [
            "non-canonical-quantity warning apps/web/deployment.yaml:14",
            "schema-pruned-field error apps/web/deployment.yaml:11",
        ]
    );
}

#[test]
fn helm_in_ci_on_a_flux_helmrelease_release_is_a_second_writer() {
    let release = "apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: redis
  namespace: data
spec:
  interval: 10m
  chart:
    spec:
      chart: redis
      version: 19.0.1
      sourceRef: {kind: HelmRepository, name: bitnami}
";
    let repo = write_repo(&[
        ("clusters/prod/redis.yaml", release),
        (
            "scripts/deploy.sh",
            "#!/bin/sh\nhelm upgrade --install redis bitnami/redis -n data\nhelm upgrade --install cache bitnami/redis -n data\n",
        ),
    ]);
    let got: Vec<String> = findings_of(repo.path())
        .into_iter()
        .filter(|l| l.starts_with("second-writer"))
        .collect();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].ends_with("scripts/deploy.sh:2"), "{got:?}");
}

#[test]
fn mutations_that_never_fire_on_apply_are_not_writers() {
    let app = APP.replace("{ANNOTATIONS}", "");
    let delete_only = policy(SMP).replace(
        "              kinds: [Deployment]\n",
        "              kinds: [Deployment]\n              operations: [DELETE]\n",
    );
    let repo = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", &delete_only),
    ]);
    assert_eq!(findings_of(repo.path()), Vec::<String>::new());
    // CREATE only: the next sync (an update) restores Git's value, so a warning.
    let create_only = delete_only.replace("operations: [DELETE]", "operations: [CREATE]");
    let repo = write_repo(&[
        ("argocd/web.yaml", &app),
        ("apps/web/deployment.yaml", DEPLOYMENT),
        ("platform/ns.yaml", NAMESPACE),
        ("platform/policy.yaml", &create_only),
    ]);
    assert_eq!(
        findings_of(repo.path()),
        ["mutation-policy-conflict warning apps/web/deployment.yaml:11"]
    );
}
