//! kustomize-controller's overlay (https://fluxcd.io/flux/components/kustomize/kustomizations/):
//! the kustomization it builds is the one at `spec.path` (or one it generates listing every YAML
//! file below the path), with `targetNamespace`, `namePrefix`, `nameSuffix`, `patches`, `images`
//! and `components` written into it; `commonMetadata` is set on every object after the build. The
//! values are cloned from the Flux Kustomization with their spans, so a value a Flux patch sets
//! points at the patch in the Kustomization file.

use crate::object::Object;
use crate::source::{FileId, FsError, Origin, RepoFs, SourceFile, SourceMap};
use crate::yaml::{Entry, Limits, Node, Value, parse_str};
use std::collections::BTreeSet;

/// The `spec` fields the controller writes into the kustomization.
const OVERLAY_FIELDS: &[&str] = &[
    "namePrefix",
    "nameSuffix",
    "patches",
    "images",
    "components",
];

/// Does the Kustomization ask for an overlay beyond `targetNamespace` (which the model
/// applies as the objects' effective namespace without rebuilding)?
pub fn has_overlay(spec: &Node) -> bool {
    OVERLAY_FIELDS.iter().any(|f| spec.get(f).is_some())
}

fn set(root: &mut Node, key: &str, value: Node) {
    if root.is_null() {
        root.value = Value::Map(Vec::new());
    }
    if let Value::Map(entries) = &mut root.value {
        match entries.iter_mut().find(|e| e.key.key_is(key)) {
            Some(e) => e.value = value,
            None => entries.push(Entry {
                key: Node::string(key, value.span),
                value,
            }),
        }
    }
}

/// The list under `key`, created when absent (a non-list is replaced).
fn list<'a>(root: &'a mut Node, key: &str, like: &Node) -> Option<&'a mut Vec<Node>> {
    if !matches!(root.get(key).map(|n| &n.value), Some(Value::Seq(_))) {
        set(root, key, Node::new(Value::Seq(Vec::new()), like.span));
    }
    let Value::Map(entries) = &mut root.value else {
        return None;
    };
    match &mut entries.iter_mut().find(|e| e.key.key_is(key))?.value.value {
        Value::Seq(items) => Some(items),
        _ => None,
    }
}

/// The kustomization `base` with the Flux Kustomization's overlay fields written into it,
/// as the controller's generator does: scalars replace, patches and components append,
/// images replace the entry of the same name. With `ignoreMissingComponents: true`
/// (kustomize-controller v1.5+) a `spec.components` entry for which `component_exists` is
/// false is left out instead of failing the build.
pub fn overlay(mut base: Node, spec: &Node, component_exists: &dyn Fn(&str) -> bool) -> Node {
    let skip_missing = spec.get("ignoreMissingComponents").and_then(Node::as_bool) == Some(true);
    if let Some(ns) = spec.get("targetNamespace") {
        set(&mut base, "namespace", ns.clone());
    }
    for key in ["namePrefix", "nameSuffix"] {
        if let Some(v) = spec.get(key) {
            set(&mut base, key, v.clone());
        }
    }
    for key in ["patches", "components"] {
        if let Some(items) = spec.get(key).and_then(Node::as_seq)
            && let Some(field) = spec.get(key)
            && let Some(out) = list(&mut base, key, field)
        {
            out.extend(
                items
                    .iter()
                    .filter(|c| {
                        key != "components"
                            || !skip_missing
                            || c.scalar_text().is_none_or(|path| component_exists(&path))
                    })
                    .cloned(),
            );
        }
    }
    if let Some(images) = spec.get("images")
        && let Some(items) = images.as_seq()
        && let Some(out) = list(&mut base, "images", images)
    {
        for img in items {
            let name = img.get_str("name");
            match out
                .iter_mut()
                .find(|o| name.is_some() && o.get_str("name") == name)
            {
                Some(existing) => *existing = img.clone(),
                None => out.push(img.clone()),
            }
        }
    }
    base
}

/// `commonMetadata` labels and annotations, set (overwriting) on every object's metadata.
pub fn apply_common_metadata(obj: &mut Object, spec: &Node) {
    let Some(common) = spec.get("commonMetadata") else {
        return;
    };
    let mut changed = false;
    for key in ["labels", "annotations"] {
        let Some(pairs) = common.get(key).and_then(Node::as_map) else {
            continue;
        };
        if pairs.is_empty() {
            continue;
        }
        let mut meta = obj
            .root
            .get("metadata")
            .cloned()
            .unwrap_or_else(|| Node::new(Value::Map(Vec::new()), obj.root.span));
        let mut target = meta
            .get(key)
            .filter(|n| n.as_map().is_some())
            .cloned()
            .unwrap_or_else(|| Node::new(Value::Map(Vec::new()), common.span));
        for e in pairs {
            set(&mut target, &e.key.key_str(), e.value.clone());
        }
        set(&mut meta, key, target);
        set(&mut obj.root, "metadata", meta);
        changed = true;
    }
    if changed && let Some(re) = Object::from_node(obj.root.clone()) {
        *obj = re;
    }
}

/// The kustomization the controller generates for a path without one: every `.yaml`/`.yml`
/// file below it, and sub-directories holding a kustomization as directories (not
/// descended), in walk order.
pub fn generated_kustomization(
    fs: &dyn RepoFs,
    dir: &str,
    kustomizations: &BTreeSet<String>,
) -> String {
    let mut resources = Vec::new();
    let mut stack = vec![dir.to_string()];
    while let Some(d) = stack.pop() {
        let mut subdirs = Vec::new();
        for name in fs.list_dir(&d).unwrap_or_default() {
            let path = if d.is_empty() {
                name.clone()
            } else {
                format!("{d}/{name}")
            };
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .trim_start_matches('/')
                .to_string();
            if fs.is_dir(&path) {
                if kustomizations.contains(&path) {
                    resources.push(format!("./{rel}"));
                } else {
                    subdirs.push(path);
                }
            } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                resources.push(format!("./{rel}"));
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    resources.sort();
    let mut text = String::from(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n",
    );
    for r in resources {
        text.push_str(&format!("- {}\n", serde_json::Value::String(r)));
    }
    text
}

/// A repo view with one extra, generated file: the kustomization Flux writes into a path
/// that has none. Everything else is read from the repo.
pub struct GeneratedFs<'a> {
    inner: &'a dyn RepoFs,
    path: String,
    file: FileId,
}

impl<'a> GeneratedFs<'a> {
    pub fn new(inner: &'a dyn RepoFs, dir: &str, text: String) -> GeneratedFs<'a> {
        let path = if dir.is_empty() {
            "kustomization.yaml".to_string()
        } else {
            format!("{dir}/kustomization.yaml")
        };
        let file = inner.source_map().add(SourceFile::new(
            format!("{path} (generated by kustomize-controller)"),
            text,
            Origin::Virtual,
        ));
        GeneratedFs { inner, path, file }
    }

    /// The generated kustomization, parsed.
    pub fn root(&self) -> Node {
        let text = self.inner.source_map().get(self.file).text.clone();
        parse_str(&text, self.file, &Limits::default())
            .docs
            .into_iter()
            .next()
            .map(|d| d.root)
            .unwrap_or_else(|| Node::new(Value::Null, Default::default()))
    }
}

impl RepoFs for GeneratedFs<'_> {
    fn read(&self, path: &str) -> Result<FileId, FsError> {
        if path == self.path {
            return Ok(self.file);
        }
        self.inner.read(path)
    }
    fn is_file(&self, path: &str) -> bool {
        path == self.path || self.inner.is_file(path)
    }
    fn is_dir(&self, path: &str) -> bool {
        self.inner.is_dir(path)
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, FsError> {
        let mut names = self.inner.list_dir(path)?;
        let dir = self.path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        if path == dir && !names.iter().any(|n| n == "kustomization.yaml") {
            names.push("kustomization.yaml".into());
            names.sort();
        }
        Ok(names)
    }
    fn source_map(&self) -> &SourceMap {
        self.inner.source_map()
    }
    fn read_bytes(&self, path: &str) -> Result<Vec<u8>, FsError> {
        self.inner.read_bytes(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Node {
        crate::yaml::first_doc(text)
    }

    #[test]
    fn overlay_replaces_scalars_appends_patches_and_replaces_images_by_name() {
        let base = parse(
            "resources: [a.yaml]\nnamePrefix: old-\nimages:\n- name: app\n  newTag: '1'\npatches:\n- path: p.yaml\n",
        );
        let spec = parse(
            "targetNamespace: web\nnamePrefix: prod-\nimages:\n- name: app\n  newTag: '2'\n- name: db\n  newTag: '9'\npatches:\n- patch: x\n  target: {kind: Deployment}\ncomponents: [../c]\n",
        );
        let out = overlay(base, &spec, &|_| false);
        assert_eq!(out.get_str("namespace"), Some("web"));
        assert_eq!(out.get_str("namePrefix"), Some("prod-"));
        let images = out.get("images").and_then(Node::as_seq).unwrap_or_default();
        let tags: Vec<_> = images.iter().filter_map(|i| i.get_str("newTag")).collect();
        assert_eq!(tags, ["2", "9"]);
        let patches = out
            .get("patches")
            .and_then(Node::as_seq)
            .unwrap_or_default();
        assert_eq!(patches.len(), 2);
        assert_eq!(
            out.get("components")
                .and_then(Node::as_seq)
                .map(|c| c.len()),
            Some(1)
        );
    }

    #[test]
    fn ignore_missing_components_leaves_out_only_missing_ones() {
        let spec = |flag: &str| {
            parse(&format!(
                "components: [../present, ../missing]\nignoreMissingComponents: {flag}\n"
            ))
        };
        let names = |out: Node| -> Vec<String> {
            out.get("components")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(Node::scalar_text)
                .collect()
        };
        let exists = |p: &str| p == "../present";
        assert_eq!(
            names(overlay(parse("resources: []\n"), &spec("true"), &exists)),
            ["../present"]
        );
        assert_eq!(
            names(overlay(parse("resources: []\n"), &spec("false"), &exists)),
            ["../present", "../missing"]
        );
    }

    #[test]
    fn common_metadata_overwrites_labels_and_adds_annotations() {
        let mut obj = Object::from_node(parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {team: a}\n",
        ))
        .unwrap_or_else(|| panic!("object"));
        let spec = parse("commonMetadata:\n  labels: {team: b}\n  annotations: {owner: ops}\n");
        apply_common_metadata(&mut obj, &spec);
        assert_eq!(obj.label("team"), Some("b"));
        assert_eq!(obj.annotation("owner"), Some("ops"));
    }
}
