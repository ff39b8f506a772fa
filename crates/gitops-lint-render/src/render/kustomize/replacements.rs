//! `replacements`: copy a field of one resource into fields of others.

use super::acc::{Acc, Builder, Fail, failed};
use super::fieldpath::{self, Seg};
use super::kustomization::{Item, Kustomization};
use super::selector::Selector;
use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};

pub fn run_field(b: &Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    for n in k.seq("replacements") {
        run_entry(b, k, acc, n)?;
    }
    Ok(())
}

/// A ReplacementTransformer config (`replacements:` list of paths or inline entries).
pub fn run_config(b: &Builder, k: &Kustomization, acc: &mut Acc, cfg: &Node) -> Result<(), Fail> {
    for n in cfg
        .get("replacements")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
    {
        run_entry(b, k, acc, n)?;
    }
    Ok(())
}

fn run_entry(b: &Builder, k: &Kustomization, acc: &mut Acc, n: &Node) -> Result<(), Fail> {
    if let Some(p) = n.get("path") {
        let item = Item {
            text: tree::text(p).unwrap_or_default(),
            span: p.span,
        };
        for doc in b.load_docs(k, &item)? {
            match doc.as_seq() {
                Some(items) => {
                    for r in items {
                        replace(b, acc, r)?;
                    }
                }
                None => replace(b, acc, &doc)?,
            }
        }
        return Ok(());
    }
    replace(b, acc, n)
}

fn options(n: Option<&Node>) -> (Option<String>, i64, bool) {
    let o = n.and_then(|s| s.get("options"));
    (
        o.and_then(|o| o.get("delimiter")).and_then(tree::text),
        o.and_then(|o| o.get("index"))
            .and_then(Node::as_i64)
            .unwrap_or(0),
        o.and_then(|o| o.get("create"))
            .and_then(Node::as_bool)
            .unwrap_or(false),
    )
}

fn replace(b: &Builder, acc: &mut Acc, r: &Node) -> Result<(), Fail> {
    let Some(source) = r.get("source") else {
        return Err(failed(r.span, "replacement has no source"));
    };
    let sel = source_selector(source)
        .compile()
        .map_err(|e| failed(source.span, format!("invalid replacement source: {e}")))?;
    let found: Vec<usize> = acc
        .resources
        .iter()
        .enumerate()
        .filter(|(_, x)| sel.matches(x))
        .map(|(i, _)| i)
        .collect();
    let idx = match found.as_slice() {
        [i] => *i,
        [] => {
            return b.target_absent(
                acc,
                failed(source.span, "nothing selected by the replacement source"),
            );
        }
        _ => {
            return Err(failed(
                source.span,
                "multiple matches for the replacement source selector",
            ));
        }
    };
    let fp = source
        .get("fieldPath")
        .and_then(tree::text)
        .unwrap_or_else(|| "metadata.name".into());
    let segs = fieldpath::parse(&fp);
    let values = fieldpath::lookup(&acc.resources[idx].root, &segs);
    let Some(value) = values.first().map(|v| (*v).clone()) else {
        return Err(failed(
            source.span,
            format!(
                "fieldPath `{fp}` is missing for replacement source {}",
                acc.resources[idx].id_string()
            ),
        ));
    };
    let (delim, index, _) = options(Some(source));
    let value = match delim {
        Some(d) if !d.is_empty() => {
            let text = tree::text(&value).unwrap_or_default();
            let parts: Vec<&str> = text.split(d.as_str()).collect();
            if index < 0 || index as usize >= parts.len() {
                return Err(failed(
                    source.span,
                    format!("options.index {index} is out of bounds for value {text}"),
                ));
            }
            let mut n = value.clone();
            n.value = Value::String(parts[index as usize].to_string());
            n.set_raw(None);
            n
        }
        _ => value,
    };
    for t in r.get("targets").and_then(Node::as_seq).unwrap_or(&[]) {
        apply_target(acc, t, &value)?;
    }
    Ok(())
}

fn source_selector(source: &Node) -> Selector {
    let mut s = Selector::from_node(source);
    // Sources name exact ids.
    for f in [
        &mut s.name,
        &mut s.namespace,
        &mut s.kind,
        &mut s.group,
        &mut s.version,
    ] {
        if let Some(v) = f.as_mut() {
            *v = regex::escape(v);
        }
    }
    s
}

fn apply_target(acc: &mut Acc, t: &Node, value: &Node) -> Result<(), Fail> {
    let Some(select) = t.get("select") else {
        return Err(failed(t.span, "replacement target has no select"));
    };
    let sel = source_selector(select)
        .compile()
        .map_err(|e| failed(select.span, format!("invalid target selector: {e}")))?;
    let rejects: Vec<_> = t
        .get("reject")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(|r| source_selector(r).compile().ok())
        .collect();
    let (delim, index, create) = options(Some(t));
    let paths: Vec<Node> = t
        .get("fieldPaths")
        .and_then(Node::as_seq)
        .map(<[Node]>::to_vec)
        .unwrap_or_default();
    for r in acc.resources.iter_mut() {
        if !sel.matches(r) || rejects.iter().any(|x| x.matches(r)) {
            continue;
        }
        for p in &paths {
            let fp = tree::text(p).unwrap_or_default();
            let segs: Vec<Seg> = fieldpath::parse(&fp);
            let span = p.span;
            let mut err: Option<String> = None;
            let n = fieldpath::visit_mut(
                &mut r.root,
                &segs,
                create,
                span,
                &mut |target: &mut Node| match &delim {
                    Some(d) if !d.is_empty() => {
                        let cur = tree::text(target).unwrap_or_default();
                        let mut parts: Vec<String> =
                            cur.split(d.as_str()).map(str::to_string).collect();
                        let new = tree::text(value).unwrap_or_default();
                        if index < 0 {
                            parts.insert(0, new);
                        } else if index as usize >= parts.len() {
                            parts.push(new);
                        } else {
                            parts[index as usize] = new;
                        }
                        tree::replace_scalar(
                            target,
                            Value::String(parts.join(d)),
                            value.span,
                            "base value",
                        );
                    }
                    _ => {
                        if target.as_map().is_some() && value.as_map().is_none() {
                            err = Some("cannot replace a map with a scalar".into());
                            return;
                        }
                        let old = target.span;
                        let mut fresh = value.clone();
                        if old != fresh.span
                            && target.as_map().is_none()
                            && target.as_seq().is_none()
                        {
                            tree::push_related(&mut fresh, old, "base value");
                        }
                        *target = fresh;
                    }
                },
            );
            if let Some(e) = err {
                return Err(failed(span, e));
            }
            if n == 0 && !create {
                // kustomize v5 fails when a target field path does not exist
                return Err(failed(
                    span,
                    format!(
                        "unable to find field \"{fp}\" in replacement target {}",
                        r.id_string()
                    ),
                ));
            }
        }
    }
    let _ = Span::default();
    Ok(())
}
