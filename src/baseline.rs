//! Findings compared across revisions and over time: a finding is identified by rule, app,
//! object and field (plus the file when it concerns no object), never by line, so moving
//! lines or editing other objects does not make old findings look new.
//!
//! The same identity backs `diff --base` (new and fixed findings) and baseline files
//! (`--write-baseline` / `--baseline`), which let a team adopt the tool on a legacy repo.

use crate::finding::Finding;
pub use crate::finding::FindingKey;
use crate::source::SourceMap;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Indices of `findings` that `known` does not account for. `known` is a multiset: a key
/// recorded twice absorbs two findings, so a second copy of a problem is still new.
pub fn unmatched(
    findings: &[Finding],
    map: &SourceMap,
    known: &HashMap<FindingKey, usize>,
) -> Vec<usize> {
    let mut left = known.clone();
    let mut out = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        match left.get_mut(&FindingKey::of(f, map)) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(i),
        }
    }
    out
}

/// Count findings per key.
pub fn key_counts(findings: &[Finding], map: &SourceMap) -> HashMap<FindingKey, usize> {
    let mut counts = HashMap::new();
    for f in findings {
        *counts.entry(FindingKey::of(f, map)).or_insert(0) += 1;
    }
    counts
}

/// The baseline file (`--write-baseline`): sorted, one entry per key, so it diffs well in Git.
#[derive(Debug, Serialize, Deserialize)]
pub struct Baseline {
    pub version: u32,
    pub findings: Vec<BaselineEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct BaselineEntry {
    #[serde(flatten)]
    pub key: FindingKey,
    /// How many findings share the key (default 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub count: usize,
    /// The first finding's message, for the human reading the file; not used for matching.
    #[serde(default)]
    pub message: String,
}

fn one() -> usize {
    1
}
fn is_one(n: &usize) -> bool {
    *n == 1
}

impl Baseline {
    pub fn of(findings: &[Finding], map: &SourceMap) -> Baseline {
        let mut entries: Vec<BaselineEntry> = Vec::new();
        let mut index: HashMap<FindingKey, usize> = HashMap::new();
        for f in findings {
            let key = FindingKey::of(f, map);
            match index.get(&key) {
                Some(&i) => entries[i].count += 1,
                None => {
                    index.insert(key.clone(), entries.len());
                    entries.push(BaselineEntry {
                        key,
                        count: 1,
                        message: f.message.clone(),
                    });
                }
            }
        }
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        Baseline {
            version: 1,
            findings: entries,
        }
    }

    pub fn counts(&self) -> HashMap<FindingKey, usize> {
        let mut counts = HashMap::new();
        for e in &self.findings {
            *counts.entry(e.key.clone()).or_insert(0) += e.count;
        }
        counts
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    pub fn read(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let b: Baseline = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a gitops-lint baseline: {e}", path.display()))?;
        if b.version != 1 {
            return Err(format!(
                "{}: baseline version {} is not supported (expected 1)",
                path.display(),
                b.version
            ));
        }
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;
    use crate::source::Span;

    fn finding(map: &SourceMap, text: &str, at: usize, object: &str) -> Finding {
        let file = map.add_text("apps/a/d.yaml", text.to_string());
        Finding::new(
            "hpa-replicas-conflict",
            Severity::Error,
            "m",
            Span::new(file, at, at + 1),
        )
        .app("a")
        .object(object)
        .field("spec.replicas")
    }

    #[test]
    fn keys_ignore_lines_and_count_copies() {
        let map = SourceMap::new();
        let old = [finding(&map, "a\nb\n", 0, "Deployment/prod/a")];
        let moved = [
            finding(&map, "x\ny\nz\na\n", 6, "Deployment/prod/a"),
            finding(&map, "a\n", 0, "Deployment/prod/b"),
        ];
        let known = key_counts(&old, &map);
        assert_eq!(unmatched(&moved, &map, &known), [1]);
        let b = Baseline::of(&moved, &map);
        let back: Baseline = serde_json::from_str(&b.to_json()).expect("round trip");
        assert_eq!(unmatched(&moved, &map, &back.counts()), Vec::<usize>::new());
        assert_eq!(
            FindingKey::of(&moved[0], &map).fingerprint(),
            FindingKey::of(&old[0], &map).fingerprint()
        );
    }
}
