//! The ignore-rule model shared by the ignore rules (`ignore-differences-*`,
//! `respect-ignore-differences-missing`): Argo CD `ignoreDifferences` items (app level and
//! `argocd-cm` system level), parsed with spans, and the matching semantics of Argo's diff
//! normalizer (https://argo-cd.readthedocs.io/en/stable/user-guide/diffing/).

pub use crate::glob::glob_match;
use crate::object::Object;
use crate::source::Span;
use crate::yaml::Node;
pub use crate::yaml::path::pointer_segments;

/// Where an ignore entry is declared.
#[derive(Clone, Debug, PartialEq)]
pub enum IgnoreOrigin {
    /// `spec.ignoreDifferences[]` of an Application (or an ApplicationSet template).
    App,
    /// `resource.customizations.ignoreDifferences.<group_kind>` (or the legacy key) in argocd-cm.
    System { key: String },
    /// ApplicationSet `spec.ignoreApplicationDifferences[]`.
    AppSet,
}

/// One path expression with its span (the list element a person edits).
#[derive(Clone, Debug, PartialEq)]
pub struct PathExpr {
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct IgnoreEntry {
    pub origin: IgnoreOrigin,
    /// The item node (a map), for key checks and comment lookup; for system entries the
    /// parsed YAML value of the argocd-cm key.
    pub node: Node,
    /// Span of the whole item in the file a person edits (for system entries: the key).
    pub span: Span,
    pub group: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub json_pointers: Vec<PathExpr>,
    pub jq_paths: Vec<PathExpr>,
    pub managers: Vec<PathExpr>,
}

pub const ARGO_ITEM_KEYS: &[&str] = &[
    "group",
    "kind",
    "name",
    "namespace",
    "jsonPointers",
    "jqPathExpressions",
    "managedFieldsManagers",
];

fn string_list(node: Option<&Node>) -> Vec<PathExpr> {
    let Some(node) = node else { return vec![] };
    match node.as_seq() {
        Some(items) => items
            .iter()
            .filter_map(|n| n.scalar_text().map(|text| PathExpr { text, span: n.span }))
            .collect(),
        None => node
            .scalar_text()
            .map(|text| {
                vec![PathExpr {
                    text,
                    span: node.span,
                }]
            })
            .unwrap_or_default(),
    }
}

impl IgnoreEntry {
    /// An app-level item (`ignoreDifferences[i]`).
    pub fn from_item(item: &Node, origin: IgnoreOrigin) -> IgnoreEntry {
        let s = |k: &str| item.get(k).and_then(Node::scalar_text);
        IgnoreEntry {
            origin,
            node: item.clone(),
            span: item.full_span(),
            group: s("group"),
            kind: s("kind"),
            name: s("name"),
            namespace: s("namespace"),
            json_pointers: string_list(item.get("jsonPointers")),
            jq_paths: string_list(item.get("jqPathExpressions")),
            managers: string_list(item.get("managedFieldsManagers")),
        }
    }

    /// A system-level entry: `group`/`kind` from the argocd-cm key, paths from its YAML value
    /// (whose spans point into a virtual file, so they are re-pointed at the key).
    pub fn from_system(
        key: &str,
        key_span: Span,
        group: Option<String>,
        kind: Option<String>,
        value: &Node,
    ) -> IgnoreEntry {
        // A path read from a copy of the value (a quoted or folded string) points at the key;
        // one read where it stands (a literal block) keeps its line.
        let repoint = |mut v: Vec<PathExpr>| {
            for p in &mut v {
                if p.span.file != key_span.file {
                    p.span = key_span;
                }
            }
            v
        };
        IgnoreEntry {
            origin: IgnoreOrigin::System {
                key: key.to_string(),
            },
            node: value.clone(),
            span: key_span,
            group,
            kind,
            name: None,
            namespace: None,
            json_pointers: repoint(string_list(value.get("jsonPointers"))),
            jq_paths: repoint(string_list(value.get("jqPathExpressions"))),
            managers: repoint(string_list(value.get("managedFieldsManagers"))),
        }
    }

    /// Does this entry select `obj` (A1.1: group/kind glob, name/namespace exact, an omitted
    /// group means the core group only)?
    pub fn matches(&self, obj: &Object, effective_namespace: &str) -> bool {
        let group = self.group.as_deref().unwrap_or("");
        if !glob_match(group, obj.group()) {
            return false;
        }
        match &self.kind {
            Some(kind) if glob_match(kind, &obj.kind) => {}
            _ => return false,
        }
        if let Some(name) = &self.name
            && !name.is_empty()
            && name != &obj.name
        {
            return false;
        }
        if let Some(ns) = &self.namespace
            && !ns.is_empty()
            && ns != effective_namespace
        {
            return false;
        }
        true
    }

    /// The field paths this entry removes from comparison, as key paths (`["spec","replicas"]`,
    /// `*` for "every element"), for the pointers and the jq expressions we can read.
    pub fn paths(&self) -> Vec<(Vec<String>, Span)> {
        let mut out = Vec::new();
        for p in &self.json_pointers {
            if let Some(path) = pointer_segments(&p.text) {
                out.push((path, p.span));
            }
        }
        for p in &self.jq_paths {
            if let Some(path) = jq_simple_path(&p.text) {
                out.push((path, p.span));
            }
        }
        out
    }
}

/// The key path of a simple jq path expression: `.a.b`, `.a[]`, `.a[]?`, `.a[0]`,
/// `.a["k"]`, `.a[] | select(.name == "x") | .b` (the element is `*`). None when the
/// expression is more than a path.
pub fn jq_simple_path(expr: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for (i, part) in expr.split('|').map(str::trim).enumerate() {
        if part.starts_with("select(") && part.ends_with(')') {
            continue;
        }
        if i > 0 && part == "." {
            continue;
        }
        let mut s = part;
        if !s.starts_with('.') {
            return None;
        }
        while !s.is_empty() {
            if let Some(rest) = s.strip_prefix('.') {
                s = rest;
                if s.is_empty() {
                    break;
                }
                if s.starts_with('[') {
                    continue;
                }
                if let Some(rest) = s.strip_prefix('"') {
                    let end = rest.find('"')?;
                    out.push(rest[..end].to_string());
                    s = &rest[end + 1..];
                    continue;
                }
                let end = s
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
                    .unwrap_or(s.len());
                if end == 0 {
                    return None;
                }
                out.push(s[..end].to_string());
                s = &s[end..];
            } else if let Some(rest) = s.strip_prefix('[') {
                let end = rest.find(']')?;
                let inner = rest[..end].trim();
                if inner.is_empty() {
                    out.push("*".into());
                } else if let Some(q) = inner.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
                    out.push(q.to_string());
                } else if inner.parse::<i64>().is_ok() {
                    out.push(inner.to_string());
                } else {
                    return None;
                }
                s = &rest[end + 1..];
                if let Some(rest) = s.strip_prefix('?') {
                    s = rest;
                }
            } else {
                return None;
            }
        }
    }
    Some(out)
}

/// Does the object declare something at `path` (or below it)? `*` walks every element.
pub fn declares(node: &Node, path: &[String]) -> bool {
    let Some((head, rest)) = path.split_first() else {
        return true;
    };
    if let Some(items) = node.as_seq() {
        if head == "*" {
            return items.iter().any(|n| declares(n, rest));
        }
        let idx = head.parse::<i64>().ok();
        return match idx {
            Some(i) if i >= 0 => items.get(i as usize).is_some_and(|n| declares(n, rest)),
            Some(i) => items
                .len()
                .checked_sub(i.unsigned_abs() as usize)
                .and_then(|j| items.get(j))
                .is_some_and(|n| declares(n, rest)),
            None => false,
        };
    }
    match node.get(head) {
        Some(child) => declares(child, rest),
        None => false,
    }
}

/// The `select(.key == "value")` filters of a simple jq path, one per `[]` element in
/// order (`None` where an element has none): `.spec.http[] | select(.name == "mirror")`
/// ignores only the element named `mirror`, not every element.
pub fn jq_select_filters(expr: &str) -> Vec<Option<(String, String)>> {
    let mut out: Vec<Option<(String, String)>> = Vec::new();
    for part in expr.split('|').map(str::trim) {
        if let Some(cond) = part
            .strip_prefix("select(")
            .and_then(|p| p.strip_suffix(')'))
        {
            let parsed = cond.split_once("==").and_then(|(k, v)| {
                let key = k.trim().strip_prefix('.')?;
                let value = v.trim().strip_prefix('"')?.strip_suffix('"')?;
                let simple = !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
                simple.then(|| (key.to_string(), value.to_string()))
            });
            if let (Some(f), Some(last @ None)) = (parsed, out.last_mut()) {
                *last = Some(f);
            }
            continue;
        }
        out.extend(std::iter::repeat_n(None, part.matches("[]").count()));
    }
    out
}

/// [`declares`] where each `*` element must also pass its filter (see [`jq_select_filters`]).
pub fn declares_where(node: &Node, path: &[String], filters: &[Option<(String, String)>]) -> bool {
    let Some((head, rest)) = path.split_first() else {
        return true;
    };
    if head == "*"
        && let Some(items) = node.as_seq()
    {
        let (filter, later) = filters
            .split_first()
            .map_or((&None, filters), |(f, l)| (f, l));
        return items.iter().any(|n| {
            filter
                .as_ref()
                .is_none_or(|(k, v)| n.get(k).and_then(Node::scalar_text).as_deref() == Some(v))
                && declares_where(n, rest, later)
        });
    }
    if node.as_seq().is_some() {
        return declares(node, path);
    }
    match node.get(head) {
        Some(child) => declares_where(child, rest, filters),
        None => false,
    }
}

/// Span of the first node declared at `path` (`*` walks every element).
pub fn declares_span(node: &Node, path: &[String]) -> Option<Span> {
    let Some((head, rest)) = path.split_first() else {
        return Some(node.span);
    };
    if let Some(items) = node.as_seq() {
        if head == "*" {
            return items.iter().find_map(|n| declares_span(n, rest));
        }
        let i = head.parse::<usize>().ok()?;
        return items.get(i).and_then(|n| declares_span(n, rest));
    }
    let entry = node.entry(head)?;
    if rest.is_empty() {
        return Some(entry.key.span.cover(entry.value.span));
    }
    declares_span(&entry.value, rest)
}

#[cfg(test)]
mod select_tests {
    use super::*;

    #[test]
    fn select_filters_follow_their_elements() {
        let f = |s: &str| jq_select_filters(s);
        assert_eq!(
            f(".spec.http[] | select(.name == \"mirror\")"),
            [Some(("name".to_string(), "mirror".to_string()))]
        );
        assert_eq!(
            f(".spec.a[]? | select(.name==\"x\") | .b[]"),
            [Some(("name".to_string(), "x".to_string())), None]
        );
        assert_eq!(f(".spec.a[] | select(.x | test(\"y\"))"), [None]);
        assert!(f(".spec.replicas").is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jq_paths() {
        let p = |s: &str| jq_simple_path(s).map(|v| v.join("/"));
        assert_eq!(p(".spec.replicas").as_deref(), Some("spec/replicas"));
        assert_eq!(
            p(".webhooks[]?.clientConfig.caBundle").as_deref(),
            Some("webhooks/*/clientConfig/caBundle")
        );
        assert_eq!(
            p(".spec.template.spec.containers[] | select(.name == \"app\") | .image").as_deref(),
            Some("spec/template/spec/containers/*/image")
        );
        assert_eq!(p(".").as_deref(), Some(""));
        assert_eq!(p("del(.a)"), None);
    }

    #[test]
    fn pointers_and_globs() {
        assert_eq!(
            pointer_segments("/metadata/annotations/a~1b"),
            Some(vec!["metadata".into(), "annotations".into(), "a/b".into()])
        );
        assert_eq!(pointer_segments("spec/replicas"), None);
        assert_eq!(pointer_segments("/a/~2"), None);
        assert!(glob_match("*", "apps"));
        assert!(glob_match("", ""));
        assert!(!glob_match("", "apps"));
        assert!(glob_match("*.example.io", "x.example.io"));
    }
}
