//! YAML: a span-preserving parser (saphyr-parser events into our own tree) with Kubernetes'
//! YAML 1.1 scalar resolution and hard limits against hostile input.

pub mod emit;
mod node;
mod parse;
pub mod resolve;

pub use node::{Entry, Node, PathSeg, Related, Style, Value, path_to_string};
pub use parse::{Document, Limits, Parsed, YamlError, parse_file, parse_str};
