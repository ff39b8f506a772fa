//! Catalog §5: two renders of the same commit differ. Rendered again with another random
//! seed, clock and time zone; differences the taint of rule §4 already explains are
//! reported there, at the call, and not again here.

use super::RuleMeta;
use crate::gitops::Model;
use crate::report::{Finding, Severity};

pub const ID: &str = "render-nondeterministic";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    summary: "two renders of the same commit differ",
    doc: include_str!("../../rules/render-nondeterministic.md"),
};

pub fn check(model: &Model, out: &mut Vec<Finding>) {
    for app in &model.apps {
        for d in app.render_differences.iter().filter(|d| !d.explained) {
            out.push(
                Finding::new(
                    ID,
                    Severity::Error,
                    format!("`{}` of {} differs between two renders of the same commit (another seed, clock and time zone): the desired state changes on every refresh", d.field, d.object),
                    d.span,
                )
                .label("differs between renders")
                .app(app.name.clone())
                .object(d.object.clone())
                .field(d.field.clone())
                .help("Make the value a pure function of Git: set it explicitly in values, or remove the time, random or cluster-dependent input that produces it."),
            );
        }
    }
}
