//! The rules: pure functions over the read-only app [`Model`], one file per rule, each with
//! its metadata and a document under `rules/<id>.md` embedded in the binary.

use crate::finding::{Finding, Severity};
use crate::gitops::{Model, ModelObject};
use std::collections::HashMap;

pub mod app_edits;
pub mod checks;
pub mod fixes;
mod release_state;
mod template_marks;
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

/// The objects a rule checks, declared next to its code. The runner hands a rule exactly
/// these ([`Scope::in_scope`]); lookups through an app (`Model::objects_of`) stay free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kinds {
    /// Objects of these kinds: `Kind` for the core group (`Pod`), `group/Kind` otherwise
    /// (`batch/Job`).
    Of(&'static [&'static str]),
    /// Every object: what the rule looks for can be written in any kind.
    All,
    /// The apps (their declarations, settings and render issues), no object by kind.
    Apps,
    /// Reported by the pipeline over the files it reads (parsing, suppressions).
    Files,
    /// Reported by `diff`, which compares each object with itself in the base revision:
    /// what a change does to an object, not what the object is (no finding in a plain lint).
    Changes,
}

impl Kinds {
    /// For `gitops-lint rules` and SARIF: `batch/Job,Pod`, `all`, `apps`, `files`,
    /// `changes (diff --base only)`.
    pub fn describe(self) -> String {
        match self {
            Kinds::Of(kinds) => kinds.join(","),
            Kinds::All => "all".to_string(),
            Kinds::Apps => "apps".to_string(),
            Kinds::Files => "files".to_string(),
            Kinds::Changes => "changes (diff --base only)".to_string(),
        }
    }
}

/// `group/Kind` → (group, Kind); a bare `Kind` is the core group.
fn split_kind(kind: &str) -> (&str, &str) {
    kind.rsplit_once('/').unwrap_or(("", kind))
}

/// The model's objects by (group, kind), in model order: built once per run.
struct KindIndex<'m> {
    by_kind: HashMap<(&'m str, &'m str), Vec<usize>>,
    /// The objects their controller applies on sync, in model order: a Helm test hook under
    /// Argo CD or helm-controller is never applied, so no rule checks it
    /// (`Model::applied_on_sync`).
    applied: Vec<usize>,
}

impl<'m> KindIndex<'m> {
    fn new(model: &'m Model) -> Self {
        let mut by_kind: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
        let mut applied = Vec::with_capacity(model.objects.len());
        for (i, mo) in model.objects.iter().enumerate() {
            if !model.applied_on_sync(mo) {
                continue;
            }
            applied.push(i);
            by_kind
                .entry((mo.object.group(), mo.object.kind.as_str()))
                .or_default()
                .push(i);
        }
        KindIndex { by_kind, applied }
    }

    /// Indexes of the objects a rule of `kinds` checks, in model order.
    fn select(&self, kinds: Kinds) -> Vec<usize> {
        match kinds {
            Kinds::All => self.applied.clone(),
            Kinds::Apps | Kinds::Files | Kinds::Changes => Vec::new(),
            Kinds::Of(kinds) => {
                let mut out: Vec<usize> = kinds
                    .iter()
                    .filter_map(|k| self.by_kind.get(&split_kind(k)))
                    .flatten()
                    .copied()
                    .collect();
                out.sort_unstable();
                out.dedup();
                out
            }
        }
    }
}

/// The model as one rule sees it: everything read-only (through `Deref`), and the objects
/// of the kinds its `META` declares.
pub struct Scope<'m> {
    model: &'m Model,
    selected: Vec<usize>,
    marks: &'m [template_marks::ObjectMarks<'m>],
    ownership: &'m std::sync::OnceLock<crate::ownership::Ownership>,
}

impl<'m> Scope<'m> {
    /// The objects of the rule's kinds, in model order.
    pub fn in_scope(&self) -> impl Iterator<Item = &'m ModelObject> + '_ {
        let objects = &self.model.objects;
        self.selected.iter().filter_map(move |&i| objects.get(i))
    }

    /// [`Scope::in_scope`] with each object's index in the model's objects (for
    /// [`Scope::marks`]).
    pub fn in_scope_indexed(&self) -> impl Iterator<Item = (usize, &'m ModelObject)> + '_ {
        let objects = &self.model.objects;
        self.selected
            .iter()
            .filter_map(move |&i| objects.get(i).map(|mo| (i, mo)))
    }

    /// What the Helm renderer marked on the object at `index` of the model's objects.
    pub fn marks(&self, index: usize) -> Option<&'m template_marks::ObjectMarks<'m>> {
        self.marks.get(index)
    }

    /// Who else writes the model's objects (mutating policies), built once for the rules
    /// that ask, by the first of them.
    pub fn ownership(&self) -> &'m crate::ownership::Ownership {
        self.ownership
            .get_or_init(|| crate::ownership::Ownership::build(self.model))
    }
}

impl std::ops::Deref for Scope<'_> {
    type Target = Model;
    fn deref(&self) -> &Model {
        self.model
    }
}

/// A severity a rule gives some of its findings instead of its default, and when: declared
/// in `META.graded`, shown by `gitops-lint explain`, and held at run time (a finding of a
/// severity its rule does not declare also brings an `internal-error`, see [`run_isolated`]).
///
/// Not a grade, because it happens after the rules and is no rule's choice: `lint.rs`
/// (`apply_deployment_policy`) lowers any finding about an app nothing in the repository
/// deploys to `info` and appends the reason to its message, and a configuration's
/// `rules: {<id>: <severity>}` replaces the severity of every finding of that rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grade {
    pub severity: Severity,
    /// When the rule chooses it, as the code decides: a short clause a platform engineer
    /// understands ("the Application does not sync automatically"), no final period.
    pub when: &'static str,
}

/// Everything the CLI, config validation, SARIF, the review and the docs know of a rule,
/// declared next to its code (`META` in the rule's file).
pub struct RuleMeta {
    pub id: &'static str,
    /// The default: what a finding of the rule carries unless one of `graded` applies (SARIF's
    /// `defaultConfiguration.level`, the `gitops-lint rules` column).
    pub severity: Severity,
    /// The other severities the rule gives, each with when; empty when every finding
    /// carries `severity`.
    pub graded: &'static [Grade],
    /// One line for `gitops-lint rules`.
    pub summary: &'static str,
    /// The rule's document (rules/<id>.md).
    pub doc: &'static str,
    pub fix: FixAvailability,
    /// A finding means "do not declare this field": in a pull request, deleting a line the
    /// PR itself adds is always safe (nothing deployed depends on it yet).
    pub removal: bool,
    /// A finding is about privileges, identity or access (SARIF's `security` tag, which
    /// code scanning needs before it reads a `security-severity`).
    pub security: bool,
    /// The release the rule appeared in.
    pub since: &'static str,
    /// The objects it checks.
    pub kinds: Kinds,
}

impl RuleMeta {
    /// Does the rule declare `s`, as its default or a grade?
    pub fn allows(&self, s: Severity) -> bool {
        self.severity == s || self.graded.iter().any(|g| g.severity == s)
    }

    /// The "Severity" section `gitops-lint explain` prints after the rule's document,
    /// generated from the declaration so it says what the code does.
    pub fn severity_section(&self) -> String {
        let mut text = format!(
            "\n## Severity (from the code)\n\n- `{}`: the default\n",
            self.severity.as_str()
        );
        for g in self.graded {
            text.push_str(&format!("- `{}` when {}\n", g.severity.as_str(), g.when));
        }
        text
    }
}

pub type Check = fn(&Scope, &mut Vec<Finding>);

pub struct Rule {
    pub meta: &'static RuleMeta,
    /// `None` for rules the pipeline itself reports (YAML syntax, suppressions) and for
    /// those `diff` reports by comparing two revisions.
    pub check: Option<Check>,
}

/// Declares each rule module once: `checked` rules run their `check` over the model in this
/// order, `pipeline` rules are reported by `lint.rs`, `compared` rules by `diff` (they need
/// the base revision's model too). Adding a rule is one line here.
macro_rules! rules {
    (
        checked: [$($vis:vis $checked:ident),* $(,)?],
        pipeline: [$($pvis:vis $pipeline:ident),* $(,)?],
        compared: [$($cvis:vis $compared:ident),* $(,)?] $(,)?
    ) => {
        $($vis mod $checked;)*
        $($pvis mod $pipeline;)*
        $($cvis mod $compared;)*
        pub fn registry() -> &'static [Rule] {
            static RULES: &[Rule] = &[
                $(Rule { meta: &$checked::META, check: Some($checked::check) },)*
                $(Rule { meta: &$pipeline::META, check: None },)*
                $(Rule { meta: &$compared::META, check: None },)*
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
        api_removed,
        crd_preserve_unknown_fields,
        argocd_excluded_resource,
        pub offline_unrenderable_input,
        pub render_failed,
    ],
    pipeline: [
        pub yaml_syntax,
        pub internal_error,
        pub suppression_without_reason,
        pub suppression_unknown_rule,
    ],
    compared: [
        pub immutable_field_changed,
        pub pr_deletes_data,
    ],
}

pub fn find(id: &str) -> Option<&'static Rule> {
    registry().iter().find(|r| r.meta.id == id)
}

/// Run every rule over the model, each over the objects of its kinds.
pub fn run_all(model: &Model) -> Vec<Finding> {
    use rayon::prelude::*;
    let index = KindIndex::new(model);
    let marks = template_marks::of_model(model);
    let ownership = std::sync::OnceLock::new();
    // Rules read the model only: they run side by side, and their findings are joined in
    // registry order, as when they ran one after another.
    let per_rule: Vec<Vec<Finding>> = registry()
        .par_iter()
        .map(|rule| {
            let Some(check) = rule.check else {
                return Vec::new();
            };
            let scope = Scope {
                model,
                selected: index.select(rule.meta.kinds),
                marks: &marks,
                ownership: &ownership,
            };
            run_isolated(rule.meta.id, &model.map, |out| check(&scope, out))
        })
        .collect();
    per_rule.into_iter().flatten().collect()
}

/// Runs one rule's check so that a panic in it (a bug, defence in depth) costs only that
/// rule's findings: they become one `internal-error` finding naming the rule, and the other
/// rules still report. Findings pushed before the panic are dropped: they may be partial.
/// When the check returns, a finding of a severity its rule does not declare is kept and
/// also brings an `internal-error` ([`undeclared_severities`]).
pub(crate) fn run_isolated(
    id: &'static str,
    map: &crate::source::SourceMap,
    check: impl FnOnce(&mut Vec<Finding>),
) -> Vec<Finding> {
    let mut out = Vec::new();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&mut out)));
    let Err(panic) = run else {
        let undeclared = undeclared_severities(&out, map);
        out.extend(undeclared);
        return out;
    };
    let what = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("panic");
    let what: String = what.chars().take(200).collect();
    vec![
        internal_error(
            map,
            format!("internal error: rule `{id}` stopped ({what}); its findings are missing"),
        )
        .help("A bug in gitops-lint, not in the repository: please report it with the input that caused it. The other rules ran."),
    ]
}

/// One `internal-error` finding for each rule and severity among `findings` that the rule's
/// `META` does not declare ([`RuleMeta::allows`]); findings of ids outside the registry (the
/// repository's own checks) are not judged. The findings themselves are left as they are:
/// the caller keeps them. `run_isolated` applies it to each rule's findings; `lint.rs` and
/// `diff` to the findings they report for the pipeline and compared rules.
pub(crate) fn undeclared_severities(
    findings: &[Finding],
    map: &crate::source::SourceMap,
) -> Vec<Finding> {
    let mut seen: Vec<(&str, Severity)> = Vec::new();
    let mut out = Vec::new();
    for f in findings {
        let Some(rule) = find(f.rule) else {
            continue;
        };
        if rule.meta.allows(f.severity) || seen.contains(&(f.rule, f.severity)) {
            continue;
        }
        seen.push((f.rule, f.severity));
        out.push(
            internal_error(
                map,
                format!(
                    "internal error: rule `{}` emitted severity `{}`, which its declaration does not list",
                    f.rule,
                    f.severity.as_str()
                ),
            )
            .help("A bug in gitops-lint, not in the repository: please report it. The rule's findings are reported as it made them."),
        );
    }
    out
}

/// An `internal-error` finding, on the virtual file [`INTERNAL_ERROR_FILE`].
fn internal_error(map: &crate::source::SourceMap, message: String) -> Finding {
    let file = map.add(crate::source::SourceFile::new(
        INTERNAL_ERROR_FILE,
        "",
        crate::source::Origin::Virtual,
    ));
    Finding::new(
        internal_error::ID,
        internal_error::META.severity,
        message,
        crate::source::Span::new(file, 0, 0),
    )
    .label("internal error")
}

/// The file an internal error is reported on (it belongs to no file of the repository).
const INTERNAL_ERROR_FILE: &str = "<gitops-lint internal error>";

#[cfg(test)]
mod isolation_tests {
    use super::*;
    use crate::source::{FileId, SourceMap, Span};

    fn finding(rule: &'static str) -> Finding {
        Finding::new(rule, Severity::Warning, "x", Span::new(FileId(0), 0, 0))
    }

    #[test]
    fn a_panicking_rule_becomes_one_internal_error_naming_it() {
        let map = SourceMap::new();
        let fine = run_isolated("shared-resource", &map, |out| {
            out.push(finding("shared-resource"))
        });
        assert_eq!(fine.len(), 1);
        assert_eq!(fine[0].severity, Severity::Warning);
        let broken = run_isolated("second-writer", &map, |out| {
            out.push(finding("second-writer"));
            let empty: Vec<usize> = Vec::new();
            let _ = empty[usize::from(!out.is_empty())];
        });
        assert_eq!(broken.len(), 1, "the partial findings are dropped");
        let f = &broken[0];
        assert_eq!((f.rule, f.severity), ("internal-error", Severity::Error));
        assert!(
            f.message
                .contains("internal error: rule `second-writer` stopped")
                && f.message.contains("index out of bounds"),
            "{}",
            f.message
        );
        assert_eq!(map.path(f.primary.span.file), INTERNAL_ERROR_FILE);
    }

    #[test]
    fn a_severity_the_rule_does_not_declare_is_kept_and_brings_an_internal_error() {
        let map = SourceMap::new();
        let at = |rule, severity| Finding::new(rule, severity, "x", Span::new(FileId(0), 0, 0));
        // shared-resource declares error (default) and warning (a grade), not info.
        let meta = find("shared-resource").map(|r| r.meta);
        assert!(meta.is_some_and(|m| m.allows(Severity::Error)
            && m.allows(Severity::Warning)
            && !m.allows(Severity::Info)));
        let declared = run_isolated("shared-resource", &map, |out| {
            out.push(at("shared-resource", Severity::Error));
            out.push(at("shared-resource", Severity::Warning));
        });
        assert_eq!(declared.len(), 2, "declared severities pass");
        let undeclared = run_isolated("shared-resource", &map, |out| {
            out.push(at("shared-resource", Severity::Warning));
            out.push(at("shared-resource", Severity::Info));
            out.push(at("shared-resource", Severity::Info));
        });
        let rules: Vec<(&str, Severity)> =
            undeclared.iter().map(|f| (f.rule, f.severity)).collect();
        assert_eq!(
            rules,
            [
                ("shared-resource", Severity::Warning),
                ("shared-resource", Severity::Info),
                ("shared-resource", Severity::Info),
                ("internal-error", Severity::Error),
            ],
            "the findings are kept, with one internal error for the rule and severity"
        );
        let f = &undeclared[3];
        assert_eq!(
            f.message,
            "internal error: rule `shared-resource` emitted severity `info`, which its declaration does not list"
        );
        assert_eq!(map.path(f.primary.span.file), INTERNAL_ERROR_FILE);
        // Ids outside the registry (the repository's own checks) are not judged.
        assert!(undeclared_severities(&[at("my-check", Severity::Info)], &map).is_empty());
    }
}

#[cfg(test)]
mod declaration_tests {
    use super::*;

    /// A grade is another severity than the default, one per severity, with a when that
    /// reads as a clause after "`warning` when …".
    #[test]
    fn every_grade_is_another_severity_with_a_when() {
        let mut wrong = Vec::new();
        for r in registry() {
            let m = r.meta;
            for (i, g) in m.graded.iter().enumerate() {
                if g.severity == m.severity {
                    wrong.push(format!(
                        "{}: a grade repeats the default `{}`",
                        m.id,
                        g.severity.as_str()
                    ));
                }
                if m.graded[..i].iter().any(|o| o.severity == g.severity) {
                    wrong.push(format!(
                        "{}: two grades of `{}` (join their whens)",
                        m.id,
                        g.severity.as_str()
                    ));
                }
                let when = g.when.trim();
                if when.is_empty() {
                    wrong.push(format!(
                        "{}: the `{}` grade has no when",
                        m.id,
                        g.severity.as_str()
                    ));
                } else if when != g.when || when.ends_with('.') {
                    wrong.push(format!("{}: the `{}` grade's when is not one trimmed clause without a final period", m.id, g.severity.as_str()));
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn the_severity_section_lists_the_default_and_each_grade() {
        let meta = find("job-ttl-recreate-loop").map(|r| r.meta);
        assert_eq!(
            meta.map(RuleMeta::severity_section).as_deref(),
            Some(
                "\n## Severity (from the code)\n\n- `error`: the default\n- `warning` when the Argo CD Application does not sync automatically (the Job runs again at the next manual sync)\n"
            )
        );
        assert!(
            find("render-failed").is_some_and(|r| r
                .meta
                .severity_section()
                .ends_with("- `error`: the default\n")),
            "a rule without grades lists its default only"
        );
    }
}
