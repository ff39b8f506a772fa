//! The pull-request review: one inline comment per new finding on a line the PR adds or
//! changes, with a GitHub suggestion block when the change is a local edit a reviewer can
//! accept with one click.

use crate::report::{Finding, Severity, repo_path};
use crate::source::SourceMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// Body of `POST /repos/{owner}/{repo}/pulls/{n}/reviews` (octocrab's typed call cannot
/// carry inline comments).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ReviewRequest {
    pub commit_id: String,
    pub body: String,
    pub event: &'static str,
    pub comments: Vec<ReviewComment>,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ReviewComment {
    pub path: String,
    pub line: usize,
    pub side: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_side: Option<&'static str>,
    pub body: String,
    /// Errors are commented first when not every finding gets a comment.
    #[serde(skip)]
    pub severity: Severity,
}

/// Inline comments one review carries by default: GitHub shows a long review as a wall, and
/// every comment is a notification; the sticky summary counts the rest.
pub const DEFAULT_MAX_COMMENTS: usize = 25;

/// Each inline comment ends with a hidden marker carrying the finding's problem fingerprint
/// (`finding::problem_fingerprint`, the key code scanning gets too), so a later run on the
/// same pull request does not post the same comment again, and a new problem that only
/// shares rule, app and object with an old one still gets its comment.
pub const FINDING_MARKER: &str = "<!-- gitops-lint:finding ";

/// The fingerprint in a comment body written by [`build`], if any.
pub fn marker_of(body: &str) -> Option<&str> {
    let rest = &body[body.find(FINDING_MARKER)? + FINDING_MARKER.len()..];
    rest.split_whitespace().next()
}

impl ReviewRequest {
    /// Drop the comments already on the pull request (by fingerprint) and keep at most
    /// `max_comments`, errors first; `None` when nothing new is left to say.
    pub fn without_posted(
        mut self,
        posted: &std::collections::HashSet<String>,
        max_comments: usize,
    ) -> Option<ReviewRequest> {
        self.comments
            .retain(|c| marker_of(&c.body).is_none_or(|m| !posted.contains(m)));
        let total = self.comments.len();
        if total > max_comments {
            // Stable: within a severity, the report's order (path, line).
            self.comments.sort_by_key(|c| std::cmp::Reverse(c.severity));
            self.comments.truncate(max_comments);
        }
        if self.comments.is_empty() {
            return None;
        }
        self.body = summary_line(total, self.comments.len());
        Some(self)
    }
}

fn summary_line(total: usize, commented: usize) -> String {
    if commented < total {
        return format!(
            "gitops-lint found {total} new finding(s) on lines this pull request changes; {commented} have inline comments (errors first). The summary comment counts them all; code scanning and `gitops-lint diff` list every one."
        );
    }
    format!(
        "gitops-lint found {total} new finding(s) on lines this pull request changes; the summary comment lists all of them."
    )
}

/// Rules whose finding is "this field should not be declared" (`RuleMeta::removal`): when the
/// PR itself adds the line, deleting it again is always safe (nothing deployed depends on it
/// yet), even where removing an existing declaration needs two steps.
fn is_removal_rule(id: &str) -> bool {
    crate::rules::find(id).is_some_and(|r| r.meta.removal)
}

/// Lines `first..=last` replaced by `text` (no trailing newline), offered as a suggestion.
#[derive(Debug, PartialEq)]
struct Suggestion {
    first: usize,
    last: usize,
    text: String,
    title: String,
}

fn within(ranges: &[(usize, usize)], first: usize, last: usize) -> bool {
    ranges.iter().any(|&(a, b)| a <= first && last <= b)
}

/// The fix as a replacement of whole lines of the primary file, when all its edits are in
/// that file; for removal rules on lines the PR inserts (`inserted`: the base had no line
/// there, so nothing deployed depends on it), the deletion of those lines.
fn suggestion(f: &Finding, map: &SourceMap, inserted: &[(usize, usize)]) -> Option<Suggestion> {
    let file = map.get(f.primary.span.file);
    let text: &str = &file.text;
    let local_fix = f
        .fix
        .as_ref()
        .filter(|x| x.safe && !x.edits.is_empty())
        .filter(|x| x.edits.iter().all(|e| e.span.file == f.primary.span.file));
    let (edits, title): (Vec<(usize, usize, String)>, String) = match local_fix {
        Some(fix) => (
            fix.edits
                .iter()
                .map(|e| {
                    (
                        e.span.start as usize,
                        e.span.end as usize,
                        e.replacement.clone(),
                    )
                })
                .collect(),
            fix.title.clone(),
        ),
        None if is_removal_rule(f.rule) => {
            let (s, e) = (f.primary.span.start as usize, f.primary.span.end as usize);
            let first = file.line_of(s);
            let last = file.line_of(e.saturating_sub(1).max(s));
            if !within(inserted, first, last) {
                return None;
            }
            (
                vec![(s, e, String::new())],
                "remove the line this change adds".into(),
            )
        }
        None => return None,
    };
    let mut resolved: Vec<(usize, usize, String)> = Vec::new();
    for (s, e, r) in edits {
        if e > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            return None;
        }
        let (s, e) = if r.is_empty() && e > s {
            crate::fix::whole_lines(text, s, e)
        } else {
            (s, e)
        };
        resolved.push((s, e, r));
    }
    resolved.sort_by_key(|x| (x.0, x.1));
    let start = resolved.first()?.0;
    let end = resolved.iter().map(|x| x.1).max()?;
    let first = file.line_of(start);
    // A range ending at a line start (a deleted line's newline) ends on the line before.
    let last = file.line_of(end.saturating_sub(1).max(start)).max(first);
    let lines_start = file.line_range(first).start;
    let lines_end = {
        let r = file.line_range(last);
        text[r.end..]
            .find('\n')
            .map(|i| r.end + i + 1)
            .unwrap_or(text.len())
    };
    let mut new = String::new();
    let mut pos = lines_start;
    for (s, e, r) in &resolved {
        if *s < pos {
            return None;
        }
        new.push_str(&text[pos..*s]);
        new.push_str(r);
        pos = *e;
    }
    new.push_str(&text[pos..lines_end]);
    let new = new.strip_suffix('\n').unwrap_or(&new).to_string();
    Some(Suggestion {
        first,
        last,
        text: new,
        title,
    })
}

fn icon(s: Severity) -> &'static str {
    match s {
        Severity::Error => "🔴",
        Severity::Warning => "🟡",
        Severity::Info => "🔵",
    }
}

/// The review for `findings` (new in this PR). `added` holds the lines the PR adds or
/// rewrites per linted-root-relative path, `inserted` the ones of those the base has no line
/// for. Findings on lines outside the diff are left to the summary (GitHub rejects comments
/// there).
pub fn build(
    findings: &[Finding],
    map: &SourceMap,
    prefix: &str,
    added: &BTreeMap<String, Vec<(usize, usize)>>,
    inserted: &BTreeMap<String, Vec<(usize, usize)>>,
    head_sha: &str,
) -> Option<ReviewRequest> {
    let mut comments = Vec::new();
    for f in findings {
        let path = map.path(f.primary.span.file);
        let Some(ranges) = added.get(&path) else {
            continue;
        };
        let start = map.line_col(f.primary.span).line;
        if !within(ranges, start, start) {
            continue;
        }
        let mut body = format!(
            "{} **gitops-lint** `{}`: {}",
            icon(f.severity),
            f.rule,
            f.message
        );
        if let Some(h) = &f.help {
            body.push_str("\n\n");
            body.push_str(h);
        }
        let new_lines = inserted.get(&path).map(Vec::as_slice).unwrap_or_default();
        let (first, last) =
            match suggestion(f, map, new_lines).filter(|s| within(ranges, s.first, s.last)) {
                Some(s) => {
                    body.push_str(&format!("\n\nSuggested fix: {}\n```suggestion\n", s.title));
                    if !s.text.is_empty() {
                        body.push_str(&s.text);
                        body.push('\n');
                    }
                    body.push_str("```");
                    (s.first, s.last)
                }
                None => {
                    if let Some(fix) = f.fix.as_ref().filter(|x| x.safe) {
                        body.push_str(&format!("\n\n`gitops-lint --fix` applies: {}.", fix.title));
                    }
                    (start, start)
                }
            };
        body.push_str(&format!(
            "\n\n<sub>`gitops-lint explain {}`</sub>\n{FINDING_MARKER}{} -->",
            f.rule,
            crate::finding::problem_fingerprint(f, map)
        ));
        comments.push(ReviewComment {
            path: repo_path(prefix, &path),
            line: last,
            side: "RIGHT",
            start_line: (first < last).then_some(first),
            start_side: (first < last).then_some("RIGHT"),
            body,
            severity: f.severity,
        });
    }
    if comments.is_empty() {
        return None;
    }
    Some(ReviewRequest {
        commit_id: head_sha.to_string(),
        body: summary_line(comments.len(), comments.len()),
        event: "COMMENT",
        comments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Edit, Fix};
    use crate::source::Span;

    #[test]
    fn deletion_of_an_added_line_is_suggested() {
        let map = SourceMap::new();
        let text = "spec:\n  replicas: 3\n  selector: {}\n";
        let file = map.add_text("apps/a/d.yaml", text);
        let at = text.find("replicas").unwrap_or(0);
        let f = Finding::new(
            "hpa-replicas-conflict",
            Severity::Error,
            "m",
            Span::new(file, at, at + 11),
        );
        let added: BTreeMap<String, Vec<(usize, usize)>> =
            [("apps/a/d.yaml".to_string(), vec![(2, 2)])]
                .into_iter()
                .collect();
        let r = build(std::slice::from_ref(&f), &map, "", &added, &added, "sha").expect("review");
        let c = &r.comments[0];
        assert_eq!(
            (c.line, c.start_line, c.path.as_str()),
            (2, None, "apps/a/d.yaml")
        );
        assert!(c.body.contains("```suggestion\n```"), "{}", c.body);
        // The PR rewrote the line (`replicas: 1` → `3`): a comment, but no one-click removal,
        // since the deployed object has the field.
        let rewritten = build(
            std::slice::from_ref(&f),
            &map,
            "",
            &added,
            &BTreeMap::new(),
            "sha",
        )
        .expect("review");
        assert!(
            !rewritten.comments[0].body.contains("```suggestion"),
            "{}",
            rewritten.comments[0].body
        );
        // Not on an added line: no comment at all.
        let none: BTreeMap<String, Vec<(usize, usize)>> =
            [("apps/a/d.yaml".to_string(), vec![(3, 3)])]
                .into_iter()
                .collect();
        assert!(build(std::slice::from_ref(&f), &map, "", &none, &none, "sha").is_none());
        // Posted before: not again.
        let fp = marker_of(&c.body).expect("marker").to_string();
        let posted: std::collections::HashSet<String> = [fp].into_iter().collect();
        assert!(r.clone().without_posted(&posted, 25).is_none());
        assert!(r.without_posted(&Default::default(), 25).is_some());
    }

    #[test]
    fn local_safe_fix_becomes_a_multi_line_suggestion() {
        let map = SourceMap::new();
        let text = "a:\n  b: 1\n  c: 2\n";
        let file = map.add_text("x.yaml", text);
        let f = Finding::new("r", Severity::Warning, "m", Span::new(file, 3, 7)).with_fix(Fix {
            title: "t".into(),
            safe: true,
            edits: vec![
                Edit {
                    span: Span::new(file, 8, 9),
                    replacement: "9".into(),
                },
                Edit {
                    span: Span::new(file, 15, 16),
                    replacement: "8".into(),
                },
            ],
        });
        let added: BTreeMap<String, Vec<(usize, usize)>> =
            [("x.yaml".to_string(), vec![(1, 3)])].into_iter().collect();
        let r = build(&[f], &map, "sub", &added, &added, "sha").expect("review");
        let c = &r.comments[0];
        assert_eq!((c.start_line, c.line), (Some(2), 3));
        assert!(
            c.body.contains("```suggestion\n  b: 9\n  c: 8\n```"),
            "{}",
            c.body
        );
        assert_eq!(c.path, "sub/x.yaml");
    }

    #[test]
    fn at_most_n_inline_comments_errors_first() {
        let map = SourceMap::new();
        let text = "a: 1\n".repeat(40);
        let file = map.add_text("x.yaml", text.clone());
        let findings: Vec<Finding> = (0..40)
            .map(|i| {
                let severity = if i % 10 == 9 {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                Finding::new(
                    "r",
                    severity,
                    format!("m{i}"),
                    Span::new(file, i * 5, i * 5 + 4),
                )
                .object(format!("ConfigMap/ns/c{i}"))
            })
            .collect();
        let added: BTreeMap<String, Vec<(usize, usize)>> = [("x.yaml".to_string(), vec![(1, 40)])]
            .into_iter()
            .collect();
        let r = build(&findings, &map, "", &added, &added, "sha").expect("review");
        assert_eq!(r.comments.len(), 40);
        let r = r.without_posted(&Default::default(), 6).expect("review");
        assert_eq!(r.comments.len(), 6);
        // The four errors (lines 10, 20, 30, 40), then warnings in line order.
        let lines: Vec<usize> = r.comments.iter().map(|c| c.line).collect();
        assert_eq!(lines, [10, 20, 30, 40, 1, 2]);
        assert!(
            r.body.contains("40 new finding(s)") && r.body.contains("6 have inline comments"),
            "{}",
            r.body
        );
    }
}
