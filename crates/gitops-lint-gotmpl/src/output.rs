//! Rendered text with provenance: which action printed each byte, which `.Values` paths it
//! came from, and whether a non-deterministic function (random, clock, cluster lookup)
//! influenced it.

use std::ops::Range;
use std::rc::Rc;

use super::ast::Pos;

/// A non-deterministic function call whose result reached some output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    /// The function name, e.g. `randAlphaNum`.
    pub func: String,
    /// Where it was called.
    pub pos: Pos,
}

/// A path from `.Values` to a node, e.g. `["image", "tag"]`; list indexes are decimal strings.
pub type ValuesPath = Rc<[String]>;

/// Metadata carried next to every value during execution (never stored in `Value`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meta {
    /// The value *is* the node at this path (reached by field/index steps from `.Values`).
    pub at: Option<ValuesPath>,
    /// Paths the value was computed from (includes `at`); function results OR their
    /// arguments' paths here.
    pub from: Vec<ValuesPath>,
    /// First non-deterministic call that influenced the value.
    pub taint: Option<Rc<Taint>>,
    /// First read of the release's install/upgrade state (`.Release.IsInstall`,
    /// `.IsUpgrade`, `.Revision`) that influenced the value. Kept apart from `taint`: under
    /// `helm template` these are constants, and only a real install/upgrade changes them.
    pub release: Option<Rc<Taint>>,
}

/// At most this many source paths are kept per value: enough to explain a value, bounded so
/// that `merge` of large dicts stays cheap.
const MAX_PATHS: usize = 16;

impl Meta {
    pub fn is_empty(&self) -> bool {
        self.from.is_empty() && self.taint.is_none() && self.release.is_none()
    }

    /// The value located at `path`.
    pub fn at_path(path: ValuesPath) -> Meta {
        Meta {
            at: Some(path.clone()),
            from: vec![path],
            taint: None,
            release: None,
        }
    }

    /// ORs another value's provenance into a derived value.
    pub fn merge(&mut self, other: &Meta) {
        for p in &other.from {
            if self.from.len() >= MAX_PATHS {
                break;
            }
            if !self.from.contains(p) {
                self.from.push(p.clone());
            }
        }
        if self.taint.is_none() {
            self.taint = other.taint.clone();
        }
        if self.release.is_none() {
            self.release = other.release.clone();
        }
    }

    /// Provenance of something computed from this value (no longer located at a path).
    pub fn derived(&self) -> Meta {
        Meta {
            at: None,
            from: self.from.clone(),
            taint: self.taint.clone(),
            release: self.release.clone(),
        }
    }

    /// Provenance of the member `key` of this value.
    pub fn child(&self, key: &str) -> Meta {
        match &self.at {
            Some(p) => {
                let mut path: Vec<String> = p.to_vec();
                path.push(key.to_string());
                let mut m = Meta::at_path(path.into());
                m.taint = self.taint.clone();
                m.release = self.release.clone();
                m
            }
            None => self.derived(),
        }
    }
}

/// What produced a segment of output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// Literal template text.
    Text,
    /// The value printed by an action `{{ … }}`.
    Action,
}

/// A byte range of the output and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputSegment {
    /// Byte range in `Output::text`.
    pub range: Range<usize>,
    pub kind: SegmentKind,
    /// Position of the text node or action that wrote these bytes.
    pub pos: Pos,
    /// `.Values` paths the printed value came from (empty when none).
    pub values_paths: Vec<ValuesPath>,
    pub taint: Option<Rc<Taint>>,
    /// The release state read the printed value depends on (`Meta::release`).
    pub release: Option<Rc<Taint>>,
    /// The release state read of an enclosing `if`/`with` condition: the text is there (or
    /// not) because of an install/upgrade branch.
    pub release_branch: Option<Rc<Taint>>,
    /// For text that came out of `include`/`tpl`: the calling actions, outermost first
    /// (`pos` is then inside the included template).
    pub via: Vec<Pos>,
    /// `.Values` paths of the enclosing `if`/`with`/`range` conditions: the text is there
    /// (or not) because of them, e.g. `["ingress", "enabled"]`.
    pub conditions: Rc<Vec<ValuesPath>>,
}

impl OutputSegment {
    /// The main values path: the exact node printed, or the first source path.
    pub fn values_path(&self) -> Option<&[String]> {
        self.values_paths.first().map(|p| &p[..])
    }
}

/// The result of executing a template.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Output {
    pub text: String,
    /// In output order, non-overlapping and covering the whole text; no empty segments.
    pub segments: Vec<OutputSegment>,
}

impl Output {
    /// The segment holding the byte at `offset` (segments tile the text, in order).
    pub fn segment_at(&self, offset: usize) -> Option<&OutputSegment> {
        let i = self.segments.partition_point(|s| s.range.end <= offset);
        self.segments.get(i).filter(|s| s.range.contains(&offset))
    }

    /// Segments overlapping a byte range of the output (found by binary search: provenance
    /// asks this for every scalar of a document).
    pub fn segments_in(&self, range: Range<usize>) -> impl Iterator<Item = &OutputSegment> {
        let first = self
            .segments
            .partition_point(|s| s.range.end <= range.start);
        self.segments[first..]
            .iter()
            .take_while(move |s| s.range.start < range.end)
            .filter(move |s| range.start < s.range.end)
    }

    /// Helm's post-processing: deletes every `<no value>` from the text, keeping segments aligned.
    pub fn remove_no_value(&mut self) {
        const NO_VALUE: &str = "<no value>";
        if !self.text.contains(NO_VALUE) {
            return;
        }
        let cuts: Vec<usize> = self.text.match_indices(NO_VALUE).map(|(i, _)| i).collect();
        // New offset of an old offset: minus the removed bytes before it.
        let map = |old: usize| -> usize {
            let mut removed = 0;
            for &c in &cuts {
                if c >= old {
                    break;
                }
                removed += (old - c).min(NO_VALUE.len());
            }
            old - removed
        };
        for s in &mut self.segments {
            s.range = map(s.range.start)..map(s.range.end);
        }
        self.segments.retain(|s| !s.range.is_empty());
        self.text = self.text.replace(NO_VALUE, "");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(range: Range<usize>) -> OutputSegment {
        OutputSegment {
            range,
            kind: SegmentKind::Text,
            pos: Pos {
                file: "t".into(),
                offset: 0,
                line: 1,
                col: 0,
            },
            values_paths: Vec::new(),
            taint: None,
            release: None,
            release_branch: None,
            via: Vec::new(),
            conditions: Rc::default(),
        }
    }

    #[test]
    fn segments_in_finds_exactly_the_overlapping_segments() {
        let output = Output {
            text: "x".repeat(20),
            segments: [0..3, 3..4, 4..10, 10..11, 11..20]
                .into_iter()
                .map(segment)
                .collect(),
        };
        for start in 0..20 {
            for end in start + 1..=21 {
                let found: Vec<Range<usize>> = output
                    .segments_in(start..end)
                    .map(|s| s.range.clone())
                    .collect();
                let expected: Vec<Range<usize>> = output
                    .segments
                    .iter()
                    .filter(|s| s.range.start < end && start < s.range.end)
                    .map(|s| s.range.clone())
                    .collect();
                assert_eq!(found, expected, "range {start}..{end}");
            }
        }
    }
}
