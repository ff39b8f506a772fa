//! Go text/template engine with Sprig and Helm functions (see value.rs for the data model).
//!
//! `Templates` holds parsed templates; `Templates::execute` renders one with an
//! `ExecOptions` (Helm: `ExecOptions::helm()`, i.e. `missingkey=zero` and `<no value>`
//! removed) and returns an `Output`: the text, plus `OutputSegment`s saying which text node or
//! action wrote each byte range (`pos`: file, line, Go's 0-based column), which `.Values`
//! paths the printed value came from (`values_paths`), whether a non-deterministic function
//! influenced it (`taint`), and, for text coming out of `include`/`tpl`, the calling actions
//! (`via`).
//!
//! ```ignore
//! let mut set = Templates::new(Rc::new(funcs::lookup)); // non-builtin functions
//! set.parse("chart/templates/_helpers.tpl", helpers)?;   // adds its `define`s
//! set.parse("chart/templates/deploy.yaml", deploy)?;    // later definitions win
//! let out = set.execute("chart/templates/deploy.yaml", dot, &ExecOptions::helm(), &mut env)?;
//! for seg in &out.segments { /* &out.text[seg.range.clone()], seg.pos, seg.values_path() */ }
//! ```
//!
//! Module map: `lex` (tokens) → `parse` (trees, `ast`; `literal` decodes numbers and
//! strings) → `exec` (walks trees; `exec/field`, `exec/range`, `exec/include`; `builtins` are
//! Go's predefined functions, `printf` is Go's fmt) → `output` (text with provenance).
//! `template` holds the set and the options. Tests: `vector_tests` (Go's own tables from the
//! corpus, `GITOPS_LINT_CORPUS`), `exec_tests` (Helm-relevant behaviour).
//! Recursion is bounded everywhere: parser nesting (`parse::MAX_PARSE_DEPTH` and a stack
//! budget), execution (`ExecOptions::max_stack_bytes`, steps, output bytes, range length).
//! Reaching Helm's include depth of 1000 needs about 25 KiB of stack per level in debug
//! builds: run such renders on a thread with a large stack and raise `max_stack_bytes`.

#![deny(unsafe_code)]

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
mod exec_tests;
#[cfg(test)]
mod vector_tests;
