//! A HelmRelease's values as helm-controller layers them over the chart
//! (https://fluxcd.io/flux/components/helm/helmreleases/): `valuesFrom[]` ConfigMaps and Secrets in
//! order (`valuesKey` default `values.yaml`, `targetPath` sets one value at a dotted path,
//! `optional` tolerates a missing object or key), then `spec.values`. Values keep the spans of the
//! repo lines that wrote them, so a finding about a rendered value points at the ConfigMap line,
//! not at a copy. A value only the cluster knows (SOPS ciphertext, a Secret an ExternalSecret or
//! SealedSecret makes: `producers.rs`) is there but unknown: at a `targetPath` it is set as the
//! opaque `ENC[…]` text, and a whole values document of it is left out, with a note.

use super::model::flux::SourceKeys;
use crate::object::Object;
use crate::render::helm::layers::ValuesLayer;
use crate::render::{IssueKind, RenderIssue};
use crate::source::SourceMap;
use crate::yaml::Node;

/// The layers of `spec`, and the problems found reading them.
pub fn flux_values(
    spec: &Node,
    ns: &str,
    find: &dyn Fn(&str, &str, &str) -> Option<Object>,
    map: &SourceMap,
) -> (Vec<ValuesLayer>, Vec<RenderIssue>) {
    let mut layers = Vec::new();
    let mut issues = Vec::new();
    for vf in spec
        .get("valuesFrom")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let kind = vf.get_str("kind").unwrap_or("ConfigMap");
        let name = vf.get_str("name").unwrap_or("");
        let key = vf.get_str("valuesKey").unwrap_or("values.yaml");
        let optional = vf.get("optional").and_then(Node::as_bool) == Some(true);
        let Some(obj) = find(kind, ns, name) else {
            if !optional {
                issues.push(RenderIssue {
                    kind: IssueKind::Unrenderable,
                    input: None,
                    span: vf.full_span(),
                    message: format!(
                        "valuesFrom {kind}/{name} is not in the repository; its values are unknown"
                    ),
                });
            }
            continue;
        };
        let keys = || super::producers::source_keys(Some(&obj), &|k, n| find(k, ns, n));
        let Some((node, text, decoded)) = key_value(&obj, key) else {
            if let SourceKeys::Open { how } = keys() {
                issues.push(RenderIssue {
                    kind: IssueKind::InCluster,
                    input: None,
                    span: vf.get("valuesKey").map(|n| n.span).unwrap_or(vf.full_span()),
                    message: format!(
                        "valuesFrom {kind} '{ns}/{name}' is {how} from keys this repository does not list; whether it holds '{key}' is known only in the cluster"
                    ),
                });
            } else if !optional {
                issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    input: None,
                    span: vf.get("valuesKey").map(|n| n.span).unwrap_or(vf.full_span()),
                    message: format!(
                        "key '{key}' not found in {kind} '{ns}/{name}' (helm-controller fails the release; set optional: true to tolerate it)"
                    ),
                });
            }
            continue;
        };
        let label = format!("value from {kind} {name} ({})", map.path(node.span.file));
        let unknown = super::sops::is_ciphertext(node);
        if let Some(path) = vf.get("targetPath").and_then(Node::scalar_text) {
            layers.push(ValuesLayer::AtPath {
                label,
                path,
                // Opaque text, set as it is (the `--set` parser splits at commas).
                value: if unknown {
                    escape_set_value(&text)
                } else {
                    text
                },
                span: node.span,
            });
            continue;
        }
        if unknown {
            let how = match keys() {
                SourceKeys::Closed { how, .. } | SourceKeys::Open { how } => how,
                _ => "encrypted".into(),
            };
            issues.push(RenderIssue {
                kind: IssueKind::InCluster,
                input: None,
                span: node.span,
                message: format!(
                    "values from {kind} '{ns}/{name}' key '{key}' are known only in the cluster ({how}); the release is rendered without them"
                ),
            });
            continue;
        }
        match super::in_place::located_roots(node, &text, decoded, map) {
            Ok(roots) => layers.push(ValuesLayer::Docs { label, roots }),
            Err(e) => issues.push(RenderIssue {
                kind: IssueKind::Failed,
                input: None,
                span: node.span,
                message: format!("failed to parse values from {kind} '{ns}/{name}': {e}"),
            }),
        }
    }
    if let Some(v) = spec.get("values") {
        layers.push(ValuesLayer::Docs {
            label: format!("value from HelmRelease values ({})", map.path(v.span.file)),
            roots: vec![v.clone()],
        });
    }
    (layers, issues)
}

/// `text` as one `--set` value: backslash before what the parser would read as syntax.
fn escape_set_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | ',') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A ConfigMap's or Secret's key: its node, its text, and whether the text was decoded
/// (Secret `data` is base64, so its text is not what the file shows; ciphertext stays as
/// written).
fn key_value<'a>(obj: &'a Object, key: &str) -> Option<(&'a Node, String, bool)> {
    if let Some(v) = obj.root.get("data").and_then(|d| d.get(key)) {
        if obj.kind == "Secret" && !super::sops::is_ciphertext(v) {
            let decoded = super::secret_data::decode_base64(&v.scalar_text()?)?;
            return Some((v, decoded, true));
        }
        return Some((v, v.scalar_text()?, false));
    }
    let v = obj
        .root
        .get("stringData")
        .filter(|_| obj.kind == "Secret")
        .and_then(|d| d.get(key))?;
    Some((v, v.scalar_text()?, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_str};

    fn object(map: &SourceMap, path: &str, text: &str) -> Object {
        let id = map.add_text(path, text.to_string());
        let doc = parse_str(text, id, &Limits::default()).docs.remove(0);
        Object::from_node(doc.root).unwrap_or_else(|| panic!("{text}"))
    }

    fn lines(map: &SourceMap, roots: &[Node]) -> Vec<String> {
        let mut out = Vec::new();
        for r in roots {
            r.walk(|path, n| {
                if n.as_map().is_none() && !path.is_empty() {
                    out.push(format!(
                        "{} {}:{}",
                        n.scalar_text().unwrap_or_default(),
                        map.path(n.span.file),
                        map.line_col(n.span).line
                    ));
                }
            });
        }
        out.sort();
        out
    }

    #[test]
    fn a_literal_block_keeps_its_lines_base64_points_at_the_key() {
        let map = SourceMap::new();
        let cm = object(
            &map,
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\ndata:\n  values.yaml: |\n    # replicas for prod\n    replicaCount: 4\n    image:\n      tag: \"2.0\"\n",
        );
        let (node, text, decoded) = key_value(&cm, "values.yaml").unwrap_or_else(|| panic!());
        let roots =
            super::super::in_place::located_roots(node, &text, decoded, &map).unwrap_or_default();
        assert_eq!(lines(&map, &roots), ["2.0 cm.yaml:9", "4 cm.yaml:7"]);

        // `cmVwbGljYUNvdW50OiA1` is `replicaCount: 5`.
        let secret = object(
            &map,
            "secret.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  values.yaml: cmVwbGljYUNvdW50OiA1\n",
        );
        let (node, text, decoded) = key_value(&secret, "values.yaml").unwrap_or_else(|| panic!());
        let roots =
            super::super::in_place::located_roots(node, &text, decoded, &map).unwrap_or_default();
        assert_eq!(lines(&map, &roots), ["5 secret.yaml:5"]);
    }

    #[test]
    fn a_block_that_reads_differently_in_place_is_parsed_on_its_own() {
        // `---` is a document marker only at column 0: in place it would be text.
        let map = SourceMap::new();
        let cm = object(
            &map,
            "cm.yaml",
            "kind: ConfigMap\napiVersion: v1\nmetadata: {name: v}\ndata:\n  values.yaml: |\n    ---\n    a: 1\n",
        );
        let (node, text, decoded) = key_value(&cm, "values.yaml").unwrap_or_else(|| panic!());
        let roots =
            super::super::in_place::located_roots(node, &text, decoded, &map).unwrap_or_default();
        // Every value points at the block (which starts on its first content line), not
        // at a line of its own.
        assert_eq!(lines(&map, &roots), ["1 cm.yaml:6"]);
    }
}
