//! Map the spans of a rendered document back to what a person edits: each node of the
//! parsed output points at the template text or action that wrote it, and a value printed
//! from `.Values` carries the values-file line as a related label.

use super::values::ValueOrigins;
use crate::hash::FastMap as HashMap;
use crate::render::gotmpl::{Output, OutputSegment, SegmentKind};
use crate::source::{FileId, SourceMap, Span};
use crate::yaml::{Node, Related, Value as Y};
use memchr::memmem;
use std::sync::Arc;

/// Label prefix of a related span that marks a non-deterministic template call (taint).
pub const TAINT_LABEL: &str = "nondeterministic: ";
/// Label prefix of a related span at a read of `.Release.IsInstall`/`.IsUpgrade`/`.Revision`
/// whose value the node prints (followed by the field, e.g. `.Release.Revision`).
pub const RELEASE_VALUE_LABEL: &str = "install/upgrade state: ";
/// Label prefix of a related span at such a read in an `if`/`with` condition that let the
/// node's text through (an install-only or upgrade-only branch).
pub const RELEASE_BRANCH_LABEL: &str = "install/upgrade branch: ";

/// What the mapper needs to know about the template set.
pub struct TemplateIndex<'a> {
    /// Template name → (source file, values scope of its chart).
    pub files: HashMap<String, (Option<FileId>, Vec<String>)>,
    pub map: &'a SourceMap,
    pub origins: &'a ValueOrigins,
}

impl TemplateIndex<'_> {
    fn segment_at<'o>(&self, output: &'o Output, offset: usize) -> Option<&'o OutputSegment> {
        let segs = &output.segments;
        let i = segs.partition_point(|s| s.range.end <= offset);
        segs.get(i).filter(|s| s.range.start <= offset)
    }

    /// The span in the template source for output bytes `range` (of the template `owner`).
    fn source_span<'o>(
        &self,
        output: &'o Output,
        start: usize,
        len: usize,
    ) -> Option<(Span, Option<&'o OutputSegment>)> {
        let seg = self.segment_at(output, start)?;
        let Some((Some(file), _)) = self.files.get(&*seg.pos.file) else {
            // Text made by `tpl` has no file: point at the action that ran it.
            return self.enclosing_action(output, seg).map(|span| (span, None));
        };
        let file = *file;
        let text = self.map.get(file);
        match seg.kind {
            SegmentKind::Text => {
                let s = seg.pos.offset + (start - seg.range.start);
                let e = (s + len)
                    .min(seg.pos.offset + seg.range.len())
                    .min(text.text.len());
                Some((Span::new(file, s, e), Some(seg)))
            }
            SegmentKind::Action => {
                // The whole action `{{ ... }}` (from the pipeline position to its `}}`), found
                // with memchr's search as the lexer does: `str::find` set up a searcher per node.
                let src = &text.text;
                let from = seg.pos.offset.min(src.len());
                let open = memmem::rfind(&src.as_bytes()[..from], b"{{").unwrap_or(from);
                let close = memmem::find(&src.as_bytes()[from..], b"}}")
                    .map(|i| from + i + 2)
                    .unwrap_or(from);
                Some((Span::new(file, open, close), Some(seg)))
            }
        }
    }

    /// For output whose segment has no source file (`tpl` text): the action after the
    /// last literal text of a real template before it, which is the action that printed it.
    fn enclosing_action(&self, output: &Output, seg: &OutputSegment) -> Option<Span> {
        // Segments tile the output in order: the one starting where `seg` starts is `seg`
        // (a search per node: a scan here made large `tpl` output quadratic).
        let idx = output
            .segments
            .partition_point(|s| s.range.start < seg.range.start);
        if !output
            .segments
            .get(idx)
            .is_some_and(|s| std::ptr::eq(s, seg))
        {
            return None;
        }
        for prev in output.segments[..idx].iter().rev() {
            let Some((Some(file), _)) = self.files.get(&*prev.pos.file) else {
                continue;
            };
            let text = self.map.get(*file);
            let src = &text.text;
            let from = match prev.kind {
                SegmentKind::Text => (prev.pos.offset + prev.range.len()).min(src.len()),
                SegmentKind::Action => prev.pos.offset.min(src.len()),
            };
            let open = match prev.kind {
                SegmentKind::Text => memmem::find(&src.as_bytes()[from..], b"{{")
                    .map(|i| from + i)
                    .unwrap_or(from),
                SegmentKind::Action => {
                    memmem::rfind(&src.as_bytes()[..from], b"{{").unwrap_or(from)
                }
            };
            let close = memmem::find(&src.as_bytes()[open..], b"}}")
                .map(|i| open + i + 2)
                .unwrap_or(open);
            return Some(Span::new(*file, open, close));
        }
        None
    }

    /// The values-file span of a segment's values path (scoped to the template's chart).
    /// `inner` is the node's path inside a block the action printed (`toYaml .Values.x`
    /// prints `x`'s keys): the line of that key when the values name it, else the block's.
    /// Of several source paths (`.Values.a | default .Values.b`), the one whose value is the
    /// text printed.
    fn related(&self, output: &Output, seg: &OutputSegment, inner: &[String]) -> Option<Related> {
        let (_, scope) = self.files.get(&*seg.pos.file)?;
        let full = |path: &[String]| dotted(scope.iter().chain(path));
        let printed = output
            .text
            .get(seg.range.clone())
            .unwrap_or_default()
            .trim();
        let path = seg
            .values_paths
            .iter()
            .filter(|_| seg.values_paths.len() > 1)
            .find(|p| {
                self.origins.lookup(&full(p)).is_some_and(|(span, _)| {
                    let text = self.map.text(*span);
                    !printed.is_empty() && text.trim().trim_matches(['"', '\'']) == printed
                })
            })
            .map(|p| &p[..])
            .or_else(|| seg.values_path())?;
        let block = full(path);
        let exact = (!inner.is_empty())
            .then(|| {
                self.origins
                    .lookup(&dotted(std::iter::once(&block).chain(inner)))
            })
            .flatten();
        let (span, label) = exact.or_else(|| self.origins.lookup(&block))?;
        Some(Related {
            span: *span,
            label: label.clone(),
        })
    }

    /// The call that made this output non-deterministic, as a related label whose text
    /// starts with [`TAINT_LABEL`] followed by the function name; then the values lines of
    /// the `if`/`with`/`range` conditions that let the call's output through (turning one
    /// of them off is often the fix: `existingSecret`, `rollOnDeploy: false`).
    fn taint_in(&self, output: &Output, start: usize, len: usize) -> Vec<Related> {
        let end = start + len.max(1);
        let segs = &output.segments;
        let first = segs.partition_point(|s| s.range.end <= start);
        let Some((seg, t)) = segs[first.min(segs.len())..]
            .iter()
            .take_while(|s| s.range.start < end)
            .find_map(|s| Some((s, s.taint.as_ref()?)))
        else {
            return Vec::new();
        };
        let Some((Some(file), scope)) = self.files.get(&*t.pos.file) else {
            return Vec::new();
        };
        let len = self.map.get(*file).text.len();
        let start = t.pos.offset.min(len);
        let mut out = vec![Related {
            span: Span::new(*file, start, (start + t.func.len()).min(len)),
            label: format!("{TAINT_LABEL}{}", t.func),
        }];
        for path in seg.conditions.iter() {
            if let Some((span, label)) = self
                .origins
                .lookup(&dotted(scope.iter().chain(path.iter())))
            {
                out.push(Related {
                    span: *span,
                    label: format!(
                        "`{}` takes the template into this branch ({label})",
                        path.join(".")
                    ),
                });
            }
        }
        out
    }

    /// The release-state reads the output bytes depend on, as related labels prefixed
    /// [`RELEASE_VALUE_LABEL`] (the value printed) and [`RELEASE_BRANCH_LABEL`] (the branch
    /// the text is in), at the `.Release.X` the template reads.
    fn release_in(&self, output: &Output, start: usize, len: usize) -> Vec<Related> {
        let end = start + len.max(1);
        let segs = &output.segments;
        let first = segs.partition_point(|s| s.range.end <= start);
        let overlapping = || {
            segs[first.min(segs.len())..]
                .iter()
                .take_while(|s| s.range.start < end)
        };
        let value = overlapping().find_map(|s| s.release.clone());
        let branch = overlapping().find_map(|s| s.release_branch.clone());
        let mut out = Vec::new();
        for (read, prefix) in [(value, RELEASE_VALUE_LABEL), (branch, RELEASE_BRANCH_LABEL)] {
            let Some(read) = read else { continue };
            let Some((Some(file), _)) = self.files.get(&*read.pos.file) else {
                continue;
            };
            let src = &self.map.get(*file).text;
            let mut from = read.pos.offset.min(src.len());
            // The field node starts at `.IsInstall`; show `.Release.IsInstall` when written so.
            if src.get(..from).is_some_and(|b| b.ends_with(".Release")) {
                from -= ".Release".len();
            }
            // The read may start at `$` or a variable: end the span after the field name.
            let field = read.func.rsplit('.').next().unwrap_or_default();
            let rest = src.get(from..).unwrap_or_default();
            let window = rest
                .char_indices()
                .nth(200)
                .map_or(rest, |(i, _)| &rest[..i]);
            let to = window
                .find(field)
                .map(|i| from + i + field.len())
                .unwrap_or(from);
            out.push(Related {
                span: Span::new(*file, from, to),
                label: format!("{prefix}{}", read.func),
            });
        }
        out
    }

    /// Rewrite every span of `root` (parsed from the output bytes starting at `doc_start`).
    pub fn map_node(&self, output: &Output, doc_start: usize, node: &mut Node) {
        let mut walk = MapWalk {
            output,
            doc_start,
            path: Vec::new(),
        };
        self.map_node_in(&mut walk, node, None);
    }

    /// `block`: the action segment (by its start) that printed the enclosing node, and where
    /// the node's path inside what it printed begins in `walk.path` (the node's own key is
    /// already there), so the keys of a printed block find their own values lines.
    fn map_node_in(&self, walk: &mut MapWalk<'_>, node: &mut Node, block: Option<(usize, usize)>) {
        let output = walk.output;
        let start = node.span.start as usize + walk.doc_start;
        let len = node.span.len();
        // The block the children are in: (action start, where their path begins).
        let mut inner: Option<(usize, usize)> = None;
        if let Some((span, seg)) = self.source_span(output, start, len) {
            node.span = span;
            let scalar = !matches!(node.value, Y::Seq(_) | Y::Map(_));
            let taint = if scalar {
                let mut t = self.taint_in(output, start, len);
                t.extend(self.release_in(output, start, len));
                t
            } else {
                Vec::new()
            };
            add_related(node, taint);
            if let Some(seg) = seg
                && seg.kind == SegmentKind::Action
            {
                // Inside the block this action printed, the path continues; a new action
                // starts a block of its own, with an empty path.
                let from = match block {
                    Some((at, from)) if at == seg.range.start => from,
                    _ => walk.path.len(),
                };
                add_related(node, self.related(output, seg, &walk.path[from..]));
                inner = Some((seg.range.start, from));
            } else if scalar {
                // A scalar that starts with template text and prints a value later
                // (`path: charts/{{ .Values.chart }}`): the values lines of what it prints.
                let printed: Vec<Related> = output
                    .segments_in(start..start + len.max(1))
                    .filter(|s| s.kind == SegmentKind::Action)
                    .filter_map(|s| self.related(output, s, &[]))
                    .collect();
                add_related(node, printed);
            }
        }
        match &mut node.value {
            Y::Seq(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    walk.descend(inner, Some(i.to_string()), |walk, c| {
                        self.map_node_in(walk, item, c)
                    });
                }
            }
            Y::Map(entries) => {
                for e in entries {
                    let key = inner.and_then(|_| e.key.scalar_text());
                    walk.descend(inner, key, |walk, c| {
                        self.map_node_in(walk, &mut e.key, c);
                        self.map_node_in(walk, &mut e.value, c);
                    });
                }
            }
            _ => {}
        }
    }
}

/// One document's span mapping: the output it was parsed from and the path buffer that the
/// nodes inside printed blocks share (a path copied per node cost an allocation per node).
struct MapWalk<'o> {
    output: &'o Output,
    doc_start: usize,
    path: Vec<String>,
}

impl MapWalk<'_> {
    /// Run `f` for a child: inside a block (`inner`) with `key` on the path, else outside any.
    fn descend(
        &mut self,
        inner: Option<(usize, usize)>,
        key: Option<String>,
        f: impl FnOnce(&mut Self, Option<(usize, usize)>),
    ) {
        match (inner, key) {
            (Some(block), Some(key)) => {
                self.path.push(key);
                f(self, Some(block));
                self.path.pop();
            }
            _ => f(self, None),
        }
    }
}

/// The steps joined with dots (a values path), built in one string.
fn dotted<'s>(steps: impl IntoIterator<Item = &'s String>) -> String {
    let mut out = String::new();
    for (i, step) in steps.into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(step);
    }
    out
}

/// Append `more` to the node's related labels (the list is shared, so it is copied once).
fn add_related(node: &mut Node, more: impl IntoIterator<Item = Related>) {
    let mut more = more.into_iter().peekable();
    if more.peek().is_none() {
        return;
    }
    let mut list = node
        .related
        .as_ref()
        .map(|r| r.as_ref().clone())
        .unwrap_or_default();
    list.extend(more);
    node.related = Some(Arc::new(list));
}
