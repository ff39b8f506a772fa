//! The render-twice check behind `render-nondeterministic`: render a chart again with another
//! random seed, clock and time zone, and find every field whose value changed. It cannot be fooled
//! by a gap in taint tracking: any difference is real non-determinism.

use super::model::RenderDifference;
use crate::object::Object;
use crate::render::helm::provenance::TAINT_LABEL;
use crate::yaml::{Node, Value};

fn id(o: &Object) -> (String, String, String) {
    (
        o.kind.clone(),
        o.namespace.clone().unwrap_or_default(),
        o.name.clone(),
    )
}

fn display(o: &Object) -> String {
    match &o.namespace {
        Some(ns) => format!("{}/{ns}/{}", o.kind, o.name),
        None => format!("{}/{}", o.kind, o.name),
    }
}

fn tainted(n: &Node) -> bool {
    n.related
        .as_ref()
        .is_some_and(|r| r.iter().any(|x| x.label.starts_with(TAINT_LABEL)))
}

/// Compare two renders. Objects are matched by kind/namespace/name, then in order (a
/// name that itself changes still pairs with its counterpart).
pub fn compare(first: &[Object], second: &[Object]) -> Vec<RenderDifference> {
    let mut out = Vec::new();
    let mut unmatched: Vec<usize> = Vec::new();
    for (i, a) in first.iter().enumerate() {
        match second.iter().find(|b| id(b) == id(a)) {
            Some(b) => diff_nodes(&Of::new(a), &a.root, &b.root, &mut Vec::new(), &mut out),
            None => unmatched.push(i),
        }
    }
    // Objects whose identity changed: report the name, paired by position.
    let unpaired: Vec<&Object> = second
        .iter()
        .filter(|b| !first.iter().any(|a| id(a) == id(b)))
        .collect();
    for (k, &i) in unmatched.iter().enumerate() {
        let a = &first[i];
        let name_node = a.metadata().and_then(|m| m.get("name"));
        out.push(RenderDifference {
            object: display(a),
            field: "metadata.name".into(),
            span: name_node.map(|n| n.span).unwrap_or(a.root.span),
            explained: name_node.is_some_and(tainted),
            hooks: super::model::hooks::ObjectHooks::of(a),
        });
        if let Some(b) = unpaired.get(k) {
            diff_nodes(&Of::new(a), &a.root, &b.root, &mut Vec::new(), &mut out);
        }
    }
    out
}

/// The object a difference belongs to.
struct Of {
    display: String,
    hooks: super::model::hooks::ObjectHooks,
}

impl Of {
    fn new(o: &Object) -> Of {
        Of {
            display: display(o),
            hooks: super::model::hooks::ObjectHooks::of(o),
        }
    }
}

fn diff_nodes(
    object: &Of,
    a: &Node,
    b: &Node,
    path: &mut Vec<String>,
    out: &mut Vec<RenderDifference>,
) {
    if out.len() > 1000 {
        return;
    }
    match (&a.value, &b.value) {
        (Value::Map(ea), Value::Map(eb)) => {
            // A key written twice is one field holding the last value (YAML duplicate keys
            // are last-wins, as Kubernetes decodes them): compare what each render keeps, so
            // an earlier copy is never paired with the other render's last one.
            for (j, e) in ea.iter().enumerate() {
                let k = e.key.key_str().into_owned();
                if ea[j + 1..].iter().any(|x| x.key.key_is(&k)) {
                    continue;
                }
                match eb.iter().rev().find(|x| x.key.key_is(&k)) {
                    Some(o) => {
                        path.push(k);
                        diff_nodes(object, &e.value, &o.value, path, out);
                        path.pop();
                    }
                    None => {
                        path.push(k);
                        push(object, path, &e.value, out);
                        path.pop();
                    }
                }
            }
        }
        (Value::Seq(ia), Value::Seq(ib)) if ia.len() == ib.len() => {
            for (i, (x, y)) in ia.iter().zip(ib).enumerate() {
                path.push(i.to_string());
                diff_nodes(object, x, y, path, out);
                path.pop();
            }
        }
        _ => {
            if a.to_json() != b.to_json() {
                push(object, path, a, out);
            }
        }
    }
}

fn push(object: &Of, path: &[String], node: &Node, out: &mut Vec<RenderDifference>) {
    let mut explained = false;
    node.walk(|_, n| explained |= tainted(n));
    out.push(RenderDifference {
        object: object.display.clone(),
        field: path.join("."),
        span: node.span,
        explained,
        hooks: object.hooks,
    });
}

#[cfg(test)]
mod tests {
    use super::compare;
    use crate::object::Object;

    fn objects(text: &str) -> Vec<Object> {
        crate::yaml::parse_str(text, crate::source::FileId(0), &Default::default())
            .docs
            .into_iter()
            .filter_map(|d| Object::from_node(d.root))
            .collect()
    }

    const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  \
        labels:\n    app.kubernetes.io/name: web\n    app.kubernetes.io/name: LAST\n";

    #[test]
    fn the_same_text_with_a_key_written_twice_is_no_difference() {
        let text = DEPLOYMENT.replace("LAST", "web-server");
        assert!(compare(&objects(&text), &objects(&text)).is_empty());
    }

    #[test]
    fn a_key_written_twice_is_compared_by_the_value_that_wins() {
        let first = objects(&DEPLOYMENT.replace("LAST", "a"));
        let second = objects(&DEPLOYMENT.replace("LAST", "b"));
        let found = compare(&first, &second);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].field, "metadata.labels.app.kubernetes.io/name");
        // The line that wins, where a person edits.
        assert_eq!(
            found[0].span.start,
            DEPLOYMENT.find("LAST").unwrap_or(0) as u32
        );
    }
}
