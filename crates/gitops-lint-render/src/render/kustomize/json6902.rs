//! RFC 6902 JSON patches applied to span-carrying trees, so a value a patch adds or
//! replaces points at the patch line (and remembers the base value it replaced).

use super::tree;
use crate::source::Span;
use crate::yaml::{Entry, Node, Value};

#[derive(Debug, Clone)]
pub struct Op {
    pub op: String,
    pub path: String,
    pub from: Option<String>,
    pub value: Option<Node>,
    pub span: Span,
}

/// Read the operations of a patch document (a YAML or JSON list of ops).
pub fn parse_ops(doc: &Node) -> Result<Vec<Op>, (Span, String)> {
    let Some(items) = doc.as_seq() else {
        return Err((
            doc.span,
            "a JSON 6902 patch must be a list of operations".into(),
        ));
    };
    let mut ops = Vec::new();
    for item in items {
        let op = item
            .get("op")
            .and_then(tree::text)
            .ok_or((item.span, "patch operation has no 'op'".to_string()))?;
        if !matches!(
            op.as_str(),
            "add" | "remove" | "replace" | "move" | "copy" | "test"
        ) {
            return Err((item.span, format!("unexpected kind: {op}")));
        }
        let path = item
            .get("path")
            .and_then(tree::text)
            .ok_or((item.span, format!("operation '{op}' has no 'path'")))?;
        let value = item.get("value").cloned();
        if matches!(op.as_str(), "add" | "replace" | "test") && item.get("value").is_none() {
            return Err((
                item.span,
                format!("operation '{op}' at {path} has no 'value'"),
            ));
        }
        let from = item.get("from").and_then(tree::text);
        if matches!(op.as_str(), "move" | "copy") && from.is_none() {
            return Err((
                item.span,
                format!("operation '{op}' at {path} has no 'from'"),
            ));
        }
        ops.push(Op {
            op,
            path,
            from,
            value,
            span: item.span,
        });
    }
    Ok(ops)
}

fn pointer(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!(
            "JSON pointer must be empty or start with a \"/\": {path}"
        ));
    };
    Ok(rest
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn child_mut<'a>(node: &'a mut Node, seg: &str) -> Option<&'a mut Node> {
    match &mut node.value {
        Value::Map(entries) => entries
            .iter_mut()
            .rev()
            .find(|e| e.key.key_is(seg))
            .map(|e| &mut e.value),
        Value::Seq(items) => seg.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
        _ => None,
    }
}

fn resolve_mut<'a>(root: &'a mut Node, segs: &[String]) -> Option<&'a mut Node> {
    let mut cur = root;
    for s in segs {
        cur = child_mut(cur, s)?;
    }
    Some(cur)
}

fn get(root: &Node, segs: &[String]) -> Option<Node> {
    let mut cur = root;
    for s in segs {
        cur = match &cur.value {
            Value::Map(_) => cur.get(s)?,
            Value::Seq(items) => items.get(s.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur.clone())
}

pub fn apply(root: &mut Node, ops: &[Op]) -> Result<(), (Span, String)> {
    for op in ops {
        apply_one(root, op).map_err(|m| (op.span, m))?;
    }
    Ok(())
}

fn apply_one(root: &mut Node, op: &Op) -> Result<(), String> {
    let segs = pointer(&op.path)?;
    match op.op.as_str() {
        "add" => add(
            root,
            &segs,
            op.value
                .clone()
                .unwrap_or_else(|| Node::new(Value::Null, op.span)),
            &op.path,
        ),
        "remove" => remove(root, &segs, &op.path).map(|_| ()),
        "replace" => {
            let mut value = op
                .value
                .clone()
                .unwrap_or_else(|| Node::new(Value::Null, op.span));
            if segs.is_empty() {
                *root = value;
                return Ok(());
            }
            // Like kustomize's JSON patch library, replacing a missing map key adds it.
            if resolve_mut(root, &segs).is_none() {
                return add(root, &segs, value, &op.path).map_err(|_| {
                    format!(
                        "replace operation does not apply: doc is missing key: {}",
                        op.path
                    )
                });
            }
            let target = resolve_mut(root, &segs).ok_or_else(|| {
                format!(
                    "replace operation does not apply: doc is missing key: {}",
                    op.path
                )
            })?;
            if target.as_map().is_none() && target.as_seq().is_none() {
                tree::push_related(&mut value, target.span, "base value");
            }
            *target = value;
            Ok(())
        }
        "move" => {
            let from = pointer(op.from.as_deref().unwrap_or(""))?;
            let v = remove(root, &from, op.from.as_deref().unwrap_or(""))?;
            add(root, &segs, v, &op.path)
        }
        "copy" => {
            let from = pointer(op.from.as_deref().unwrap_or(""))?;
            let v = get(root, &from).ok_or_else(|| {
                format!(
                    "copy operation does not apply: doc is missing from path: {}",
                    op.from.as_deref().unwrap_or("")
                )
            })?;
            add(root, &segs, v, &op.path)
        }
        "test" => {
            let v = get(root, &segs)
                .ok_or_else(|| format!("testing value {} failed: doc is missing path", op.path))?;
            let want = op
                .value
                .as_ref()
                .map(Node::to_json)
                .unwrap_or(serde_json::Value::Null);
            if v.to_json() != want {
                return Err(format!("testing value {} failed: test failed", op.path));
            }
            Ok(())
        }
        other => Err(format!("unexpected kind: {other}")),
    }
}

fn add(root: &mut Node, segs: &[String], value: Node, path: &str) -> Result<(), String> {
    let Some((last, parent_path)) = segs.split_last() else {
        *root = value;
        return Ok(());
    };
    let parent = resolve_mut(root, parent_path).ok_or_else(|| {
        format!("add operation does not apply: doc is missing path: \"{path}\": missing value")
    })?;
    match &mut parent.value {
        Value::Map(entries) => {
            if let Some(e) = entries.iter_mut().rev().find(|e| e.key.key_is(last)) {
                let mut value = value;
                if e.value.as_map().is_none() && e.value.as_seq().is_none() {
                    tree::push_related(&mut value, e.value.span, "base value");
                }
                e.value = value;
            } else {
                let key = Node::string(last.clone(), value.span);
                entries.push(Entry { key, value });
            }
            Ok(())
        }
        Value::Seq(items) => {
            if last == "-" {
                items.push(value);
                return Ok(());
            }
            let i: usize = last.parse().map_err(|_| {
                format!("add operation does not apply: invalid index {last:?} at {path}")
            })?;
            if i > items.len() {
                return Err(format!(
                    "add operation does not apply: index out of bounds at {path}"
                ));
            }
            items.insert(i, value);
            Ok(())
        }
        Value::Null => {
            let key = Node::string(last.clone(), value.span);
            parent.value = Value::Map(vec![Entry { key, value }]);
            Ok(())
        }
        _ => Err(format!(
            "add operation does not apply: doc is missing path: \"{path}\""
        )),
    }
}

fn remove(root: &mut Node, segs: &[String], path: &str) -> Result<Node, String> {
    let Some((last, parent_path)) = segs.split_last() else {
        return Err("remove operation does not apply: cannot remove the document root".into());
    };
    let missing = || {
        format!("remove operation does not apply: doc is missing path: \"{path}\": missing value")
    };
    let parent = resolve_mut(root, parent_path).ok_or_else(missing)?;
    match &mut parent.value {
        Value::Map(entries) => {
            let pos = entries
                .iter()
                .rposition(|e| e.key.key_is(last))
                .ok_or_else(missing)?;
            Ok(entries.remove(pos).value)
        }
        Value::Seq(items) => {
            let i: usize = last.parse().map_err(|_| missing())?;
            if i >= items.len() {
                return Err(missing());
            }
            Ok(items.remove(i))
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::emit;

    fn node(text: &str) -> Node {
        crate::yaml::first_doc(text)
    }

    #[test]
    fn ops_apply_in_order() {
        let mut doc = node("a:\n  b: [1, 2]\nc: x\n");
        let ops = parse_ops(&node(
            "- op: add\n  path: /a/b/-\n  value: 3\n- op: replace\n  path: /c\n  value: y\n- op: remove\n  path: /a/b/0\n- op: copy\n  from: /c\n  path: /d\n- op: move\n  from: /d\n  path: /e\n- op: test\n  path: /e\n  value: y\n",
        ));
        let ops = ops.unwrap_or_default();
        assert_eq!(ops.len(), 6);
        assert!(apply(&mut doc, &ops).is_ok());
        assert_eq!(
            emit::to_yaml(&doc),
            "a:\n  b:\n  - 2\n  - 3\nc: \"y\"\ne: \"y\"\n"
        );
    }

    #[test]
    fn bad_ops_are_errors() {
        assert!(parse_ops(&node("- op: frobnicate\n  path: /a\n")).is_err());
        assert!(parse_ops(&node("- op: add\n  path: /a\n")).is_err());
        let mut doc = node("a: 1\n");
        let ops = parse_ops(&node("- op: remove\n  path: /zz/y\n")).unwrap_or_default();
        assert!(apply(&mut doc, &ops).is_err());
    }
}
