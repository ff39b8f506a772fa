//! Values texts parsed once per process: a chart's `values.yaml` is read by every release of
//! the chart (300 apps over 30 charts parse 30 texts, not 300), by the render-twice check
//! and by both sides of `diff`. The parse depends only on the text and the file it is
//! pointed at, so that pair is the key: an edited file misses.

use crate::hash::FastMap;
use crate::source::FileId;
use crate::yaml::{Limits, Node, Value as Y, YamlError, parse_str};
use std::sync::{Arc, Mutex, OnceLock};

/// Beyond this much text the cache stops growing (later texts are parsed per render).
const MAX_CACHED_TEXT_BYTES: usize = 64 << 20;

/// A values text as YAML: its documents, or the first syntax error.
pub struct ParsedValues {
    pub docs: Vec<Node>,
    /// The documents that are maps, shared by every values document made from them.
    pub map_roots: Arc<Vec<Node>>,
    pub error: Option<YamlError>,
}

#[derive(Default)]
struct Cache {
    /// Text → the files it was parsed as (spans name the file), with the result.
    parsed: FastMap<String, Vec<(FileId, Arc<ParsedValues>)>>,
    bytes: usize,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// `text` of `file` parsed as YAML with the default limits, from the cache when it was
/// parsed before.
pub fn parse(text: &str, file: FileId) -> Arc<ParsedValues> {
    let hit = lock().parsed.get(text).and_then(|files| {
        files
            .iter()
            .find(|(f, _)| *f == file)
            .map(|(_, p)| p.clone())
    });
    if let Some(hit) = hit {
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
    let mut cache = lock();
    if cache.bytes + text.len() <= MAX_CACHED_TEXT_BYTES {
        cache.bytes += text.len();
        cache
            .parsed
            .entry(text.to_string())
            .or_default()
            .push((file, out.clone()));
    }
    out
}

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    cache().lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_parsed_once_and_an_edit_misses() {
        let file = FileId::default();
        let first = parse("replicas: 2\n", file);
        let again = parse("replicas: 2\n", file);
        assert!(Arc::ptr_eq(&first, &again));
        let edited = parse("replicas: 3\n", file);
        assert!(!Arc::ptr_eq(&first, &edited));
        assert_eq!(edited.map_roots.len(), 1);
        let broken = parse("a: [\n", file);
        assert!(broken.error.is_some());
    }
}
