//! `--fix`: apply the safe fixes findings carry, as byte edits on the files as written, so
//! everything else (comments, quoting, indentation, key order) stays byte for byte.
//!
//! Edits from different findings are merged per file: identical edits (two findings asking
//! for the same `RespectIgnoreDifferences=true`) apply once, insertions at one point keep
//! the findings' order, and an edit overlapping an earlier one is skipped (and counted).

mod check;

use crate::finding::{Edit, Finding};
use crate::source::{Origin, SourceMap};
use std::collections::BTreeMap;
use std::path::Path;

/// The fixed text of one file.
#[derive(Debug, Clone)]
pub struct FilePatch {
    /// Relative to the linted root.
    pub path: String,
    pub before: String,
    pub after: String,
}

#[derive(Debug, Default)]
pub struct FixPlan {
    pub patches: Vec<FilePatch>,
    /// Findings whose safe fix is in the plan.
    pub fixed: usize,
    /// Edits left out because they overlap another fix in the same run (rerun to apply).
    pub skipped: usize,
    /// Files whose fixed text failed the re-check (`check.rs`), with the reason: left as
    /// they are.
    pub refused: Vec<(String, String)>,
}

/// A deletion that covers all the non-blank text of its lines (a trailing comment counts
/// as part of the line) removes the lines entirely, newline included.
pub(crate) fn whole_lines(text: &str, start: usize, end: usize) -> (usize, usize) {
    // A block scalar's span ends after its last line break, at the start of the next line:
    // that line is not part of the deletion (else `data:` after a deleted annotation would
    // keep the annotation's indentation and move under it).
    let end = if end > start && text.as_bytes().get(end - 1) == Some(&b'\n') {
        end - 1
    } else {
        end
    };
    let line_start = text[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_end = text[end..]
        .find('\n')
        .map(|i| end + i)
        .unwrap_or(text.len());
    let before = &text[line_start..start];
    let after = text[end..line_end].trim_start();
    let before_blank = before.chars().all(|c| c == ' ' || c == '\t');
    let after_blank = after.is_empty() || after.starts_with('#');
    if before_blank && after_blank {
        let with_newline = if line_end < text.len() {
            line_end + 1
        } else {
            line_end
        };
        (line_start, with_newline)
    } else {
        (start, end)
    }
}

/// Plan the safe fixes of `findings` (with `unsafe_too`, also the opt-in ones left
/// to a person, such as removing `replicas` before the scoped ignore is live). Only
/// files of the repository are edited (not rendered or virtual text).
pub fn plan(findings: &[Finding], map: &SourceMap, unsafe_too: bool) -> FixPlan {
    let mut by_file: BTreeMap<u32, Vec<&Edit>> = BTreeMap::new();
    let mut fixed = 0;
    for f in findings {
        let Some(fix) = f
            .fix
            .as_ref()
            .filter(|x| (x.safe || unsafe_too) && !x.edits.is_empty())
        else {
            continue;
        };
        if fix
            .edits
            .iter()
            .any(|e| map.get(e.span.file).origin != Origin::Repo)
        {
            continue;
        }
        fixed += 1;
        for e in &fix.edits {
            by_file.entry(e.span.file.0).or_default().push(e);
        }
    }
    let mut out = FixPlan {
        fixed,
        ..FixPlan::default()
    };
    for (file, edits) in by_file {
        let src = map.get(crate::source::FileId(file));
        let text: &str = &src.text;
        // Resolve to byte ranges first (whole-line deletions), then order stably by start.
        let mut ranges: Vec<(usize, usize, &str)> = Vec::new();
        for e in edits {
            let (s, t) = (e.span.start as usize, e.span.end as usize);
            if t > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(t) {
                out.skipped += 1;
                continue;
            }
            let (s, t) = if e.replacement.is_empty() && t > s {
                whole_lines(text, s, t)
            } else {
                (s, t)
            };
            if ranges
                .iter()
                .any(|&(a, b, r)| a == s && b == t && r == e.replacement)
            {
                continue; // the same edit asked for twice
            }
            ranges.push((s, t, &e.replacement));
        }
        let mut ranges = remove_emptied_maps(text, ranges);
        ranges.sort_by_key(|&(s, t, _)| (s, t));
        let mut after = String::with_capacity(text.len());
        let mut applied = Vec::new();
        let mut pos = 0;
        for (s, t, replacement) in ranges {
            if s < pos {
                out.skipped += 1;
                continue;
            }
            after.push_str(&text[pos..s]);
            let at = after.len();
            after.push_str(replacement);
            applied.push(check::Applied {
                before: (s, t),
                after: (at, after.len()),
            });
            pos = t;
        }
        after.push_str(&text[pos..]);
        if after == text {
            continue;
        }
        // A fix never changes what it does not edit, and never breaks the file.
        if let Err(reason) = check::check(text, &after, &applied) {
            out.refused.push((src.path.clone(), reason));
            continue;
        }
        {
            out.patches.push(FilePatch {
                path: src.path.clone(),
                before: text.to_string(),
                after,
            });
        }
    }
    out
}

/// A block map whose every entry the deletions remove goes with them, key and all:
/// `annotations:` left without entries would be `null`, which Kubernetes stores as no
/// annotations and `declared-empty-or-null` reports. Repeated outward (a map left empty by
/// that removal goes too), never for a document's root.
fn remove_emptied_maps<'a>(
    text: &str,
    mut ranges: Vec<(usize, usize, &'a str)>,
) -> Vec<(usize, usize, &'a str)> {
    if !ranges.iter().any(|r| r.2.is_empty()) {
        return ranges;
    }
    let parsed = crate::yaml::parse_str(text, crate::source::FileId(0), &Default::default());
    if parsed.error.is_some() {
        return ranges;
    }
    let deleted = |ranges: &[(usize, usize, &str)], s: usize, t: usize| {
        ranges
            .iter()
            .any(|&(a, b, r)| r.is_empty() && a <= s && t <= b)
    };
    loop {
        let mut widened = None;
        for d in &parsed.docs {
            let mut stack = vec![&d.root];
            while let Some(n) = stack.pop() {
                let Some(entries) = n.as_map() else {
                    if let Some(items) = n.as_seq() {
                        stack.extend(items);
                    }
                    continue;
                };
                for e in entries {
                    stack.push(&e.value);
                    let Some(children) = e.value.as_map() else {
                        continue;
                    };
                    if children.is_empty() || e.value.style == crate::yaml::Style::Flow {
                        continue;
                    }
                    let all_gone = children.iter().all(|c| {
                        let (s, t) = whole_lines(
                            text,
                            c.key.span.start as usize,
                            node_end(text, &c.value).max(c.key.span.end as usize),
                        );
                        deleted(&ranges, s, t)
                    });
                    let (s, t) = whole_lines(
                        text,
                        e.key.span.start as usize,
                        node_end(text, &e.value).max(e.key.span.end as usize),
                    );
                    if all_gone && !deleted(&ranges, s, t) {
                        widened = Some((s, t));
                        break;
                    }
                }
                if widened.is_some() {
                    break;
                }
            }
            if widened.is_some() {
                break;
            }
        }
        let Some((s, t)) = widened else {
            return ranges;
        };
        // The entry's own deletions are inside the wider one.
        ranges.retain(|&(a, b, r)| !(r.is_empty() && s <= a && b <= t));
        ranges.push((s, t, ""));
    }
}

/// Where a node's text ends: a block collection's span is only its start, so its last
/// entry's end (and that one's, down to a scalar); a block scalar's span takes in the next
/// line's indentation, which is left out.
fn node_end(text: &str, n: &crate::yaml::Node) -> usize {
    let mut end = last_end(n).min(text.len());
    while end > 0 && matches!(text.as_bytes()[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    end
}

fn last_end(n: &crate::yaml::Node) -> usize {
    let mut n = n;
    let mut end = n.span.end as usize;
    loop {
        let next = match &n.value {
            crate::yaml::Value::Map(entries) => entries.last().map(|e| {
                end = end.max(e.key.span.end as usize);
                &e.value
            }),
            crate::yaml::Value::Seq(items) => items.last(),
            _ => None,
        };
        match next {
            Some(x) => {
                n = x;
                end = end.max(n.span.end as usize);
            }
            None => return end,
        }
    }
}

/// `--fix --dry-run`: the plan as a unified diff (`git apply`-able from the linted root).
pub fn unified_diff(plan: &FixPlan) -> String {
    let mut out = String::new();
    for p in &plan.patches {
        out.push_str(&diff_text(
            &p.before,
            &p.after,
            &format!("a/{}", p.path),
            &format!("b/{}", p.path),
        ));
    }
    out
}

/// A unified diff with three lines of context; empty when the texts are equal.
pub fn diff_text(before: &str, after: &str, old_name: &str, new_name: &str) -> String {
    if before == after {
        return String::new();
    }
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}

/// Write the patched files under `root`, each atomically: a temporary file beside it, then
/// a rename, so an interrupted run leaves the old file or the new one, never half of one.
pub fn apply(plan: &FixPlan, root: &Path) -> std::io::Result<()> {
    for p in &plan.patches {
        let path = crate::source::join_relative(root, &p.path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!(".{name}.gitops-lint-fix"));
        std::fs::write(&tmp, &p.after)?;
        if let Ok(meta) = std::fs::metadata(&path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        if let Err(e) = std::fs::rename(&tmp, &path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Fix, Severity};
    use crate::source::Span;

    fn with_fix(
        map: &SourceMap,
        file: crate::source::FileId,
        edits: Vec<(usize, usize, &str)>,
    ) -> Finding {
        Finding::new("r", Severity::Error, "m", Span::new(file, 0, 0))
            .with_fix(Fix {
                title: "t".into(),
                safe: true,
                edits: edits
                    .into_iter()
                    .map(|(s, e, r)| Edit {
                        span: Span::new(file, s, e),
                        replacement: r.into(),
                    })
                    .collect(),
            })
            .app(map.path(file))
    }

    #[test]
    fn deletes_whole_lines_and_keeps_the_rest() {
        let map = SourceMap::new();
        let text = "spec:\n  # keep me\n  replicas: 3 # pinned\n  selector: {}\n";
        let file = map.add_text("d.yaml", text);
        let at = text.find("replicas").unwrap_or(0);
        let f = with_fix(&map, file, vec![(at, at + 11, "")]);
        let plan = plan(&[f], &map, false);
        assert_eq!(
            plan.patches[0].after,
            "spec:\n  # keep me\n  selector: {}\n"
        );
        assert!(unified_diff(&plan).contains("-  replicas: 3 # pinned\n"));
    }

    #[test]
    fn merges_duplicates_and_ordered_insertions() {
        let map = SourceMap::new();
        let file = map.add_text("a.yaml", "a: 1\nb: 2\n");
        let f1 = with_fix(&map, file, vec![(5, 5, "x: 0\n"), (10, 10, "c: 3\n")]);
        let f2 = with_fix(&map, file, vec![(5, 5, "x: 0\n"), (5, 5, "y: 0\n")]);
        let plan = plan(&[f1, f2], &map, false);
        assert_eq!(plan.patches[0].after, "a: 1\nx: 0\ny: 0\nb: 2\nc: 3\n");
        assert_eq!(plan.fixed, 2);
    }

    #[test]
    fn a_map_the_fix_empties_is_removed_with_its_key() {
        let map = SourceMap::new();
        let text = "metadata:\n  name: web\n  annotations:\n    deployment.kubernetes.io/revision: '3'\n  labels:\n    app: web\ndata:\n  k: v\n";
        let file = map.add_text("cm.yaml", text);
        let at = text.find("deployment.kubernetes.io").unwrap_or(0);
        let end = text.find("'3'").unwrap_or(0) + 3;
        let f = with_fix(&map, file, vec![(at, end, "")]);
        let plan = plan(&[f], &map, false);
        assert!(plan.refused.is_empty(), "{:?}", plan.refused);
        assert_eq!(plan.skipped, 0);
        assert_eq!(
            plan.patches[0].after,
            "metadata:\n  name: web\n  labels:\n    app: web\ndata:\n  k: v\n"
        );
        // A map with an entry left stays.
        let text = "metadata:\n  annotations:\n    a: '1'\n    b: '2'\n";
        let file = map.add_text("b.yaml", text);
        let at = text.find("a: '1'").unwrap_or(0);
        let f = with_fix(&map, file, vec![(at, at + 6, "")]);
        assert_eq!(plan_of(f, &map), "metadata:\n  annotations:\n    b: '2'\n");
    }

    fn plan_of(f: Finding, map: &SourceMap) -> String {
        plan(&[f], map, false)
            .patches
            .first()
            .map(|p| p.after.clone())
            .unwrap_or_default()
    }

    #[test]
    fn unsafe_fixes_are_not_applied() {
        let map = SourceMap::new();
        let file = map.add_text("a.yaml", "a: 1\n");
        let mut f = with_fix(&map, file, vec![(0, 4, "")]);
        if let Some(fix) = f.fix.as_mut() {
            fix.safe = false;
        }
        assert!(
            plan(std::slice::from_ref(&f), &map, false)
                .patches
                .is_empty()
        );
        assert_eq!(plan(&[f], &map, true).patches[0].after, "");
    }
}
