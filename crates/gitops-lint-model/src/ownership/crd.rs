//! Structural schemas of CustomResourceDefinitions found in the repo: which
//! fields a custom resource may declare before the API server prunes them.

use crate::gitops::Model;
use crate::source::Span;
use crate::yaml::Node;

/// One served version's schema.
pub struct CrdSchema<'a> {
    pub crd_name: String,
    pub group: String,
    pub kind: String,
    pub version: String,
    pub schema: &'a Node,
    /// The CRD line a person reads (secondary label).
    pub span: Span,
}

pub fn crd_schemas(model: &Model) -> Vec<CrdSchema<'_>> {
    let mut out = Vec::new();
    for mo in &model.objects {
        let o = &mo.object;
        if o.group() != "apiextensions.k8s.io" || o.kind != "CustomResourceDefinition" {
            continue;
        }
        let Some(spec) = o.root.get("spec") else {
            continue;
        };
        let group = spec
            .get("group")
            .and_then(Node::scalar_text)
            .unwrap_or_default();
        let Some(kind) = spec
            .get_path(&["names", "kind"])
            .and_then(Node::scalar_text)
        else {
            continue;
        };
        // apiextensions v1beta1 kept one schema for all versions.
        let shared = spec.get_path(&["validation", "openAPIV3Schema"]);
        for v in spec
            .get("versions")
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            let Some(version) = v.get("name").and_then(Node::scalar_text) else {
                continue;
            };
            if let Some(schema) = v.get_path(&["schema", "openAPIV3Schema"]).or(shared) {
                out.push(CrdSchema {
                    crd_name: o.name.clone(),
                    group: group.clone(),
                    kind: kind.clone(),
                    version,
                    schema,
                    span: v.get("name").map(|n| n.span).unwrap_or(v.span),
                });
            }
        }
    }
    out
}

/// A declared key the schema does not know.
pub struct Unknown<'a> {
    pub key: &'a crate::yaml::Entry,
    pub path: Vec<String>,
}

fn flag(schema: &Node, key: &str) -> bool {
    schema.get(key).and_then(Node::as_bool) == Some(true)
}

/// Keys of `node` the schema prunes. `skip` says which paths other rules own.
pub fn unknown_fields<'a>(
    node: &'a Node,
    schema: &Node,
    skip: &dyn Fn(&[String]) -> bool,
) -> Vec<Unknown<'a>> {
    let mut out = Vec::new();
    let mut stack: Vec<(&'a Node, &Node, Vec<String>)> = vec![(node, schema, Vec::new())];
    while let Some((node, schema, path)) = stack.pop() {
        if path.len() > 64 || skip(&path) {
            continue;
        }
        let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
        if let Some(items) = node.as_seq() {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let mut p = path.clone();
                    p.push(i.to_string());
                    stack.push((item, item_schema, p));
                }
            }
            continue;
        }
        let Some(entries) = node.as_map() else {
            continue;
        };
        let props = schema.get("properties");
        let additional = schema.get("additionalProperties");
        let embedded = flag(schema, "x-kubernetes-embedded-resource");
        for e in entries {
            let key = e.key.key_str().into_owned();
            let mut p = path.clone();
            p.push(key.clone());
            if path.is_empty()
                && matches!(key.as_str(), "apiVersion" | "kind" | "metadata" | "status")
            {
                continue; // metadata is the API server's; status is committed-live-state's
            }
            if embedded && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if let Some(child) = props.and_then(|ps| ps.get(&key)) {
                stack.push((&e.value, child, p));
            } else if let Some(add) = additional {
                if add.as_map().is_some() {
                    stack.push((&e.value, add, p));
                }
            } else if props.is_some() && !preserve && !skip(&p) {
                out.push(Unknown { key: e, path: p });
            }
        }
    }
    out.sort_by_key(|u| u.key.key.span.start);
    out
}

/// Does a CRD schema node describe a quantity? controller-gen writes `resource.Quantity` as
/// `x-kubernetes-int-or-string: true` with Kubernetes' quantity pattern (its binary suffixes).
fn is_quantity_schema(schema: &Node) -> bool {
    flag(schema, "x-kubernetes-int-or-string")
        && schema
            .get("pattern")
            .and_then(Node::as_str)
            .is_some_and(|p| p.contains("[KMGTPE]i"))
}

/// Declared entries of a custom resource whose CRD schema calls them quantities.
pub fn quantity_entries<'a>(
    node: &'a Node,
    schema: &Node,
) -> Vec<(&'a crate::yaml::Entry, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack: Vec<(&'a Node, &Node, Vec<String>)> = vec![(node, schema, Vec::new())];
    while let Some((node, schema, path)) = stack.pop() {
        if path.len() > 64 {
            continue;
        }
        if let Some(items) = node.as_seq() {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let mut p = path.clone();
                    p.push(i.to_string());
                    stack.push((item, item_schema, p));
                }
            }
            continue;
        }
        let props = schema.get("properties");
        let additional = schema
            .get("additionalProperties")
            .filter(|a| a.as_map().is_some());
        for e in node.as_map().unwrap_or_default() {
            let key = e.key.key_str().into_owned();
            let Some(child) = props.and_then(|ps| ps.get(&key)).or(additional) else {
                continue;
            };
            let mut p = path.clone();
            p.push(key);
            if is_quantity_schema(child) {
                out.push((e, p));
            } else {
                stack.push((&e.value, child, p));
            }
        }
    }
    out.sort_by_key(|(e, _)| e.key.span.start);
    out
}
