//! YAML: a span-preserving parser (saphyr-parser events into our own tree) with Kubernetes'
//! YAML 1.1 scalar resolution and hard limits against hostile input.

pub mod emit;
mod float;
mod lenient;
mod node;
mod parse;
pub mod path;
pub mod resolve;

pub use node::{Entry, Node, PathSeg, Related, Style, Value, path_to_string};
pub use parse::{Document, Limits, Parsed, YamlError, parse_file, parse_str};

/// The first document of inline YAML (null when there is none): for unit tests that build
/// nodes from text and do not look at the file their spans name (public for the unit tests of
/// the crates above).
#[doc(hidden)]
pub fn first_doc(text: &str) -> Node {
    parse_str(text, crate::source::FileId(0), &Limits::default())
        .docs
        .into_iter()
        .next()
        .map(|d| d.root)
        .unwrap_or_else(|| Node::new(Value::Null, crate::source::Span::default()))
}
