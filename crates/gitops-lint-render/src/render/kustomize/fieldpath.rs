//! kyaml field paths as replacements use them: `spec.template.spec.containers.[name=app].image`,
//! `metadata.annotations.[a.b/c]`, `*` wildcards and list indexes.

use super::tree;
use crate::source::Span;
use crate::yaml::{Entry, Node, Value};

#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    Field(String),
    Match(String, String),
    Index(usize),
    Any,
}

pub fn parse(path: &str) -> Vec<Seg> {
    let mut raw = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth -= 1;
                cur.push(c);
            }
            '.' if depth == 0 => raw.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    raw.push(cur);
    // `containers[0]` (vars' syntax) is the field then the index.
    let raw: Vec<String> = raw
        .into_iter()
        .flat_map(|s| {
            if !s.starts_with('[')
                && let Some(open) = s.find('[')
                && s.ends_with(']')
                && s[open + 1..s.len() - 1].bytes().all(|b| b.is_ascii_digit())
            {
                return vec![s[..open].to_string(), s[open + 1..s.len() - 1].to_string()];
            }
            vec![s]
        })
        .collect();
    raw.into_iter()
        .filter(|s| !s.is_empty())
        .map(|s| {
            if let Some(inner) = s.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
                match inner.split_once('=') {
                    Some((k, v)) => Seg::Match(k.into(), v.into()),
                    None => Seg::Field(inner.into()),
                }
            } else if s == "*" {
                Seg::Any
            } else if let Ok(i) = s.parse::<usize>() {
                Seg::Index(i)
            } else {
                Seg::Field(s)
            }
        })
        .collect()
}

/// Nodes at the path (read only).
pub fn lookup<'a>(node: &'a Node, segs: &[Seg]) -> Vec<&'a Node> {
    let Some((first, rest)) = segs.split_first() else {
        return vec![node];
    };
    match (first, &node.value) {
        (Seg::Field(f), Value::Map(_)) => node.get(f).map(|c| lookup(c, rest)).unwrap_or_default(),
        (Seg::Index(i), Value::Seq(items)) => {
            items.get(*i).map(|c| lookup(c, rest)).unwrap_or_default()
        }
        (Seg::Field(f), Value::Seq(items)) if f.parse::<usize>().is_ok() => items
            .get(f.parse::<usize>().unwrap_or(0))
            .map(|c| lookup(c, rest))
            .unwrap_or_default(),
        (Seg::Match(k, v), Value::Seq(items)) => items
            .iter()
            .filter(|i| i.get(k).and_then(tree::text).as_deref() == Some(v.as_str()))
            .flat_map(|i| lookup(i, rest))
            .collect(),
        (Seg::Any, Value::Seq(items)) => items.iter().flat_map(|i| lookup(i, rest)).collect(),
        (Seg::Any, Value::Map(entries)) => entries
            .iter()
            .flat_map(|e| lookup(&e.value, rest))
            .collect(),
        _ => Vec::new(),
    }
}

/// Apply `f` to each node at the path, creating missing map fields (and `[k=v]` list items)
/// when `create` is set. Returns how many nodes were visited.
pub fn visit_mut(
    node: &mut Node,
    segs: &[Seg],
    create: bool,
    span: Span,
    f: &mut dyn FnMut(&mut Node),
) -> usize {
    let Some((first, rest)) = segs.split_first() else {
        f(node);
        return 1;
    };
    if create && node.is_null() {
        node.value = match first {
            Seg::Field(_) => Value::Map(Vec::new()),
            _ => Value::Seq(Vec::new()),
        };
    }
    match first {
        Seg::Field(fname) => match &mut node.value {
            Value::Map(entries) => {
                if !entries.iter().any(|e| e.key.key_is(fname)) {
                    if !create {
                        return 0;
                    }
                    entries.push(Entry {
                        key: Node::string(fname.clone(), span),
                        value: Node::new(Value::Null, span),
                    });
                }
                match node.get_mut(fname) {
                    Some(c) => visit_mut(c, rest, create, span, f),
                    None => 0,
                }
            }
            Value::Seq(items) => match fname.parse::<usize>() {
                Ok(i) => items
                    .get_mut(i)
                    .map(|c| visit_mut(c, rest, create, span, f))
                    .unwrap_or(0),
                Err(_) => 0,
            },
            _ => 0,
        },
        Seg::Index(i) => match &mut node.value {
            Value::Seq(items) => items
                .get_mut(*i)
                .map(|c| visit_mut(c, rest, create, span, f))
                .unwrap_or(0),
            _ => 0,
        },
        Seg::Match(k, v) => match &mut node.value {
            Value::Seq(items) => {
                let mut n = 0;
                let mut found = false;
                for i in items.iter_mut() {
                    if i.get(k).and_then(tree::text).as_deref() == Some(v.as_str()) {
                        found = true;
                        n += visit_mut(i, rest, create, span, f);
                    }
                }
                if !found && create {
                    let mut item = tree::map(span);
                    tree::set(&mut item, k, tree::string(v, span));
                    n += visit_mut(&mut item, rest, create, span, f);
                    items.push(item);
                }
                n
            }
            _ => 0,
        },
        Seg::Any => match &mut node.value {
            Value::Seq(items) => items
                .iter_mut()
                .map(|i| visit_mut(i, rest, create, span, f))
                .sum(),
            Value::Map(entries) => entries
                .iter_mut()
                .map(|e| visit_mut(&mut e.value, rest, create, span, f))
                .sum(),
            _ => 0,
        },
    }
}
