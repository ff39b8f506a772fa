//! Event stream → [`Node`] tree, iteratively (no recursion on input depth), with budgets for
//! depth, alias expansion and documents, so hostile YAML costs bounded time and memory.

use super::node::{Entry, Node, Style, Value};
use super::resolve::resolve_plain;
use crate::source::{FileId, SourceMap, Span};
use saphyr_parser::{Event, Parser, ScalarStyle};
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct Limits {
    /// Deepest nesting of collections.
    pub max_depth: usize,
    /// Nodes that aliases may copy in one stream (billion-laughs guard).
    pub max_alias_nodes: usize,
    /// Documents in one stream.
    pub max_documents: usize,
    /// Wall time one file's parse may take (`limits.max-parse-seconds`): every step above is
    /// linear, but a file near `max-file-bytes` on a loaded machine must still end.
    pub max_parse_time: Duration,
}

/// Events between two looks at the clock.
const CLOCK_EVERY: u32 = 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 256,
            max_alias_nodes: 100_000,
            max_documents: 20_000,
            max_parse_time: Duration::from_secs(10),
        }
    }
}

/// The scanner's message, with its own nesting guard (flow collections nested deeper than
/// the scanner allows) said in the words of our nesting limit.
fn scan_error_message(info: &str, limits: &Limits) -> String {
    if info == "recursion limit exceeded" {
        format!(
            "collections nest deeper than the parser allows (at most {} levels are linted, `limits.max-depth`)",
            limits.max_depth
        )
    } else {
        info.to_string()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct YamlError {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct Document {
    pub root: Node,
    /// 0-based position of the document in its stream.
    pub index: usize,
}

/// A parsed stream: the documents read before any error, the error that stopped it, and
/// non-fatal problems (duplicate keys).
#[derive(Debug, Default)]
pub struct Parsed {
    pub docs: Vec<Document>,
    pub error: Option<YamlError>,
    pub warnings: Vec<YamlError>,
}

pub fn parse_file(map: &SourceMap, file: FileId, limits: &Limits) -> Parsed {
    let src = map.get(file);
    parse_str(&src.text, file, limits)
}

/// Char index → byte offset. saphyr's markers count characters; spans are bytes.
struct Offsets {
    table: Option<Vec<u32>>,
    len: usize,
}

impl Offsets {
    fn new(text: &str) -> Offsets {
        if text.is_ascii() {
            return Offsets {
                table: None,
                len: text.len(),
            };
        }
        let mut table: Vec<u32> = text.char_indices().map(|(b, _)| b as u32).collect();
        table.push(text.len() as u32);
        Offsets {
            table: Some(table),
            len: text.len(),
        }
    }
    fn byte(&self, char_index: usize) -> usize {
        match &self.table {
            None => char_index.min(self.len),
            Some(t) => t.get(char_index).map(|&b| b as usize).unwrap_or(self.len),
        }
    }
}

enum Frame {
    Seq {
        start: Span,
        anchor: usize,
        tag: Option<Box<str>>,
        flow: bool,
        items: Vec<Node>,
    },
    Map {
        start: Span,
        anchor: usize,
        tag: Option<Box<str>>,
        flow: bool,
        entries: Vec<Entry>,
        key: Option<Node>,
        /// Where each key was first seen, for duplicate warnings in linear time.
        first_seen: FirstSeen,
    },
}

/// The first byte offset of each key of one mapping: a short scan while the mapping is
/// small, a hash index once it grows (a 300k-key mapping scanned per key is quadratic).
#[derive(Default)]
struct FirstSeen {
    index: Option<HashMap<Box<str>, u32>>,
}

/// Mappings up to this many entries are scanned; past it they get an index.
const SCAN_ENTRIES: usize = 16;

impl FirstSeen {
    /// Where `name` was first seen among `entries` (which hold every key before this one).
    fn earlier(&mut self, entries: &[Entry], name: &str) -> Option<u32> {
        if self.index.is_none() && entries.len() >= SCAN_ENTRIES {
            let mut index = HashMap::with_capacity(entries.len() * 2);
            for e in entries {
                if !e.key.key_is("<<") {
                    index
                        .entry(e.key.key_str().into())
                        .or_insert(e.key.span.start);
                }
            }
            self.index = Some(index);
        }
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => entries
                .iter()
                .find(|e| e.key.key_is(name))
                .map(|e| e.key.span.start),
        }
    }

    /// Notes a key just added at `start` (first sightings only).
    fn note(&mut self, name: &str, start: u32) {
        if let Some(index) = &mut self.index {
            index.entry(name.into()).or_insert(start);
        }
    }
}

pub fn parse_str(text: &str, file: FileId, limits: &Limits) -> Parsed {
    // Both readings share one deadline.
    let deadline = Instant::now() + limits.max_parse_time;
    let parsed = parse_events(text, text, file, limits, deadline);
    // go-yaml reads flow collections saphyr refuses for their indentation or tabs: read
    // the lenient copy (same character positions) and keep it only when it parses.
    if parsed.error.is_some()
        && let Some(alt) = super::lenient::flow_lenient(text)
    {
        let again = parse_events(&alt, text, file, limits, deadline);
        if again.error.is_none() {
            return again;
        }
    }
    parsed
}

/// Parse `scan` (the text, or its lenient copy with the same character positions); spans
/// and flow styles are read from the original `text`.
fn parse_events(
    scan: &str,
    text: &str,
    file: FileId,
    limits: &Limits,
    deadline: Instant,
) -> Parsed {
    let offsets = Offsets::new(text);
    let span_of = |s: &saphyr_parser::Span| {
        Span::new(
            file,
            offsets.byte(s.start.index()),
            offsets.byte(s.end.index()),
        )
    };
    let mut out = Parsed::default();
    let open_end = (!scan.ends_with(['\n', '\r'])).then(|| scan.chars().count());
    let mut parser = Parser::new_from_str(scan);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut alias_budget = limits.max_alias_nodes;
    let mut root: Option<Node> = None;
    let mut doc_index = 0usize;
    let mut until_clock = CLOCK_EVERY;

    loop {
        let (event, span) = match parser.next_event() {
            None => break,
            Some(Ok(ev)) => ev,
            Some(Err(e)) => {
                let at = offsets.byte(e.marker().index());
                out.error = Some(YamlError {
                    span: Span::new(file, at, at),
                    message: scan_error_message(e.info(), limits),
                });
                break;
            }
        };
        let here = span_of(&span);
        until_clock -= 1;
        if until_clock == 0 {
            until_clock = CLOCK_EVERY;
            if Instant::now() >= deadline {
                out.error = Some(YamlError {
                    span: here,
                    message: format!(
                        "parsing took longer than {} s here (limit `limits.max-parse-seconds`); the rest of the file is not read",
                        limits.max_parse_time.as_secs_f64()
                    ),
                });
                break;
            }
        }
        // A completed node to attach to the parent (or to become the document root).
        let mut done: Option<(Node, usize)> = None;
        match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
            Event::DocumentStart(_) => {
                anchors.clear();
                root = None;
            }
            Event::DocumentEnd => {
                if let Some(node) = root.take().filter(|n| !n.is_null()) {
                    if out.docs.len() >= limits.max_documents {
                        out.error = Some(YamlError {
                            span: node.span,
                            message: format!(
                                "more than {} documents in one file (limit `limits.max-documents`)",
                                limits.max_documents
                            ),
                        });
                        break;
                    }
                    out.docs.push(Document {
                        root: node,
                        index: doc_index,
                    });
                }
                doc_index += 1;
            }
            Event::Scalar(value, style, anchor, tag) => {
                let tag_str = tag.map(|t| format!("{}{}", t.handle, t.suffix).into_boxed_str());
                let value = if unterminated_block_gained_break(&value, style, &span, open_end) {
                    &value[..value.len() - 1]
                } else {
                    &value[..]
                };
                let node = scalar_node(value, style, tag_str, here);
                done = Some((node, anchor));
            }
            Event::Alias(id) => match anchors.get(&id) {
                None => {
                    out.error = Some(YamlError {
                        span: here,
                        message: "alias refers to an unknown anchor".into(),
                    });
                    break;
                }
                Some(target) => {
                    let cost = count_nodes(target);
                    if cost > alias_budget {
                        out.error = Some(YamlError {
                            span: here,
                            message: format!(
                                "aliases expand to more than {} nodes (limit `limits.max-alias-nodes`); \
                                 is this an alias bomb?",
                                limits.max_alias_nodes
                            ),
                        });
                        break;
                    }
                    alias_budget -= cost;
                    done = Some((target.clone(), 0));
                }
            },
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                let is_seq = matches!(event, Event::SequenceStart(..));
                if stack.len() >= limits.max_depth {
                    out.error = Some(YamlError {
                        span: here,
                        message: format!(
                            "nesting deeper than {} levels (limit `limits.max-depth`)",
                            limits.max_depth
                        ),
                    });
                    break;
                }
                let flow = text
                    .as_bytes()
                    .get(here.start as usize)
                    .is_some_and(|b| *b == b'[' || *b == b'{');
                let tag = tag
                    .as_ref()
                    .map(|t| format!("{}{}", t.handle, t.suffix).into_boxed_str());
                stack.push(if is_seq {
                    Frame::Seq {
                        start: here,
                        anchor,
                        tag,
                        flow,
                        items: Vec::new(),
                    }
                } else {
                    Frame::Map {
                        start: here,
                        anchor,
                        tag,
                        flow,
                        entries: Vec::new(),
                        key: None,
                        first_seen: FirstSeen::default(),
                    }
                });
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq {
                    start,
                    anchor,
                    tag,
                    flow,
                    items,
                }) => {
                    let end = if flow { here } else { start };
                    let mut node = Node::new(Value::Seq(items), start.cover(end));
                    node.style = if flow { Style::Flow } else { Style::Block };
                    node.set_tag(tag);
                    done = Some((node, anchor));
                }
                Some(Frame::Map {
                    start,
                    anchor,
                    tag,
                    flow,
                    entries,
                    key,
                    ..
                }) => {
                    if let Some(key) = key {
                        // A key with no value event cannot happen in a valid stream; keep it.
                        out.warnings.push(YamlError {
                            span: key.span,
                            message: "mapping key without a value".into(),
                        });
                    }
                    let end = if flow { here } else { start };
                    let entries = apply_merge_keys(entries);
                    let mut node = Node::new(Value::Map(entries), start.cover(end));
                    node.style = if flow { Style::Flow } else { Style::Block };
                    node.set_tag(tag);
                    done = Some((node, anchor));
                }
                None => {}
            },
        }

        if let Some((node, anchor)) = done {
            if anchor != 0 {
                anchors.insert(anchor, node.clone());
            }
            match stack.last_mut() {
                None => root = Some(node),
                Some(Frame::Seq { items, .. }) => items.push(node),
                Some(Frame::Map {
                    entries,
                    key,
                    first_seen,
                    ..
                }) => match key.take() {
                    None => *key = Some(node),
                    Some(k) => {
                        let name = k.key_str();
                        if name != "<<" {
                            match first_seen.earlier(entries, &name) {
                                Some(first) => out.warnings.push(YamlError {
                                    span: k.span,
                                    message: format!(
                                        "duplicate key `{name}` (first at byte {first}); Kubernetes keeps the last"
                                    ),
                                }),
                                None => first_seen.note(&name, k.span.start),
                            }
                        }
                        entries.push(Entry {
                            key: k,
                            value: node,
                        });
                    }
                },
            }
        }
    }
    out
}

/// Does this block scalar end the input on a line without a line break, where saphyr-parser
/// adds one the text does not have? YAML's chomping keeps only the final line break there
/// is, and go-yaml (Kubernetes, kustomize, Helm) reads `key: |` then `  text` at the end of a
/// file, or of an inline patch whose own `|-` dropped the break, as `text`. saphyr adds it
/// after the last content line when that line reaches the scalar's indentation; content
/// lines start at that indentation (the span's start column), and a scalar without
/// content lines (only line breaks) is not touched there.
/// `open_end` is the input's length in characters when its last line has no line break.
fn unterminated_block_gained_break(
    value: &str,
    style: ScalarStyle,
    span: &saphyr_parser::Span,
    open_end: Option<usize>,
) -> bool {
    matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
        && open_end == Some(span.end.index())
        && value.ends_with('\n')
        && value.contains(|c| c != '\n')
        && span.end.col() >= span.start.col().max(1)
}

fn scalar_node(value: &str, style: ScalarStyle, tag: Option<Box<str>>, span: Span) -> Node {
    let style = match style {
        ScalarStyle::Plain => Style::Plain,
        ScalarStyle::SingleQuoted => Style::SingleQuoted,
        ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
        ScalarStyle::Literal => Style::Literal,
        ScalarStyle::Folded => Style::Folded,
    };
    let resolved = match tag.as_deref() {
        Some("tag:yaml.org,2002:str") | Some("!!str") => Value::String(value.to_string()),
        Some("tag:yaml.org,2002:int")
        | Some("tag:yaml.org,2002:float")
        | Some("tag:yaml.org,2002:bool")
        | Some("tag:yaml.org,2002:null") => resolve_plain(value),
        _ if style == Style::Plain => resolve_plain(value),
        _ => Value::String(value.to_string()),
    };
    let raw = match (&resolved, style) {
        (Value::String(_), _) => None,
        (_, Style::Plain) => Some(value.into()),
        _ => None,
    };
    let mut node = Node::new(resolved, span);
    node.style = style;
    node.set_tag(tag);
    node.set_raw(raw);
    node
}

fn count_nodes(node: &Node) -> usize {
    let mut n = 0;
    node.walk(|_, _| n += 1);
    n
}

/// YAML 1.1 merge keys (`<<: *base`, `<<: [*a, *b]`), which go-yaml v2 and so Kubernetes
/// honour: keys of the merged maps are added unless the map already has them.
fn apply_merge_keys(entries: Vec<Entry>) -> Vec<Entry> {
    if !entries
        .iter()
        .any(|e| e.key.key_is("<<") && e.key.style == Style::Plain)
    {
        return entries;
    }
    // Sets of names, not scans: a merged anchor of many keys stays linear.
    let mut own: Vec<Entry> = Vec::new();
    let mut merged: Vec<Entry> = Vec::new();
    let mut merged_names: std::collections::HashSet<String> = Default::default();
    for e in entries {
        if e.key.key_is("<<") && e.key.style == Style::Plain {
            let sources: Vec<&Node> = match &e.value.value {
                Value::Map(_) => vec![&e.value],
                Value::Seq(items) => items.iter().collect(),
                _ => vec![],
            };
            for src in sources {
                if let Value::Map(src_entries) = &src.value {
                    for se in src_entries {
                        if merged_names.insert(se.key.key_str().into_owned()) {
                            merged.push(se.clone());
                        }
                    }
                }
            }
        } else {
            own.push(e);
        }
    }
    let own_names: std::collections::HashSet<String> =
        own.iter().map(|o| o.key.key_str().into_owned()).collect();
    for m in merged {
        if !own_names.contains(m.key.key_str().as_ref()) {
            own.push(m);
        }
    }
    own
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Parsed {
        parse_str(text, FileId(0), &Limits::default())
    }

    #[test]
    fn spans_point_at_keys_and_values() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 3\n";
        let p = parse(text);
        assert!(p.error.is_none());
        let root = &p.docs[0].root;
        let replicas = root.get_path(&["spec", "replicas"]).map(|n| n.span);
        let start = text.find('3').unwrap_or(0);
        assert_eq!(replicas, Some(Span::new(FileId(0), start, start + 1)));
        let entry = root.get("spec").and_then(|s| s.entry("replicas"));
        assert_eq!(
            entry.map(|e| e.key.span.start as usize),
            text.find("replicas")
        );
    }

    #[test]
    fn non_ascii_text_gives_byte_offsets() {
        let text = "a: café ☕\nb: 2\n";
        let p = parse(text);
        let b = p.docs[0].root.get("b").map(|n| n.span.start as usize);
        assert_eq!(b, text.find('2'));
    }

    #[test]
    fn multi_document_streams_skip_empty_documents() {
        let p = parse("a: 1\n---\n---\nb: 2\n...\n");
        assert_eq!(p.docs.len(), 2);
        assert_eq!(p.docs[1].index, 2);
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            text.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                std::iter::repeat_n(prev.as_str(), 9)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let p = parse(&text);
        let err = p.error.map(|e| e.message).unwrap_or_default();
        assert!(err.contains("alias"), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        let text = "- ".repeat(100_000) + "x";
        let p = parse(&text);
        assert!(p.error.is_some_and(|e| e.message.contains("nesting")));
    }

    #[test]
    fn merge_keys_and_duplicates() {
        let p = parse("base: &b {p: 1, q: 2}\nm:\n  <<: *b\n  q: 3\nd: 1\nd: 2\n");
        let root = &p.docs[0].root;
        let m = root.get("m");
        assert_eq!(m.and_then(|m| m.get("p")).and_then(Node::as_i64), Some(1));
        assert_eq!(m.and_then(|m| m.get("q")).and_then(Node::as_i64), Some(3));
        assert_eq!(root.get("d").and_then(Node::as_i64), Some(2));
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    }

    /// `k0: v` .. one line per key, with `k0` repeated at the end.
    fn wide_mapping(keys: usize) -> String {
        let mut text = String::with_capacity(keys * 12);
        for i in 0..keys {
            text.push_str(&format!("k{i}: v\n"));
        }
        text.push_str("k0: again\n");
        text
    }

    #[test]
    fn duplicate_keys_of_a_wide_mapping_are_found_in_linear_time() {
        // 300k keys (3.6 MB): a scan of earlier keys per key took minutes.
        let text = wide_mapping(300_000);
        let started = Instant::now();
        let p = parse(&text);
        let took = started.elapsed();
        assert!(p.error.is_none(), "{:?}", p.error);
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings.first());
        assert!(p.warnings[0].message.contains("`k0` (first at byte 0)"));
        let bound = if cfg!(debug_assertions) { 20 } else { 1 };
        assert!(took < Duration::from_secs(bound), "{took:?}");
    }

    #[test]
    fn duplicates_in_small_and_indexed_mappings_say_where_the_first_was() {
        for keys in [3, SCAN_ENTRIES, SCAN_ENTRIES + 1, 100] {
            let text = format!("{}k1: x\nk1: y\n", wide_mapping(keys));
            let p = parse(&text);
            let firsts: Vec<&str> = p.warnings.iter().map(|w| w.message.as_str()).collect();
            assert_eq!(firsts.len(), 3, "{keys}: {firsts:?}");
            assert!(firsts[0].contains("`k0` (first at byte 0)"), "{firsts:?}");
            assert!(firsts[1].contains("`k1` (first at byte 6)"), "{firsts:?}");
        }
    }

    #[test]
    fn merging_a_wide_anchor_stays_linear() {
        let mut text = String::from("base: &b\n");
        for i in 0..100_000 {
            text.push_str(&format!("  k{i}: v\n"));
        }
        text.push_str("m:\n  <<: *b\n  k7: own\n");
        let limits = Limits {
            max_alias_nodes: 1_000_000,
            ..Limits::default()
        };
        let started = Instant::now();
        let p = parse_str(&text, FileId(0), &limits);
        let took = started.elapsed();
        let m = p.docs[0].root.get("m");
        assert_eq!(
            m.and_then(|m| m.as_map()).map(<[Entry]>::len),
            Some(100_000)
        );
        assert_eq!(
            m.and_then(|m| m.get("k7")).and_then(Node::as_str),
            Some("own")
        );
        let bound = if cfg!(debug_assertions) { 20 } else { 1 };
        assert!(took < Duration::from_secs(bound), "{took:?}");
    }

    #[test]
    fn a_parse_past_its_time_budget_stops_with_a_located_error() {
        let text = wide_mapping(50_000);
        let limits = Limits {
            max_parse_time: Duration::ZERO,
            ..Limits::default()
        };
        let p = parse_str(&text, FileId(0), &limits);
        let err = p
            .error
            .expect("the budget is spent before the first clock check");
        assert!(
            err.message.contains("limits.max-parse-seconds"),
            "{}",
            err.message
        );
        // Located where it stopped (past the first clock check), not at the file's start.
        assert!(err.span.start > 0 && (err.span.start as usize) < text.len());
    }

    #[test]
    fn syntax_errors_are_located() {
        let text = "a: \"unclosed\nb: 2\n";
        let p = parse(text);
        assert!(p.error.is_some());
        let text = "a:\n\tb: 1\n";
        let p = parse(text);
        assert!(p.error.is_some(), "tab indentation must be an error");
    }

    #[test]
    fn quoted_scalars_stay_strings() {
        let p = parse("a: \"yes\"\nb: yes\nc: '0644'\nd: 0644\n");
        let r = &p.docs[0].root;
        assert_eq!(r.get("a").and_then(Node::as_str), Some("yes"));
        assert_eq!(r.get("b").and_then(Node::as_bool), Some(true));
        assert_eq!(r.get("c").and_then(Node::as_str), Some("0644"));
        assert_eq!(r.get("d").and_then(Node::as_i64), Some(420));
        assert_eq!(r.get("d").and_then(|n| n.raw()), Some("0644"));
    }

    #[test]
    fn block_scalars_ending_the_input_without_a_line_break_read_as_go_yaml_reads_them() {
        // `data.v` as kubectl kustomize v5.5 printed it for files ending exactly so
        let cases = [
            ("|\n    x\n    y", "x\ny"),
            ("|+\n    x\n    y", "x\ny"),
            ("|-\n    x\n    y", "x\ny"),
            (">\n    x\n    y", "x y"),
            ("|\n    x\n      y", "x\n  y"),
            ("|\n    x\n    y  ", "x\ny  "),
            ("|\r\n    x\r\n    y", "x\ny"),
            ("|\n    x\n    y\n", "x\ny\n"),
            ("|\n    x\n    y\n# c", "x\ny\n"),
            ("|\n    x\n    y\n\n    ", "x\ny\n"),
            ("|+\n    x\n    y\n\n    ", "x\ny\n\n"),
            ("|+\n    x\n  ", "x\n"),
            ("|+\n    x\n    y\n\n", "x\ny\n\n"),
        ];
        for (block, want) in cases {
            let text = format!("data:\n  v: {block}");
            let p = parse(&text);
            let got = p.docs[0].root.get("data").and_then(|d| d.get("v"));
            assert_eq!(got.and_then(Node::as_str), Some(want), "{text:?}");
        }
    }
}
