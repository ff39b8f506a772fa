//! One finding per cause: when several apps report the same rule on the same line for the
//! same field (the Applications one ApplicationSet template generates, the overlays of one
//! base, the apps a broken fragment breaks), a person has one line to edit, so the report has
//! one finding that names how many apps it concerns and the first few.

use crate::finding::Finding;
use std::collections::HashMap;

/// How many app names a merged finding lists before "and N more".
const NAMED_APPS: usize = 3;

/// Merge findings that differ only in their app, keeping the first of each group in place.
/// Fixes are combined (each app's fix edits its own Application), edits de-duplicated.
pub fn merge_same_cause(findings: Vec<Finding>) -> Vec<Finding> {
    type Key = (
        &'static str,
        crate::finding::Severity,
        crate::source::Span,
        Option<String>,
        String,
    );
    let mut first_of: HashMap<Key, usize> = HashMap::new();
    let mut groups: Vec<(Finding, Vec<String>)> = Vec::new();
    for f in findings {
        let key: Key = (
            f.rule,
            f.severity,
            f.primary.span,
            f.field.clone(),
            message_without_app(&f),
        );
        let Some(app) = f.app.clone() else {
            groups.push((f, Vec::new()));
            continue;
        };
        // Two apps of one name (an Application and a HelmRelease, say) deploying different
        // objects are two findings: the name would not tell them apart.
        let same_name_other_object = first_of.get(&key).is_some_and(|&i| {
            let kept = &groups[i].0;
            kept.app.as_deref() == Some(app.as_str()) && kept.object != f.object
        });
        if same_name_other_object {
            groups.push((f, Vec::new()));
            continue;
        }
        match first_of.get(&key) {
            Some(&i) => {
                let (kept, apps) = &mut groups[i];
                if kept.app.as_deref() != Some(app.as_str()) && !apps.contains(&app) {
                    apps.push(app);
                }
                merge_fix(kept, f);
            }
            None => {
                first_of.insert(key, groups.len());
                groups.push((f, Vec::new()));
            }
        }
    }
    groups
        .into_iter()
        .map(|(mut f, others)| {
            if !others.is_empty() {
                f.message = format!("{} {}", f.message, also_in(&others));
            }
            f
        })
        .collect()
}

/// The message with the app's own name and object id blanked: two apps say the same thing
/// when only those differ (a message worded for another controller is another cause).
fn message_without_app(f: &Finding) -> String {
    let mut text = f.message.clone();
    if let Some(object) = &f.object {
        text = text.replace(object.as_str(), "\u{1}");
    }
    if let Some(app) = &f.app {
        text = text.replace(&format!("`{app}`"), "\u{0}");
    }
    text
}

/// A render that fails on a YAML error repeats the `yaml-syntax` finding on the same line:
/// one cause, reported once (as the YAML error, the line a person fixes).
pub fn drop_render_failures_of_yaml_errors(findings: &mut Vec<Finding>) {
    let yaml_errors: std::collections::HashSet<(crate::source::FileId, u32)> = findings
        .iter()
        .filter(|f| f.rule == "yaml-syntax")
        .map(|f| (f.primary.span.file, f.primary.span.start))
        .collect();
    if yaml_errors.is_empty() {
        return;
    }
    findings.retain(|f| {
        f.rule != "render-failed"
            || !yaml_errors.contains(&(f.primary.span.file, f.primary.span.start))
    });
}

fn also_in(others: &[String]) -> String {
    let shown: Vec<&str> = others.iter().take(NAMED_APPS).map(String::as_str).collect();
    let rest = others.len().saturating_sub(NAMED_APPS);
    let apps = if others.len() == 1 { "app" } else { "apps" };
    if rest == 0 {
        format!(
            "(also in {} other {apps}: {})",
            others.len(),
            shown.join(", ")
        )
    } else {
        format!(
            "(also in {} other {apps}: {} and {rest} more)",
            others.len(),
            shown.join(", ")
        )
    }
}

fn merge_fix(kept: &mut Finding, other: Finding) {
    let (Some(fix), Some(more)) = (kept.fix.as_mut(), other.fix) else {
        return;
    };
    for edit in more.edits {
        if !fix.edits.contains(&edit) {
            fix.edits.push(edit);
        }
    }
    fix.safe &= more.safe;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Edit, Fix, Severity};
    use crate::source::{FileId, Span};

    fn finding(app: &str, at: usize) -> Finding {
        Finding::new(
            "hpa-replicas-conflict",
            Severity::Error,
            "pins replicas",
            Span::new(FileId(1), at, at + 5),
        )
        .app(app)
        .field("spec.replicas")
    }

    #[test]
    fn apps_of_one_line_become_one_finding_naming_them() {
        let merged = merge_same_cause(vec![
            finding("shop-eu", 10),
            finding("shop-us", 10),
            finding("shop-ap", 10),
            finding("shop-sa", 10),
            finding("shop-af", 10),
            finding("other", 40),
        ]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].app.as_deref(), Some("shop-eu"));
        assert_eq!(
            merged[0].message,
            "pins replicas (also in 4 other apps: shop-us, shop-ap, shop-sa and 1 more)"
        );
        assert_eq!(merged[1].message, "pins replicas");
    }

    #[test]
    fn messages_that_differ_beyond_the_app_stay_apart() {
        let mut flux = finding("billing-flux", 10);
        flux.message = "changes on every Flux upgrade".into();
        let mut named = finding("shop-us", 10);
        named.message = "app `shop-us` pins replicas".into();
        let mut named_too = finding("shop-eu", 10);
        named_too.message = "app `shop-eu` pins replicas".into();
        let merged = merge_same_cause(vec![finding("billing", 10), flux, named, named_too]);
        assert_eq!(merged.len(), 3);
        assert_eq!(
            merged[2].message,
            "app `shop-us` pins replicas (also in 1 other app: shop-eu)"
        );
    }

    #[test]
    fn a_render_failure_on_a_yaml_error_is_reported_once() {
        let at = Span::new(FileId(3), 7, 9);
        let mut findings = vec![
            Finding::new("render-failed", Severity::Error, "app does not render", at),
            Finding::new("yaml-syntax", Severity::Error, "bad indentation", at),
            Finding::new(
                "render-failed",
                Severity::Error,
                "other",
                Span::new(FileId(3), 40, 41),
            ),
        ];
        drop_render_failures_of_yaml_errors(&mut findings);
        let rules: Vec<&str> = findings.iter().map(|f| f.rule).collect();
        assert_eq!(rules, vec!["yaml-syntax", "render-failed"]);
    }

    #[test]
    fn different_fields_rules_or_lines_stay_apart() {
        let mut other_field = finding("b", 10);
        other_field.field = Some("spec.template".into());
        let merged = merge_same_cause(vec![finding("a", 10), other_field, finding("c", 11)]);
        assert_eq!(merged.len(), 3);
    }

    #[test]
    fn fixes_of_the_merged_apps_are_combined() {
        let edit = |at: usize| Edit {
            span: Span::new(FileId(2), at, at),
            replacement: "x".into(),
        };
        let with_fix = |app: &str, at: usize| {
            let mut f = finding(app, 10);
            f.fix = Some(Fix {
                title: "ignore".into(),
                safe: true,
                edits: vec![edit(at)],
            });
            f
        };
        let merged = merge_same_cause(vec![with_fix("a", 1), with_fix("b", 2), with_fix("c", 1)]);
        assert_eq!(merged.len(), 1);
        let fix = merged[0].fix.as_ref().map(|f| f.edits.len());
        assert_eq!(fix, Some(2));
    }
}
