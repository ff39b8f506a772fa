//! Strategic merge patch on span-carrying trees, with Kubernetes' merge keys.
//!
//! Lists of built-in kinds merge by their `patchMergeKey` as kustomize's schema gives it
//! (`merge_keys`: containers by name, webhooks by name, ports by containerPort, …); with a
//! custom `openapi:` schema, lists it leaves open merge by the first key kyaml would infer
//! (`mountPath`, `devicePath`, `ip`, `type`, `topologyKey`, `name`, `containerPort`);
//! other lists are replaced. Directives: `$patch: delete|replace|merge`,
//! `$setElementOrder/<list>`, `$retainKeys`, `$deleteFromPrimitiveList/<list>`; a null
//! value deletes its key, also inside content the patch adds (kyaml merges that into an
//! empty map). A value the patch sets points at the patch and remembers the base value it
//! overrode as a related span.

use super::merge_keys::{self, ListKey};
use super::openapi::{CustomSchema, ListMerge};
use super::tree;
use crate::yaml::{Entry, Node, Value};
use std::sync::Arc;

/// Keys kyaml uses to treat a list of maps as associative when it has no schema.
const INFERRED_KEYS: [&str; 7] = [
    "mountPath",
    "devicePath",
    "ip",
    "type",
    "topologyKey",
    "name",
    "containerPort",
];

fn infer_key(items: &[Node]) -> Option<&'static str> {
    let first = items.iter().find(|i| i.as_map().is_some())?;
    INFERRED_KEYS.into_iter().find(|k| first.get(k).is_some())
}

pub struct Smp {
    /// The schema type of the patched kind when kustomize's built-in schema knows it.
    pub builtin: Option<&'static str>,
    /// Merge lists of custom resources by inferred keys (a custom schema is declared).
    pub infer: bool,
    /// The custom `openapi:` schema and the patched object's (group, version, kind): lists
    /// it declares merge as it says.
    pub custom: Option<(Arc<CustomSchema>, (String, String, String))>,
}

/// Does the patch delete the whole object (`$patch: delete` at the top)?
pub fn deletes_object(patch: &Node) -> bool {
    patch.get_str("$patch") == Some("delete")
}

impl Smp {
    pub fn merge(&self, base: &mut Node, patch: &Node) {
        let mut path = Vec::new();
        self.merge_map(base, patch, &mut path);
    }

    fn merge_map(&self, base: &mut Node, patch: &Node, path: &mut Vec<String>) {
        let Some(pentries) = patch.as_map() else {
            return;
        };
        match patch.get_str("$patch") {
            Some("replace") => {
                let mut fresh = patch.clone();
                strip_directives(&mut fresh);
                self.drop_nulls(&mut fresh, path);
                *base = fresh;
                return;
            }
            Some("delete") => {
                base.value = Value::Null;
                return;
            }
            _ => {}
        }
        if base.as_map().is_none() {
            let mut fresh = patch.clone();
            strip_directives(&mut fresh);
            self.drop_nulls(&mut fresh, path);
            let old = base.span;
            *base = fresh;
            tree::push_related(base, old, "base value");
            return;
        }
        if let Some(retain) = patch.get("$retainKeys").and_then(Node::as_seq) {
            let keep: Vec<String> = retain.iter().filter_map(tree::text).collect();
            if let Value::Map(entries) = &mut base.value {
                entries.retain(|e| keep.iter().any(|k| *k == e.key.key_str()));
            }
        }
        for pe in pentries {
            let key = pe.key.key_str().into_owned();
            if key == "$patch" || key == "$retainKeys" || key.starts_with("$setElementOrder/") {
                continue;
            }
            if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
                let drop: Vec<String> = pe
                    .value
                    .as_seq()
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(tree::text)
                    .collect();
                if let Some(Value::Seq(items)) = base.get_mut(field).map(|n| &mut n.value) {
                    items.retain(|i| !tree::text(i).is_some_and(|t| drop.contains(&t)));
                }
                continue;
            }
            if pe.value.is_null() {
                tree::remove(base, &key);
                continue;
            }
            let exists = base.get(&key).is_some_and(|v| !v.is_null());
            if !exists {
                let mut fresh = pe.value.clone();
                strip_directives(&mut fresh);
                if fresh.as_map().is_some_and(|m| m.is_empty())
                    && pe.value.get_str("$patch").is_some()
                {
                    continue;
                }
                self.drop_added_nulls(&mut fresh, path, &key);
                tree::set(base, &key, fresh);
                // keep the key's span on the patch too
                if let Value::Map(entries) = &mut base.value
                    && let Some(e) = entries.iter_mut().rev().find(|e| e.key.key_is(&key))
                {
                    e.key.span = pe.key.span;
                }
                continue;
            }
            let Some(bval) = base.get_mut(&key) else {
                continue;
            };
            match (&pe.value.value, &bval.value) {
                (Value::Map(_), Value::Map(_)) => {
                    path.push(key.clone());
                    self.merge_map(bval, &pe.value, path);
                    path.pop();
                    if bval.is_null() {
                        tree::remove(base, &key);
                    }
                }
                (Value::Seq(pitems), Value::Seq(_)) => {
                    let order = patch
                        .get(&format!("$setElementOrder/{key}"))
                        .and_then(Node::as_seq);
                    self.merge_list(bval, pitems, &key, order, path);
                }
                _ => {
                    let mut fresh = pe.value.clone();
                    strip_directives(&mut fresh);
                    let scalar = bval.as_map().is_none() && bval.as_seq().is_none();
                    if (scalar && !bval.is_empty_value()) || bval.span != fresh.span {
                        tree::push_related(&mut fresh, bval.span, "base value");
                    }
                    *bval = fresh;
                }
            }
        }
    }

    fn merge_list(
        &self,
        base: &mut Node,
        pitems: &[Node],
        field: &str,
        order: Option<&[Node]>,
        path: &mut Vec<String>,
    ) {
        let Value::Seq(bitems) = &mut base.value else {
            return;
        };
        // `$patch: replace` as a list element replaces the whole list.
        if pitems
            .iter()
            .any(|p| p.get_str("$patch") == Some("replace"))
        {
            let kept: Vec<Node> = pitems
                .iter()
                .filter(|p| p.get_str("$patch") != Some("replace"))
                .map(|p| {
                    let mut c = p.clone();
                    strip_directives(&mut c);
                    c
                })
                .collect();
            *bitems = kept;
            return;
        }
        let key = self.list_key(path, field, pitems, bitems);
        let all_maps = pitems.iter().all(|p| p.as_map().is_some());
        match key.as_deref() {
            Some("") => {
                // primitive set merge: keep base, add missing
                for p in pitems {
                    if !bitems.iter().any(|b| tree::same_data(b, p)) {
                        bitems.push(p.clone());
                    }
                }
            }
            Some(k) if all_maps => {
                path.push(field.to_string());
                // kustomize prints a merged list in patch order followed by the items only the
                // base has.
                let base_first = false;
                let mut merged: Vec<Node> = Vec::new();
                let mut appended: Vec<Node> = Vec::new();
                let key_of = |n: &Node| n.get(k).map(|v| v.to_json());
                for p in pitems {
                    let pk = key_of(p);
                    let pos = pk
                        .as_ref()
                        .and_then(|pk| bitems.iter().position(|b| key_of(b).as_ref() == Some(pk)));
                    if p.get_str("$patch") == Some("delete") {
                        if let Some(i) = pos {
                            bitems.remove(i);
                        }
                        continue;
                    }
                    match pos {
                        Some(i) if base_first => self.merge_map(&mut bitems[i], p, path),
                        Some(i) => {
                            let mut item = bitems.remove(i);
                            self.merge_map(&mut item, p, path);
                            merged.push(item);
                        }
                        None => {
                            let mut c = p.clone();
                            strip_directives(&mut c);
                            self.drop_nulls(&mut c, path);
                            if base_first {
                                appended.push(c);
                            } else {
                                merged.push(c);
                            }
                        }
                    }
                }
                if base_first {
                    bitems.append(&mut appended);
                } else {
                    merged.append(bitems);
                    *bitems = merged;
                }
                path.pop();
                if let Some(order) = order {
                    reorder(bitems, order, k);
                }
            }
            _ => {
                let fresh: Vec<Node> = pitems
                    .iter()
                    .map(|p| {
                        let mut c = p.clone();
                        strip_directives(&mut c);
                        c
                    })
                    .collect();
                *bitems = fresh;
            }
        }
    }

    /// The key a list at `path`/`field` merges by: `Some("")` for a set of scalars, `None`
    /// for a list the patch replaces whole (as kustomize does for custom resources without
    /// a schema).
    fn list_key(
        &self,
        path: &[String],
        field: &str,
        pitems: &[Node],
        bitems: &[Node],
    ) -> Option<String> {
        if let Some(root) = self.builtin {
            return match merge_keys::list_key(root, path, field) {
                ListKey::By(k) => Some(k.to_string()),
                ListKey::Set => Some(String::new()),
                ListKey::Replace => None,
            };
        }
        let declared = match &self.custom {
            Some((schema, (g, v, k))) => schema.list_merge(g, v, k, path, field),
            None => ListMerge::Unknown,
        };
        match declared {
            ListMerge::ByKey(k) => Some(k),
            ListMerge::Replace => None,
            ListMerge::Unknown if self.infer => infer_key(pitems)
                .or_else(|| infer_key(bitems))
                .map(str::to_string),
            ListMerge::Unknown => None,
        }
    }

    /// kyaml merges content a patch adds into an empty map, so a `null` there deletes its
    /// key as it would in the base: `affinity: {nodeAffinity: null}` over a base without
    /// affinity leaves `affinity: {}`. This goes through maps and lists merged by key; a
    /// list the patch replaces whole keeps its nulls (measured with kubectl kustomize v5.5).
    fn drop_nulls(&self, map: &mut Node, path: &mut Vec<String>) {
        let Value::Map(entries) = &mut map.value else {
            return;
        };
        entries.retain(|e| !e.value.is_null());
        for e in entries.iter_mut() {
            let key = e.key.key_str().into_owned();
            self.drop_added_nulls(&mut e.value, path, &key);
        }
    }

    /// [`Self::drop_nulls`] for the value a patch adds under `field` of the map at `path`.
    fn drop_added_nulls(&self, value: &mut Node, path: &mut Vec<String>, field: &str) {
        let merged = match &value.value {
            Value::Map(_) => true,
            Value::Seq(items) => {
                items.iter().all(|i| i.as_map().is_some())
                    && self
                        .list_key(path, field, items, &[])
                        .is_some_and(|k| !k.is_empty())
            }
            _ => false,
        };
        if !merged {
            return;
        }
        path.push(field.to_string());
        match &mut value.value {
            Value::Seq(items) => items.iter_mut().for_each(|i| self.drop_nulls(i, path)),
            _ => self.drop_nulls(value, path),
        }
        path.pop();
    }
}

/// Order list items as `$setElementOrder` says; items it does not name keep their place
/// after the named ones.
fn reorder(items: &mut Vec<Node>, order: &[Node], key: &str) {
    let wanted: Vec<serde_json::Value> = order
        .iter()
        .filter_map(|o| o.get(key).map(Node::to_json))
        .collect();
    let mut named: Vec<Node> = Vec::new();
    for w in &wanted {
        if let Some(i) = items
            .iter()
            .position(|it| it.get(key).map(Node::to_json).as_ref() == Some(w))
        {
            named.push(items.remove(i));
        }
    }
    named.append(items);
    *items = named;
}

/// Drop `$patch`/`$setElementOrder`/`$retainKeys` keys from content a patch adds.
pub fn strip_directives(node: &mut Node) {
    match &mut node.value {
        Value::Map(entries) => {
            entries.retain(|e: &Entry| !e.key.key_str().starts_with('$'));
            for e in entries {
                strip_directives(&mut e.value);
            }
        }
        Value::Seq(items) => {
            items.retain(|i| i.get_str("$patch") != Some("delete"));
            for i in items {
                strip_directives(i);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;
    use crate::yaml::{Limits, emit, parse_str};

    fn node(text: &str, file: u32) -> Node {
        parse_str(text, FileId(file), &Limits::default())
            .docs
            .into_iter()
            .next()
            .map(|d| d.root)
            .unwrap_or_else(|| Node::new(Value::Null, Default::default()))
    }

    fn merged(base: &str, patch: &str, builtin: bool) -> String {
        let mut b = node(base, 0);
        Smp {
            builtin: builtin.then_some("io.k8s.api.core.v1.Pod"),
            infer: false,
            custom: None,
        }
        .merge(&mut b, &node(patch, 1));
        emit::to_yaml(&b)
    }

    #[test]
    fn containers_merge_by_name_patch_order_first() {
        let base =
            "spec:\n  containers:\n  - name: a\n    image: a:1\n  - name: b\n    image: b:1\n";
        let patch =
            "spec:\n  containers:\n  - name: c\n    image: c:1\n  - name: a\n    image: a:2\n";
        assert_eq!(
            merged(base, patch, true),
            "spec:\n  containers:\n  - image: c:1\n    name: c\n  - image: a:2\n    name: a\n  - image: b:1\n    name: b\n"
        );
    }

    #[test]
    fn directives_delete_and_replace() {
        let base = "a:\n  x: 1\n  \"y\": 2\nl:\n- name: a\n- name: b\n";
        let patch = "a:\n  x: null\nl:\n- name: b\n  $patch: delete\n";
        assert_eq!(
            merged(base, patch, false),
            "a:\n  \"y\": 2\nl:\n- name: b\n"
        );
        let patch = "a:\n  $patch: replace\n  z: 3\n";
        assert_eq!(
            merged(base, patch, false),
            "a:\n  z: 3\nl:\n- name: a\n- name: b\n"
        );
    }

    #[test]
    fn nulls_in_added_content_delete_their_keys_except_in_replaced_lists() {
        // what kubectl kustomize v5.5 printed for this patch over this base
        let base = "spec:\n  containers:\n  - name: a\n    image: a:1\n";
        let patch = "spec:\n  securityContext:\n    runAsUser: null\n  tolerations:\n  - key: k\n    value: null\n  containers:\n  - name: a\n    resources:\n      limits: {cpu: null}\n  - name: b\n    args: null\n    env:\n    - name: X\n      value: null\n";
        assert_eq!(
            merged(base, patch, true),
            "spec:\n  containers:\n  - image: a:1\n    name: a\n    resources:\n      limits: {}\n  - env:\n    - name: X\n    name: b\n  securityContext: {}\n  tolerations:\n  - key: k\n    value: null\n"
        );
    }

    #[test]
    fn custom_resource_lists_are_replaced() {
        let base = "spec:\n  containers:\n  - name: a\n    image: a:1\n";
        let patch = "spec:\n  containers:\n  - name: a\n    env: []\n";
        assert_eq!(
            merged(base, patch, false),
            "spec:\n  containers:\n  - env: []\n    name: a\n"
        );
    }

    #[test]
    fn patched_scalar_keeps_the_base_as_related() {
        let mut b = node("spec:\n  replicas: 1\n", 0);
        Smp {
            builtin: Some("io.k8s.api.apps.v1.Deployment"),
            infer: false,
            custom: None,
        }
        .merge(&mut b, &node("spec:\n  replicas: 5\n", 1));
        let r = b
            .get_path(&["spec", "replicas"])
            .cloned()
            .unwrap_or_else(|| node("", 0));
        assert_eq!(r.span.file, FileId(1));
        let related = r.related.as_deref().cloned().unwrap_or_default();
        assert_eq!(related.first().map(|x| x.span.file), Some(FileId(0)));
    }
}
