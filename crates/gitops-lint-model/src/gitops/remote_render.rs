//! Findings about fetched content land in the repository: a finding whose line is in a
//! fetched chart or base moves to the line that names that input (the `chart:` line, the
//! `resources:` entry), with the fetched file kept as a related label. Problems of the lock
//! file itself are findings on `.gitops-lint.lock`.

use super::Model;
use crate::finding::{Finding, Label, Severity};
use crate::remote::LOCK_FILE;
use crate::render::RemoteInputs;
use crate::source::{Origin, RepoFs, SourceFile, Span};

/// Inputs can name inputs (a fetched base listing another remote base): at most this many
/// moves per finding.
const MAX_MOVES: usize = 8;

/// Labels the Helm provenance adds for the values line a rendered value came from.
const VALUE_LABEL: &str = "value from ";

/// Move every finding whose primary line is in fetched content to the repo line a person
/// edits: the repository values line the value came from when there is one (as for a
/// vendored chart), else the line that names the input, for the finding's app (else any app
/// naming it). The fetched line stays as a related label.
pub fn relocate(findings: &mut [Finding], model: &Model, remotes: &RemoteInputs) {
    for f in findings.iter_mut() {
        for _ in 0..MAX_MOVES {
            let Some(reference) = remotes.file_origin(f.primary.span.file) else {
                break;
            };
            let fetched_text = format!("{} (fetched {reference})", f.primary.text);
            let values_line = f.secondary.iter().position(|l| {
                l.text.starts_with(VALUE_LABEL) && model.map.get(l.span.file).origin == Origin::Repo
            });
            if let Some(i) = values_line {
                let values = f.secondary.remove(i);
                let fetched = std::mem::replace(&mut f.primary, values);
                f.secondary.insert(
                    0,
                    Label {
                        span: fetched.span,
                        text: fetched_text,
                    },
                );
                break;
            }
            let of_app = f
                .app
                .as_deref()
                .and_then(|name| model.apps.iter().find(|a| a.name == name));
            let named = of_app
                .into_iter()
                .chain(model.apps.iter())
                .flat_map(|a| a.remotes.iter())
                .find(|u| u.reference == reference);
            let Some(named) = named else { break };
            let fetched = std::mem::replace(
                &mut f.primary,
                Label {
                    span: named.span,
                    text: format!("from {reference}"),
                },
            );
            f.secondary.insert(
                0,
                Label {
                    span: fetched.span,
                    text: fetched_text,
                },
            );
        }
    }
}

/// The lock file's problems, each located in it (on its first line when it has no place).
pub fn lock_findings(remotes: &RemoteInputs, fs: &dyn RepoFs, rule: &'static str) -> Vec<Finding> {
    let Some(store) = remotes.store() else {
        return Vec::new();
    };
    store
        .lock_errors()
        .iter()
        .map(|e| {
            let span = e.span.unwrap_or_else(|| {
                let file = fs.read(LOCK_FILE).unwrap_or_else(|_| {
                    fs.source_map()
                        .add(SourceFile::new(LOCK_FILE, "", Origin::Virtual))
                });
                Span::new(file, 0, 0)
            });
            Finding::new(rule, Severity::Error, e.message.clone(), span)
                .label("lock entry")
                .help("Run `gitops-lint fetch` to rewrite the lock file, or fix the entry by hand; inputs it cannot name stay unrendered.")
        })
        .collect()
}
