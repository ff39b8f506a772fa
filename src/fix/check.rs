//! The re-check every `--fix` edit passes before a file is written: the fixed text must
//! parse, hold the same documents, and differ from the original only where the edits are.
//!
//! Generic over every rule: both texts are flattened into leaves (`path → value`), and
//! - a leaf the fix removed or changed must lie in a range the edits replaced;
//! - a leaf the fix added must lie in text the edits inserted, or be a container the fix
//!   emptied (`annotations:` left without keys).
//!
//! A fix that re-indents a neighbour (`data:` moved under `metadata.annotations`) changes a
//! leaf outside its edits, so it is refused and the file left as it was.

use crate::source::FileId;
use crate::yaml::{Limits, Node, Value, parse_str};
use std::collections::BTreeMap;

/// One applied edit: the replaced range in the original and the text it became in the fix.
#[derive(Clone, Copy, Debug)]
pub struct Applied {
    pub before: (usize, usize),
    pub after: (usize, usize),
}

type Leaves = BTreeMap<(usize, String), (String, (usize, usize))>;

/// `Err(reason)` when `after` is not `before` minus exactly what `edits` touched.
pub fn check(before: &str, after: &str, edits: &[Applied]) -> Result<(), String> {
    let limits = Limits::default();
    let a = parse_str(after, FileId(0), &limits);
    if let Some(e) = a.error {
        return Err(format!("the fixed file does not parse: {}", e.message));
    }
    let b = parse_str(before, FileId(0), &limits);
    if b.error.is_some() {
        return Err("the file does not parse as it is".into());
    }
    // Documents are compared by position: a document a fix removes has all its leaves in
    // the edits; one that shifts is refused as changed.
    let (mut lb, mut la) = (Leaves::new(), Leaves::new());
    for d in &b.docs {
        flatten(&d.root, d.index, String::new(), &mut lb);
    }
    for d in &a.docs {
        flatten(&d.root, d.index, String::new(), &mut la);
    }
    let inside = |span: (usize, usize), range: (usize, usize)| {
        span.0 >= range.0 && span.1 <= range.1.max(range.0)
    };
    // An alias (`*base`, `<<: *base`) copies the anchored nodes with their spans: one text
    // reached from two paths. An edit there changes every object that uses the anchor.
    let mut paths_of: BTreeMap<(usize, usize), Vec<&(usize, String)>> = BTreeMap::new();
    for (k, (_, span)) in &lb {
        if span.1 > span.0 {
            paths_of.entry(*span).or_default().push(k);
        }
    }
    let mut removed = Vec::new();
    for (k, (v, span)) in &lb {
        if la.get(k).is_some_and(|(w, _)| w == v) {
            continue;
        }
        if let Some(other) = paths_of
            .get(span)
            .and_then(|ps| ps.iter().find(|p| **p != k))
        {
            return Err(format!(
                "the fix edits `{}` inside an anchor that `{}` (document {}) uses through an alias; edit it by hand",
                display(&k.1),
                display(&other.1),
                other.0 + 1
            ));
        }
        if !edits.iter().any(|e| inside(*span, e.before)) {
            return Err(format!(
                "the fix would change `{}` (document {}), which it does not edit",
                display(&k.1),
                k.0 + 1
            ));
        }
        removed.push(k);
    }
    for (k, (v, span)) in &la {
        if lb.get(k).is_some_and(|(w, _)| w == v) {
            continue;
        }
        let inserted = edits.iter().any(|e| inside(*span, e.after));
        let emptied = is_empty_marker(v)
            && removed
                .iter()
                .any(|r| r.0 == k.0 && r.1.starts_with(&format!("{}/", k.1)));
        if !inserted && !emptied {
            return Err(format!(
                "the fix would change `{}` (document {}), which it does not edit",
                display(&k.1),
                k.0 + 1
            ));
        }
    }
    Ok(())
}

fn display(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

fn is_empty_marker(v: &str) -> bool {
    matches!(v, "{}" | "[]" | "null")
}

/// Leaves by (document, JSON-pointer-like path): scalars by their value, empty containers
/// as `{}` / `[]`. Iterative: fixed files can be deep.
fn flatten(root: &Node, doc: usize, path: String, out: &mut Leaves) {
    let mut stack = vec![(root, path)];
    while let Some((n, path)) = stack.pop() {
        let span = (n.span.start as usize, n.span.end as usize);
        match &n.value {
            Value::Map(entries) if !entries.is_empty() => {
                for e in entries {
                    let key = e.key.key_str().replace('~', "~0").replace('/', "~1");
                    stack.push((&e.value, format!("{path}/{key}")));
                }
            }
            Value::Seq(items) if !items.is_empty() => {
                for (i, x) in items.iter().enumerate() {
                    stack.push((x, format!("{path}/{i}")));
                }
            }
            Value::Map(_) => {
                out.insert((doc, path), ("{}".into(), span));
            }
            Value::Seq(_) => {
                out.insert((doc, path), ("[]".into(), span));
            }
            Value::Null => {
                out.insert((doc, path), ("null".into(), span));
            }
            _ => {
                let text = n.scalar_text().unwrap_or_default();
                out.insert((doc, path), (text, span));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deletion(before: &str, cut: &str) -> (String, Applied) {
        let s = before.find(cut).unwrap_or(0);
        let after = format!("{}{}", &before[..s], &before[s + cut.len()..]);
        (
            after,
            Applied {
                before: (s, s + cut.len()),
                after: (s, s),
            },
        )
    }

    #[test]
    fn a_clean_deletion_passes() {
        let before = "metadata:\n  annotations:\n    a: '1'\n    b: '2'\ndata:\n  x: y\n";
        let (after, e) = deletion(before, "    a: '1'\n");
        assert_eq!(check(before, &after, &[e]), Ok(()));
        // Emptying a map is fine too.
        let before = "metadata:\n  annotations:\n    a: '1'\ndata:\n  x: y\n";
        let (after, e) = deletion(before, "    a: '1'\n");
        assert_eq!(check(before, &after, &[e]), Ok(()));
    }

    #[test]
    fn a_deletion_that_reparents_a_neighbour_is_refused() {
        // Deleting a block scalar's lines but not its indicator leaves `data:` under it.
        let before =
            "metadata:\n  annotations:\n    last: |\n      {\"a\": 1}\ndata:\n  currency: EUR\n";
        let cut = "      {\"a\": 1}\n";
        let s = before.find(cut).unwrap_or(0);
        let after = before.replacen("    last: |\n      {\"a\": 1}\ndata:\n", "    data:\n", 1);
        let e = Applied {
            before: (s - 14, s + cut.len()),
            after: (s - 14, s - 14),
        };
        let err = check(before, &after, &[e]).unwrap_err();
        assert!(err.contains("/data/currency"), "{err}");
    }

    #[test]
    fn an_edit_inside_an_aliased_anchor_is_refused() {
        let before = "base: &labels
  team: shop
  tier: web
api:
  metadata:
    labels:
      <<: *labels
      app: api
";
        let (after, e) = deletion(
            before,
            "  tier: web
",
        );
        let err = check(before, &after, &[e]).unwrap_err();
        assert!(
            err.contains("anchor") && err.contains("/api/metadata/labels/tier"),
            "{err}"
        );
        // The same deletion without an alias is a plain edit.
        let plain = before.replace(
            "      <<: *labels
",
            "",
        );
        let (after, e) = deletion(
            &plain,
            "  tier: web
",
        );
        assert_eq!(check(&plain, &after, &[e]), Ok(()));
    }

    #[test]
    fn a_fix_that_breaks_the_yaml_is_refused() {
        let before = "a:\n  b: 1\n";
        let after = "a:\n  b: [1\n";
        let e = Applied {
            before: (6, 7),
            after: (6, 8),
        };
        assert!(
            check(before, after, &[e])
                .unwrap_err()
                .contains("does not parse")
        );
    }
}
