//! Chart templates parsed once per process. A template's trees depend only on its name, its
//! text and the function set (Helm's, fixed), so every render of a chart — each app that
//! deploys it, the render-twice check, both sides of `diff` — reuses the first parse. The
//! cache is keyed by the full text: an edited template is parsed again.

use crate::hash::FastMap;
use crate::render::gotmpl::Templates;
use crate::render::gotmpl::parse::{ParseError, Tree};
use std::sync::{Arc, Mutex, OnceLock};

/// Beyond this much template text the cache stops growing (later templates are parsed per
/// render, as without it): a process rendering many charts keeps bounded memory.
const MAX_CACHED_TEXT_BYTES: usize = 64 << 20;

type Parsed = Result<Arc<[Arc<Tree>]>, ParseError>;

#[derive(Default)]
struct Cache {
    /// Text → the names it was parsed under, with the result.
    by_text: FastMap<String, Vec<(String, Parsed)>>,
    bytes: usize,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Parse `text` as template `name` for `set` (Helm's functions, default delimiters) and
/// add its trees, as `set.parse(name, text)` does.
pub fn parse_into(set: &mut Templates, name: &str, text: &str) -> Result<(), ParseError> {
    let parsed = lookup(name, text).unwrap_or_else(|| {
        let parsed: Parsed = set.parse_trees(name, text).map(Arc::from);
        store(name, text, parsed.clone());
        parsed
    });
    set.add_trees(&parsed?);
    Ok(())
}

fn lookup(name: &str, text: &str) -> Option<Parsed> {
    let cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    cache
        .by_text
        .get(text)?
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, p)| p.clone())
}

fn store(name: &str, text: &str, parsed: Parsed) {
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    let cost = name.len() + text.len();
    if cache.bytes + cost > MAX_CACHED_TEXT_BYTES {
        return;
    }
    cache.bytes += cost;
    let names = cache.by_text.entry(text.to_string()).or_default();
    if !names.iter().any(|(n, _)| n == name) {
        names.push((name.to_string(), parsed));
    }
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
}
