//! The `openapi:` field: a custom schema (`path:`, JSON or YAML) or a builtin version.
//!
//! kustomize keeps one schema for the whole build: the top kustomization's `openapi:` if it
//! has one, else the first one met while accumulating (a base's). A custom schema tells the
//! strategic merge how the lists of the kinds it declares (`x-kubernetes-group-version-kind`)
//! merge: `x-kubernetes-patch-merge-key` with strategy `merge`, or the first of
//! `x-kubernetes-list-map-keys` of a `map` list; a list the schema declares without either
//! is replaced.

use super::tree;
use crate::source::FileId;
use crate::yaml::{Limits, Node, parse_file};
use serde_json::Value as Json;
use std::sync::Arc;

/// Kubernetes OpenAPI versions kustomize v5.5 has built in.
const BUILTIN_VERSIONS: [&str; 1] = ["v1.21.2"];

/// Which schema the build's strategic merges use.
#[derive(Clone, Debug, Default)]
pub struct SchemaChoice {
    /// Chosen already (later `openapi:` fields of bases are ignored).
    pub chosen: bool,
    pub custom: Option<Arc<CustomSchema>>,
}

/// What a schema says about one list field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListMerge {
    /// Merge items by this key.
    ByKey(String),
    /// Declared, without a merge key: the patch's list replaces the base's.
    Replace,
    /// The schema does not describe this field (or this kind).
    Unknown,
}

#[derive(Debug, Default)]
pub struct CustomSchema {
    definitions: serde_json::Map<String, Json>,
    /// (group, version, kind) → definition name.
    kinds: Vec<(String, String, String, String)>,
}

/// What a kustomization's `openapi:` field asks for.
pub enum Request<'a> {
    None,
    Version(&'a Node),
    Path,
}

/// Read the `openapi:` field; both a version and a path is an error (as in kustomize).
pub fn request(field: Option<&Node>) -> Result<Request<'_>, (crate::source::Span, String)> {
    let Some(f) = field else {
        return Ok(Request::None);
    };
    let version = f.get("version");
    let path = f.get("path");
    match (version, path) {
        (Some(_), Some(_)) => Err((
            f.span,
            "builtin version and custom schema provided, cannot use both".into(),
        )),
        (_, Some(_)) => Ok(Request::Path),
        (Some(v), None) => Ok(Request::Version(v)),
        (None, None) => Ok(Request::None),
    }
}

/// Check a builtin version (empty means kustomize's default).
pub fn check_version(v: &Node) -> Result<(), (crate::source::Span, String)> {
    let text = tree::text(v).unwrap_or_default();
    if text.is_empty() || BUILTIN_VERSIONS.contains(&text.as_str()) {
        return Ok(());
    }
    Err((
        v.span,
        format!(
            "the specified OpenAPI version is not built in: '{text}' (kustomize v5.5 has {})",
            BUILTIN_VERSIONS.join(", ")
        ),
    ))
}

impl CustomSchema {
    /// Parse a schema file (JSON is YAML). A file that is not a schema gives an empty one, as
    /// kustomize only reads it when a merge needs it.
    pub fn load(map: &crate::source::SourceMap, file: FileId) -> CustomSchema {
        let parsed = parse_file(map, file, &Limits::default());
        let Some(doc) = parsed.docs.into_iter().next() else {
            return CustomSchema::default();
        };
        let Json::Object(mut root) = doc.root.to_json() else {
            return CustomSchema::default();
        };
        let Some(Json::Object(definitions)) = root.remove("definitions") else {
            return CustomSchema::default();
        };
        let mut kinds = Vec::new();
        for (name, def) in &definitions {
            let Some(gvks) = def
                .get("x-kubernetes-group-version-kind")
                .and_then(Json::as_array)
            else {
                continue;
            };
            for g in gvks {
                let field = |k: &str| g.get(k).and_then(Json::as_str).unwrap_or("").to_string();
                kinds.push((
                    field("group"),
                    field("version"),
                    field("kind"),
                    name.clone(),
                ));
            }
        }
        CustomSchema { definitions, kinds }
    }

    /// How the list `field`, reached through the map fields `path` (lists stepped into
    /// implicitly), merges in objects of this group/version/kind.
    pub fn list_merge(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        path: &[String],
        field: &str,
    ) -> ListMerge {
        let Some(def) = self
            .kinds
            .iter()
            .find(|(g, v, k, _)| g == group && v == version && k == kind)
            .and_then(|(.., name)| self.definitions.get(name))
        else {
            return ListMerge::Unknown;
        };
        let mut node = self.resolve(def, 0);
        for seg in path {
            let Some(next) = node.and_then(|n| self.property(n, seg)) else {
                return ListMerge::Unknown;
            };
            node = Some(next);
        }
        let Some(list) = node.and_then(|n| self.field(n, field)) else {
            return ListMerge::Unknown;
        };
        let strategy = list
            .get("x-kubernetes-patch-strategy")
            .and_then(Json::as_str)
            .unwrap_or("");
        if let Some(key) = list
            .get("x-kubernetes-patch-merge-key")
            .and_then(Json::as_str)
            && strategy.split(',').any(|s| s == "merge")
        {
            return ListMerge::ByKey(key.to_string());
        }
        if list.get("x-kubernetes-list-type").and_then(Json::as_str) == Some("map")
            && let Some(key) = list
                .get("x-kubernetes-list-map-keys")
                .and_then(Json::as_array)
                .and_then(|keys| keys.first())
                .and_then(Json::as_str)
        {
            return ListMerge::ByKey(key.to_string());
        }
        ListMerge::Replace
    }

    /// A `$ref` to `#/definitions/<name>` followed (a bounded number of times: refs may loop).
    fn resolve<'a>(&'a self, node: &'a Json, depth: usize) -> Option<&'a Json> {
        match node.get("$ref").and_then(Json::as_str) {
            Some(r) if depth < 32 => {
                let name = r.strip_prefix("#/definitions/")?;
                self.resolve(self.definitions.get(name)?, depth + 1)
            }
            Some(_) => None,
            None => Some(node),
        }
    }

    /// The schema of property `name` of an object schema, as declared (not stepped into).
    fn field<'a>(&'a self, object: &'a Json, name: &str) -> Option<&'a Json> {
        let prop = object.get("properties")?.get(name)?;
        self.resolve(prop, 0)
    }

    /// The object schema a path segment leads to: the property, or its items for a list.
    fn property<'a>(&'a self, object: &'a Json, name: &str) -> Option<&'a Json> {
        let prop = self.field(object, name)?;
        match prop.get("items") {
            Some(items) if prop.get("type").and_then(Json::as_str) == Some("array") => {
                self.resolve(items, 0)
            }
            _ => Some(prop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceMap;

    fn schema(text: &str) -> CustomSchema {
        let map = SourceMap::new();
        let file = map.add_text("schema.json", text);
        CustomSchema::load(&map, file)
    }

    const SCHEMA: &str = r##"{"definitions": {
      "v1.Thing": {"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Thing"}],
        "properties": {"spec": {"properties": {"template": {"$ref": "#/definitions/Pod"}}}}},
      "Pod": {"properties": {
        "containers": {"type": "array", "items": {"$ref": "#/definitions/C"},
          "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"},
        "hosts": {"type": "array", "items": {"type": "object"},
          "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["ip", "port"]},
        "args": {"type": "array", "items": {"type": "string"}}}},
      "C": {"properties": {"ports": {"type": "array", "items": {"type": "object"},
          "x-kubernetes-patch-merge-key": "containerPort"}}},
      "Loop": {"$ref": "#/definitions/Loop"}
    }}"##;

    fn s(path: &[&str]) -> Vec<String> {
        path.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn list_merge_follows_refs_items_and_extensions() {
        let sc = schema(SCHEMA);
        let at = |path: &[&str], field: &str| {
            sc.list_merge("example.com", "v1", "Thing", &s(path), field)
        };
        assert_eq!(
            at(&["spec", "template"], "containers"),
            ListMerge::ByKey("name".into())
        );
        assert_eq!(
            at(&["spec", "template"], "hosts"),
            ListMerge::ByKey("ip".into())
        );
        assert_eq!(at(&["spec", "template"], "args"), ListMerge::Replace);
        // A merge key without the merge strategy does not merge.
        assert_eq!(
            at(&["spec", "template", "containers"], "ports"),
            ListMerge::Replace
        );
        assert_eq!(at(&["spec"], "other"), ListMerge::Unknown);
        assert_eq!(
            sc.list_merge("", "v1", "Thing", &s(&["spec"]), "x"),
            ListMerge::Unknown
        );
    }

    #[test]
    fn bad_schemas_say_nothing_and_ref_loops_end() {
        assert_eq!(
            schema("not: [valid").list_merge("g", "v", "k", &[], "f"),
            ListMerge::Unknown
        );
        let sc = schema(SCHEMA);
        let looped = sc.definitions.get("Loop").and_then(|d| sc.resolve(d, 0));
        assert!(looped.is_none());
    }
}
