//! Chart templates and values texts parsed once per process. A template's trees depend only
//! on its name, its text and the function set (Helm's, fixed); a values text's YAML only on
//! the text and the file its spans name. So every render of a chart — each app that deploys
//! it, the render-twice check, both sides of `diff` — reuses the first parse of its templates
//! and of its `values.yaml` (150 releases of 30 charts parse 30 values texts, not 150). The
//! caches are keyed by the full text: an edited file is parsed again.

use crate::hash::FastMap;
use crate::render::gotmpl::Templates;
use crate::render::gotmpl::parse::{ParseError, Tree};
use crate::source::FileId;
use crate::yaml::{Limits, Node, Value as Y, YamlError, parse_str};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Beyond this much text a cache stops growing (later texts are parsed per render, as
/// without it): a process rendering many charts keeps bounded memory.
const MAX_CACHED_TEXT_BYTES: usize = 64 << 20;

/// Parse results by text, then by what else the parse depends on (`K`), bounded in the text
/// it holds.
struct TextCache<K, V> {
    by_text: FastMap<String, Vec<(K, V)>>,
    bytes: usize,
}

impl<K: PartialEq, V: Clone> TextCache<K, V> {
    fn new() -> Self {
        TextCache {
            by_text: FastMap::default(),
            bytes: 0,
        }
    }

    fn get(&self, text: &str, is_key: impl Fn(&K) -> bool) -> Option<V> {
        self.by_text
            .get(text)?
            .iter()
            .find(|(k, _)| is_key(k))
            .map(|(_, v)| v.clone())
    }

    /// Keep `value` unless that would hold more than the bound (`key_bytes`: what the key
    /// itself holds).
    fn put(&mut self, text: &str, key: K, key_bytes: usize, value: V) {
        let cost = key_bytes + text.len();
        if self.bytes + cost > MAX_CACHED_TEXT_BYTES {
            return;
        }
        self.bytes += cost;
        let entries = self.by_text.entry(text.to_string()).or_default();
        if !entries.iter().any(|(k, _)| *k == key) {
            entries.push((key, value));
        }
    }
}

fn locked<K, V>(cache: &Mutex<TextCache<K, V>>) -> MutexGuard<'_, TextCache<K, V>> {
    cache.lock().unwrap_or_else(|e| e.into_inner())
}

type Parsed = Result<Arc<[Arc<Tree>]>, ParseError>;

fn templates() -> &'static Mutex<TextCache<String, Parsed>> {
    static CACHE: OnceLock<Mutex<TextCache<String, Parsed>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(TextCache::new()))
}

/// Parse `text` as template `name` for `set` (Helm's functions, default delimiters) and
/// add its trees, as `set.parse(name, text)` does.
pub fn parse_into(set: &mut Templates, name: &str, text: &str) -> Result<(), ParseError> {
    let cached = locked(templates()).get(text, |n| n == name);
    let parsed = cached.unwrap_or_else(|| {
        let parsed: Parsed = set.parse_trees(name, text).map(Arc::from);
        locked(templates()).put(text, name.to_string(), name.len(), parsed.clone());
        parsed
    });
    set.add_trees(&parsed?);
    Ok(())
}

/// A values text as YAML: its documents, or the first syntax error.
pub struct ParsedValues {
    pub docs: Vec<Node>,
    /// The documents that are maps, shared by every values document made from them.
    pub map_roots: Arc<Vec<Node>>,
    pub error: Option<YamlError>,
}

fn values() -> &'static Mutex<TextCache<FileId, Arc<ParsedValues>>> {
    static CACHE: OnceLock<Mutex<TextCache<FileId, Arc<ParsedValues>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(TextCache::new()))
}

/// `text` of `file` parsed as YAML with the default limits, from the cache when it was
/// parsed before.
pub fn parse_values(text: &str, file: FileId) -> Arc<ParsedValues> {
    if let Some(hit) = locked(values()).get(text, |f| *f == file) {
        return hit;
    }
    let parsed = parse_str(text, file, &Limits::default());
    let docs: Vec<Node> = parsed.docs.into_iter().map(|d| d.root).collect();
    let map_roots = docs
        .iter()
        .filter(|d| matches!(d.value, Y::Map(_)))
        .cloned()
        .collect();
    let out = Arc::new(ParsedValues {
        docs,
        map_roots: Arc::new(map_roots),
        error: parsed.error,
    });
    locked(values()).put(text, file, 0, out.clone());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::gotmpl::ExecOptions;
    use crate::render::gotmpl::value::Value;
    use crate::render::helm::yamlout::lookup_func;
    use std::rc::Rc;

    fn run(set: &Templates, name: &str) -> String {
        let mut env = crate::render::helm::yamlout::func_env();
        set.execute(name, Value::Nil, &ExecOptions::helm(), &mut env)
            .map(|o| o.text)
            .unwrap_or_else(|e| e.message)
    }

    #[test]
    fn a_cached_parse_renders_as_a_fresh_one_and_edits_miss() {
        let text = r#"{{ define "t.x" }}x{{ end }}a{{ include "t.x" . | upper }}"#;
        let mut first = Templates::new(Rc::new(lookup_func));
        parse_into(&mut first, "t/templates/a.yaml", text).expect("parses");
        let mut second = Templates::new(Rc::new(lookup_func));
        parse_into(&mut second, "t/templates/a.yaml", text).expect("parses");
        assert_eq!(run(&first, "t/templates/a.yaml"), "aX");
        assert_eq!(run(&second, "t/templates/a.yaml"), "aX");
        // The same text under another name is that name's template.
        let mut other = Templates::new(Rc::new(lookup_func));
        parse_into(&mut other, "u/templates/a.yaml", text).expect("parses");
        assert!(other.contains("u/templates/a.yaml") && !other.contains("t/templates/a.yaml"));
        // An edited text is parsed again, and a parse error is the same error every time.
        let mut edited = Templates::new(Rc::new(lookup_func));
        parse_into(&mut edited, "t/templates/a.yaml", "b{{ 1 }}").expect("parses");
        assert_eq!(run(&edited, "t/templates/a.yaml"), "b1");
        let bad = "{{ if }}";
        let e1 = parse_into(&mut Templates::new(Rc::new(lookup_func)), "t/b.yaml", bad);
        let e2 = parse_into(&mut Templates::new(Rc::new(lookup_func)), "t/b.yaml", bad);
        assert!(e1.is_err() && e1 == e2);
    }

    #[test]
    fn a_text_is_parsed_once_and_an_edit_misses() {
        let file = FileId::default();
        let first = parse_values("replicas: 2\n", file);
        let again = parse_values("replicas: 2\n", file);
        assert!(Arc::ptr_eq(&first, &again));
        let edited = parse_values("replicas: 3\n", file);
        assert!(!Arc::ptr_eq(&first, &edited));
        assert_eq!(edited.map_roots.len(), 1);
        let broken = parse_values("a: [\n", file);
        assert!(broken.error.is_some());
    }
}
