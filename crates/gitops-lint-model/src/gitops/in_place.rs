//! YAML held in a string scalar (a ConfigMap's `values.yaml: |`, an Application's
//! `helm.values`, an `argocd-cm` entry), parsed so that each value keeps its own line in the
//! repo file when the string is a literal block, else points at the scalar.

use crate::source::{Origin, SourceFile, SourceMap, Span};
use crate::yaml::{Limits, Node, Style, Value, parse_str};

/// The values documents of `text`, written as the scalar `node`. A literal block scalar
/// (`values.yaml: |`) is parsed in place — its file with everything else blanked, so each
/// value keeps its own line — when that reads as the same values; anything else (folded or
/// quoted text, base64) is parsed on its own and every value points at the scalar.
pub fn located_roots(
    node: &Node,
    text: &str,
    decoded: bool,
    map: &SourceMap,
) -> Result<Vec<Node>, String> {
    let own = SourceFile::new(
        format!("{} (values)", map.path(node.span.file)),
        text.to_string(),
        Origin::Virtual,
    );
    let own_file = map.add(own);
    let parsed = parse_str(text, own_file, &Limits::default());
    if let Some(e) = parsed.error {
        return Err(crate::render::helm::values::go_yaml_error(&e, text));
    }
    let roots: Vec<Node> = parsed.docs.into_iter().map(|d| d.root).collect();
    if !decoded
        && node.style == Style::Literal
        && let Some(in_place) = in_place_roots(node, map)
        && in_place.len() == roots.len()
        && in_place
            .iter()
            .zip(&roots)
            .all(|(a, b)| a.to_json() == b.to_json())
    {
        return Ok(in_place);
    }
    Ok(roots
        .into_iter()
        .map(|mut r| {
            respan(&mut r, node.span);
            r
        })
        .collect())
}

/// Parse a literal block scalar's content where it stands in its file.
pub fn in_place_roots(node: &Node, map: &SourceMap) -> Option<Vec<Node>> {
    let file = map.get(node.span.file);
    let src = file.text.as_bytes();
    let (mut start, end) = (
        node.span.start as usize,
        (node.span.end as usize).min(src.len()),
    );
    // The span starts at the `|` header; the content starts on the next line.
    if src.get(start) == Some(&b'|') {
        start += src[start..end].iter().position(|b| *b == b'\n')? + 1;
    }
    let shadow: Vec<u8> = src
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (start..end).contains(&i) || *b == b'\n' {
                *b
            } else {
                b' '
            }
        })
        .collect();
    let shadow = String::from_utf8(shadow).ok()?;
    let parsed = parse_str(&shadow, node.span.file, &Limits::default());
    if parsed.error.is_some() {
        return None;
    }
    Some(parsed.docs.into_iter().map(|d| d.root).collect())
}

/// Point every node of `n` at `span`.
fn respan(n: &mut Node, span: Span) {
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        n.span = span;
        match &mut n.value {
            Value::Seq(items) => stack.extend(items.iter_mut()),
            Value::Map(entries) => {
                for e in entries.iter_mut() {
                    e.key.span = span;
                    stack.push(&mut e.value);
                }
            }
            _ => {}
        }
    }
}
