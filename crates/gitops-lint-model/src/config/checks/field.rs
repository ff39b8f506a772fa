//! A check's `field`: the line a finding points at, written as a JSONPath to one field
//! (`$.spec.syncPolicy`, `$.spec.template.spec.containers[0].resources`,
//! `$.metadata.annotations['argocd.argoproj.io/sync-options']`). Only paths that name one
//! node are accepted: a wildcard or a filter selects many, and a finding has one line.

use crate::source::Span;
use crate::yaml::Node;

/// Longest `field` text.
const MAX_FIELD_BYTES: usize = 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A parsed `field`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    pub text: String,
    pub segs: Vec<Seg>,
}

impl FieldPath {
    /// Parse `$.a.b[0]['c.d']` (the leading `$` is optional); `Err` says what is wrong and
    /// at which character (1-based).
    pub fn parse(text: &str) -> Result<FieldPath, String> {
        if text.len() > MAX_FIELD_BYTES {
            return Err(format!("is longer than {MAX_FIELD_BYTES} bytes"));
        }
        let chars: Vec<char> = text.trim().chars().collect();
        let mut i = 0;
        let mut chars = chars;
        match chars.first() {
            Some('$') => i = 1,
            // `spec.replicas`: a leading key without `$.`.
            Some(c) if *c != '.' && *c != '[' => chars.insert(0, '.'),
            _ => {}
        }
        let mut segs = Vec::new();
        let at = |i: usize| format!("at character {}", i + 1);
        while i < chars.len() {
            match chars[i] {
                '.' => {
                    i += 1;
                    if chars.get(i) == Some(&'.') {
                        return Err(format!(
                            "uses `..` (recursive descent) {}: `field` names one field",
                            at(i)
                        ));
                    }
                    let start = i;
                    while i < chars.len() && !matches!(chars[i], '.' | '[') {
                        i += 1;
                    }
                    let key: String = chars[start..i].iter().collect();
                    if key.is_empty() {
                        return Err(format!("has an empty key {}", at(start)));
                    }
                    if key == "*" {
                        return Err(format!(
                            "uses the wildcard `*` {}: `field` names one field",
                            at(start)
                        ));
                    }
                    segs.push(Seg::Key(key));
                }
                '[' => {
                    let start = i;
                    let Some(close) = chars[i..].iter().position(|c| *c == ']').map(|p| p + i)
                    else {
                        return Err(format!("has a `[` without `]` {}", at(start)));
                    };
                    let inner: String = chars[i + 1..close].iter().collect();
                    let inner = inner.trim();
                    if let Some(quoted) = inner
                        .strip_prefix('\'')
                        .and_then(|s| s.strip_suffix('\''))
                        .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                    {
                        segs.push(Seg::Key(quoted.to_string()));
                    } else if let Ok(n) = inner.parse::<usize>() {
                        segs.push(Seg::Index(n));
                    } else if inner == "*" || inner.starts_with('?') || inner.contains(':') {
                        return Err(format!(
                            "selects many nodes (`[{inner}]`) {}: `field` names one field",
                            at(start)
                        ));
                    } else {
                        return Err(format!(
                            "has `[{inner}]` {}: write an index (`[0]`) or a quoted key (`['a.b']`)",
                            at(start)
                        ));
                    }
                    i = close + 1;
                }
                c => {
                    return Err(format!(
                        "has `{c}` {} where `.key` or `[…]` belongs (a JSONPath such as `$.spec.replicas`)",
                        at(i)
                    ));
                }
            }
        }
        if segs.is_empty() {
            return Err("names no field (`$.spec.replicas`)".into());
        }
        Ok(FieldPath {
            text: text.trim().to_string(),
            segs,
        })
    }

    /// The span of the named field in a rendered object (the `key: value` entry, or a list
    /// item), when it is there.
    pub fn locate(&self, root: &Node) -> Option<Span> {
        let mut node = root;
        let mut span = None;
        for seg in &self.segs {
            match seg {
                Seg::Key(k) => {
                    let entry = node.entry(k)?;
                    // The key (with a scalar value, key and value) when written together,
                    // else the value (a value a patch or a values file wrote is edited there).
                    let block = entry.value.as_map().is_some() || entry.value.as_seq().is_some();
                    span = Some(if entry.key.span.file != entry.value.span.file {
                        entry.value.span
                    } else if block {
                        entry.key.span
                    } else {
                        entry.key.span.cover(entry.value.span)
                    });
                    node = &entry.value;
                }
                Seg::Index(n) => {
                    node = node.as_seq()?.get(*n)?;
                    span = Some(node.span);
                }
            }
        }
        span
    }

    /// The dotted form a finding's `field` carries (`spec.containers[0].resources`).
    pub fn dotted(&self) -> String {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Index(n) => out.push_str(&format!("[{n}]")),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_field_paths_parse_and_many_node_paths_are_refused() {
        let ok = |t: &str| FieldPath::parse(t).map(|p| p.segs);
        assert_eq!(
            ok("$.spec.template.spec.containers[0]['resources']"),
            Ok(vec![
                Seg::Key("spec".into()),
                Seg::Key("template".into()),
                Seg::Key("spec".into()),
                Seg::Key("containers".into()),
                Seg::Index(0),
                Seg::Key("resources".into()),
            ])
        );
        assert_eq!(
            ok("spec.replicas"),
            Ok(vec![Seg::Key("spec".into()), Seg::Key("replicas".into())])
        );
        assert_eq!(
            ok(".metadata.annotations['argocd.argoproj.io/sync-options']"),
            Ok(vec![
                Seg::Key("metadata".into()),
                Seg::Key("annotations".into()),
                Seg::Key("argocd.argoproj.io/sync-options".into()),
            ])
        );
        for bad in [
            "$.spec.containers[*].image",
            "$..image",
            "$.spec.containers[?(@.name=='x')]",
            "$.spec[",
            "$",
            "$.spec.containers[first]",
        ] {
            assert!(FieldPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_field_is_located_in_the_object() {
        let map = crate::source::SourceMap::new();
        let text = "spec:\n  syncPolicy:\n    automated: {}\n  list:\n    - a\n    - b\n";
        // `first_doc` names file 0, the first the map holds.
        map.add_text("a.yaml", text);
        let root = crate::yaml::first_doc(text);
        let line = |p: &str| {
            FieldPath::parse(p)
                .ok()
                .and_then(|f| f.locate(&root))
                .map(|s| map.line_col(s).line)
        };
        assert_eq!(line("$.spec.syncPolicy"), Some(2));
        assert_eq!(line("$.spec.list[1]"), Some(6));
        assert_eq!(line("$.spec.missing"), None);
    }
}
