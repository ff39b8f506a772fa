//! The builtin `ValueAddTransformer` (kustomize examples/valueAdd.md): one string value
//! added at each target's field path, `metadata/namespace` through the namespace
//! transformer, others set as a scalar (created when missing), or inserted into a file path
//! at `filePathPosition`. Without `value:` the value is the kustomization directory's name.

use super::acc::{Acc, Builder, Fail, failed};
use super::kustomization::{Item, Kustomization};
use super::namespace::namespace_meta;
use super::selector::Selector;
use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};

struct Target {
    selector: Option<Node>,
    field_path: String,
    position: i64,
    span: Span,
}

pub fn run(b: &Builder, k: &Kustomization, acc: &mut Acc, cfg: &Node) -> Result<(), Fail> {
    let at = cfg.span;
    let value_node = cfg.get("value");
    let mut value = value_node
        .and_then(tree::text)
        .unwrap_or_default()
        .trim()
        .to_string();
    if value.is_empty() {
        value = k.dir.rsplit('/').next().unwrap_or_default().to_string();
    }
    let value_span = value_node.map_or(at, |n| n.span);
    let mut targets = targets_of(cfg.get("targets"));
    if let Some(p) = cfg.get("targetFilePath") {
        let item = Item {
            text: tree::text(p).unwrap_or_default(),
            span: p.span,
        };
        for doc in b.load_docs(k, &item)? {
            targets.extend(targets_of(doc.get("targets")));
        }
    }
    if targets.is_empty() {
        return Err(failed(at, "must specify at least one target"));
    }
    for t in &targets {
        if t.field_path.is_empty() {
            return Err(failed(t.span, "fieldPath cannot be empty"));
        }
        if t.position < 0 {
            return Err(failed(
                t.span,
                format!(
                    "value of FilePathPosition ({}) cannot be negative",
                    t.position
                ),
            ));
        }
    }
    for t in &targets {
        let sel = match &t.selector {
            Some(s) => Some(
                Selector::from_node(s)
                    .compile()
                    .map_err(|e| failed(s.span, format!("invalid target selector: {e}")))?,
            ),
            None => None,
        };
        for r in acc.resources.iter_mut() {
            if sel.as_ref().is_some_and(|s| !s.matches(r)) {
                continue;
            }
            if t.field_path == "metadata/namespace" {
                namespace_meta(r, &value, value_span)?;
                continue;
            }
            let fields = split_field_path(&t.field_path);
            let Some(slot) = lookup_create(&mut r.root, &fields, value_span) else {
                return Err(failed(
                    t.span,
                    format!(
                        "cannot add a value at '{}' of {}",
                        t.field_path,
                        r.id_string()
                    ),
                ));
            };
            if slot.as_map().is_some() || slot.as_seq().is_some() {
                return Err(failed(
                    t.span,
                    format!(
                        "wrong node kind: expected ScalarNode at '{}' of {}",
                        t.field_path,
                        r.id_string()
                    ),
                ));
            }
            let new = if t.position > 0 {
                let old = tree::text(slot).unwrap_or_default();
                insert_path_part(&old, (t.position - 1) as usize, &value)
            } else {
                value.clone()
            };
            tree::replace_scalar(
                slot,
                Value::String(new),
                value_span,
                "value before ValueAdd",
            );
        }
    }
    Ok(())
}

fn targets_of(n: Option<&Node>) -> Vec<Target> {
    n.and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .map(|t| Target {
            selector: t.get("selector").filter(|s| !s.is_null()).cloned(),
            field_path: t.get("fieldPath").and_then(tree::text).unwrap_or_default(),
            position: t
                .get("filePathPosition")
                .and_then(tree::text)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
            span: t.span,
        })
        .collect()
}

/// `a/b\/c/d` → `[a, b/c, d]`: a backslash before `/` keeps it in the field name.
fn split_field_path(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in path.split('/') {
        match out.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push('/');
                last.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}

/// The node at `fields`, maps created on the way (kyaml `LookupCreate`); `[k=v]` selects
/// the list item whose `k` is `v`, appended when missing.
fn lookup_create<'a>(node: &'a mut Node, fields: &[String], span: Span) -> Option<&'a mut Node> {
    let mut cur = node;
    for f in fields {
        if let Some(sel) = f.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            let (k, v) = sel.split_once('=')?;
            if cur.is_null() {
                cur.value = Value::Seq(Vec::new());
            }
            let Value::Seq(items) = &mut cur.value else {
                return None;
            };
            let pos = items
                .iter()
                .position(|i| i.get(k).and_then(tree::text).as_deref() == Some(v));
            let idx = match pos {
                Some(i) => i,
                None => {
                    let mut item = tree::map(span);
                    tree::set(&mut item, k, tree::string(v, span));
                    items.push(item);
                    items.len() - 1
                }
            };
            cur = &mut items[idx];
        } else {
            if cur.as_map().is_none() && !cur.is_null() {
                return None;
            }
            cur = tree::entry_or_insert(cur, f, || Node::new(Value::Null, span))?;
        }
    }
    Some(cur)
}

/// kyaml's `filesys.InsertPathPart`: `part` inserted at `pos` of the split path (clamped),
/// a leading `/` kept and not counted, the result joined and cleaned.
fn insert_path_part(path: &str, pos: usize, part: &str) -> String {
    if part.is_empty() {
        return path.to_string();
    }
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let pos = pos.min(parts.len());
    parts.insert(pos, part);
    let joined = clean(&parts);
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Go's `filepath.Join` cleaning of relative parts: `.` dropped, `..` folds its parent.
fn clean(parts: &[&str]) -> String {
    let mut out: Vec<&str> = Vec::new();
    for p in parts.iter().flat_map(|p| p.split('/')) {
        match p {
            "" | "." => {}
            ".." if out.last().is_some_and(|l| *l != "..") => {
                out.pop();
            }
            _ => out.push(p),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::{insert_path_part, split_field_path};

    #[test]
    fn insert_path_part_follows_kyamls_table() {
        let p = |old, pos| insert_path_part(old, pos, "PEACH");
        assert_eq!(p("", 0), "PEACH");
        assert_eq!(p("/", 3), "/PEACH");
        assert_eq!(p("pie", 0), "PEACH/pie");
        assert_eq!(p("/pie", 0), "/PEACH/pie");
        assert_eq!(p("raw", 1), "raw/PEACH");
        assert_eq!(p("/raw", 9998), "/raw/PEACH");
        assert_eq!(p("a/nice/warm/pie", 3), "a/nice/warm/PEACH/pie");
        assert_eq!(p("/a/nice/warm/pie", 3), "/a/nice/warm/PEACH/pie");
    }

    #[test]
    fn escaped_slash_stays_in_the_field_name() {
        assert_eq!(
            split_field_path(r"metadata/annotations/a.io\/b"),
            vec!["metadata", "annotations", "a.io/b"]
        );
    }
}
