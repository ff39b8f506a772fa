//! Kyverno rule `preconditions` in their common form, evaluated against the rendered object:
//! `all`/`any` lists (or the legacy plain list, read as `all`) of `{key, operator, value}`
//! where the key reads the object (`{{ request.object.metadata.labels.tier || '' }}`) and
//! the value is a literal. Anything else — other JMESPath, `request.operation`, user info,
//! variables from `context`, an unknown operator — is "maybe", never a certain answer.

use super::selector::Tri;
use crate::gitops::ignore::glob_match;
use crate::yaml::Node;

/// Evaluate a rule's `preconditions` for `object`; with the first undecidable key.
pub fn evaluate(pre: &Node, object: &Node, namespace: &str) -> (Tri, Option<String>) {
    let object = &with_namespace(object, namespace);
    if let Some(list) = pre.as_seq() {
        return all(list, object);
    }
    let mut result = Tri::Yes;
    let mut undecided = None;
    if let Some(list) = pre.get("all").and_then(Node::as_seq) {
        let (r, u) = all(list, object);
        result = result.and(r);
        undecided = undecided.or(u);
    }
    if let Some(list) = pre.get("any").and_then(Node::as_seq) {
        let mut any = Tri::No;
        for c in list {
            let (r, u) = condition(c, object);
            any = any.or(r);
            if r == Tri::Maybe {
                undecided = undecided.or(u);
            }
        }
        result = result.and(any);
    }
    if result != Tri::Maybe {
        undecided = None;
    }
    (result, undecided)
}

/// The object as the admission request carries it: with the namespace it lands in.
fn with_namespace(object: &Node, namespace: &str) -> Node {
    let mut out = object.clone();
    if namespace.is_empty() || object.get_path(&["metadata", "namespace"]).is_some() {
        return out;
    }
    if let Some(meta) = out.get_mut("metadata")
        && let crate::yaml::Value::Map(entries) = &mut meta.value
    {
        let span = meta.span;
        entries.push(crate::yaml::Entry {
            key: Node::string("namespace", span),
            value: Node::string(namespace, span),
        });
    }
    out
}

fn all(list: &[Node], object: &Node) -> (Tri, Option<String>) {
    let mut result = Tri::Yes;
    let mut undecided = None;
    for c in list {
        let (r, u) = condition(c, object);
        result = result.and(r);
        if r == Tri::Maybe {
            undecided = undecided.or(u);
        }
    }
    (result, undecided)
}

/// One `{key, operator, value}`.
fn condition(c: &Node, object: &Node) -> (Tri, Option<String>) {
    let key_text = c.get("key").and_then(Node::scalar_text).unwrap_or_default();
    let maybe = || (Tri::Maybe, Some(key_text.clone()));
    let Some(actual) = object_value(&key_text, object) else {
        return maybe();
    };
    let Some(value) = c.get("value") else {
        return maybe();
    };
    let expected: Vec<String> = match value.as_seq() {
        Some(items) => items.iter().filter_map(Node::scalar_text).collect(),
        None => value.scalar_text().into_iter().collect(),
    };
    if expected.iter().any(|v| v.contains("{{")) {
        return maybe();
    }
    let matches_any = expected.iter().any(|v| glob_match(v, &actual));
    let op = c.get("operator").and_then(Node::as_str).unwrap_or("");
    let r = match op {
        "Equals" | "Equal" => expected.len() == 1 && glob_match(&expected[0], &actual),
        "NotEquals" | "NotEqual" => !(expected.len() == 1 && glob_match(&expected[0], &actual)),
        "In" | "AnyIn" | "AllIn" => matches_any,
        "NotIn" | "AnyNotIn" | "AllNotIn" => !matches_any,
        _ => return maybe(),
    };
    (Tri::from_bool(r), None)
}

/// The value a key reads from the object: `{{request.object.a.b}}`, optionally
/// `|| 'default'`. `None` when the key reads anything else.
fn object_value(key: &str, object: &Node) -> Option<String> {
    let inner = key.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let (path, default) = match inner.split_once("||") {
        Some((p, d)) => (
            p.trim(),
            Some(d.trim().trim_matches(['\'', '"', '`']).to_string()),
        ),
        None => (inner, None),
    };
    let rest = path.strip_prefix("request.object.")?;
    let segments = split_path(rest)?;
    let mut node = object;
    for seg in &segments {
        match node.get(seg) {
            Some(n) => node = n,
            None => return default,
        }
    }
    node.scalar_text().or(default)
}

/// `metadata.labels."app.kubernetes.io/name"` → segments; brackets and functions → `None`.
fn split_path(path: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let (seg, after) = quoted.split_once('"')?;
            out.push(seg.to_string());
            rest = after.strip_prefix('.').unwrap_or(after);
            continue;
        }
        let (seg, after) = rest.split_once('.').unwrap_or((rest, ""));
        if seg.is_empty()
            || !seg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return None;
        }
        out.push(seg.to_string());
        rest = after;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::first_doc;

    #[test]
    fn common_preconditions_are_decided() {
        let obj = first_doc(
            "kind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n  labels:\n    app.kubernetes.io/part-of: storefront\n",
        );
        let pre = |t: &str| evaluate(&first_doc(t), &obj, "shop").0;
        assert_eq!(
            pre(
                "all:\n  - key: \"{{ request.object.metadata.namespace }}\"\n    operator: Equals\n    value: shop\n"
            ),
            Tri::Yes
        );
        assert_eq!(
            pre(
                "any:\n  - key: \"{{ request.object.metadata.labels.\\\"app.kubernetes.io/part-of\\\" || '' }}\"\n    operator: AnyIn\n    value: [batch, jobs]\n"
            ),
            Tri::No
        );
        assert_eq!(
            pre(
                "- key: \"{{ request.object.metadata.name }}\"\n  operator: NotEquals\n  value: \"kube-*\"\n"
            ),
            Tri::Yes
        );
    }

    #[test]
    fn other_keys_are_maybe_and_named() {
        let obj = first_doc("kind: Pod\nmetadata:\n  name: p\n");
        let (r, key) = evaluate(
            &first_doc(
                "all:\n  - key: \"{{ request.operation }}\"\n    operator: Equals\n    value: CREATE\n",
            ),
            &obj,
            "default",
        );
        assert_eq!(r, Tri::Maybe);
        assert_eq!(key.as_deref(), Some("{{ request.operation }}"));
    }
}
