//! Comparing one object's fields across two revisions as the API server does: maps by key
//! (order does not matter), lists by position, scalars by their resolved value (`"1"` and `1`
//! differ, `yes` and `true` under YAML 1.1 do not). Spans come from the head side, so a
//! difference is located on the line the change wrote.

use crate::source::Span;
use crate::yaml::{Node, Value};

/// Longest value shown in a message.
const MAX_SHOWN_CHARS: usize = 120;

/// The first place two values differ.
pub struct Difference<'a> {
    /// Dotted path below the compared field (`spec.containers[0].image`), empty at the field.
    pub path: String,
    pub before: Option<&'a Node>,
    pub after: Option<&'a Node>,
    /// Where the head writes it: the differing node, or the map that lost a key.
    pub at: Span,
    /// Secondary places of the head node (the values-file line a template printed).
    pub related: Option<&'a Node>,
}

fn same_scalar(a: &Node, b: &Node) -> bool {
    a.to_json() == b.to_json()
}

/// The first difference between `before` and `after` in document order of `after` (keys
/// `after` dropped come last), or `None` when they are equal.
pub fn first_difference<'a>(before: &'a Node, after: &'a Node) -> Option<Difference<'a>> {
    let mut path = String::new();
    walk(before, after, &mut path, 0)
}

fn walk<'a>(
    before: &'a Node,
    after: &'a Node,
    path: &mut String,
    depth: usize,
) -> Option<Difference<'a>> {
    // Node trees are bounded by the parser's depth limit; this guards hand-built ones too.
    if depth > 512 {
        return None;
    }
    let here = |path: &String| Difference {
        path: path.clone(),
        before: Some(before),
        after: Some(after),
        at: after.span,
        related: Some(after),
    };
    match (&before.value, &after.value) {
        (Value::Map(b), Value::Map(a)) => {
            for entry in a {
                let key = entry.key.key_str();
                let len = path.len();
                push_key(path, &key);
                let found = match before.get(&key) {
                    Some(old) => walk(old, &entry.value, path, depth + 1),
                    None => Some(Difference {
                        path: path.clone(),
                        before: None,
                        after: Some(&entry.value),
                        at: entry.key.span.cover(entry.value.full_span()),
                        related: Some(&entry.value),
                    }),
                };
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            for entry in b {
                let key = entry.key.key_str();
                if after.get(&key).is_none() {
                    let len = path.len();
                    push_key(path, &key);
                    let d = Difference {
                        path: path.clone(),
                        before: Some(&entry.value),
                        after: None,
                        at: after.span,
                        related: None,
                    };
                    path.truncate(len);
                    return Some(d);
                }
            }
            None
        }
        (Value::Seq(b), Value::Seq(a)) => {
            for (i, item) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = match b.get(i) {
                    Some(old) => walk(old, item, path, depth + 1),
                    None => Some(Difference {
                        path: path.clone(),
                        before: None,
                        after: Some(item),
                        at: item.full_span(),
                        related: Some(item),
                    }),
                };
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            if b.len() > a.len() {
                let len = path.len();
                path.push_str(&format!("[{}]", a.len()));
                let d = Difference {
                    path: path.clone(),
                    before: b.get(a.len()),
                    after: None,
                    at: after.span,
                    related: None,
                };
                path.truncate(len);
                return Some(d);
            }
            None
        }
        (Value::Map(_), _) | (_, Value::Map(_)) | (Value::Seq(_), _) | (_, Value::Seq(_)) => {
            Some(here(path))
        }
        _ => (!same_scalar(before, after)).then(|| here(path)),
    }
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// A value for a message: compact JSON (`{"app":"web"}`, `"10Gi"`), cut at 120 characters;
/// `(absent)` for no value.
pub fn shown(node: Option<&Node>) -> String {
    let Some(node) = node else {
        return "(absent)".to_string();
    };
    let text = serde_json::to_string(&node.to_json()).unwrap_or_default();
    if text.chars().count() <= MAX_SHOWN_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_SHOWN_CHARS).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn node(text: &str) -> Node {
        crate::yaml::parse_str(text, FileId(0), &Default::default())
            .docs
            .remove(0)
            .root
    }

    #[test]
    fn key_order_does_not_count_and_values_do() {
        // (`y` would be YAML 1.1's true: letters that stay strings.)
        let a = node("a: 1\nb: [p, q]\n");
        let b = node("b: [p, q]\na: 1\n");
        assert!(first_difference(&a, &b).is_none());
        let c = node("b: [p, r]\na: 1\n");
        let d = first_difference(&a, &c).map(|d| (d.path, shown(d.before), shown(d.after)));
        assert_eq!(
            d,
            Some(("b[1]".to_string(), "\"q\"".to_string(), "\"r\"".to_string()))
        );
    }

    #[test]
    fn added_and_removed_keys_and_items() {
        let a = node("m:\n  p: 1\n");
        let b = node("m:\n  p: 1\n  q: 2\n");
        let d = first_difference(&a, &b).map(|d| (d.path, shown(d.before), shown(d.after)));
        assert_eq!(
            d,
            Some(("m.q".to_string(), "(absent)".to_string(), "2".to_string()))
        );
        let d = first_difference(&b, &a).map(|d| (d.path, shown(d.before), shown(d.after)));
        assert_eq!(
            d,
            Some(("m.q".to_string(), "2".to_string(), "(absent)".to_string()))
        );
        // Typed scalars: the string "1" is not the number 1.
        assert!(first_difference(&node("a: \"1\"\n"), &node("a: 1\n")).is_some());
        assert!(first_difference(&node("a: yes\n"), &node("a: true\n")).is_none());
    }
}
