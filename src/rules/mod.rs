//! The rules: pure functions over the read-only app [`Model`], one file per rule, each with
//! its metadata and a document under `rules/<id>.md` embedded in the binary.

use crate::gitops::Model;
use crate::report::{Finding, Severity};

pub mod app_edits;
mod argocd_option_invalid;
mod autoscaler_conflict;
mod committed_live_state;
pub(crate) mod declared_empty_or_null;
mod duplicate_merge_key;
pub mod fixes;
mod flux_substitution_undefined;
mod helm_install_hook_every_sync;
mod helm_nondeterministic_function;
mod hpa_replicas_conflict;
mod ignore_differences_broad;
mod ignore_differences_invalid;
mod ignore_differences_security_sensitive;
mod ignore_differences_stale;
mod ignore_differences_unjustified;
mod injected_field_declared;
mod instance_label_clash;
mod job_ttl_recreate_loop;
mod kustomize_generator_hygiene;
mod migration_job_not_hook;
mod mutation_policy_conflict;
mod non_canonical_quantity;
pub mod offline_unrenderable_input;
mod release_state;
pub mod render_failed;
mod render_nondeterministic;
mod respect_ignore_differences_missing;
mod schema_pruned_field;
mod second_writer;
mod selfheal_external_owner;
mod server_assigned_field_declared;
mod shared_resource;
pub mod suppression_unknown_rule;
pub mod suppression_without_reason;
mod unpinned_source;
pub mod util;
pub mod yaml_syntax;

pub struct RuleMeta {
    pub id: &'static str,
    pub severity: Severity,
    /// One line for `gitops-lint rules`.
    pub summary: &'static str,
    /// The rule's document (rules/<id>.md).
    pub doc: &'static str,
}

pub type Check = fn(&Model, &mut Vec<Finding>);

pub struct Rule {
    pub meta: &'static RuleMeta,
    /// `None` for rules the pipeline itself reports (YAML syntax, render failures,
    /// suppressions).
    pub check: Option<Check>,
}

pub fn registry() -> &'static [Rule] {
    static RULES: &[Rule] = &[
        Rule {
            meta: &hpa_replicas_conflict::META,
            check: Some(hpa_replicas_conflict::check),
        },
        Rule {
            meta: &ignore_differences_invalid::META,
            check: Some(ignore_differences_invalid::check),
        },
        Rule {
            meta: &respect_ignore_differences_missing::META,
            check: Some(respect_ignore_differences_missing::check),
        },
        Rule {
            meta: &ignore_differences_broad::META,
            check: Some(ignore_differences_broad::check),
        },
        Rule {
            meta: &ignore_differences_security_sensitive::META,
            check: Some(ignore_differences_security_sensitive::check),
        },
        Rule {
            meta: &ignore_differences_unjustified::META,
            check: Some(ignore_differences_unjustified::check),
        },
        Rule {
            meta: &argocd_option_invalid::META,
            check: Some(argocd_option_invalid::check),
        },
        Rule {
            meta: &server_assigned_field_declared::META,
            check: Some(server_assigned_field_declared::check),
        },
        Rule {
            meta: &committed_live_state::META,
            check: Some(committed_live_state::check),
        },
        Rule {
            meta: &mutation_policy_conflict::META,
            check: Some(mutation_policy_conflict::check),
        },
        Rule {
            meta: &autoscaler_conflict::META,
            check: Some(autoscaler_conflict::check),
        },
        Rule {
            meta: &declared_empty_or_null::META,
            check: Some(declared_empty_or_null::check),
        },
        Rule {
            meta: &duplicate_merge_key::META,
            check: Some(duplicate_merge_key::check),
        },
        Rule {
            meta: &job_ttl_recreate_loop::META,
            check: Some(job_ttl_recreate_loop::check),
        },
        Rule {
            meta: &migration_job_not_hook::META,
            check: Some(migration_job_not_hook::check),
        },
        Rule {
            meta: &non_canonical_quantity::META,
            check: Some(non_canonical_quantity::check),
        },
        Rule {
            meta: &injected_field_declared::META,
            check: Some(injected_field_declared::check),
        },
        Rule {
            meta: &selfheal_external_owner::META,
            check: Some(selfheal_external_owner::check),
        },
        Rule {
            meta: &schema_pruned_field::META,
            check: Some(schema_pruned_field::check),
        },
        Rule {
            meta: &second_writer::META,
            check: Some(second_writer::check),
        },
        Rule {
            meta: &kustomize_generator_hygiene::META,
            check: Some(kustomize_generator_hygiene::check),
        },
        Rule {
            meta: &shared_resource::META,
            check: Some(shared_resource::check),
        },
        Rule {
            meta: &unpinned_source::META,
            check: Some(unpinned_source::check),
        },
        Rule {
            meta: &flux_substitution_undefined::META,
            check: Some(flux_substitution_undefined::check),
        },
        Rule {
            meta: &helm_nondeterministic_function::META,
            check: Some(helm_nondeterministic_function::check),
        },
        Rule {
            meta: &render_nondeterministic::META,
            check: Some(render_nondeterministic::check),
        },
        Rule {
            meta: &helm_install_hook_every_sync::META,
            check: Some(helm_install_hook_every_sync::check),
        },
        Rule {
            meta: &ignore_differences_stale::META,
            check: Some(ignore_differences_stale::check),
        },
        Rule {
            meta: &instance_label_clash::META,
            check: Some(instance_label_clash::check),
        },
        Rule {
            meta: &offline_unrenderable_input::META,
            check: Some(offline_unrenderable_input::check),
        },
        Rule {
            meta: &render_failed::META,
            check: Some(render_failed::check),
        },
        Rule {
            meta: &yaml_syntax::META,
            check: None,
        },
        Rule {
            meta: &suppression_without_reason::META,
            check: None,
        },
        Rule {
            meta: &suppression_unknown_rule::META,
            check: None,
        },
    ];
    RULES
}

pub fn find(id: &str) -> Option<&'static Rule> {
    registry().iter().find(|r| r.meta.id == id)
}

/// Run every rule over the model.
pub fn run_all(model: &Model) -> Vec<Finding> {
    let mut out = Vec::new();
    for rule in registry() {
        if let Some(check) = rule.check {
            check(model, &mut out);
        }
    }
    out
}
