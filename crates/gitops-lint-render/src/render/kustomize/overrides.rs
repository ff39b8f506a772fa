//! Argo CD's `source.kustomize` overrides. Argo runs `kustomize edit set …` / `edit add …`
//! on a copy of the kustomization before building; we do the same to the parsed file in
//! memory, so the repository is never written.

use super::kustomization::Kustomization;
use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};

#[derive(Clone, Debug, Default)]
pub struct ImageOverride {
    /// As Argo stores it: `name=newName:tag`, `name:tag`, `name@digest`, …
    pub spec: String,
}

#[derive(Clone, Debug, Default)]
pub struct ReplicaOverride {
    pub name: String,
    pub count: i64,
}

#[derive(Clone, Debug, Default)]
pub struct PatchOverride {
    /// Inline patch text (strategic merge or JSON 6902).
    pub patch: Option<String>,
    /// Patch file relative to the kustomization directory.
    pub path: Option<String>,
    /// Target selector fields (group, version, kind, name, namespace, labelSelector,
    /// annotationSelector).
    pub target: Vec<(String, String)>,
}

#[derive(Clone, Debug, Default)]
pub struct KustomizeOverrides {
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    pub namespace: Option<String>,
    pub images: Vec<ImageOverride>,
    pub common_labels: Vec<(String, String)>,
    pub common_annotations: Vec<(String, String)>,
    /// `forceCommonLabels` / `forceCommonAnnotations`: overwrite existing keys instead of
    /// failing as `kustomize edit add label` does without `--force`.
    pub force_common_labels: bool,
    pub force_common_annotations: bool,
    pub patches: Vec<PatchOverride>,
    pub replicas: Vec<ReplicaOverride>,
    pub components: Vec<String>,
}

/// Split `name=newName:tag@digest` as `kustomize edit set image` does.
fn image_entry(spec: &str, span: Span) -> Node {
    let (name, rest) = match spec.split_once('=') {
        Some((n, r)) => (n.to_string(), r.to_string()),
        None => (String::new(), spec.to_string()),
    };
    let (new_name, tag, digest) = super::transform::split_image(&rest);
    let mut m = tree::map(span);
    let name = if name.is_empty() {
        new_name.clone()
    } else {
        name
    };
    tree::set(&mut m, "name", tree::string(&name, span));
    if new_name != name {
        tree::set(&mut m, "newName", tree::string(&new_name, span));
    }
    if !tag.is_empty() {
        tree::set(&mut m, "newTag", tree::string(&tag, span));
    }
    if !digest.is_empty() {
        tree::set(&mut m, "digest", tree::string(&digest, span));
    }
    m
}

fn seq_field<'a>(root: &'a mut Node, key: &str, span: Span) -> Option<&'a mut Vec<Node>> {
    let n = tree::entry_or_insert(root, key, || Node::new(Value::Seq(Vec::new()), span))?;
    match &mut n.value {
        Value::Seq(items) => Some(items),
        _ => None,
    }
}

impl KustomizeOverrides {
    pub fn is_empty(&self) -> bool {
        self.name_prefix.is_none()
            && self.name_suffix.is_none()
            && self.namespace.is_none()
            && self.images.is_empty()
            && self.common_labels.is_empty()
            && self.common_annotations.is_empty()
            && self.patches.is_empty()
            && self.replicas.is_empty()
            && self.components.is_empty()
    }

    /// The kustomization file as Argo CD would leave it after its edits.
    pub fn apply(&self, k: &Kustomization) -> Node {
        let span = Span::new(k.file, 0, 0);
        let mut root = k.root.clone();
        let s = |t: &str| tree::string(t, span);
        if let Some(p) = &self.name_prefix {
            tree::set(&mut root, "namePrefix", s(p));
        }
        if let Some(p) = &self.name_suffix {
            tree::set(&mut root, "nameSuffix", s(p));
        }
        if let Some(ns) = &self.namespace {
            tree::set(&mut root, "namespace", s(ns));
        }
        for img in &self.images {
            let entry = image_entry(&img.spec, span);
            let name = entry.get_str("name").unwrap_or_default().to_string();
            if let Some(items) = seq_field(&mut root, "images", span) {
                match items
                    .iter_mut()
                    .find(|i| i.get_str("name") == Some(name.as_str()))
                {
                    Some(existing) => *existing = entry,
                    None => items.push(entry),
                }
            }
        }
        for (field, pairs, force) in [
            (
                "commonLabels",
                &self.common_labels,
                self.force_common_labels,
            ),
            (
                "commonAnnotations",
                &self.common_annotations,
                self.force_common_annotations,
            ),
        ] {
            if pairs.is_empty() {
                continue;
            }
            if let Some(m) = tree::entry_or_insert(&mut root, field, || tree::map(span)) {
                for (key, v) in pairs {
                    if m.get(key).is_some() && !force {
                        continue;
                    }
                    tree::set(m, key, s(v));
                }
            }
        }
        for r in &self.replicas {
            let mut entry = tree::map(span);
            tree::set(&mut entry, "name", s(&r.name));
            tree::set(&mut entry, "count", Node::new(Value::Int(r.count), span));
            if let Some(items) = seq_field(&mut root, "replicas", span) {
                match items
                    .iter_mut()
                    .find(|i| i.get_str("name") == Some(r.name.as_str()))
                {
                    Some(existing) => *existing = entry,
                    None => items.push(entry),
                }
            }
        }
        for p in &self.patches {
            let mut entry = tree::map(span);
            if let Some(text) = &p.patch {
                tree::set(&mut entry, "patch", s(text));
            }
            if let Some(path) = &p.path {
                tree::set(&mut entry, "path", s(path));
            }
            if !p.target.is_empty() {
                let mut t = tree::map(span);
                for (key, v) in &p.target {
                    tree::set(&mut t, key, s(v));
                }
                tree::set(&mut entry, "target", t);
            }
            if let Some(items) = seq_field(&mut root, "patches", span) {
                items.push(entry);
            }
        }
        for c in &self.components {
            if let Some(items) = seq_field(&mut root, "components", span)
                && !items.iter().any(|i| i.as_str() == Some(c.as_str()))
            {
                items.push(s(c));
            }
        }
        root
    }
}
