//! `gitops-lint diff --base REV`: what a change does to a GitOps repo.
//!
//! The base revision is read from git into memory (no checkout) and linted with the same
//! pipeline and settings as the working tree. Findings are matched by identity (rule, app,
//! object, field; see `baseline.rs`), so the report is the findings the change adds and the
//! ones it fixes, wherever lines moved. The changed files are mapped to the apps whose
//! render reads them, and only those apps' manifests are rendered and diffed: what Argo CD
//! will change when the pull request merges.
//!
//! The objects of those apps are also compared with themselves across the two revisions
//! (by identity, `identity.rs`): changes the controller cannot apply (`immutable.rs`, with
//! the CRDs' transition rules from `transition_rules.rs`) and deletes that lose data
//! (`deletes.rs`), with each controller's way out (`way_out.rs`). Those findings exist only
//! here: a plain lint has one revision.

mod deletes;
mod identity;
mod immutable;
mod transition_rules;
mod values;
mod way_out;

use crate::baseline::{key_counts, unmatched};
pub use crate::gitops::inputs::app_inputs;
use crate::gitops::{App, Model};
use crate::lint::{LintError, LintOptions, LintResult, lint, lint_tree};
use crate::report::Finding;
use crate::report::summary::AppDiff;
use crate::source::git::{ChangedFile, GitRepo};

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct DiffOptions {
    /// The lint of both sides: limits and cache apply to both; `no_ignore` to the working
    /// tree's walk (the base is a git tree).
    pub lint: LintOptions,
    pub base: String,
}

pub struct DiffResult {
    pub head: LintResult,
    pub base: LintResult,
    /// The base revision as given, and the commit it names.
    pub base_rev: String,
    pub base_commit: String,
    /// Head findings the base does not have.
    pub new: Vec<Finding>,
    /// Base findings the head no longer has (spans point into `base.map`).
    pub fixed: Vec<Finding>,
    pub changed: Vec<ChangedFile>,
    /// Added or changed line ranges per root-relative path (where a review may comment).
    pub changed_lines: BTreeMap<String, Vec<(usize, usize)>>,
    /// Of those, lines added where the base had none (a suggestion may delete them).
    pub inserted_lines: BTreeMap<String, Vec<(usize, usize)>>,
    /// Apps whose render reads a changed file, by name.
    pub affected: Vec<String>,
    /// Rendered manifest diffs of the affected apps (only those that changed).
    pub diffs: Vec<AppDiff>,
    /// What comparing the two revisions found (also in `new`): immutable fields changed,
    /// deletes that lose data.
    pub changes: Vec<Finding>,
    /// Apps in the head revision (for "rendered N of M").
    pub apps_total: usize,
    /// The linted root relative to the git top level.
    pub prefix: String,
    pub lint_time: Duration,
    pub render_time: Duration,
    /// Comparing the affected apps' objects across the revisions.
    pub compare_time: Duration,
}

impl DiffResult {
    /// Rendered apps: the affected apps, rendered once per revision that has them.
    pub fn apps_rendered(&self) -> usize {
        self.affected.len()
    }
}

fn io(message: String) -> LintError {
    LintError { message }
}

pub fn run(opts: &DiffOptions) -> Result<DiffResult, LintError> {
    let root = std::fs::canonicalize(&opts.lint.root)
        .map_err(|e| io(format!("{}: {e}", opts.lint.root.display())))?;
    let repo = GitRepo::open(&root).map_err(io)?;
    let commit = repo.resolve(&opts.base).map_err(io)?;
    let started = Instant::now();
    // The head lint needs no git: it runs while the base is read and linted.
    let (head, base_side) = rayon::join(
        || lint(&opts.lint),
        || -> Result<_, LintError> {
            // Blobs up to 64 MiB are held; the walk applies the configured limit again.
            let tree = repo.tree_at(&commit, 64 * 1024 * 1024).map_err(io)?;
            let changed = repo.changed_files(&commit).map_err(io)?;
            let changed_lines = repo.changed_lines(&commit).map_err(io)?;
            let base = lint_tree(&opts.lint, Arc::new(tree))?;
            Ok((base, changed, changed_lines))
        },
    );
    let head = head?;
    let (base, changed, lines) = base_side?;
    let lint_time = started.elapsed();

    let mut new: Vec<Finding> = unmatched(
        &head.findings,
        &head.map,
        &key_counts(&base.findings, &base.map),
    )
    .into_iter()
    .map(|i| head.findings[i].clone())
    .collect();
    let fixed: Vec<Finding> = unmatched(
        &base.findings,
        &base.map,
        &key_counts(&head.findings, &head.map),
    )
    .into_iter()
    .map(|i| base.findings[i].clone())
    .collect();

    let started = Instant::now();
    let paths: BTreeSet<&str> = changed.iter().map(|c| c.path.as_str()).collect();
    let mut affected: BTreeSet<String> = affected_apps(&head.model, &paths);
    affected.extend(affected_apps(&base.model, &paths));
    let diffs = affected
        .iter()
        .filter_map(|name| {
            let before = manifest_of(&base.model, name);
            let after = manifest_of(&head.model, name);
            let diff =
                crate::fix::diff_text(&before, &after, &format!("a/{name}"), &format!("b/{name}"));
            (!diff.is_empty()).then(|| app_diff(name, diff))
        })
        .collect();
    let render_time = started.elapsed();

    let started = Instant::now();
    let changes = compare_revisions(&base, &head, &affected);
    new.extend(changes.iter().cloned());
    new.sort_by(|a, b| {
        let pa = head.map.path(a.primary.span.file);
        let pb = head.map.path(b.primary.span.file);
        (pa, a.primary.span.start, a.rule).cmp(&(pb, b.primary.span.start, b.rule))
    });
    let compare_time = started.elapsed();

    Ok(DiffResult {
        apps_total: head.model.apps.len(),
        base_rev: opts.base.clone(),
        base_commit: commit,
        new,
        fixed,
        changed,
        changed_lines: lines.changed,
        inserted_lines: lines.inserted,
        affected: affected.into_iter().collect(),
        diffs,
        changes,
        prefix: repo.prefix().to_string(),
        head,
        base,
        lint_time,
        render_time,
        compare_time,
    })
}

/// The affected apps' objects compared with themselves in the base, settled like the head's
/// own findings (settings, suppressions, redaction).
fn compare_revisions(
    base: &LintResult,
    head: &LintResult,
    affected: &BTreeSet<String>,
) -> Vec<Finding> {
    let before = identity::Side::of(&base.model, affected);
    let after = identity::Side::of(&head.model, affected);
    let transitions = transition_rules::of_models(&[&base.model, &head.model]);
    let mut out = Vec::new();
    immutable::check(&before, &after, &transitions, &mut out);
    deletes::check(&before, &after, &mut out);
    // Held to the rules' declarations as the checked rules are in `rules::run_all`.
    let undeclared = crate::rules::undeclared_severities(&out, &head.map);
    out.extend(undeclared);
    head.settle(out)
}

fn app_diff(name: &str, diff: String) -> AppDiff {
    let count = |c: char, skip: &str| {
        diff.lines()
            .filter(|l| l.starts_with(c) && !l.starts_with(skip))
            .count()
    };
    AppDiff {
        app: name.to_string(),
        added: count('+', "+++"),
        removed: count('-', "---"),
        diff,
    }
}

fn manifest_of(model: &Model, name: &str) -> String {
    model
        .apps
        .iter()
        .find(|a| a.name == name)
        .map(|a| render_app_manifest(model, a))
        .unwrap_or_default()
}

/// Changed files → the apps whose render reads them (see [`app_inputs`]). A change to the
/// linter's configuration or to `argocd-cm` concerns every app.
pub fn affected_apps(model: &Model, changed: &BTreeSet<&str>) -> BTreeSet<String> {
    let global = changed.contains(".gitops-lint.yaml")
        || model
            .argo
            .decl
            .as_ref()
            .is_some_and(|cm| changed.contains(model.map.path(cm.root.span.file).as_str()));
    let mut out = BTreeSet::new();
    for app in &model.apps {
        if global || app_inputs(model, app).iter().any(|p| touches(p, changed)) {
            out.insert(app.name.clone());
        }
    }
    out
}

/// An input is a file, or a directory (`dir/`) whose every file is an input.
fn touches(input: &str, changed: &BTreeSet<&str>) -> bool {
    match input.strip_suffix('/') {
        Some("") => !changed.is_empty(),
        Some(dir) => changed
            .range(dir..)
            .take_while(|p| p.starts_with(dir))
            .any(|p| p.len() > dir.len() && p.as_bytes()[dir.len()] == b'/'),
        None => changed.contains(input),
    }
}

/// The manifest Argo CD applies for `app`: its objects as YAML documents (as kustomize
/// prints them), in a stable order, so a diff shows what the sync will change.
pub fn render_app_manifest(model: &Model, app: &App) -> String {
    let mut objects: Vec<_> = model.objects_of(app).collect();
    objects.sort_by(|a, b| {
        (&a.object.kind, &a.namespace, &a.object.name).cmp(&(
            &b.object.kind,
            &b.namespace,
            &b.object.name,
        ))
    });
    // Secret values are masked: this text goes into pull-request comments.
    let masked: Vec<_> = objects
        .iter()
        .map(|mo| crate::redact::mask_secret(&mo.object.root))
        .collect();
    crate::yaml::emit::to_yaml_stream(masked.iter())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceMap;
    use crate::yaml::{Limits, parse_str};

    #[test]
    fn canonical_yaml_drops_comments_and_keeps_values() {
        let map = SourceMap::new();
        let text = "a: 1 # c\nb:\n  - x: \"v\"\n    z: [1, 2]\n  - plain\nc: {}\nd: 'yes'\n";
        let id = map.add_text("a.yaml", text);
        let doc = parse_str(text, id, &Limits::default());
        let out = doc
            .docs
            .first()
            .map(|d| crate::yaml::emit::to_yaml(&d.root))
            .unwrap_or_default();
        assert_eq!(
            out,
            "a: 1\nb:\n- x: v\n  z:\n  - 1\n  - 2\n- plain\nc: {}\nd: \"yes\"\n"
        );
    }

    #[test]
    fn directories_touch_their_files_only() {
        let changed: BTreeSet<&str> = ["apps/a/x.yaml", "apps/ab.yaml"].into_iter().collect();
        assert!(touches("apps/a/", &changed));
        assert!(!touches("apps/b/", &changed));
        assert!(touches("apps/ab.yaml", &changed));
        assert!(!touches("apps/a", &changed));
    }
}
