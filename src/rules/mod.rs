//! The rules: pure functions over the read-only app [`Model`], one file per rule, each with
//! its metadata and a document under `rules/<id>.md` embedded in the binary.

use crate::finding::{Finding, Severity};
use crate::gitops::Model;

pub mod app_edits;
pub mod fixes;
mod release_state;
pub mod sops;
pub mod util;

/// What a rule's fixes are, as ruff distinguishes them: `Safe` fixes apply with `--fix`
/// (and may carry an unsafe second step), `Unsafe` ones only with `--unsafe-fixes`,
/// `DisplayOnly` edits are shown and never applied, `None`: the help text says what to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixAvailability {
    Safe,
    Unsafe,
    DisplayOnly,
    None,
}

impl FixAvailability {
    pub fn as_str(self) -> &'static str {
        match self {
            FixAvailability::Safe => "safe",
            FixAvailability::Unsafe => "unsafe",
            FixAvailability::DisplayOnly => "display-only",
            FixAvailability::None => "none",
        }
    }
}

/// Everything the CLI, config validation, SARIF, the review and the docs know of a rule,
/// declared next to its code (`META` in the rule's file).
pub struct RuleMeta {
    pub id: &'static str,
    pub severity: Severity,
    /// One line for `gitops-lint rules`.
    pub summary: &'static str,
    /// The rule's document (rules/<id>.md).
    pub doc: &'static str,
    pub fix: FixAvailability,
    /// A finding means "do not declare this field": in a pull request, deleting a line the
    /// PR itself adds is always safe (nothing deployed depends on it yet).
    pub removal: bool,
    /// The release the rule appeared in.
    pub since: &'static str,
}

pub type Check = fn(&Model, &mut Vec<Finding>);

pub struct Rule {
    pub meta: &'static RuleMeta,
    /// `None` for rules the pipeline itself reports (YAML syntax, suppressions).
    pub check: Option<Check>,
}

/// Declares each rule module once: `checked` rules run their `check` over the model in this
/// order, `pipeline` rules are reported by `lint.rs`. Adding a rule is one line here.
macro_rules! rules {
    (checked: [$($vis:vis $checked:ident),* $(,)?], pipeline: [$($pvis:vis $pipeline:ident),* $(,)?] $(,)?) => {
        $($vis mod $checked;)*
        $($pvis mod $pipeline;)*
        pub fn registry() -> &'static [Rule] {
            static RULES: &[Rule] = &[
                $(Rule { meta: &$checked::META, check: Some($checked::check) },)*
                $(Rule { meta: &$pipeline::META, check: None },)*
            ];
            RULES
        }
    };
}

rules! {
    checked: [
        hpa_replicas_conflict,
        ignore_differences_invalid,
        respect_ignore_differences_missing,
        ignore_differences_broad,
        ignore_differences_security_sensitive,
        ignore_differences_unjustified,
        argocd_option_invalid,
        gitops_object_invalid,
        server_assigned_field_declared,
        committed_live_state,
        mutation_policy_conflict,
        autoscaler_conflict,
        pub(crate) declared_empty_or_null,
        duplicate_merge_key,
        job_ttl_recreate_loop,
        migration_job_not_hook,
        non_canonical_quantity,
        injected_field_declared,
        selfheal_external_owner,
        schema_pruned_field,
        second_writer,
        kustomize_generator_hygiene,
        shared_resource,
        unpinned_source,
        flux_substitution_undefined,
        helm_nondeterministic_function,
        render_nondeterministic,
        helm_install_hook_every_sync,
        ignore_differences_stale,
        instance_label_clash,
        pub offline_unrenderable_input,
        pub render_failed,
    ],
    pipeline: [
        pub yaml_syntax,
        pub suppression_without_reason,
        pub suppression_unknown_rule,
    ],
}

pub fn find(id: &str) -> Option<&'static Rule> {
    registry().iter().find(|r| r.meta.id == id)
}

/// Run every rule over the model.
pub fn run_all(model: &Model) -> Vec<Finding> {
    use rayon::prelude::*;
    // Rules read the model only: they run side by side, and their findings are joined in
    // registry order, as when they ran one after another.
    let per_rule: Vec<Vec<Finding>> = registry()
        .par_iter()
        .map(|rule| {
            let mut out = Vec::new();
            if let Some(check) = rule.check {
                check(model, &mut out);
            }
            out
        })
        .collect();
    per_rule.into_iter().flatten().collect()
}
