//! Every rule has fixture repos under testdata/rules/<rule>/{bad,clean}. Each directory is a
//! test of its own (listed below; a test fails when a directory or a rule is missing from the
//! list) that checks three things:
//! - `expected.txt` lists the findings at warning or above as `rule severity file:line`, and
//!   the whole list must match;
//! - a bad fixture shows its own rule (at any severity), a clean one has nothing at warning
//!   or above (an info of its own rule may stay: "normalised here, so only noise");
//! - the complete human report (messages, labels, help) and the diff of the safe fixes match
//!   the checked-in snapshot in tests/snapshots/ (insta: `INSTA_UPDATE=always cargo test
//!   --test integration rule_fixtures::` rewrites them, and the diff is reviewed like code);
//! - on a bad fixture, the fixes offered agree with the registry's `FixAvailability`.
//!
//! Further clean repos, `clean-<case>/`, pin one false-positive class each (issue 16): they
//! must have no finding at all, not even info, unless their `expected.txt` lists findings of
//! other rules they cannot avoid (a remote input offline), and then none of their own rule.
//! Further bad repos, `bad-<case>/`, are checked as `bad/` is (one more case of the rule).

use gitops_lint::lint::{LintOptions, lint};
use gitops_lint::report::Severity;
use std::path::Path;

fn fixture_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules")
}

fn check_fixture(case: &str) {
    let dir = fixture_root().join(case);
    let result = match lint(&LintOptions {
        root: dir.clone(),
        config: None,
        ..Default::default()
    }) {
        Ok(r) => r,
        Err(e) => panic!("{case}: {e}"),
    };
    let located = |f: &gitops_lint::report::Finding| {
        let lc = result.map.line_col(f.primary.span);
        format!(
            "{} {} {}:{}",
            f.rule,
            f.severity.as_str(),
            result.map.path(f.primary.span.file),
            lc.line
        )
    };
    // Every rule keeps to the severities its META declares (else the runner adds an
    // internal-error, which no fixture expects).
    let internal: Vec<&str> = result
        .findings
        .iter()
        .filter(|f| f.rule == "internal-error")
        .map(|f| f.message.as_str())
        .collect();
    assert!(internal.is_empty(), "{case}: {internal:#?}");
    let mut got: Vec<String> = result
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(located)
        .collect();
    got.sort();
    let expected_text = std::fs::read_to_string(dir.join("expected.txt")).unwrap_or_default();
    let mut expected: Vec<String> = expected_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    expected.sort();
    assert_eq!(got, expected, "{case}: findings at warning or above");

    let (rule, kind) = case.split_once('/').unwrap_or((case, ""));
    let own = |at_least: Severity| {
        result
            .findings
            .iter()
            .any(|f| f.rule == rule && f.severity >= at_least)
    };
    match kind {
        k if k == "bad" || k.starts_with("bad-") => assert!(
            own(Severity::Info),
            "{case}: the bad fixture shows no {rule} finding"
        ),
        "clean" => assert!(
            !own(Severity::Warning),
            "{case}: the clean fixture shows {rule}"
        ),
        // A false-positive fixture: nothing at all, or (when it lists findings of other
        // rules it cannot avoid, such as a remote input offline) nothing of its own rule.
        k if k.starts_with("clean-") && expected.is_empty() => {
            let all: Vec<String> = result.findings.iter().map(located).collect();
            assert!(
                all.is_empty(),
                "{case}: false-positive fixture has findings: {all:#?}"
            );
        }
        k if k.starts_with("clean-") => assert!(
            !own(Severity::Info),
            "{case}: the false-positive fixture shows {rule}"
        ),
        _ => panic!("{case}: not a bad/clean fixture"),
    }

    // The registry's fix availability is what the rule does: a rule that declares none
    // offers no fix, one that declares safe fixes offers one on its bad fixture.
    if kind == "bad" || kind.starts_with("bad-") {
        use gitops_lint::rules::FixAvailability;
        let declared = gitops_lint::rules::find(rule).map(|r| r.meta.fix);
        let fixes: Vec<bool> = result
            .findings
            .iter()
            .filter(|f| f.rule == rule)
            .filter_map(|f| f.fix.as_ref().map(|x| x.safe))
            .collect();
        match declared {
            Some(FixAvailability::None) => {
                assert!(
                    fixes.is_empty(),
                    "{case}: {rule} declares no fix but offers one"
                )
            }
            Some(FixAvailability::Safe) => {
                assert!(
                    fixes.contains(&true),
                    "{case}: {rule} declares safe fixes, none offered"
                )
            }
            Some(FixAvailability::Unsafe) => assert!(
                !fixes.is_empty() && !fixes.contains(&true),
                "{case}: {rule} declares unsafe fixes only"
            ),
            Some(FixAvailability::DisplayOnly) | None => {}
        }
    }

    let report = gitops_lint::report::human::render_all(&result.findings, &result.map, false);
    let plan = gitops_lint::fix::plan(&result.findings, &result.map, false);
    let fixes = gitops_lint::fix::unified_diff(&plan);
    let snapshot = format!(
        "{report}\n--- safe fixes (gitops-lint --fix --dry-run) ---\n{}",
        if fixes.is_empty() {
            "(none)\n"
        } else {
            fixes.as_str()
        }
    );
    // Named by this file, not by the test binary's module path: the snapshots keep their
    // names wherever the file is compiled (tests/integration.rs holds it as a module).
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::assert_snapshot!(
            format!("rule_fixtures__{}", case.replace('/', "__")),
            snapshot
        );
    });
}

macro_rules! fixtures {
    ($($name:ident => $dir:literal,)*) => {
        $(
            #[test]
            fn $name() {
                check_fixture($dir);
            }
        )*
        const LISTED: &[&str] = &[$($dir),*];
    };
}

fixtures! {
    api_removed_bad => "api-removed/bad",
    api_removed_clean => "api-removed/clean",
    argocd_option_invalid_bad => "argocd-option-invalid/bad",
    argocd_option_invalid_clean => "argocd-option-invalid/clean",
    gitops_object_invalid_bad => "gitops-object-invalid/bad",
    gitops_object_invalid_clean => "gitops-object-invalid/clean",
    autoscaler_conflict_bad => "autoscaler-conflict/bad",
    autoscaler_conflict_clean => "autoscaler-conflict/clean",
    autoscaler_conflict_clean_vpa_memory_hpa_cpu => "autoscaler-conflict/clean-vpa-memory-hpa-cpu",
    autoscaler_conflict_clean_base_in_two_clusters => "autoscaler-conflict/clean-base-in-two-clusters",
    committed_live_state_bad => "committed-live-state/bad",
    committed_live_state_clean => "committed-live-state/clean",
    argocd_excluded_resource_bad => "argocd-excluded-resource/bad",
    argocd_excluded_resource_bad_configured => "argocd-excluded-resource/bad-configured",
    argocd_excluded_resource_clean => "argocd-excluded-resource/clean",
    argocd_excluded_resource_clean_argo_2_14 => "argocd-excluded-resource/clean-argo-2-14",
    crd_preserve_unknown_fields_bad => "crd-preserve-unknown-fields/bad",
    crd_preserve_unknown_fields_clean => "crd-preserve-unknown-fields/clean",
    crd_preserve_unknown_fields_clean_argo_2_14 => "crd-preserve-unknown-fields/clean-argo-2-14",
    crd_preserve_unknown_fields_clean_argo_install_2_14 => "crd-preserve-unknown-fields/clean-argo-install-2-14",
    crd_preserve_unknown_fields_bad_argo_install_3_1 => "crd-preserve-unknown-fields/bad-argo-install-3-1",
    declared_empty_or_null_bad => "declared-empty-or-null/bad",
    declared_empty_or_null_clean => "declared-empty-or-null/clean",
    declared_empty_or_null_clean_kept_empties => "declared-empty-or-null/clean-kept-empties",
    declared_empty_or_null_bad_flux_dry_run => "declared-empty-or-null/bad-flux-dry-run",
    duplicate_merge_key_bad => "duplicate-merge-key/bad",
    duplicate_merge_key_bad_flux_helm_2_7 => "duplicate-merge-key/bad-flux-helm-2-7",
    duplicate_merge_key_bad_flux_helm_2_9 => "duplicate-merge-key/bad-flux-helm-2-9",
    duplicate_merge_key_bad_flux_helm_3_defaults => "duplicate-merge-key/bad-flux-helm-3-defaults",
    duplicate_merge_key_bad_flux_helm_client_side => "duplicate-merge-key/bad-flux-helm-client-side",
    duplicate_merge_key_clean => "duplicate-merge-key/clean",
    flux_substitution_undefined_bad => "flux-substitution-undefined/bad",
    flux_substitution_undefined_clean => "flux-substitution-undefined/clean",
    flux_substitution_undefined_clean_unknown_sources => "flux-substitution-undefined/clean-unknown-sources",
    flux_substitution_undefined_clean_externalsecret_producer => "flux-substitution-undefined/clean-externalsecret-producer",
    flux_substitution_undefined_clean_sealedsecret_producer => "flux-substitution-undefined/clean-sealedsecret-producer",
    flux_substitution_undefined_clean_sops_producer => "flux-substitution-undefined/clean-sops-producer",
    helm_install_hook_every_sync_bad => "helm-install-hook-every-sync/bad",
    helm_install_hook_every_sync_clean => "helm-install-hook-every-sync/clean",
    helm_nondeterministic_function_bad => "helm-nondeterministic-function/bad",
    helm_nondeterministic_function_clean => "helm-nondeterministic-function/clean",
    helm_nondeterministic_function_clean_argocd_test_hook => "helm-nondeterministic-function/clean-argocd-test-hook",
    helm_nondeterministic_function_clean_derive_password => "helm-nondeterministic-function/clean-derive-password",
    helm_nondeterministic_function_clean_flux_test_hook => "helm-nondeterministic-function/clean-flux-test-hook",
    helm_nondeterministic_function_clean_notes_only => "helm-nondeterministic-function/clean-notes-only",
    helm_nondeterministic_function_clean_unused_library_helper => "helm-nondeterministic-function/clean-unused-library-helper",
    helm_nondeterministic_function_clean_values_disable_branch => "helm-nondeterministic-function/clean-values-disable-branch",
    hpa_replicas_conflict_bad => "hpa-replicas-conflict/bad",
    hpa_replicas_conflict_clean => "hpa-replicas-conflict/clean",
    hpa_replicas_conflict_clean_keda_paused => "hpa-replicas-conflict/clean-keda-paused",
    hpa_replicas_conflict_clean_scaler_other_namespace => "hpa-replicas-conflict/clean-scaler-other-namespace",
    hpa_replicas_conflict_clean_scaler_other_cluster => "hpa-replicas-conflict/clean-scaler-other-cluster",
    ignore_differences_broad_bad => "ignore-differences-broad/bad",
    ignore_differences_broad_clean => "ignore-differences-broad/clean",
    ignore_differences_broad_bad_kustomize_argocd_cm => "ignore-differences-broad/bad-kustomize-argocd-cm",
    ignore_differences_broad_bad_chart_argocd_cm => "ignore-differences-broad/bad-chart-argocd-cm",
    ignore_differences_broad_clean_chart_argocd_cm => "ignore-differences-broad/clean-chart-argocd-cm",
    ignore_differences_broad_clean_kustomize_argocd_cm => "ignore-differences-broad/clean-kustomize-argocd-cm",
    ignore_differences_invalid_bad => "ignore-differences-invalid/bad",
    ignore_differences_invalid_clean => "ignore-differences-invalid/clean",
    ignore_differences_invalid_bad_flux_ignore_before_2_9 => "ignore-differences-invalid/bad-flux-ignore-before-2-9",
    ignore_differences_invalid_bad_flux_ignore_paths => "ignore-differences-invalid/bad-flux-ignore-paths",
    ignore_differences_invalid_clean_flux_ignore_2_9 => "ignore-differences-invalid/clean-flux-ignore-2-9",
    ignore_differences_invalid_clean_crd_kind_named_like_builtin => "ignore-differences-invalid/clean-crd-kind-named-like-builtin",
    ignore_differences_security_sensitive_bad => "ignore-differences-security-sensitive/bad",
    ignore_differences_security_sensitive_clean => "ignore-differences-security-sensitive/clean",
    ignore_differences_security_sensitive_clean_ca_bundle => "ignore-differences-security-sensitive/clean-ca-bundle",
    ignore_differences_security_sensitive_clean_normalisations => "ignore-differences-security-sensitive/clean-normalisations",
    ignore_differences_stale_bad => "ignore-differences-stale/bad",
    ignore_differences_stale_clean => "ignore-differences-stale/clean",
    ignore_differences_stale_clean_custom_resource_list_selector => "ignore-differences-stale/clean-custom-resource-list-selector",
    ignore_differences_unjustified_bad => "ignore-differences-unjustified/bad",
    ignore_differences_unjustified_clean => "ignore-differences-unjustified/clean",
    injected_field_declared_bad => "injected-field-declared/bad",
    injected_field_declared_clean => "injected-field-declared/clean",
    injected_field_declared_clean_static_ca_bundle => "injected-field-declared/clean-static-ca-bundle",
    instance_label_clash_bad => "instance-label-clash/bad",
    instance_label_clash_bad_argo_install_2_14 => "instance-label-clash/bad-argo-install-2-14",
    instance_label_clash_clean => "instance-label-clash/clean",
    instance_label_clash_bad_kustomize_argocd_cm => "instance-label-clash/bad-kustomize-argocd-cm",
    instance_label_clash_bad_chart_argocd_cm => "instance-label-clash/bad-chart-argocd-cm",
    instance_label_clash_clean_chart_argocd_cm => "instance-label-clash/clean-chart-argocd-cm",
    instance_label_clash_clean_kustomize_argocd_cm => "instance-label-clash/clean-kustomize-argocd-cm",
    instance_label_clash_clean_annotation_tracking => "instance-label-clash/clean-annotation-tracking",
    instance_label_clash_clean_custom_label_key => "instance-label-clash/clean-custom-label-key",
    instance_label_clash_clean_release_name_is_app_name => "instance-label-clash/clean-release-name-is-app-name",
    job_ttl_recreate_loop_bad => "job-ttl-recreate-loop/bad",
    job_ttl_recreate_loop_clean => "job-ttl-recreate-loop/clean",
    job_ttl_recreate_loop_clean_excluded_jobs => "job-ttl-recreate-loop/clean-excluded-jobs",
    job_ttl_recreate_loop_clean_hook_job_ttl => "job-ttl-recreate-loop/clean-hook-job-ttl",
    kustomize_generator_hygiene_bad => "kustomize-generator-hygiene/bad",
    kustomize_generator_hygiene_clean => "kustomize-generator-hygiene/clean",
    kustomize_generator_hygiene_clean_reloader => "kustomize-generator-hygiene/clean-reloader",
    migration_job_not_hook_bad => "migration-job-not-hook/bad",
    migration_job_not_hook_clean => "migration-job-not-hook/clean",
    migration_job_not_hook_clean_job_named_per_version => "migration-job-not-hook/clean-job-named-per-version",
    mutation_policy_conflict_bad => "mutation-policy-conflict/bad",
    mutation_policy_conflict_clean => "mutation-policy-conflict/clean",
    mutation_policy_conflict_clean_flux_ignore => "mutation-policy-conflict/clean-flux-ignore",
    mutation_policy_conflict_clean_autogen_none => "mutation-policy-conflict/clean-autogen-none",
    mutation_policy_conflict_clean_cel_excluded => "mutation-policy-conflict/clean-cel-excluded",
    mutation_policy_conflict_clean_json6902_undeclared_key => "mutation-policy-conflict/clean-json6902-undeclared-key",
    mutation_policy_conflict_clean_kyverno_precondition => "mutation-policy-conflict/clean-kyverno-precondition",
    mutation_policy_conflict_clean_validate_only => "mutation-policy-conflict/clean-validate-only",
    non_canonical_quantity_bad => "non-canonical-quantity/bad",
    non_canonical_quantity_clean => "non-canonical-quantity/clean",
    non_canonical_quantity_clean_crd_strings => "non-canonical-quantity/clean-crd-strings",
    non_canonical_quantity_clean_custom_resource_numbers => "non-canonical-quantity/clean-custom-resource-numbers",
    offline_unrenderable_input_bad => "offline-unrenderable-input/bad",
    offline_unrenderable_input_bad_chart_missing_dependency => "offline-unrenderable-input/bad-chart-missing-dependency",
    offline_unrenderable_input_bad_remote_base_overlay => "offline-unrenderable-input/bad-remote-base-overlay",
    offline_unrenderable_input_clean => "offline-unrenderable-input/clean",
    render_failed_bad => "render-failed/bad",
    render_failed_clean => "render-failed/clean",
    render_failed_clean_other_branch => "render-failed/clean-other-branch",
    render_nondeterministic_bad => "render-nondeterministic/bad",
    render_nondeterministic_clean => "render-nondeterministic/clean",
    respect_ignore_differences_missing_bad => "respect-ignore-differences-missing/bad",
    respect_ignore_differences_missing_clean => "respect-ignore-differences-missing/clean",
    respect_ignore_differences_missing_clean_path_not_declared => "respect-ignore-differences-missing/clean-path-not-declared",
    schema_pruned_field_bad => "schema-pruned-field/bad",
    schema_pruned_field_clean => "schema-pruned-field/clean",
    schema_pruned_field_clean_flux_sops => "schema-pruned-field/clean-flux-sops",
    second_writer_bad => "second-writer/bad",
    second_writer_clean => "second-writer/clean",
    second_writer_clean_ci_checks_only => "second-writer/clean-ci-checks-only",
    second_writer_clean_cluster_from_an_action => "second-writer/clean-cluster-from-an-action",
    second_writer_clean_ephemeral_cluster => "second-writer/clean-ephemeral-cluster",
    selfheal_external_owner_bad => "selfheal-external-owner/bad",
    selfheal_external_owner_clean => "selfheal-external-owner/clean",
    selfheal_external_owner_clean_operator_finalizer_declared => "selfheal-external-owner/clean-operator-finalizer-declared",
    server_assigned_field_declared_bad => "server-assigned-field-declared/bad",
    server_assigned_field_declared_clean => "server-assigned-field-declared/clean",
    shared_resource_bad => "shared-resource/bad",
    shared_resource_clean => "shared-resource/clean",
    shared_resource_clean_other_clusters => "shared-resource/clean-other-clusters",
    suppression_unknown_rule_bad => "suppression-unknown-rule/bad",
    suppression_unknown_rule_clean => "suppression-unknown-rule/clean",
    suppression_without_reason_bad => "suppression-without-reason/bad",
    suppression_without_reason_clean => "suppression-without-reason/clean",
    unpinned_source_bad => "unpinned-source/bad",
    unpinned_source_bad_helmcharts_without_version => "unpinned-source/bad-helmcharts-without-version",
    unpinned_source_bad_remote_files => "unpinned-source/bad-remote-files",
    unpinned_source_clean => "unpinned-source/clean",
    unpinned_source_clean_helmcharts_with_version => "unpinned-source/clean-helmcharts-with-version",
    unpinned_source_clean_own_repo_branch => "unpinned-source/clean-own-repo-branch",
    unpinned_source_clean_remote_files_on_tags => "unpinned-source/clean-remote-files-on-tags",
    yaml_syntax_bad => "yaml-syntax/bad",
    yaml_syntax_clean => "yaml-syntax/clean",
    yaml_syntax_clean_excluded_template => "yaml-syntax/clean-excluded-template",
}

#[test]
fn every_fixture_directory_and_every_rule_is_listed() {
    let mut on_disk = Vec::new();
    for rule in std::fs::read_dir(fixture_root())
        .into_iter()
        .flatten()
        .flatten()
    {
        for case in std::fs::read_dir(rule.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = case.file_name().to_string_lossy().into_owned();
            if (name == "bad"
                || name == "clean"
                || name.starts_with("bad-")
                || name.starts_with("clean-"))
                && case.path().is_dir()
            {
                on_disk.push(format!("{}/{name}", rule.file_name().to_string_lossy()));
            }
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = LISTED.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "fixture directories vs the fixtures! list");
    // Rules `diff` reports by comparing two revisions have no one-revision fixture: their
    // bad and clean cases are the base/head repositories tests/workflow/pr_changes.rs builds.
    let missing: Vec<&str> = gitops_lint::rules::registry()
        .iter()
        .filter(|r| r.meta.kinds != gitops_lint::rules::Kinds::Changes)
        // No repository can cause an internal error (it is a bug); its test is the rule
        // runner's (`a_panicking_rule_becomes_one_internal_error_naming_it`).
        .filter(|r| r.meta.id != gitops_lint::rules::internal_error::ID)
        .map(|r| r.meta.id)
        .filter(|id| {
            !LISTED.contains(&format!("{id}/bad").as_str())
                || !LISTED.contains(&format!("{id}/clean").as_str())
        })
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a bad and a clean fixture: {missing:?}"
    );
}

fn fixture_dirs() -> Vec<std::path::PathBuf> {
    LISTED
        .iter()
        .map(|case| fixture_root().join(case))
        .collect()
}

/// Redaction masks Secret values, never the names, namespaces and keys a finding points at
/// (issue 16, class 9): the admin user `grafana` is a Secret value, the generator
/// `grafana-dashboards` a public name.
#[test]
fn redaction_keeps_names_namespaces_and_keys() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/redaction/names-kept");
    let result = match lint(&LintOptions {
        root: dir.clone(),
        config: None,
        ..Default::default()
    }) {
        Ok(r) => r,
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    let messages: Vec<&str> = result.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("`grafana-dashboards`")),
        "{messages:#?}"
    );
    assert!(
        messages.iter().all(|m| !m.contains("<redacted")),
        "{messages:#?}"
    );
}

/// Every finding words itself for the controller that deploys its object (issue 16, class
/// 10): no Argo CD explanation for what only Flux applies, no Flux one for Argo CD apps.
#[test]
fn findings_speak_of_the_controller_that_applies_the_object() {
    use gitops_lint::gitops::AppKind;
    let mut failures = Vec::new();
    for dir in fixture_dirs() {
        let Ok(result) = lint(&LintOptions {
            root: dir.clone(),
            config: None,
            ..Default::default()
        }) else {
            continue;
        };
        for f in &result.findings {
            let Some(app) = f
                .app
                .as_ref()
                .and_then(|name| result.model.apps.iter().find(|a| &a.name == name))
            else {
                continue;
            };
            let text = format!("{} {}", f.message, f.help.as_deref().unwrap_or(""));
            let foreign: &[&str] = match app.kind {
                AppKind::FluxKustomization | AppKind::FluxHelmRelease => &["Argo", "argocd"],
                AppKind::Argo | AppKind::ArgoAppSet => {
                    &["kustomize-controller", "helm-controller", "Flux"]
                }
                AppKind::Standalone => &[],
            };
            if let Some(word) = foreign.iter().find(|w| text.contains(*w)) {
                failures.push(format!(
                    "{}: {} ({:?} app `{}`) mentions {word}: {}",
                    dir.display(),
                    f.rule,
                    app.kind,
                    app.name,
                    f.message
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
