//! Small edits on span-carrying YAML trees that every transformer needs.

use crate::source::Span;
use crate::yaml::{Entry, Node, Related, Value};
use std::sync::Arc;

/// A new map node.
pub fn map(span: Span) -> Node {
    let mut n = Node::new(Value::Map(Vec::new()), span);
    n.style = crate::yaml::Style::Block;
    n
}

pub fn string(s: &str, span: Span) -> Node {
    Node::string(s, span)
}

/// The value under `key`, inserted as `make()` when absent (or when present but null).
pub fn entry_or_insert<'a>(
    node: &'a mut Node,
    key: &str,
    make: impl FnOnce() -> Node,
) -> Option<&'a mut Node> {
    if node.is_null() {
        node.value = Value::Map(Vec::new());
    }
    let Value::Map(entries) = &mut node.value else {
        return None;
    };
    let pos = entries.iter().rposition(|e| e.key.key_is(key));
    let idx = match pos {
        Some(i) => {
            if entries[i].value.is_null() {
                let span = entries[i].value.span;
                let mut fresh = make();
                if fresh.span == Span::default() {
                    fresh.span = span;
                }
                entries[i].value = fresh;
            }
            i
        }
        None => {
            let value = make();
            let key_node = Node::string(key, value.span);
            entries.push(Entry {
                key: key_node,
                value,
            });
            entries.len() - 1
        }
    };
    Some(&mut entries[idx].value)
}

/// Set `key` to `value`, replacing any entry with that key.
pub fn set(node: &mut Node, key: &str, value: Node) {
    if node.is_null() {
        node.value = Value::Map(Vec::new());
    }
    if let Value::Map(entries) = &mut node.value {
        if let Some(e) = entries.iter_mut().rev().find(|e| e.key.key_is(key)) {
            e.value = value;
        } else {
            let key_node = Node::string(key, value.span);
            entries.push(Entry {
                key: key_node,
                value,
            });
        }
    }
}

pub fn remove(node: &mut Node, key: &str) -> Option<Node> {
    if let Value::Map(entries) = &mut node.value {
        let pos = entries.iter().rposition(|e| e.key.key_is(key))?;
        return Some(entries.remove(pos).value);
    }
    None
}

/// Replace a scalar's value, pointing it at the place that set it and keeping the old
/// location as a related "base value" when it came from elsewhere.
pub fn replace_scalar(node: &mut Node, value: Value, span: Span, label: &str) {
    let old = node.span;
    if old != span && old != Span::default() {
        push_related(node, old, label);
    }
    node.value = value;
    node.span = span;
    node.set_raw(None);
    node.set_tag(None);
    node.style = crate::yaml::Style::Plain;
}

pub fn push_related(node: &mut Node, span: Span, label: &str) {
    let mut list: Vec<Related> = node.related.as_deref().cloned().unwrap_or_default();
    if !list.iter().any(|r| r.span == span) {
        list.push(Related {
            span,
            label: label.to_string(),
        });
    }
    node.related = Some(Arc::new(list));
}

/// Compare two nodes as data (spans, styles and key order ignored).
pub fn same_data(a: &Node, b: &Node) -> bool {
    a.to_json() == b.to_json()
}

/// Scalar text of a node for string comparisons.
pub fn text(node: &Node) -> Option<String> {
    node.scalar_text()
}

/// Point every node of a tree at `span` (for content a transformer generated).
pub fn set_spans(node: &mut Node, span: Span) {
    node.span = span;
    match &mut node.value {
        Value::Map(entries) => {
            for e in entries {
                e.key.span = span;
                set_spans(&mut e.value, span);
            }
        }
        Value::Seq(items) => {
            for i in items {
                set_spans(i, span);
            }
        }
        _ => {}
    }
}
