//! Safe fixes that edit an Argo CD Application as written: add a sync option, add a scoped
//! `ignoreDifferences` entry. Edits are text insertions at line boundaries that follow the
//! file's own indentation, so everything else stays byte for byte. When the layout is not
//! one we can extend confidently (flow mappings, ApplicationSet templates), no fix is
//! offered.

use crate::finding::Edit;
use crate::gitops::ArgoApp;
use crate::source::{SourceFile, SourceMap, Span};
use crate::yaml::{Node, Style};

/// Start of the line after the one holding `span`'s last byte, and whether a newline must
/// be written first (the file does not end with one).
fn after_last_line(file: &SourceFile, span: Span) -> (usize, bool) {
    let last = (span.end as usize)
        .saturating_sub(1)
        .max(span.start as usize);
    let line = file.line_of(last);
    let end = file.line_range(line).end;
    let bytes = file.text.as_bytes();
    let mut next = end;
    while next < bytes.len() && (bytes[next] == b'\r' || bytes[next] == b'\n') {
        next += 1;
        if bytes[next - 1] == b'\n' {
            return (next, false);
        }
    }
    (next, true)
}

/// The indentation before `offset` when only spaces precede it on its line.
fn indent_at(file: &SourceFile, offset: usize) -> Option<String> {
    let line = file.line_of(offset);
    let start = file.line_range(line).start;
    let before = file.text.get(start..offset)?;
    before.chars().all(|c| c == ' ').then(|| before.to_string())
}

/// The indentation of the `- ` that starts the sequence item whose value begins at `offset`.
fn dash_indent_at(file: &SourceFile, offset: usize) -> Option<String> {
    let line = file.line_of(offset);
    let start = file.line_range(line).start;
    let before = file.text.get(start..offset)?;
    let dash = before.find('-')?;
    (before[..dash].chars().all(|c| c == ' ') && before[dash + 1..].trim().is_empty())
        .then(|| before[..dash].to_string())
}

fn insert(id: Span, at: (usize, bool), text: String) -> Edit {
    let (offset, newline_first) = at;
    Edit {
        span: Span::new(id.file, offset, offset),
        replacement: if newline_first {
            format!("\n{text}")
        } else {
            text
        },
    }
}

/// The Application's `spec` when it is an indented block mapping of a plain file.
fn block_spec<'a>(map: &SourceMap, argo: &'a ArgoApp) -> Option<&'a Node> {
    if argo.from_appset || !written_as_is(map, argo) {
        return None;
    }
    let spec = argo.decl.root.get("spec")?;
    (spec.style == Style::Block && spec.as_map().is_some_and(|m| !m.is_empty())).then_some(spec)
}

/// Whether the Application's text is what the file holds: one a chart templates (an
/// app-of-apps chart ranging over its values) prints its name from an action, and an edit
/// there would land in every Application the template makes.
fn written_as_is(map: &SourceMap, argo: &ArgoApp) -> bool {
    let Some(name) = argo.decl.root.get_path(&["metadata", "name"]) else {
        return false;
    };
    let file = map.get(name.span.file);
    let text = file
        .text
        .get(name.span.start as usize..name.span.end as usize);
    text.map(|t| t.trim_matches(['"', '\''])) == Some(argo.decl.name.as_str())
}

/// Indentation of the first key of a block mapping.
fn map_indent(file: &SourceFile, map: &Node) -> Option<String> {
    let first = map.as_map()?.first()?;
    indent_at(file, first.key.span.start as usize)
}

/// Add `option` to `spec.syncPolicy.syncOptions` (creating the list or the policy).
pub fn add_sync_option(map: &SourceMap, argo: &ArgoApp, option: &str) -> Option<Edit> {
    let spec = block_spec(map, argo)?;
    let file = map.get(spec.span.file);
    let Some(sp) = spec.get("syncPolicy") else {
        let ind = map_indent(&file, spec)?;
        let at = after_last_line(&file, spec.full_span());
        return Some(insert(
            spec.span,
            at,
            format!("{ind}syncPolicy:\n{ind}  syncOptions:\n{ind}    - {option}\n"),
        ));
    };
    match sp.get("syncOptions") {
        Some(opts) if opts.style == Style::Flow => {
            let items = opts.as_seq()?;
            let at = match items.last() {
                Some(last) => (last.full_span().end as usize, format!(", {option}")),
                None => {
                    let open = opts.span.start as usize;
                    (file.text.get(open..open + 1) == Some("["))
                        .then_some((open + 1, option.to_string()))?
                }
            };
            Some(Edit {
                span: Span::new(spec.span.file, at.0, at.0),
                replacement: at.1,
            })
        }
        Some(opts) => {
            let last = opts.as_seq()?.last()?;
            let ind = dash_indent_at(&file, last.span.start as usize)?;
            let at = after_last_line(&file, last.full_span());
            Some(insert(spec.span, at, format!("{ind}- {option}\n")))
        }
        None => {
            if sp.style != Style::Block {
                return None;
            }
            let ind = map_indent(&file, sp)?;
            let at = after_last_line(&file, sp.full_span());
            Some(insert(
                spec.span,
                at,
                format!("{ind}syncOptions:\n{ind}  - {option}\n"),
            ))
        }
    }
}

/// A scalar as block YAML writes it without changing its meaning: plain when Kubernetes'
/// YAML 1.1 reader reads it back as the same string, double-quoted otherwise.
pub fn yaml_scalar(s: &str) -> String {
    let syntax_ok = s
        .chars()
        .next()
        .is_some_and(|c| !"-?:,[]{}#&*!|>'\"%@`".contains(c) && !c.is_whitespace())
        && !s.ends_with(|c: char| c.is_whitespace() || c == ':')
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.chars().any(|c| c.is_control() || "{}[],".contains(c));
    let same = matches!(crate::yaml::resolve::resolve_plain(s), crate::yaml::Value::String(ref t) if t == s);
    if syntax_ok && same {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
    }
}

/// Add one `ignoreDifferences` item (given as lines relative to the item, the first starting
/// the item) preceded by a `# reason:` comment. Returns the edits (the list header, when the
/// list is new, is its own edit so that several items added in one run share it).
pub fn add_ignore_entry(
    map: &SourceMap,
    argo: &ArgoApp,
    reason: &str,
    item: &[String],
) -> Option<Vec<Edit>> {
    let spec = block_spec(map, argo)?;
    let file = map.get(spec.span.file);
    let render = |ind: &str| {
        let mut text = format!("{ind}# reason: {reason}\n");
        for (i, line) in item.iter().enumerate() {
            let lead = if i == 0 { "- " } else { "  " };
            text.push_str(&format!("{ind}{lead}{line}\n"));
        }
        text
    };
    match spec.get("ignoreDifferences") {
        Some(list) => {
            if list.style == Style::Flow {
                return None;
            }
            let last = list.as_seq()?.last()?;
            let ind = dash_indent_at(&file, last.span.start as usize)?;
            let at = after_last_line(&file, last.full_span());
            Some(vec![insert(spec.span, at, render(&ind))])
        }
        None => {
            // Before the spec's first key: a point no other fix inserts at, so the new list
            // cannot end up inside another block added in the same run.
            let first = spec.as_map()?.first()?;
            let ind = indent_at(&file, first.key.span.start as usize)?;
            let mut line = file.line_of(first.key.span.start as usize);
            // Comment lines directly above the first key belong to it: insert above them.
            while line > 1 && file.line_text(line - 1).trim_start().starts_with('#') {
                line -= 1;
            }
            let at = (file.line_range(line).start, false);
            Some(vec![
                insert(spec.span, at, format!("{ind}ignoreDifferences:\n")),
                insert(spec.span, at, render(&format!("{ind}  "))),
            ])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gitops::argo::read_app_spec;
    use crate::object::Object;
    use crate::yaml::{Limits, parse_str};

    fn apply(text: &str, edits: &[Edit]) -> String {
        let mut out = text.to_string();
        // Back to front; insertions at one point keep their order.
        let mut sorted: Vec<(usize, &Edit)> = edits.iter().enumerate().collect();
        sorted.sort_by_key(|(i, e)| std::cmp::Reverse((e.span.start, *i)));
        for (_, e) in sorted {
            out.replace_range(e.span.start as usize..e.span.end as usize, &e.replacement);
        }
        out
    }

    fn app(map: &SourceMap, text: &str) -> ArgoApp {
        let id = map.add_text("app.yaml", text.to_string());
        let parsed = parse_str(text, id, &Limits::default());
        let root = parsed.docs.into_iter().next().map(|d| d.root);
        let obj = root.and_then(Object::from_node).expect("object");
        let spec = obj.root.get("spec").cloned().expect("spec");
        read_app_spec(&obj, &spec, false, true)
    }

    const HEAD: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  project: default\n";

    #[test]
    fn new_list_goes_above_the_first_keys_comments() {
        let text = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  # the team's project\n  project: default\n";
        let map = SourceMap::new();
        let a = app(&map, text);
        let edits = add_ignore_entry(&map, &a, "r", &["kind: Secret".to_string()]).expect("edits");
        assert!(apply(text, &edits).ends_with("spec:\n  ignoreDifferences:\n    # reason: r\n    - kind: Secret\n  # the team's project\n  project: default\n"));
    }

    #[test]
    fn sync_option_in_each_layout() {
        let cases = [
            (
                "",
                "  syncPolicy:\n    syncOptions:\n      - RespectIgnoreDifferences=true\n",
            ),
            (
                "  syncPolicy:\n    automated: {}\n",
                "  syncPolicy:\n    automated: {}\n    syncOptions:\n      - RespectIgnoreDifferences=true\n",
            ),
            (
                "  syncPolicy:\n    syncOptions:\n    - CreateNamespace=true # why\n",
                "  syncPolicy:\n    syncOptions:\n    - CreateNamespace=true # why\n    - RespectIgnoreDifferences=true\n",
            ),
            (
                "  syncPolicy:\n    syncOptions: [CreateNamespace=true]\n",
                "  syncPolicy:\n    syncOptions: [CreateNamespace=true, RespectIgnoreDifferences=true]\n",
            ),
        ];
        for (tail, want) in cases {
            let map = SourceMap::new();
            let text = format!("{HEAD}{tail}");
            let a = app(&map, &text);
            let e = add_sync_option(&map, &a, "RespectIgnoreDifferences=true").expect("edit");
            assert_eq!(apply(&text, &[e]), format!("{HEAD}{want}"), "{tail}");
        }
    }

    #[test]
    fn ignore_entry_new_list_and_append() {
        let map = SourceMap::new();
        let a = app(&map, HEAD);
        let item = ["group: apps".to_string(), "kind: Deployment".to_string()];
        let edits = add_ignore_entry(&map, &a, "HPA owns it", &item).expect("edits");
        assert_eq!(
            apply(HEAD, &edits),
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  ignoreDifferences:\n    # reason: HPA owns it\n    - group: apps\n      kind: Deployment\n  project: default\n"
        );
        let text = format!("{HEAD}  ignoreDifferences:\n  - kind: Secret # x\n");
        let map = SourceMap::new();
        let a = app(&map, &text);
        let edits = add_ignore_entry(&map, &a, "r", &item).expect("edits");
        assert!(apply(&text, &edits).ends_with(
            "  - kind: Secret # x\n  # reason: r\n  - group: apps\n    kind: Deployment\n"
        ));
        assert_eq!(yaml_scalar("payments"), "payments");
        assert_eq!(yaml_scalar("yes"), "\"yes\"");
        assert_eq!(yaml_scalar(""), "\"\"");
        assert_eq!(
            yaml_scalar("registry.example.com/a:1.0"),
            "registry.example.com/a:1.0"
        );
        assert_eq!(
            yaml_scalar("RespectIgnoreDifferences=true"),
            "RespectIgnoreDifferences=true"
        );
        assert_eq!(yaml_scalar("0644"), "\"0644\"");
        assert_eq!(yaml_scalar("a: b"), "\"a: b\"");
        assert_eq!(yaml_scalar("- x"), "\"- x\"");
    }
}
