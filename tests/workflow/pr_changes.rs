//! `diff --base` comparing each object with itself in the base: changes the controller cannot
//! apply (`immutable-field-changed`) and changes that delete (`pr-deletes-data`). Each test
//! builds a git repository with a base commit and a head commit, and checks every finding's
//! rule, severity, file and line (the line the head changed) and its before/after values;
//! the clean cases (an image bump, a label added, the controller's own way out) have none.

use super::common::*;

/// One finding as `diff --format json` reports it.
#[derive(Debug)]
struct Found {
    rule: String,
    severity: String,
    file: String,
    line: u64,
    message: String,
    help: String,
}

/// Base and head of a pull request: files of the base, then the head's edits (`None`
/// deletes the file).
fn pr(base: &[(&str, &str)], head: &[(&str, Option<&str>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    for (path, text) in base {
        write(d, path, text);
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    for (path, text) in head {
        match text {
            Some(text) => write(d, path, text),
            None => std::fs::remove_file(d.join(path)).expect("rm"),
        }
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "head"]);
    dir
}

/// The comparison findings of `diff --base HEAD~1` (other rules' findings are left out).
fn compared(repo: &tempfile::TempDir) -> Vec<Found> {
    let out = diff_last_commit_json()
        .arg(repo.path())
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let text = |f: &serde_json::Value, k: &str| f[k].as_str().unwrap_or("").to_string();
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| {
            matches!(
                f["rule"].as_str(),
                Some("immutable-field-changed" | "pr-deletes-data")
            )
        })
        .map(|f| Found {
            rule: text(f, "rule"),
            severity: text(f, "severity"),
            file: text(f, "file"),
            line: f["line"].as_u64().unwrap_or(0),
            message: text(f, "message"),
            help: text(f, "help"),
        })
        .collect()
}

/// An Argo CD Application for `apps/NAME`, automated, with prune as given.
fn app(name: &str, prune: bool) -> String {
    let app = APP.replace("NAME", name);
    if prune {
        app.replace(
            "      selfHeal: true\n",
            "      selfHeal: true\n      prune: true\n",
        )
    } else {
        app
    }
}

fn manual_app(name: &str) -> String {
    APP.replace("NAME", name)
        .replace("    automated:\n      selfHeal: true\n", "")
}

/// One Argo CD app `shop` whose `apps/shop/FILE` goes from `before` to `after`.
fn one_object(file: &str, before: &str, after: &str) -> Vec<Found> {
    let path = format!("apps/shop/{file}");
    let application = app("shop", false);
    let repo = pr(
        &[("argocd/shop.yaml", &application), (&path, before)],
        &[(&path, Some(after))],
    );
    compared(&repo)
}

/// Exactly one finding of `rule` at `file:line` with `severity`, whose message holds each
/// of `parts`.
fn assert_one(found: &[Found], rule: &str, severity: &str, file: &str, line: u64, parts: &[&str]) {
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(
        (
            f.rule.as_str(),
            f.severity.as_str(),
            f.file.as_str(),
            f.line
        ),
        (rule, severity, file, line),
        "{f:#?}"
    );
    for p in parts {
        assert!(f.message.contains(p), "{p:?} not in {:?}", f.message);
    }
}

const IMMUTABLE: &str = "immutable-field-changed";
const DELETES: &str = "pr-deletes-data";

#[test]
fn a_selector_label_added_is_reported_on_its_line_and_an_image_bump_is_not() {
    let selector = DEPLOYMENT.replace(
        "      app: shop\n  template:",
        "      app: shop\n      tier: web\n  template:",
    );
    let found = one_object("deployment.yaml", DEPLOYMENT, &selector);
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/deployment.yaml",
        9,
        &[
            "Deployment/prod/shop",
            "`spec.selector.matchLabels.tier` changes from (absent) to \"web\"",
            "field is immutable",
        ],
    );
    assert!(
        found[0].help.contains("Force=true,Replace=true"),
        "{found:#?}"
    );

    let bump = DEPLOYMENT.replace("shop:1.0.0", "shop:1.1.0");
    assert!(one_object("deployment.yaml", DEPLOYMENT, &bump).is_empty());
    let label = DEPLOYMENT.replace(
        "metadata:\n  name: shop\n",
        "metadata:\n  name: shop\n  labels:\n    team: shop\n",
    );
    assert!(one_object("deployment.yaml", DEPLOYMENT, &label).is_empty());
}

#[test]
fn argo_force_replace_on_the_object_is_the_way_out_and_replace_alone_is_not() {
    let annotated = |options: &str| {
        DEPLOYMENT.replace(
            "metadata:\n  name: shop\n",
            &format!("metadata:\n  name: shop\n  annotations:\n    argocd.argoproj.io/sync-options: {options}\n"),
        )
    };
    let changed = |text: &str| {
        text.replace(
            "      app: shop\n  template:",
            "      app: shop2\n  template:",
        )
    };
    let force = annotated("Force=true,Replace=true");
    assert!(one_object("deployment.yaml", &force, &changed(&force)).is_empty());
    let replace = annotated("Replace=true");
    let found = one_object("deployment.yaml", &replace, &changed(&replace));
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/deployment.yaml",
        10,
        &["from \"shop\" to \"shop2\""],
    );
}

#[test]
fn a_manual_sync_app_gets_a_warning() {
    let repo = pr(
        &[
            ("argocd/shop.yaml", &manual_app("shop")),
            ("apps/shop/deployment.yaml", DEPLOYMENT),
        ],
        &[(
            "apps/shop/deployment.yaml",
            Some(&DEPLOYMENT.replace(
                "      app: shop\n  template:",
                "      app: web\n  template:",
            )),
        )],
    );
    let found = compared(&repo);
    assert_one(
        &found,
        IMMUTABLE,
        "warning",
        "apps/shop/deployment.yaml",
        8,
        &["the next sync fails"],
    );
}

const STATEFULSET: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
        - name: db
          image: postgres:16.1
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: 10Gi
";

#[test]
fn statefulset_claim_templates_service_name_and_pod_management() {
    let found = one_object(
        "db.yaml",
        STATEFULSET,
        &STATEFULSET.replace("storage: 10Gi", "storage: 20Gi"),
    );
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/db.yaml",
        25,
        &[
            "`spec.volumeClaimTemplates[0].spec.resources.requests.storage` changes from \"10Gi\" to \"20Gi\"",
        ],
    );
    let found = one_object(
        "db.yaml",
        STATEFULSET,
        &STATEFULSET.replace("serviceName: db", "serviceName: db-headless"),
    );
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/db.yaml",
        6,
        &["from \"db\" to \"db-headless\""],
    );
    let parallel = STATEFULSET.replace(
        "  serviceName: db\n",
        "  serviceName: db\n  podManagementPolicy: Parallel\n",
    );
    let found = one_object("db.yaml", STATEFULSET, &parallel);
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/db.yaml",
        7,
        &["`spec.podManagementPolicy` is set to \"Parallel\""],
    );
    // Writing the default is no change; an image bump is allowed.
    let ordered = STATEFULSET.replace(
        "  serviceName: db\n",
        "  serviceName: db\n  podManagementPolicy: OrderedReady\n",
    );
    assert!(one_object("db.yaml", STATEFULSET, &ordered).is_empty());
    assert!(one_object("db.yaml", STATEFULSET, &STATEFULSET.replace("16.1", "16.2")).is_empty());
}

const JOB: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: registry.example.com/migrate:1.0.0
";

#[test]
fn a_job_template_change_is_reported_unless_the_job_is_a_hook() {
    let found = one_object("job.yaml", JOB, &JOB.replace("1.0.0", "1.1.0"));
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/job.yaml",
        11,
        &[
            "`spec.template.spec.containers[0].image` changes from \"registry.example.com/migrate:1.0.0\" to \"registry.example.com/migrate:1.1.0\"",
        ],
    );
    let hook = JOB.replace(
        "  name: migrate\n",
        "  name: migrate\n  annotations:\n    argocd.argoproj.io/hook: PreSync\n",
    );
    assert!(one_object("job.yaml", &hook, &hook.replace("1.0.0", "1.1.0")).is_empty());
}

const SERVICE: &str = "apiVersion: v1
kind: Service
metadata:
  name: dns
spec:
  clusterIP: 10.96.0.10
  ports:
    - port: 53
";

#[test]
fn a_service_cluster_ip_change_and_a_dropped_one() {
    let found = one_object(
        "svc.yaml",
        SERVICE,
        &SERVICE.replace("10.96.0.10", "10.96.0.11"),
    );
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/svc.yaml",
        6,
        &["from \"10.96.0.10\" to \"10.96.0.11\""],
    );
    let headless = SERVICE.replace("10.96.0.10", "None");
    assert_one(
        &one_object("svc.yaml", SERVICE, &headless),
        IMMUTABLE,
        "error",
        "apps/shop/svc.yaml",
        6,
        &["to \"None\""],
    );
    // No longer declared: the Service keeps its address.
    assert!(
        one_object(
            "svc.yaml",
            SERVICE,
            &SERVICE.replace("  clusterIP: 10.96.0.10\n", "")
        )
        .is_empty()
    );
}

const PVC: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: shop-data
spec:
  storageClassName: fast
  accessModes:
    - ReadWriteOnce
  resources:
    requests:
      storage: 20Gi
";

#[test]
fn claim_class_access_modes_and_a_shrink() {
    let found = one_object("pvc.yaml", PVC, &PVC.replace("fast", "standard"));
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/pvc.yaml",
        6,
        &["`spec.storageClassName` changes from \"fast\" to \"standard\""],
    );
    let found = one_object(
        "pvc.yaml",
        PVC,
        &PVC.replace("ReadWriteOnce", "ReadWriteMany"),
    );
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/pvc.yaml",
        8,
        &["`spec.accessModes[0]` changes from \"ReadWriteOnce\" to \"ReadWriteMany\""],
    );
    let found = one_object("pvc.yaml", PVC, &PVC.replace("20Gi", "10240Mi"));
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/pvc.yaml",
        11,
        &["shrinks from 20Gi to 10240Mi"],
    );
    // Growing is an expansion.
    assert!(one_object("pvc.yaml", PVC, &PVC.replace("20Gi", "40Gi")).is_empty());
}

const ROLEBINDING: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: shop-reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: reader
subjects:
  - kind: ServiceAccount
    name: shop
";

#[test]
fn a_binding_role_ref_change_and_a_subject_added() {
    let found = one_object(
        "rb.yaml",
        ROLEBINDING,
        &ROLEBINDING.replace("name: reader", "name: writer"),
    );
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/rb.yaml",
        8,
        &["`roleRef.name` changes from \"reader\" to \"writer\""],
    );
    let more = format!("{ROLEBINDING}  - kind: ServiceAccount\n    name: shop-worker\n");
    assert!(one_object("rb.yaml", ROLEBINDING, &more).is_empty());
}

#[test]
fn immutable_config_map_and_secret_data() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\nimmutable: true\ndata:\n  mode: batch\n";
    let found = one_object("cm.yaml", cm, &cm.replace("batch", "stream"));
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/cm.yaml",
        7,
        &[
            "`data.mode` changes from \"batch\" to \"stream\"",
            "immutable: true",
        ],
    );
    // Not immutable: data may change.
    let mutable = cm.replace("immutable: true\n", "");
    assert!(one_object("cm.yaml", &mutable, &mutable.replace("batch", "stream")).is_empty());
    // A Secret's values are never shown.
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\nimmutable: true\nstringData:\n  token: hunter2-old-value\n";
    let found = one_object(
        "secret.yaml",
        secret,
        &secret.replace("hunter2-old-value", "hunter3-new-value"),
    );
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/secret.yaml",
        7,
        &["`stringData.token` changes:"],
    );
    assert!(!found[0].message.contains("hunter"), "{found:#?}");
}

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: buckets.storage.example.com
spec:
  group: storage.example.com
  scope: Namespaced
  names:
    kind: Bucket
    plural: buckets
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                region:
                  type: string
                  x-kubernetes-validations:
                    - rule: self == oldSelf
                      message: region is immutable
                size:
                  type: string
";

const BUCKET: &str = "apiVersion: storage.example.com/v1
kind: Bucket
metadata:
  name: assets
spec:
  region: eu-west-1
  size: 10Gi
";

#[test]
fn crd_scope_and_a_field_its_transition_rule_guards() {
    let found = one_object(
        "crd.yaml",
        CRD,
        &CRD.replace("scope: Namespaced", "scope: Cluster"),
    );
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/crd.yaml",
        7,
        &["`spec.scope` changes from \"Namespaced\" to \"Cluster\""],
    );
    let application = app("shop", false);
    let repo = pr(
        &[
            ("argocd/shop.yaml", &application),
            ("apps/shop/crd.yaml", CRD),
            ("apps/shop/bucket.yaml", BUCKET),
        ],
        &[(
            "apps/shop/bucket.yaml",
            Some(&BUCKET.replace("eu-west-1", "us-east-1")),
        )],
    );
    let found = compared(&repo);
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/bucket.yaml",
        6,
        &[
            "Bucket/prod/assets",
            "`spec.region` changes from \"eu-west-1\" to \"us-east-1\"",
            "`self == oldSelf`",
        ],
    );
    // A field without the rule may change.
    let repo = pr(
        &[
            ("argocd/shop.yaml", &application),
            ("apps/shop/crd.yaml", CRD),
            ("apps/shop/bucket.yaml", BUCKET),
        ],
        &[(
            "apps/shop/bucket.yaml",
            Some(&BUCKET.replace("10Gi", "20Gi")),
        )],
    );
    assert!(compared(&repo).is_empty());
}

/// A Flux Kustomization applying `./apps/shop` from the repository's GitRepository.
const FLUX: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: shop
  namespace: flux-system
spec:
  interval: 10m
  path: ./apps/shop
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  targetNamespace: prod
";

#[test]
fn flux_is_an_error_and_its_force_annotation_the_way_out() {
    let changed = |text: &str| {
        text.replace(
            "      app: shop\n  template:",
            "      app: web\n  template:",
        )
    };
    let repo = pr(
        &[
            ("clusters/prod/shop.yaml", FLUX),
            ("apps/shop/deployment.yaml", DEPLOYMENT),
        ],
        &[("apps/shop/deployment.yaml", Some(&changed(DEPLOYMENT)))],
    );
    let found = compared(&repo);
    assert_one(
        &found,
        IMMUTABLE,
        "error",
        "apps/shop/deployment.yaml",
        8,
        &["Deployment/prod/shop"],
    );
    assert!(
        found[0]
            .help
            .contains("kustomize.toolkit.fluxcd.io/force: enabled"),
        "{found:#?}"
    );
    let forced = DEPLOYMENT.replace(
        "metadata:\n  name: shop\n",
        "metadata:\n  name: shop\n  annotations:\n    kustomize.toolkit.fluxcd.io/force: enabled\n",
    );
    let repo = pr(
        &[
            ("clusters/prod/shop.yaml", FLUX),
            ("apps/shop/deployment.yaml", &forced),
        ],
        &[("apps/shop/deployment.yaml", Some(&changed(&forced)))],
    );
    assert!(compared(&repo).is_empty());
}

/// Two pruning Argo CD apps, shop and storage; `file` moves from shop to storage.
fn moved(file: &str, before: &str, after: &str, prune: bool) -> Vec<Found> {
    let from = format!("apps/shop/{file}");
    let to = format!("apps/storage/{file}");
    let (shop, storage) = (app("shop", prune), app("storage", true));
    let repo = pr(
        &[
            ("argocd/shop.yaml", &shop),
            ("argocd/storage.yaml", &storage),
            ("apps/shop/deployment.yaml", DEPLOYMENT),
            (
                "apps/storage/keep.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\ndata:\n  a: b\n",
            ),
            (&from, before),
        ],
        &[(&from, None), (&to, Some(after))],
    );
    compared(&repo)
}

#[test]
fn a_claim_that_moves_to_another_app_is_an_error_on_its_new_name() {
    let found = moved("pvc.yaml", PVC, PVC, true);
    assert_one(
        &found,
        DELETES,
        "error",
        "apps/storage/pvc.yaml",
        4,
        &[
            "PersistentVolumeClaim/prod/shop-data moves from app shop to app storage",
            "volume's data",
        ],
    );
    assert!(
        found[0].help.contains("Prune=false,Delete=false"),
        "{found:#?}"
    );
    // A ConfigMap comes back with what Git says: a warning.
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  mode: batch\n";
    assert_one(
        &moved("cm.yaml", cm, cm, true),
        DELETES,
        "warning",
        "apps/storage/cm.yaml",
        4,
        &["ConfigMap/prod/flags moves from app shop to app storage"],
    );
}

#[test]
fn a_move_is_quiet_when_the_old_app_keeps_the_object() {
    // The live object already says Prune=false.
    let kept = PVC.replace(
        "  name: shop-data\n",
        "  name: shop-data\n  annotations:\n    argocd.argoproj.io/sync-options: Prune=false,Delete=false\n",
    );
    assert!(moved("pvc.yaml", &kept, &kept, true).is_empty());
    // The old app does not prune.
    assert!(moved("pvc.yaml", PVC, PVC, false).is_empty());
}

#[test]
fn a_claim_removed_from_a_pruning_app_is_reported_on_the_app() {
    let (shop, pruning) = (app("shop", true), app("shop", false));
    for (application, expected) in [(&shop, 1), (&pruning, 0)] {
        let repo = pr(
            &[
                ("argocd/shop.yaml", application),
                ("apps/shop/deployment.yaml", DEPLOYMENT),
                ("apps/shop/pvc.yaml", PVC),
            ],
            &[("apps/shop/pvc.yaml", None)],
        );
        let found = compared(&repo);
        assert_eq!(found.len(), expected, "{found:#?}");
        if expected == 1 {
            assert_one(
                &found,
                DELETES,
                "error",
                "argocd/shop.yaml",
                4,
                &[
                    "PersistentVolumeClaim/prod/shop-data is no longer rendered by app shop: Argo CD prunes it",
                ],
            );
        }
    }
}

#[test]
fn a_name_prefix_change_renames_the_claim() {
    let kustomization = |prefix: &str| {
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: {prefix}\nresources:\n  - deployment.yaml\n  - pvc.yaml\n"
        )
    };
    let shop = app("shop", true);
    let repo = pr(
        &[
            ("argocd/shop.yaml", &shop),
            ("apps/shop/kustomization.yaml", &kustomization("eu-")),
            ("apps/shop/deployment.yaml", DEPLOYMENT),
            ("apps/shop/pvc.yaml", PVC),
        ],
        &[(
            "apps/shop/kustomization.yaml",
            Some(&kustomization("emea-")),
        )],
    );
    let found = compared(&repo);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].rule, DELETES);
    assert_eq!(found[0].severity, "error");
    assert!(
        found[0].message.contains(
            "PersistentVolumeClaim/prod/eu-shop-data is renamed to PersistentVolumeClaim/prod/emea-shop-data"
        ),
        "{found:#?}"
    );
}

#[test]
fn a_namespace_removed_from_a_flux_kustomization_that_prunes() {
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: payments\n";
    let repo = pr(
        &[
            ("clusters/prod/shop.yaml", FLUX),
            ("apps/shop/deployment.yaml", DEPLOYMENT),
            ("apps/shop/namespace.yaml", ns),
        ],
        &[("apps/shop/namespace.yaml", None)],
    );
    let found = compared(&repo);
    assert_one(
        &found,
        DELETES,
        "error",
        "clusters/prod/shop.yaml",
        4,
        &[
            "Namespace/payments is no longer rendered by app shop",
            "every object in the namespace",
        ],
    );
    // With the prune annotation in the base, kustomize-controller keeps it.
    let kept = ns.replace(
        "  name: payments\n",
        "  name: payments\n  annotations:\n    kustomize.toolkit.fluxcd.io/prune: disabled\n",
    );
    let repo = pr(
        &[
            ("clusters/prod/shop.yaml", FLUX),
            ("apps/shop/deployment.yaml", DEPLOYMENT),
            ("apps/shop/namespace.yaml", &kept),
        ],
        &[("apps/shop/namespace.yaml", None)],
    );
    assert!(compared(&repo).is_empty());
}

#[test]
fn the_job_summary_lists_both_kinds_of_change_per_app() {
    let job = |tag: &str| JOB.replace("1.0.0", tag);
    let (shop, storage) = (app("shop", true), app("storage", true));
    let repo = pr(
        &[
            ("argocd/shop.yaml", &shop),
            ("argocd/storage.yaml", &storage),
            ("apps/shop/job.yaml", &job("1.0.0")),
            ("apps/shop/pvc.yaml", PVC),
            (
                "apps/storage/keep.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\ndata:\n  a: b\n",
            ),
        ],
        &[
            ("apps/shop/job.yaml", Some(&job("1.1.0"))),
            ("apps/shop/pvc.yaml", None),
            ("apps/storage/pvc.yaml", Some(PVC)),
        ],
    );
    let summary = repo.path().join("summary.md");
    let out = bin()
        .args(["diff", "--base", "HEAD~1", "--comment", "off", "--no-color"])
        .arg(repo.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&summary).expect("summary written");
    let cannot = text
        .find("### Changes the controller cannot apply (1)\n\n- app `shop`\n  - 🔴 error `apps/shop/job.yaml:11`: Job/prod/migrate")
        .unwrap_or_else(|| panic!("{text}"));
    let delete = text
        .find("### Changes that delete (1)\n\n- app `storage`\n  - 🔴 error `apps/storage/pvc.yaml:4`: PersistentVolumeClaim/prod/shop-data moves from app shop to app storage")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(cannot < delete, "{text}");
}

#[test]
fn a_claim_moved_to_an_app_of_another_cluster_is_a_removal_not_a_move() {
    let shop = app("shop", true);
    let storage = app("storage", true).replace(
        "server: https://kubernetes.default.svc",
        "server: https://dr.example.com:6443",
    );
    let repo = pr(
        &[
            ("argocd/shop.yaml", &shop),
            ("argocd/storage.yaml", &storage),
            ("apps/shop/deployment.yaml", DEPLOYMENT),
            (
                "apps/storage/keep.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\ndata:\n  a: b\n",
            ),
            ("apps/shop/pvc.yaml", PVC),
        ],
        &[
            ("apps/shop/pvc.yaml", None),
            ("apps/storage/pvc.yaml", Some(PVC)),
        ],
    );
    let found = compared(&repo);
    // The first cluster loses the claim; the second one's is a new, empty claim.
    assert_one(
        &found,
        DELETES,
        "error",
        "argocd/shop.yaml",
        4,
        &["PersistentVolumeClaim/prod/shop-data is no longer rendered by app shop"],
    );
}

#[test]
fn settings_and_inline_suppressions_apply_to_compared_findings() {
    let changed = JOB.replace("1.0.0", "1.1.0");
    let application = app("shop", false);
    let with_config = |config: &str, job: &str| {
        let repo = pr(
            &[
                ("argocd/shop.yaml", &application),
                (".gitops-lint.yaml", config),
                ("apps/shop/job.yaml", JOB),
            ],
            &[("apps/shop/job.yaml", Some(job))],
        );
        compared(&repo)
    };
    let found = with_config("rules:\n  immutable-field-changed: warning\n", &changed);
    assert_one(
        &found,
        IMMUTABLE,
        "warning",
        "apps/shop/job.yaml",
        11,
        &["Job/prod/migrate"],
    );
    assert!(with_config("rules:\n  immutable-field-changed: off\n", &changed).is_empty());
    let suppressed = changed.replace(
        "          image:",
        "          # gitops-lint: ignore[immutable-field-changed] the Job is deleted by hand before each release\n          image:",
    );
    assert!(with_config("rules: {}\n", &suppressed).is_empty());
}
