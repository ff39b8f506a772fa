//! Values layered over the value files in the order a controller merges them (Flux
//! helm-controller: `valuesFrom` entries, then `spec.values`). Documents are given as parsed
//! nodes so that provenance points at the repo lines that wrote them (a ConfigMap key, the
//! HelmRelease), not at a copy; `targetPath` entries set one value at a dotted path.

use super::strvals;
use super::values::{ValueOrigins, json_kind, merge_maps, node_to_value};
use crate::render::gotmpl::value::{Map, Value};
use crate::source::Span;
use crate::yaml::Node;

#[derive(Clone, Debug)]
pub enum ValuesLayer {
    /// Values documents, merged in order (maps merge, anything else replaces).
    Docs {
        /// Provenance label (`value from clusters/api-values.yaml`).
        label: String,
        roots: Vec<Node>,
    },
    /// helm-controller's `valuesFrom[].targetPath`: `value` set at `path` as its
    /// `ReplacePathValue` does (Helm's `--set` parser on `path=value`; a value in single or
    /// double quotes is set as a string without them, others are typed like `--set`).
    AtPath {
        label: String,
        path: String,
        value: String,
        /// Where the value is written (the ConfigMap or Secret key).
        span: Span,
    },
}

/// Apply `layer` over `base`, recording where each path came from.
pub fn apply(base: Map, layer: &ValuesLayer, origins: &mut ValueOrigins) -> Result<Map, String> {
    match layer {
        ValuesLayer::Docs { label, roots } => {
            let mut out = base;
            for root in roots {
                match node_to_value(root) {
                    Value::Nil => {}
                    Value::Map(m) => {
                        out = merge_maps(&out, &m.borrow());
                        origins.add(&[], root, label);
                    }
                    other => {
                        return Err(format!(
                            "{label}: error unmarshaling JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                            json_kind(&other)
                        ));
                    }
                }
            }
            Ok(out)
        }
        ValuesLayer::AtPath {
            label,
            path,
            value,
            span,
        } => {
            let dest = Value::map(base);
            let quoted = value.len() >= 2
                && ((value.starts_with('"') && value.ends_with('"'))
                    || (value.starts_with('\'') && value.ends_with('\'')));
            let result = if quoted {
                let bare = value.trim_matches(['"', '\'']);
                strvals::parse_into_string(&format!("{path}={bare}"), &dest)
            } else {
                strvals::parse_into(&format!("{path}={value}"), &dest)
            };
            result.map_err(|e| format!("{label}: failed to set target path '{path}': {e}"))?;
            origins.set_path(&origins_key(path), *span, label);
            Ok(match dest {
                Value::Map(m) => m.borrow().clone(),
                _ => Map::new(),
            })
        }
    }
}

/// `a.b[0].c` → `a.b.0.c`, the form provenance looks paths up by.
pub(super) fn origins_key(path: &str) -> String {
    path.trim()
        .replace("\\.", "\u{0}")
        .replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(|s| s.replace('\u{0}', "."))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn json(m: &Map) -> String {
        super::super::schema::to_json(&Value::map(m.clone())).to_string()
    }

    #[test]
    fn target_path_values_are_typed_like_set_unless_quoted() {
        let mut origins = ValueOrigins::default();
        let span = Span::new(FileId::default(), 3, 7);
        let mut m = Map::new();
        for (path, value) in [
            ("image.tag", "1.2.3"),
            ("replicaCount", "3"),
            ("debug", "true"),
            ("port", "'8080'"),
            ("list[1].name", "b"),
        ] {
            let layer = ValuesLayer::AtPath {
                label: "value from cm".into(),
                path: path.into(),
                value: value.into(),
                span,
            };
            m = apply(m, &layer, &mut origins).unwrap_or_default();
        }
        assert_eq!(
            json(&m),
            r#"{"debug":true,"image":{"tag":"1.2.3"},"list":[null,{"name":"b"}],"port":"8080","replicaCount":3}"#
        );
        assert_eq!(
            origins
                .lookup("list.1.name")
                .map(|(s, l)| (s.start, l.as_str())),
            Some((3, "value from cm"))
        );
    }

    #[test]
    fn documents_merge_and_non_maps_fail_like_helm() {
        let mut origins = ValueOrigins::default();
        let doc = |t: &str| crate::yaml::first_doc(t);
        let base = apply(
            Map::new(),
            &ValuesLayer::Docs {
                label: "a".into(),
                roots: vec![doc("x: {a: 1, z: 2}\n")],
            },
            &mut origins,
        )
        .unwrap_or_default();
        let merged = apply(
            base,
            &ValuesLayer::Docs {
                label: "b".into(),
                roots: vec![doc("x: {a: 5}\n")],
            },
            &mut origins,
        )
        .unwrap_or_default();
        assert_eq!(json(&merged), r#"{"x":{"a":5,"z":2}}"#);
        assert_eq!(origins.lookup("x.a").map(|(_, l)| l.as_str()), Some("b"));
        let err = apply(
            Map::new(),
            &ValuesLayer::Docs {
                label: "c".into(),
                roots: vec![doc("- 1\n")],
            },
            &mut origins,
        );
        assert!(err.is_err_and(|e| e.contains("cannot unmarshal array")));
    }
}
