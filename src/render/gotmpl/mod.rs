//! Go text/template engine with Sprig and Helm functions (see value.rs for the data model).
//!
//! `Templates` holds parsed templates; `Templates::execute` renders one with an
//! `ExecOptions` (Helm: `ExecOptions::helm()`) and returns an `Output` whose segments say
//! which action printed each byte, from which `.Values` paths, and whether a
//! non-deterministic function influenced it.

pub mod ast;
pub mod builtins;
mod exec;
pub mod funcs;
pub mod lex;
pub mod literal;
pub mod output;
pub mod parse;
pub mod printf;
pub mod template;
pub mod value;

pub use ast::Pos;
pub use exec::NONDETERMINISTIC_FUNCS;
pub use output::{Meta, Output, OutputSegment, SegmentKind, Taint, ValuesPath};
pub use parse::ParseError;
pub use template::{ExecError, ExecOptions, FuncResolver, MissingKey, Templates};
#[cfg(test)]
mod vector_tests;
