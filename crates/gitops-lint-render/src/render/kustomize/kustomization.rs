//! The kustomization file: located, read and checked; fields are read on demand from the
//! span-carrying tree so every issue can point at the entry that caused it.

use super::tree;
use crate::source::{FileId, RepoFs, Span};
use crate::yaml::{Limits, Node, Value, parse_file};

pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

pub struct Kustomization {
    /// Repo-relative directory ("" for the repo root).
    pub dir: String,
    pub file: FileId,
    pub root: Node,
    pub is_component: bool,
}

/// A list entry: its text and where it is written.
#[derive(Clone, Debug)]
pub struct Item {
    pub text: String,
    pub span: Span,
}

pub fn join(dir: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let joined = if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    };
    crate::source::normalize_relative(&joined)
}

pub fn display_dir(dir: &str) -> &str {
    if dir.is_empty() { "." } else { dir }
}

/// Which kustomization file a directory holds: Ok(None) when there is none.
pub fn find_file(fs: &dyn RepoFs, dir: &str) -> Result<Option<String>, String> {
    let mut found = Vec::new();
    for name in FILE_NAMES {
        let p = join(dir, name).unwrap_or_default();
        if fs.is_file(&p) {
            found.push(p);
        }
    }
    if found.len() > 1 {
        return Err(format!(
            "Found multiple kustomization files under: {}",
            display_dir(dir)
        ));
    }
    Ok(found.pop())
}

pub fn load(
    fs: &dyn RepoFs,
    dir: &str,
    path: &str,
) -> Result<Kustomization, (Option<Span>, String)> {
    let file = fs.read(path).map_err(|e| (None, e.to_string()))?;
    let parsed = parse_file(fs.source_map(), file, &Limits::default());
    if let Some(err) = parsed.error {
        return Err((
            Some(err.span),
            format!("invalid kustomization {path}: {}", err.message),
        ));
    }
    let whole = Span::new(file, 0, 0);
    let root = match parsed.docs.into_iter().next() {
        Some(d) if !d.root.is_null() => d.root,
        _ => Node::new(Value::Map(Vec::new()), whole),
    };
    if root.as_map().is_none() {
        return Err((
            Some(root.span),
            format!("invalid kustomization {path}: not a map"),
        ));
    }
    let mut root = root;
    normalize_field_names(&mut root);
    let kind = root.get("kind").and_then(tree::text).unwrap_or_default();
    let is_component = kind == "Component";
    if !matches!(kind.as_str(), "" | "Kustomization" | "Component") {
        return Err((
            root.get("kind").map(|n| n.span),
            format!("invalid Kustomization: kind '{kind}' is not Kustomization or Component"),
        ));
    }
    Ok(Kustomization {
        dir: dir.to_string(),
        file,
        root,
        is_component,
    })
}

impl Kustomization {
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.root.get(key).filter(|n| !n.is_null())
    }

    /// Where a field is written (its key), or the file start.
    pub fn span_of(&self, key: &str) -> Span {
        self.root
            .entry(key)
            .map(|e| e.key.span)
            .unwrap_or(Span::new(self.file, 0, 0))
    }

    pub fn string(&self, key: &str) -> Option<(String, Span)> {
        let n = self.get(key)?;
        Some((tree::text(n)?, n.span))
    }

    /// A list of strings (resources, components, …), with their spans.
    pub fn items(&self, key: &str) -> Vec<Item> {
        self.get(key)
            .and_then(Node::as_seq)
            .map(|s| {
                s.iter()
                    .filter_map(|n| {
                        Some(Item {
                            text: tree::text(n)?,
                            span: n.span,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn seq(&self, key: &str) -> &[Node] {
        self.get(key).and_then(Node::as_seq).unwrap_or(&[])
    }

    /// A string map (commonLabels, commonAnnotations) with the span of each entry.
    pub fn string_map(&self, key: &str) -> Vec<(String, String, Span)> {
        string_pairs(self.get(key))
    }
}

pub fn string_pairs(n: Option<&Node>) -> Vec<(String, String, Span)> {
    n.and_then(Node::as_map)
        .map(|m| {
            m.iter()
                .map(|e| {
                    (
                        e.key.key_str().into_owned(),
                        tree::text(&e.value).unwrap_or_default(),
                        e.key.span.cover(e.value.span),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Kustomization fields, spelled as kustomize's Go struct names them.
const FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "resources",
    "bases",
    "components",
    "patches",
    "patchesStrategicMerge",
    "patchesJson6902",
    "namespace",
    "namePrefix",
    "nameSuffix",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "images",
    "imageTags",
    "replicas",
    "configMapGenerator",
    "secretGenerator",
    "generatorOptions",
    "replacements",
    "vars",
    "crds",
    "openapi",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "sortOptions",
    "buildMetadata",
    "helmCharts",
    "helmGlobals",
    "helmChartInflationGenerator",
];

/// Go decodes the kustomization case-insensitively (`nameprefix:` works), so do we.
fn normalize_field_names(root: &mut Node) {
    if let Value::Map(entries) = &mut root.value {
        for e in entries {
            let k = e.key.key_str().into_owned();
            if let Some(f) = FIELDS
                .iter()
                .find(|f| f.eq_ignore_ascii_case(&k) && **f != k)
            {
                e.key.value = Value::String((*f).to_string());
            }
        }
    }
}
