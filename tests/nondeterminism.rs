//! Non-deterministic rendering (catalog §4): taint from the template engine reaches the
//! rendered fields, so the call is reported at its template line; calls in disabled
//! branches, sorted `keys`, checksum/config of deterministic input and derivePassword
//! stay clean. Measured against the corpus's ground truth (charts rendered twice by helm).

use crate::common;
use gitops_lint::lint::{LintOptions, lint};
use gitops_lint::render::helm::provenance::TAINT_LABEL;
use gitops_lint::render::helm::{cli_fs, parse_helm_template_args, run};
use gitops_lint::report::Severity;
use std::collections::BTreeSet;

use common::{corpus, read_tsv, shell_words};
use std::path::Path;

fn findings(rel: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let r = lint(&LintOptions {
        root,
        config: None,
        ..Default::default()
    })
    .expect("lint");
    let mut out: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.rule == "helm-nondeterministic-function")
        .map(|f| {
            let lc = r.map.line_col(f.primary.span);
            format!(
                "{} {}:{}:{} {}",
                f.severity.as_str(),
                r.map.path(f.primary.span.file),
                lc.line,
                lc.column,
                f.field.as_deref().unwrap_or("")
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn each_family_is_reported_at_the_call() {
    assert_eq!(
        findings("testdata/nondeterminism"),
        [
            // lookup-or-generate: the generator call inside the helper the else-branch includes
            "error charts/shop/templates/_helpers.tpl:2:5 data.password",
            // unsorted keys reach the ConfigMap, and through its checksum the pod template
            "error charts/shop/templates/configmap.yaml:6:15 data.enabled",
            "error charts/shop/templates/configmap.yaml:6:15 spec.template.metadata.annotations.checksum/config",
            // the rollme pattern
            "error charts/shop/templates/deployment.yaml:15:20 spec.template.metadata.annotations.rollme",
            // one family per line: shuffle, randInt, randNumeric, now, ago, bcrypt, htpasswd,
            // encryptAES, getHostByName, unsorted `values`, genPrivateKey (sorted as strings)
            "error charts/shop/templates/families.yaml:10:19 data.rendered-at",
            "error charts/shop/templates/families.yaml:11:14 data.uptime",
            "error charts/shop/templates/families.yaml:12:21 data.password-hash",
            "error charts/shop/templates/families.yaml:13:16 data.htpasswd",
            "error charts/shop/templates/families.yaml:14:17 data.encrypted",
            "error charts/shop/templates/families.yaml:15:19 data.resolved-db",
            "error charts/shop/templates/families.yaml:16:13 data.flags",
            "error charts/shop/templates/families.yaml:17:19 data.signing-key",
            "error charts/shop/templates/families.yaml:7:30 data.token-order",
            "error charts/shop/templates/families.yaml:8:22 data.jitter-seconds",
            "error charts/shop/templates/families.yaml:9:11 data.pin",
            // a self-signed certificate generated at render time
            "error charts/shop/templates/tls.yaml:1:14 data.tls.crt",
            // rollme behind a values flag (the flag's line is a secondary label)
            "error charts/shop/templates/worker.yaml:15:20 spec.template.metadata.annotations.rollme",
            // a hook object: regenerated on every sync, not compared: warning
            "warning charts/shop/templates/seed-job.yaml:4:22 metadata.name",
        ]
    );
}

#[test]
fn the_values_line_that_enables_the_branch_is_a_secondary_label() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/nondeterminism");
    let r = lint(&LintOptions {
        root,
        config: None,
        ..Default::default()
    })
    .expect("lint");
    let f = r
        .findings
        .iter()
        .find(|f| f.object.as_deref() == Some("Deployment/shop/shop-worker"))
        .expect("worker finding");
    let labels: Vec<String> = f
        .secondary
        .iter()
        .map(|l| {
            let lc = r.map.line_col(l.span);
            format!("{}:{} {}", r.map.path(l.span.file), lc.line, l.text)
        })
        .collect();
    assert!(
        labels.iter().any(|l| l.starts_with(
            "charts/shop/values.yaml:14 `worker.rollOnDeploy` takes the template into this branch"
        )),
        "{labels:?}"
    );
}

#[test]
fn disabled_branches_sorted_keys_checksums_and_derive_password_are_clean() {
    assert!(findings("testdata/nondeterminism-clean").is_empty());
    // `.Capabilities` (the destination cluster: stable between renders) and a printed
    // `.Release.Revision` (always 1 under Argo CD) are not reported by any of the three.
    assert_eq!(
        located(
            "testdata/nondeterminism-clean",
            &[
                "helm-nondeterministic-function",
                "render-nondeterministic",
                "helm-install-hook-every-sync"
            ]
        ),
        Vec::<String>::new()
    );
}

#[test]
fn lookup_or_generate_has_its_own_message() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/nondeterminism");
    let r = lint(&LintOptions {
        root,
        config: None,
        ..Default::default()
    })
    .expect("lint");
    let f = r
        .findings
        .iter()
        .find(|f| f.field.as_deref() == Some("data.password"))
        .expect("password finding");
    assert!(
        f.message.contains("lookup is always empty"),
        "{}",
        f.message
    );
    assert_eq!(f.severity, Severity::Error);
}

/// Every chart/values pair the corpus found non-deterministic (rendered twice by helm) is
/// reported by taint, and no other pair is, except those justified in
/// testdata/nondeterminism-known.tsv.
#[test]
fn corpus_recall_and_false_positives() {
    let Some(root) = corpus() else { return };
    let truth: BTreeSet<(String, String)> =
        read_tsv(&root.join("charts-expected/NONDETERMINISTIC.tsv"))
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect();
    let listed =
        read_tsv(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/nondeterminism-known.tsv"));
    let known = |kind: &str| -> BTreeSet<(String, String)> {
        listed
            .iter()
            .filter(|r| r.len() >= 4 && r[2] == kind)
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect()
    };
    let (known_missed, known_extra) = (known("missed"), known("extra"));
    let mut reported = BTreeSet::new();
    let mut rendered = 0;
    for r in read_tsv(&root.join("charts-expected/INDEX.tsv")) {
        if r.get(6).map(String::as_str) != Some("0") {
            continue;
        }
        let words: Vec<String> = shell_words(&r[2]).into_iter().skip(2).collect();
        let Ok(fs) = cli_fs(&root) else { continue };
        let Ok((chart, opts)) = parse_helm_template_args(&words) else {
            continue;
        };
        let out = run(&fs, &chart, &opts, true);
        rendered += 1;
        let tainted = out.objects.iter().any(|o| {
            let mut hit = false;
            o.root.walk(|_, n| {
                if n.related
                    .as_ref()
                    .is_some_and(|rel| rel.iter().any(|x| x.label.starts_with(TAINT_LABEL)))
                {
                    hit = true;
                }
            });
            hit
        });
        if tainted {
            reported.insert((r[0].clone(), r[1].clone()));
        }
    }
    let found = truth.intersection(&reported).count();
    let missed: BTreeSet<_> = truth.difference(&reported).cloned().collect();
    let extra: BTreeSet<_> = reported.difference(&truth).cloned().collect();
    println!(
        "nondeterminism: recall {found}/{}, false positives {}, {rendered} renders ({} misses and {} false positives justified in testdata/nondeterminism-known.tsv)",
        truth.len(),
        extra.len(),
        known_missed.len(),
        known_extra.len()
    );
    assert_eq!(
        missed, known_missed,
        "misses must be exactly the justified ones"
    );
    assert_eq!(
        extra, known_extra,
        "false positives must be exactly the justified ones"
    );
}

/// The render-twice check catches what taint does not mark: a date formatted in the
/// renderer's local time zone.
#[test]
fn render_twice_reports_unexplained_differences_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/nondeterminism");
    let r = lint(&LintOptions {
        root,
        config: None,
        ..Default::default()
    })
    .expect("lint");
    let got: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.rule == "render-nondeterministic")
        .map(|f| {
            let lc = r.map.line_col(f.primary.span);
            format!(
                "{}:{} {}",
                r.map.path(f.primary.span.file),
                lc.line,
                f.field.as_deref().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        got,
        ["charts/shop/templates/schedule.yaml:7 data.window-start"]
    );
}

/// Every finding of `rules` as `rule severity file:line:col object`, sorted.
fn located(rel: &str, rules: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let r = lint(&LintOptions {
        root,
        config: None,
        ..Default::default()
    })
    .expect("lint");
    let mut out: Vec<String> = r
        .findings
        .iter()
        .filter(|f| rules.contains(&f.rule))
        .map(|f| {
            let lc = r.map.line_col(f.primary.span);
            format!(
                "{} {} {}:{}:{} {}",
                f.rule,
                f.severity.as_str(),
                r.map.path(f.primary.span.file),
                lc.line,
                lc.column,
                f.object.as_deref().unwrap_or("")
            )
        })
        .collect();
    out.sort();
    out
}

/// `.Release.IsInstall`/`.IsUpgrade`/`.Revision` mean different things per controller. The
/// same chart: under Argo CD (`helm template`, always a first install) the install/upgrade
/// logic is §26 at the read; under a Flux HelmRelease (real installs and upgrades) every
/// field computed from or gated by the read changes between releases: §4 warning at the
/// read. Printing the revision under Argo CD is a constant 1 and is not reported.
#[test]
fn release_state_reads_are_reported_per_controller() {
    assert_eq!(
        located(
            "testdata/nondeterminism-release",
            &[
                "helm-install-hook-every-sync",
                "helm-nondeterministic-function",
                "render-nondeterministic"
            ]
        ),
        [
            // an install-only hook holding a generated token: re-created with a new one on
            // every Argo CD sync (error); the call itself is §4, a warning in a hook and under Flux
            "helm-install-hook-every-sync error charts/billing/templates/init-token.yaml:7:19 Secret/billing/billing-init-token",
            // the helper's branch, reached through include
            "helm-install-hook-every-sync warning charts/billing/templates/_helpers.tpl:2:8 Deployment/billing/billing",
            // a whole object behind `if .Release.IsInstall`
            "helm-install-hook-every-sync warning charts/billing/templates/bootstrap-secret.yaml:1:8 Secret/billing/billing-bootstrap",
            // ternary on IsInstall (a value, not a branch), and a branch on a Revision comparison
            "helm-install-hook-every-sync warning charts/billing/templates/configmap.yaml:7:41 ConfigMap/billing/billing",
            "helm-install-hook-every-sync warning charts/billing/templates/configmap.yaml:8:18 ConfigMap/billing/billing",
            "helm-nondeterministic-function warning charts/billing/templates/_helpers.tpl:2:8 Deployment/billing-flux/billing",
            "helm-nondeterministic-function warning charts/billing/templates/bootstrap-secret.yaml:1:8 Secret/billing-flux/billing-bootstrap",
            "helm-nondeterministic-function warning charts/billing/templates/configmap.yaml:7:41 ConfigMap/billing-flux/billing",
            "helm-nondeterministic-function warning charts/billing/templates/configmap.yaml:8:18 ConfigMap/billing-flux/billing",
            // the printed revision: only under Flux
            "helm-nondeterministic-function warning charts/billing/templates/deployment.yaml:14:30 Deployment/billing-flux/billing",
            "helm-nondeterministic-function warning charts/billing/templates/init-token.yaml:9:13 Secret/billing-flux/billing-init-token",
            "helm-nondeterministic-function warning charts/billing/templates/init-token.yaml:9:13 Secret/billing/billing-init-token",
        ]
    );
}

/// A kustomize `helmCharts` entry with no `version` and no vendored chart resolves to the
/// newest chart at each build: an input that moves without a commit (`unpinned-source`, at
/// the entry's name), besides the chart not rendered offline; the templates themselves are
/// not what changes, so `render-nondeterministic` says nothing of it. Pinned, it is clean.
#[test]
fn unpinned_unvendored_helm_chart_is_an_unpinned_source() {
    let bad = "testdata/rules/unpinned-source/bad-helmcharts-without-version";
    assert_eq!(
        located(bad, &["unpinned-source", "render-nondeterministic"]),
        ["unpinned-source warning apps/redis/kustomization.yaml:3:11 "]
    );
    assert_eq!(
        located(bad, &["offline-unrenderable-input"]),
        // The `redis` Application deploys apps/redis: what it cannot render offline hides
        // part of a deployed app.
        ["offline-unrenderable-input warning apps/redis/kustomization.yaml:3:5 "]
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(bad);
    let r = lint(&LintOptions {
        root,
        config: None,
        ..Default::default()
    })
    .expect("lint");
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "unpinned-source")
        .expect("helmCharts finding");
    assert!(
        f.message.contains("sets no `version`") && f.message.contains("newest chart"),
        "{}",
        f.message
    );
    let clean = "testdata/rules/unpinned-source/clean-helmcharts-with-version";
    assert!(located(clean, &["unpinned-source", "render-nondeterministic"]).is_empty());
}
