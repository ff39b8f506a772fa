//! Argo CD and Flux objects that do not match their kind's schema (the upstream CRDs,
//! bundled per served version): unknown or misplaced keys, values of the wrong shape,
//! required fields left out, and Applications Argo CD itself refuses (no usable source).

use super::util::{about, object_id};
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::crd_schemas::{Hint, Problem, ProblemKind, Seg, display_path, validate};
use super::schema_pruned_field::owned_by_other_rule;
use crate::ownership::crd::crd_schemas;
use std::collections::HashSet;

pub const ID: &str = "gitops-object-invalid";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[],
    summary: "Argo CD / Flux object with unknown or misplaced keys, wrong value types or missing required fields",
    doc: include_str!("../../rules/gitops-object-invalid.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.2.0",
    kinds: Kinds::All,
};

fn key_of(p: &Problem) -> String {
    match p.path.last() {
        Some(Seg::Key(k)) => k.clone(),
        Some(Seg::Index(i)) => i.to_string(),
        None => String::new(),
    }
}

/// Message, label and help for one problem of `kind` (`Application`) at `api` (its apiVersion).
fn words(p: &Problem, kind: &str, api: &str, what: &str) -> (String, String, String) {
    let at = display_path(&p.path);
    let key = key_of(p);
    let dropped = "the API server drops fields its schema does not have (a server-side apply rejects them), so this setting never takes effect";
    match &p.kind {
        ProblemKind::Unknown(Some(Hint::Under(target) | Hint::Up(target))) => {
            let target = if target.is_empty() { "the top level" } else { target };
            (
                format!("unknown field {at}: {kind}'s `{key}` belongs under {target}"),
                format!("belongs under {target}"),
                format!("Move `{key}` under `{target}` (check its indentation): {dropped}."),
            )
        }
        ProblemKind::Unknown(Some(Hint::Spelling(s))) => (
            format!("unknown field {at}: {kind} has no `{key}` here; did you mean `{s}`?"),
            format!("did you mean `{s}`?"),
            format!("Field names are case-sensitive: {dropped}."),
        ),
        ProblemKind::Unknown(None) => (
            format!("unknown field {at}: {api} {kind} has no `{key}` field"),
            "not in the schema".into(),
            format!(
                "Remove it or fix its name or indentation (the field may be newer than {api}): {dropped}."
            ),
        ),
        ProblemKind::WrongType { expected, found } => (
            format!("{at} must be {expected}, not {found}: the API server rejects {what}"),
            format!("{found} where {expected} is required"),
            "Write the value in the shape the schema gives (a list is `- item` lines, a map is `key: value` lines).".into(),
        ),
        ProblemKind::Missing(field) => {
            let full = if at.is_empty() {
                field.clone()
            } else {
                format!("{at}.{field}")
            };
            (
                format!(
                    "{what} has no {full}, which the {api} {kind} schema requires: the API server rejects it"
                ),
                format!("`{field}` is required here"),
                format!("Add `{field}` here."),
            )
        }
        ProblemKind::Controller(text) => {
            let effect = if kind == "ApplicationSet" {
                "Argo CD marks every Application it generates InvalidSpecError and syncs none of them"
            } else {
                "Argo CD marks the Application InvalidSpecError and never syncs it"
            };
            (
                format!("{what}: {text}: {effect}"),
                "no source Argo CD can render".into(),
                "Give the source a `repoURL` and a `path` (a directory in Git) or a `chart` (a Helm chart); in `sources`, an entry may instead be a `ref` for values files.".into(),
            )
        }
    }
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    // Where the repo carries the CRD itself, schema-pruned-field reports unknown keys
    // against that (the schema the cluster serves); the bundled one adds the rest. Keys
    // inside ignore rules are ignore-differences-invalid's.
    let in_repo: HashSet<(String, String, String)> = crd_schemas(model)
        .into_iter()
        .map(|s| (s.group, s.kind, s.version))
        .collect();
    let mut seen = HashSet::new();
    for mo in model.in_scope() {
        let o = &mo.object;
        let problems = validate(o);
        if problems.is_empty() {
            continue;
        }
        let version = o.api_version.rsplit('/').next().unwrap_or("");
        let repo_crd = in_repo.contains(&(o.group().to_string(), o.kind.clone(), version.to_string()));
        let what = object_id(mo);
        for p in problems {
            let field: Vec<String> = p
                .path
                .iter()
                .map(|s| match s {
                    Seg::Key(k) => k.clone(),
                    Seg::Index(i) => i.to_string(),
                })
                .collect();
            if matches!(p.kind, ProblemKind::Unknown(_))
                && (repo_crd || owned_by_other_rule(o.group(), &o.kind, &field))
            {
                continue;
            }
            let (message, label, help) = words(&p, &o.kind, &o.api_version, &what);
            // One object can reach the model through several apps (a file listed twice).
            if !seen.insert((p.span.file, p.span.start, message.clone())) {
                continue;
            }
            let mut f = Finding::new(ID, Severity::Error, message, p.span)
                .label(label)
                .help(help);
            if !field.is_empty() {
                f = f.field(field.join("."));
            }
            out.push(about(f, model.app_of(mo), mo));
        }
    }
}
