//! Two renders of the same commit differ. Rendered again with another random seed, clock and time
//! zone; differences the taint of `helm-nondeterministic-function` already explains are reported
//! there, at the call, and not again here. Also the static causes no second render of one app can
//! see: an ApplicationSet Go template or a Helm release name that calls a random or time function
//! makes a different Application (or release) on every reconcile.

use super::util::ForApp;
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::render::gotmpl::funcs::is_nondeterministic;
use crate::source::Span;
use crate::yaml::Node;
use std::collections::BTreeSet;

pub const ID: &str = "render-nondeterministic";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[],
    summary: "two renders of the same commit differ",
    doc: include_str!("../../rules/render-nondeterministic.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Of(&["argoproj.io/Application", "argoproj.io/ApplicationSet"]),
};

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    static_causes(model, out);
    for app in &model.apps {
        // A difference in an object the controller never applies (a Helm test) changes
        // nothing it syncs.
        let applied = |d: &&crate::gitops::RenderDifference| {
            d.hooks.applied_by(app.controller())
        };
        for d in app
            .render_differences
            .iter()
            .filter(|d| !d.explained)
            .filter(applied)
        {
            out.push(
                Finding::new(
                    ID,
                    Severity::Error,
                    format!("`{}` of {} differs between two renders of the same commit (another seed, clock and time zone): the desired state changes on every refresh", d.field, d.object),
                    d.span,
                )
                .label("differs between renders")
                .for_app(app)
                .object(d.object.clone())
                .field(d.field.clone())
                .help("Make the value a pure function of Git: set it explicitly in values, or remove the time, random or cluster-dependent input that produces it."),
            );
        }
    }
}

/// Functions that change their result on every call by themselves: random values, the
/// clock, generated keys and salts. (Formatting a fixed date, or map order, needs the data
/// flow that only the chart renderer's taint sees.)
fn changes_every_call(name: &str) -> bool {
    is_nondeterministic(name)
        && !matches!(
            name,
            "date"
                | "htmlDate"
                | "dateInZone"
                | "date_in_zone"
                | "htmlDateInZone"
                | "toDate"
                | "mustToDate"
                | "durationRound"
                | "keys"
                | "values"
                | "lookup"
                | "getHostByName"
        )
}

/// The non-deterministic functions a Go-template text calls (inside `{{ }}` actions).
fn nondeterministic_calls(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let close = after.find("}}").unwrap_or(after.len());
        let action = &after[..close];
        for word in action.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
            // `.now` is a field, `now` a call.
            if !word.starts_with('.')
                && changes_every_call(word)
                && !found.iter().any(|f| f == word)
            {
                found.push(word.to_string());
            }
        }
        rest = &after[close..];
    }
    found
}

fn static_causes(model: &Scope, out: &mut Vec<Finding>) {
    let mut seen: BTreeSet<(u32, u32)> = BTreeSet::new();
    let mut report = |span: Span,
                      what: String,
                      calls: &[String],
                      help: &str,
                      out: &mut Vec<Finding>| {
        if !seen.insert((span.file.0, span.start)) {
            return;
        }
        out.push(
            Finding::new(ID, Severity::Error, format!("{what} calls {}: it changes on every reconcile, so the generated state never settles", calls.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")), span)
                .label("random or time-dependent")
                .help(help.to_string()),
        );
    };
    for mo in model.in_scope() {
        let root = &mo.object.root;
        let kind = mo.object.kind.as_str();
        let spec = root.get("spec");
        if kind == "ApplicationSet"
            && spec
                .and_then(|s| s.get("goTemplate"))
                .and_then(Node::as_bool)
                == Some(true)
        {
            let name = mo.object.name.clone();
            let mut hits: Vec<(Span, Vec<String>)> = Vec::new();
            for key in ["template", "templatePatch"] {
                if let Some(t) = spec.and_then(|s| s.get(key)) {
                    t.walk(|_, n| {
                        if let Some(text) = n.as_str() {
                            let calls = nondeterministic_calls(text);
                            if !calls.is_empty() {
                                hits.push((n.span, calls));
                            }
                        }
                    });
                }
            }
            for (span, calls) in hits {
                report(
                    span,
                    format!("ApplicationSet `{name}`'s template"),
                    &calls,
                    "Generate Applications from Git and generator parameters only: the ApplicationSet controller re-renders the template on every reconcile and updates each Application whose spec changed. Put the value in the generator's input (a list element, a config file of the git generator) instead.",
                    out,
                );
            }
        }
        if kind == "Application" {
            let sources = spec.and_then(|s| s.get("source")).into_iter().chain(
                spec.and_then(|s| s.get("sources"))
                    .and_then(Node::as_seq)
                    .unwrap_or_default(),
            );
            for src in sources {
                if let Some(rn) = src.get_path(&["helm", "releaseName"]) {
                    let calls = rn.as_str().map(nondeterministic_calls).unwrap_or_default();
                    if !calls.is_empty() {
                        report(
                            rn.span,
                            format!("Application `{}`'s `helm.releaseName`", mo.object.name),
                            &calls,
                            "Set a fixed release name: the release name is a Helm name template rendered on every manifest generation, and every resource named after it changes with it.",
                            out,
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::nondeterministic_calls;

    #[test]
    fn calls_inside_actions_only() {
        assert_eq!(
            nondeterministic_calls("app-{{ now | date \"150405\" }}-{{ .now }}"),
            ["now"]
        );
        assert!(nondeterministic_calls("now randAlphaNum {{ .path.basename }}").is_empty());
        assert_eq!(
            nondeterministic_calls("{{ randAlphaNum 5 | lower }}"),
            ["randAlphaNum"]
        );
    }
}
