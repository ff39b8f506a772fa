//! `crds:` — CRD files whose OpenAPI `x-kubernetes-object-ref-*` annotations declare name
//! references, added to the name reference configuration.

use super::fieldspec::{FieldSpec, Gvk, NameBackRef, TransformerConfig};
use super::tree;
use crate::yaml::Node;

/// Read `x-kubernetes-object-ref-kind`/`-name-key` properties of a CRD validation schema.
pub fn add_crd_config(doc: &Node, config: &mut TransformerConfig) {
    let kind = doc
        .get_path(&["spec", "names", "kind"])
        .and_then(tree::text);
    let Some(kind) = kind else {
        definitions(doc, config);
        return;
    };
    let schema = doc
        .get_path(&["spec", "validation", "openAPIV3Schema"])
        .or_else(|| {
            doc.get_path(&["spec", "versions"])
                .and_then(Node::as_seq)
                .and_then(|v| v.first())
                .and_then(|v| v.get_path(&["schema", "openAPIV3Schema"]))
        });
    if let Some(schema) = schema {
        walk(schema, &kind, &mut Vec::new(), config);
    }
}

fn walk(schema: &Node, kind: &str, path: &mut Vec<String>, config: &mut TransformerConfig) {
    let Some(props) = schema.get("properties").and_then(Node::as_map) else {
        return;
    };
    for e in props {
        let key = e.key.key_str().into_owned();
        path.push(key.clone());
        let ref_kind = e
            .value
            .get("x-kubernetes-object-ref-kind")
            .and_then(tree::text);
        if let Some(ref_kind) = ref_kind {
            let name_key = e
                .value
                .get("x-kubernetes-object-ref-name-key")
                .and_then(tree::text)
                .unwrap_or_else(|| "name".into());
            let mut p = path.clone();
            p.push(name_key);
            let fs = FieldSpec {
                gvk: Gvk {
                    kind: kind.to_string(),
                    ..Gvk::default()
                },
                path: p,
                create: false,
            };
            match config
                .name_reference
                .iter_mut()
                .find(|n| n.gvk.kind == ref_kind)
            {
                Some(n) => n.referrers.push(fs),
                None => config.name_reference.push(NameBackRef {
                    gvk: Gvk {
                        kind: ref_kind,
                        ..Gvk::default()
                    },
                    referrers: vec![fs],
                }),
            }
        }
        walk(&e.value, kind, path, config);
        path.pop();
    }
}

/// The legacy format: a map of OpenAPI definitions (`pkg.Kind: {Schema, Dependencies}`)
/// whose properties point at each other with `$ref`.
fn definitions(doc: &Node, config: &mut TransformerConfig) {
    let Some(defs) = doc.as_map() else { return };
    for d in defs {
        let name = d.key.key_str().into_owned();
        let Some(schema) = d.value.get("Schema") else {
            continue;
        };
        let is_object = schema
            .get("properties")
            .is_some_and(|p| p.get("kind").is_some() && p.get("apiVersion").is_some());
        if !is_object {
            continue;
        }
        let kind = name.rsplit('.').next().unwrap_or(&name).to_string();
        walk_defs(doc, schema, &kind, &mut Vec::new(), config, 0);
    }
}

fn walk_defs(
    doc: &Node,
    schema: &Node,
    kind: &str,
    path: &mut Vec<String>,
    config: &mut TransformerConfig,
    depth: usize,
) {
    if depth > 16 {
        return;
    }
    let Some(props) = schema.get("properties").and_then(Node::as_map) else {
        return;
    };
    for e in props {
        let key = e.key.key_str().into_owned();
        if key == "metadata" || key == "status" && path.is_empty() {
            continue;
        }
        path.push(key);
        if let Some(ref_kind) = e
            .value
            .get("x-kubernetes-object-ref-kind")
            .and_then(tree::text)
        {
            let mut p = path.clone();
            p.push("name".into());
            add_ref(config, kind, &ref_kind, p);
        } else if let Some(target) = e.value.get("$ref").and_then(tree::text)
            && let Some(next) = doc.get(&target).and_then(|d| d.get("Schema"))
        {
            walk_defs(doc, next, kind, path, config, depth + 1);
        }
        path.pop();
    }
}

fn add_ref(config: &mut TransformerConfig, kind: &str, ref_kind: &str, path: Vec<String>) {
    let fs = FieldSpec {
        gvk: Gvk {
            kind: kind.to_string(),
            ..Gvk::default()
        },
        path,
        create: false,
    };
    match config
        .name_reference
        .iter_mut()
        .find(|n| n.gvk.kind == ref_kind)
    {
        Some(n) => {
            if !n.referrers.contains(&fs) {
                n.referrers.push(fs);
            }
        }
        None => config.name_reference.push(NameBackRef {
            gvk: Gvk {
                kind: ref_kind.to_string(),
                ..Gvk::default()
            },
            referrers: vec![fs],
        }),
    }
}
