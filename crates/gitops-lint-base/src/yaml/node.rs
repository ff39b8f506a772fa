//! The span-carrying YAML tree every later stage reads: each value and each map key knows
//! where it was written, so a finding can point at the exact line a person edits.

use crate::source::Span;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// How a scalar or collection was written; kept so output can be re-emitted faithfully and
/// so rules can tell `"yes"` from `yes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Style {
    #[default]
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
    /// `[a, b]` / `{a: b}`
    Flow,
    /// Indented block collection.
    Block,
}

/// A further place that contributed to a node, shown as a secondary label (the base value a
/// patch overrode, the values-file line a template printed).
#[derive(Clone, Debug, PartialEq)]
pub struct Related {
    pub span: Span,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub value: Value,
    /// Where a person edits this value (after rendering: the patch, template or values line).
    pub span: Span,
    pub style: Style,
    /// Tag and original text ([`Node::tag`], [`Node::raw`]), boxed: few nodes have either,
    /// and every node of every object carries the field (a node is 64 bytes, not 88).
    /// Never `Some` of an empty [`WrittenAs`], so equal nodes compare equal.
    written: Option<Box<WrittenAs>>,
    /// Secondary places (see [`Related`]); shared because renderers copy nodes a lot.
    pub related: Option<Arc<Vec<Related>>>,
}

/// How a node was written beyond its value.
#[derive(Clone, Debug, PartialEq, Default)]
struct WrittenAs {
    tag: Option<Box<str>>,
    raw: Option<Box<str>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

impl Node {
    pub fn new(value: Value, span: Span) -> Node {
        Node {
            value,
            span,
            style: Style::Plain,
            written: None,
            related: None,
        }
    }

    /// Explicit tag (`!!str`, `!custom`), if any.
    pub fn tag(&self) -> Option<&str> {
        self.written.as_ref()?.tag.as_deref()
    }

    /// Original text of a plain scalar that did not resolve to a string (`0644`, `1e3`,
    /// `yes`), for faithful re-emission and for rules on how a value was written.
    pub fn raw(&self) -> Option<&str> {
        self.written.as_ref()?.raw.as_deref()
    }

    pub fn set_tag(&mut self, tag: Option<Box<str>>) {
        self.set_written(|w| w.tag = tag);
    }

    pub fn set_raw(&mut self, raw: Option<Box<str>>) {
        self.set_written(|w| w.raw = raw);
    }

    fn set_written(&mut self, change: impl FnOnce(&mut WrittenAs)) {
        let mut written = self.written.take().map(|w| *w).unwrap_or_default();
        change(&mut written);
        if written.tag.is_some() || written.raw.is_some() {
            self.written = Some(Box::new(written));
        }
    }

    /// The scalar's text as written: the original text of a plain non-string scalar (`1.10`
    /// stays `1.10`, not the float's `1.1`), else [`Node::scalar_text`].
    pub fn text_as_written(&self) -> Option<String> {
        self.raw()
            .map(str::to_string)
            .or_else(|| self.scalar_text())
    }

    pub fn string(s: impl Into<String>, span: Span) -> Node {
        Node::new(Value::String(s.into()), span)
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match &self.value {
            Value::Int(i) => Some(*i),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i64),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The entry under `key` (the last one when a key is duplicated: Kubernetes is last-wins).
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.as_map()?.iter().rev().find(|e| e.key.key_is(key))
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    /// Follow a path of map keys.
    pub fn get_path(&self, path: &[&str]) -> Option<&Node> {
        let mut node = self;
        for key in path {
            node = node.get(key)?;
        }
        Some(node)
    }

    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Node::as_str)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        match &mut self.value {
            Value::Map(entries) => entries
                .iter_mut()
                .rev()
                .find(|e| e.key.key_is(key))
                .map(|e| &mut e.value),
            _ => None,
        }
    }

    /// Whether this map key is `key` as [`Node::key_str`] names it, without building the
    /// name of a string key (the lookups every stage makes).
    #[inline]
    pub fn key_is(&self, key: &str) -> bool {
        match &self.value {
            Value::String(s) => s == key,
            _ => self.key_str() == key,
        }
    }

    /// A map key as Kubernetes' YAML→JSON conversion names it (`on:` → `"true"`, `1:` → `"1"`).
    pub fn key_str(&self) -> std::borrow::Cow<'_, str> {
        match &self.value {
            Value::String(s) => std::borrow::Cow::Borrowed(s),
            Value::Bool(b) => std::borrow::Cow::Owned(b.to_string()),
            Value::Int(i) => std::borrow::Cow::Owned(i.to_string()),
            Value::Float(f) => std::borrow::Cow::Owned(super::float::format_float(*f)),
            Value::Null => std::borrow::Cow::Borrowed("null"),
            Value::Seq(_) | Value::Map(_) => std::borrow::Cow::Borrowed(""),
        }
    }

    /// [`Node::scalar_text`], borrowed when the scalar is a string (hot comparisons such as
    /// kustomize's resource ids then allocate nothing).
    pub fn scalar_str(&self) -> Option<std::borrow::Cow<'_, str>> {
        match &self.value {
            Value::String(s) => Some(std::borrow::Cow::Borrowed(s)),
            _ => self.scalar_text().map(std::borrow::Cow::Owned),
        }
    }

    /// Scalar text as it would appear in a string field (`yes` → `true`, `0644` → `420`).
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(super::float::format_float(*f)),
            Value::Null => None,
            _ => None,
        }
    }

    /// Is this an empty map, empty sequence or null (what `{}`, `[]` and `~` declare)?
    pub fn is_empty_value(&self) -> bool {
        match &self.value {
            Value::Null => true,
            Value::Seq(s) => s.is_empty(),
            Value::Map(m) => m.is_empty(),
            Value::String(_) | Value::Bool(_) | Value::Int(_) | Value::Float(_) => false,
        }
    }

    /// Place this tree in `file`: text parsed once before its file was registered (Helm's
    /// rendered documents) takes the file's spans, offsets unchanged.
    pub fn set_file(&mut self, file: crate::source::FileId) {
        self.span.file = file;
        match &mut self.value {
            Value::Seq(items) => items.iter_mut().for_each(|n| n.set_file(file)),
            Value::Map(entries) => {
                for e in entries {
                    e.key.set_file(file);
                    e.value.set_file(file);
                }
            }
            _ => {}
        }
    }

    /// The whole extent of this node including its children (block collections end at
    /// their last child).
    pub fn full_span(&self) -> Span {
        let mut span = self.span;
        match &self.value {
            Value::Seq(items) => {
                if let Some(last) = items.last() {
                    span = span.cover(last.full_span());
                }
            }
            Value::Map(entries) => {
                if let Some(last) = entries.last() {
                    span = span.cover(last.key.span).cover(last.value.full_span());
                }
            }
            _ => {}
        }
        span
    }

    /// Convert to JSON as Kubernetes would send it (for JSONPath queries and JSON output).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(J::Number)
                .unwrap_or(J::Null),
            Value::String(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => {
                let mut m = serde_json::Map::new();
                for e in entries {
                    m.insert(e.key.key_str().into_owned(), e.value.to_json());
                }
                J::Object(m)
            }
        }
    }

    /// Visit every node below (and including) this one with its path from here. Iterative,
    /// so even a deep tree cannot overflow the stack.
    pub fn walk<'a>(&'a self, mut f: impl FnMut(&[PathSeg<'a>], &'a Node)) {
        // One path buffer for the whole walk: each stacked node carries the length of its
        // parent's path and its own step, and the buffer is cut back to that length when the
        // node is visited (a path copied per node cost an allocation per node).
        let mut stack: Vec<(usize, Option<PathSeg<'a>>, &'a Node)> = vec![(0, None, self)];
        let mut path: Vec<PathSeg<'a>> = Vec::new();
        while let Some((parent_len, step, node)) = stack.pop() {
            path.truncate(parent_len);
            path.extend(step);
            f(&path, node);
            let len = path.len();
            match &node.value {
                Value::Seq(items) => {
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push((len, Some(PathSeg::Index(i)), item));
                    }
                }
                Value::Map(entries) => {
                    for e in entries.iter().rev() {
                        stack.push((
                            len,
                            Some(PathSeg::Key(e.key.as_str().unwrap_or(""))),
                            &e.value,
                        ));
                    }
                }
                _ => {}
            }
        }
    }
}

/// One step of a path into a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSeg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Render a path as a dotted field path (`spec.template.spec.containers[0].image`).
pub fn path_to_string(path: &[PathSeg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            PathSeg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            PathSeg::Index(i) => {
                out.push_str(&format!("[{i}]"));
            }
        }
    }
    out
}

// Deep trees are capped by the parser's depth limit, but a Drop of a long chain is still
// recursive; the cap keeps it well within the stack.

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_root(text: &str) -> Node {
        crate::yaml::parse_str(text, crate::source::FileId(0), &Default::default())
            .docs
            .remove(0)
            .root
    }

    #[test]
    fn walk_visits_every_node_in_document_order_with_its_path() {
        let root = parse_root("a:\n  b: [x, {c: w}]\nd: z\n");
        let mut seen = Vec::new();
        root.walk(|path, node| {
            seen.push(format!(
                "{} = {}",
                path_to_string(path),
                node.scalar_text().unwrap_or_default()
            ));
        });
        assert_eq!(
            seen,
            [
                " = ",
                "a = ",
                "a.b = ",
                "a.b[0] = x",
                "a.b[1] = ",
                "a.b[1].c = w",
                "d = z",
            ]
        );
    }

    #[test]
    fn key_is_names_keys_as_key_str_does() {
        let root = parse_root("on: a\n1: b\n1.50: c\nnull: d\nname: e\n");
        for e in root.as_map().expect("map") {
            let name = e.key.key_str();
            assert!(e.key.key_is(&name), "{name}");
            assert!(!e.key.key_is("other"), "{name}");
        }
        // A non-string key is looked up by its JSON name, not as written.
        assert!(root.get("true").is_some() && root.get("on").is_none());
    }

    #[test]
    fn a_node_stays_small() {
        // Every object is a tree of these: a field added inline grows every render and walk.
        assert_eq!(std::mem::size_of::<Node>(), 64);
    }

    #[test]
    fn tag_and_raw_are_kept_apart_and_cleared_to_nothing() {
        let root = parse_root("a: !!int 0644\nb: yes\nc: plain\nd: 3\ne: 1.10\n");
        let a = root.get("a").expect("a");
        assert_eq!(
            (a.tag(), a.raw()),
            (Some("tag:yaml.org,2002:int"), Some("0644"))
        );
        let b = root.get("b").expect("b");
        assert_eq!((b.tag(), b.raw()), (None, Some("yes")));
        let c = root.get("c").expect("c");
        assert_eq!((c.tag(), c.raw()), (None, None));
        let d = root.get("d").expect("d");
        assert_eq!(
            (d.raw(), d.text_as_written().as_deref()),
            (Some("3"), Some("3"))
        );
        let e = root.get("e").expect("e");
        assert_eq!(
            (e.raw(), e.text_as_written().as_deref()),
            (Some("1.10"), Some("1.10"))
        );
        // A node whose tag and raw text are cleared equals one that never had them.
        let mut cleared = a.clone();
        cleared.set_tag(None);
        cleared.set_raw(None);
        let mut fresh = Node::new(a.value.clone(), a.span);
        fresh.style = a.style;
        assert_eq!(cleared, fresh);
    }
}
