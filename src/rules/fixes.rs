//! Source edits the ownership rules offer: deleting a declared entry with its whole lines,
//! replacing a scalar in place.

use crate::finding::Edit;
use crate::source::{SourceMap, Span};
use crate::yaml::Entry;

/// Can a fix edit this file as YAML? Helm templates are Go templates: a line there may be
/// produced by a loop or a condition, so automatic edits are not safe.
pub fn editable(map: &SourceMap, file: crate::source::FileId) -> bool {
    let path = map.path(file);
    !(path.contains("templates/") || path.ends_with(".tpl") || path.contains('#'))
}

/// Delete a `key: value` entry written in one file, whole lines included, so the YAML
/// around it stays valid. None when key and value come from different files (rendered)
/// or the entry shares its first line with something else (a flow map, a list dash).
pub fn delete_entry(map: &SourceMap, entry: &Entry) -> Option<Edit> {
    let key = entry.key.span;
    let value = entry.value.full_span();
    if key.file != value.file || !editable(map, key.file) {
        return None;
    }
    let file = map.get(key.file);
    let (key_start, value_end) = (key.start as usize, value.end as usize);
    let first = file.line_of(key_start);
    let last = file.line_of(value_end.saturating_sub(1).max(key_start));
    let start = file.line_range(first).start;
    let before = file.text.get(start..key_start)?;
    if !before.trim().is_empty() {
        return None;
    }
    let end = file.line_range(last).end;
    // Include the line break so no blank line stays behind.
    let rest = file.text.get(end..).unwrap_or("");
    let end = if rest.starts_with("\r\n") {
        end + 2
    } else if rest.starts_with('\n') {
        end + 1
    } else {
        end
    };
    Some(Edit {
        span: Span::new(key.file, start, end),
        replacement: String::new(),
    })
}

/// Delete a block-sequence item (`- name: x` and its indented lines). None for flow
/// sequences or items that share their first line with something other than the dash.
pub fn delete_seq_item(map: &SourceMap, item: &crate::yaml::Node) -> Option<Edit> {
    let span = item.full_span();
    if !editable(map, span.file) {
        return None;
    }
    let file = map.get(span.file);
    let (start_off, end_off) = (span.start as usize, span.end as usize);
    let first = file.line_of(start_off);
    let last = file.line_of(end_off.saturating_sub(1).max(start_off));
    let start = file.line_range(first).start;
    let before = file.text.get(start..start_off)?.trim();
    if before != "-" {
        return None;
    }
    let end = file.line_range(last).end;
    let rest = file.text.get(end..).unwrap_or("");
    let end = if rest.starts_with("\r\n") {
        end + 2
    } else if rest.starts_with('\n') {
        end + 1
    } else {
        end
    };
    Some(Edit {
        span: Span::new(span.file, start, end),
        replacement: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_str};

    fn first_entry_at(map: &SourceMap, path: &str, text: &str, key: &str) -> Option<Edit> {
        let id = map.add_text(path, text.to_string());
        let parsed = parse_str(text, id, &Limits::default());
        let root = parsed.docs.into_iter().next()?.root;
        let mut found = None;
        root.walk(|_, node| {
            if found.is_none()
                && let Some(e) = node.entry(key)
            {
                found = Some(e.clone());
            }
        });
        delete_entry(map, &found?)
    }

    #[test]
    fn deletes_whole_lines_only_where_safe() {
        let map = SourceMap::new();
        let text = "spec:\n  ttl: 30\n  template:\n    a: 1\n";
        let edit = first_entry_at(&map, "job.yaml", text, "ttl");
        let mut out = text.to_string();
        if let Some(e) = &edit {
            out.replace_range(e.span.start as usize..e.span.end as usize, "");
        }
        assert_eq!(out, "spec:\n  template:\n    a: 1\n");
        let flow = "spec: {ttl: 30, b: 1}\n";
        assert!(first_entry_at(&map, "flow.yaml", flow, "ttl").is_none());
        assert!(first_entry_at(&map, "chart/templates/job.yaml", text, "ttl").is_none());
    }
}
