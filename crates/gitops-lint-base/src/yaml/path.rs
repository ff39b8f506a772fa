//! Field path patterns a writer claims (`spec.template.spec.containers[name:*].imagePullPolicy`)
//! and their resolution against a declared object: which entries Git actually writes there.

use crate::glob::glob_match;
use crate::yaml::{Entry, Node};

/// One step of a pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum Seg {
    Key(String),
    /// A concrete list index (JSON patch paths).
    Index(usize),
    /// Every list element whose fields match all `(field, glob)` filters (none: every
    /// element). Strategic-merge merge keys and Kyverno/Gatekeeper anchors become filters.
    Each(Vec<(String, String)>),
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Pattern(pub Vec<Seg>);

impl Pattern {
    pub fn keys(keys: &[&str]) -> Pattern {
        Pattern(keys.iter().map(|k| Seg::Key(k.to_string())).collect())
    }

    /// `prefix` then this pattern.
    pub fn under(&self, prefix: &[&str]) -> Pattern {
        let mut segs: Vec<Seg> = prefix.iter().map(|k| Seg::Key(k.to_string())).collect();
        segs.extend(self.0.iter().cloned());
        Pattern(segs)
    }

    /// Gatekeeper `location` / config syntax: dotted keys, `[name:*]` or `[name:app]` list
    /// filters, `[*]` / `[]` every element, `[0]` an index; `"a.b"` quotes a key with dots.
    pub fn parse_dotted(text: &str) -> Option<Pattern> {
        let mut segs = Vec::new();
        let mut rest = text.trim();
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                rest = r;
                continue;
            }
            if let Some(r) = rest.strip_prefix('[') {
                let end = r.find(']')?;
                let inner = r[..end].trim();
                segs.push(if inner.is_empty() || inner == "*" {
                    Seg::Each(Vec::new())
                } else if let Ok(i) = inner.parse::<usize>() {
                    Seg::Index(i)
                } else {
                    let (k, v) = inner.split_once(':')?;
                    Seg::Each(vec![(k.trim().to_string(), unquote(v.trim()).to_string())])
                });
                rest = &r[end + 1..];
                continue;
            }
            if let Some(r) = rest.strip_prefix('"') {
                let end = r.find('"')?;
                segs.push(Seg::Key(r[..end].to_string()));
                rest = &r[end + 1..];
                continue;
            }
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            segs.push(Seg::Key(rest[..end].to_string()));
            rest = &rest[end..];
        }
        (!segs.is_empty()).then_some(Pattern(segs))
    }

    /// RFC 6901 pointer (JSON patch `path`); `-` (append) yields None: it never overwrites.
    pub fn parse_pointer(pointer: &str) -> Option<Pattern> {
        let segs = pointer_segments(pointer)?;
        let mut out = Vec::new();
        for s in segs {
            if s == "-" {
                return None;
            }
            out.push(match s.parse::<usize>() {
                Ok(i) => Seg::Index(i),
                Err(_) => Seg::Key(s),
            });
        }
        Some(Pattern(out))
    }

    pub fn display(&self) -> String {
        let mut out = String::new();
        for seg in &self.0 {
            match seg {
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
                Seg::Each(f) if f.is_empty() => out.push_str("[*]"),
                Seg::Each(f) => {
                    let parts: Vec<String> = f.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                    out.push_str(&format!("[{}]", parts.join(",")));
                }
            }
        }
        out
    }

    /// Is `other` this pattern or below it (filters compared literally)?
    pub fn is_prefix_of(&self, other: &Pattern) -> bool {
        self.0.len() <= other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a == b)
    }
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| s.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .unwrap_or(s)
}

/// A declared entry a pattern reaches, with its concrete path (`["spec", "template", …,
/// "0", "imagePullPolicy"]`, indices as numbers) for ignore matching and messages.
#[derive(Debug)]
pub struct Hit<'a> {
    pub path: Vec<String>,
    pub entry: &'a Entry,
}

impl Hit<'_> {
    pub fn dotted(&self) -> String {
        dotted(&self.path)
    }
}

/// A concrete path as findings print it: `webhooks[0].clientConfig.caBundle`.
pub fn dotted(path: &[String]) -> String {
    let mut out = String::new();
    for s in path {
        if s.parse::<usize>().is_ok() {
            out.push_str(&format!("[{s}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(s);
        }
    }
    out
}

/// Every declared entry the pattern reaches. A pattern ending in a list step names no entry
/// and resolves to nothing.
pub fn resolve<'a>(root: &'a Node, pattern: &Pattern) -> Vec<Hit<'a>> {
    let mut out = Vec::new();
    // (node, path so far, remaining segments); iterative, patterns are short anyway.
    let mut stack: Vec<(&'a Node, Vec<String>, &[Seg])> = vec![(root, Vec::new(), &pattern.0)];
    while let Some((node, path, segs)) = stack.pop() {
        let Some((head, rest)) = segs.split_first() else {
            continue;
        };
        match head {
            Seg::Key(k) => {
                let Some(entry) = node.entry(k) else { continue };
                let mut p = path.clone();
                p.push(k.clone());
                if rest.is_empty() {
                    out.push(Hit { path: p, entry });
                } else {
                    stack.push((&entry.value, p, rest));
                }
            }
            Seg::Index(i) => {
                if let Some(item) = node.as_seq().and_then(|s| s.get(*i)) {
                    let mut p = path.clone();
                    p.push(i.to_string());
                    stack.push((item, p, rest));
                }
            }
            Seg::Each(filters) => {
                for (i, item) in node.as_seq().unwrap_or_default().iter().enumerate().rev() {
                    if element_matches(item, filters) {
                        let mut p = path.clone();
                        p.push(i.to_string());
                        stack.push((item, p, rest));
                    }
                }
            }
        }
    }
    out.sort_by_key(|h| h.entry.key.span.start);
    out
}

/// Does a list element satisfy every `(field, glob)` filter? `{{…}}` (templated by the
/// policy engine) matches anything.
pub fn element_matches(item: &Node, filters: &[(String, String)]) -> bool {
    filters.iter().all(|(k, pat)| {
        if pat.contains("{{") {
            return true;
        }
        item.get(k)
            .and_then(Node::scalar_text)
            .is_some_and(|v| glob_match(pat, &v))
    })
}

/// RFC 6901 pointer → unescaped segments. None for what Argo would not resolve (no leading
/// `/`, bad escapes) — `ignore-differences-invalid` reports those.
pub fn pointer_segments(pointer: &str) -> Option<Vec<String>> {
    let rest = pointer.strip_prefix('/')?;
    if rest.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for raw in rest.split('/') {
        let mut seg = String::new();
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '~' {
                match chars.next() {
                    Some('0') => seg.push('~'),
                    Some('1') => seg.push('/'),
                    _ => return None,
                }
            } else {
                seg.push(c);
            }
        }
        out.push(seg);
    }
    Some(out)
}

impl Pattern {
    /// Does this pattern name the concrete path (`["spec", "containers", "0", "image"]`)
    /// or a parent of it? List filters are not checked (the element may match).
    pub fn covers(&self, path: &[String]) -> bool {
        self.0.len() <= path.len()
            && self.0.iter().zip(path).all(|(seg, p)| match seg {
                Seg::Key(k) => k == p,
                Seg::Index(i) => p.parse::<usize>().ok() == Some(*i),
                Seg::Each(_) => p.parse::<usize>().is_ok() || p == "*",
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;
    use crate::yaml::{Limits, parse_str};

    fn doc(text: &str) -> Node {
        let parsed = parse_str(text, FileId(0), &Limits::default());
        parsed
            .docs
            .into_iter()
            .next()
            .map(|d| d.root)
            .unwrap_or_else(|| Node::string("", crate::source::Span::new(FileId(0), 0, 0)))
    }

    #[test]
    fn dotted_patterns_parse() {
        let p = Pattern::parse_dotted("spec.containers[name:*].imagePullPolicy");
        assert_eq!(
            p.as_ref().map(Pattern::display).as_deref(),
            Some("spec.containers[name:*].imagePullPolicy")
        );
        assert_eq!(
            Pattern::parse_dotted("metadata.annotations.\"a.b/c\"").map(|p| p.0.len()),
            Some(3)
        );
        assert!(Pattern::parse_pointer("/spec/containers/-").is_none());
    }

    #[test]
    fn resolves_filtered_list_elements() {
        let root = doc(
            "spec:\n  containers:\n  - name: app\n    imagePullPolicy: IfNotPresent\n  - name: side\n    image: x\n  - name: db\n    imagePullPolicy: Always\n",
        );
        let all = Pattern::parse_dotted("spec.containers[name:*].imagePullPolicy");
        let hits = all.map(|p| resolve(&root, &p)).unwrap_or_default();
        let paths: Vec<String> = hits.iter().map(Hit::dotted).collect();
        assert_eq!(
            paths,
            [
                "spec.containers[0].imagePullPolicy",
                "spec.containers[2].imagePullPolicy"
            ]
        );
        let one = Pattern::parse_dotted("spec.containers[name:db].imagePullPolicy");
        assert_eq!(one.map(|p| resolve(&root, &p).len()), Some(1));
    }
}
