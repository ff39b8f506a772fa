//! A set of named templates (Go's `*template.Template` with its associated templates) and the
//! entry point to execute one of them.

use gitops_lint_base::hash::FastMap as HashMap;
use std::rc::Rc;
use std::sync::Arc;

use super::ast::Pos;
use super::exec;
use super::funcs::{Func, FuncEnv};
use super::output::Output;
use super::parse::{ParseError, Tree, parse};
use super::value::Value;

/// Looks up a non-builtin function by name (Sprig/Helm library, or test functions).
pub type FuncResolver = Rc<dyn Fn(&str) -> Option<Func>>;

/// What a missing map key evaluates to (Go's `missingkey=` option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingKey {
    /// Go's default: an invalid value that prints `<no value>`; fields of it are also missing.
    #[default]
    Invalid,
    /// The zero value of the map's element type: nil for `map[string]interface{}` (Helm).
    /// Walking a field of that nil fails with `nil pointer evaluating interface {}.x`.
    Zero,
    /// Execution stops with `map has no entry for key "x"`.
    Error,
}

/// Execution options and resource limits.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    pub missing_key: MissingKey,
    /// Helm's post-processing: delete every `<no value>` from the output.
    pub remove_no_value: bool,
    /// Per-name nesting limit of `include` (Helm: 1000). `template` actions are bounded by
    /// Go's 100000 and, in practice, by `max_stack_bytes`.
    pub max_include_depth: usize,
    /// Bound on nodes walked plus commands evaluated, against runaway templates.
    pub max_steps: u64,
    pub max_output_bytes: usize,
    /// Bound on the iterations of one `range`, e.g. `range 100000000`.
    pub max_range_len: usize,
    /// Approximate stack budget of one execution; deeper recursion fails with an error
    /// instead of overflowing the thread's stack.
    pub max_stack_bytes: usize,
    /// Key of the root data holding chart values, for provenance (`Values` in Helm).
    pub values_key: Option<String>,
    /// Key of the root data holding the release (`Release` in Helm): reads of its
    /// install/upgrade state are recorded as `Meta::release`.
    pub release_key: Option<String>,
    /// Template name `tpl` parses its text under (Helm: the root template, `gotpl`).
    pub tpl_name: String,
    /// Record output segments (provenance). Off saves memory when only the text matters.
    pub record_segments: bool,
    /// Wall-clock bound of the execution (`limits.max-render-seconds`), checked every few
    /// thousand steps so that a slow function in a loop cannot outlast it by much.
    pub deadline: Option<std::time::Instant>,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            missing_key: MissingKey::Invalid,
            remove_no_value: false,
            max_include_depth: 1000,
            max_steps: 50_000_000,
            max_output_bytes: 64 << 20,
            max_range_len: 10_000_000,
            max_stack_bytes: 1 << 20,
            values_key: Some("Values".to_string()),
            release_key: Some("Release".to_string()),
            tpl_name: "gotpl".to_string(),
            record_segments: true,
            deadline: None,
        }
    }
}

impl ExecOptions {
    /// Options matching `helm template`: `missingkey=zero` and `<no value>` removed.
    pub fn helm() -> Self {
        ExecOptions {
            missing_key: MissingKey::Zero,
            remove_no_value: true,
            ..ExecOptions::default()
        }
    }
}

/// An execution failure, printed as Go prints it
/// (`template: FILE:LINE:COL: executing "NAME" at <NODE>: MESSAGE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecError {
    pub message: String,
    /// Position of the node being executed, when known.
    pub pos: Option<Pos>,
    /// Name of the template being executed.
    pub template: String,
    /// For a failure inside `include`/`tpl`: the error of the included template.
    pub cause: Option<Box<ExecError>>,
}

impl ExecError {
    /// The innermost located error of an `include`/`tpl` chain: where the failing action
    /// really is.
    pub fn innermost(&self) -> &ExecError {
        let mut found = self;
        let mut e = self;
        while let Some(c) = &e.cause {
            e = c;
            if e.pos.is_some() {
                found = e;
            }
        }
        found
    }
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExecError {}

/// A set of named templates sharing functions and delimiters.
#[derive(Clone)]
pub struct Templates {
    pub(crate) trees: HashMap<String, Arc<Tree>>,
    pub(crate) funcs: FuncResolver,
    left: String,
    right: String,
}

/// Functions the engine itself provides (they need the template set or the executor).
pub(crate) const ENGINE_FUNCS: &[&str] = &["include", "tpl"];

impl Templates {
    /// An empty set whose non-builtin functions come from `funcs`.
    pub fn new(funcs: FuncResolver) -> Templates {
        Templates {
            trees: HashMap::default(),
            funcs,
            left: String::new(),
            right: String::new(),
        }
    }

    /// An empty set with only Go's builtins (and `include`/`tpl`).
    pub fn with_builtins_only() -> Templates {
        Templates::new(Rc::new(|_| None))
    }

    /// Changes the action delimiters (empty = `{{` / `}}`) for later `parse` calls.
    pub fn delims(&mut self, left: &str, right: &str) {
        self.left = left.to_string();
        self.right = right.to_string();
    }

    pub(crate) fn is_func(&self, name: &str) -> bool {
        exec::is_builtin(name) || ENGINE_FUNCS.contains(&name) || (self.funcs)(name).is_some()
    }

    /// Parses `text` as the template `name`, adding it and its `define`/`block` templates.
    /// A later non-empty definition replaces an earlier one (Go's `AddParseTree`).
    pub fn parse(&mut self, name: &str, text: &str) -> Result<(), ParseError> {
        self.parse_main(name, text).map(|_| ())
    }

    /// Like `parse`, and returns the tree of `text` itself. That tree is what Go's
    /// `t.New(name).Parse(text)` then `t.Execute` runs, even when it is empty and so did not
    /// replace an existing template of the same name (Helm's `tpl ""` relies on it).
    pub(crate) fn parse_main(&mut self, name: &str, text: &str) -> Result<Arc<Tree>, ParseError> {
        let trees = self.parse_trees(name, text)?;
        self.add_trees(&trees);
        Ok(trees
            .iter()
            .rev()
            .find(|t| t.name == name)
            .cloned()
            .unwrap_or_else(|| {
                Arc::new(Tree {
                    name: name.to_string(),
                    parse_name: name.into(),
                    root: Vec::new(),
                })
            }))
    }

    /// Parses `text` as the template `name` into its tree and those it defines, without
    /// adding them: what [`Templates::add_trees`] adds. The result depends only on the
    /// name, the text, the delimiters and which names are functions, so a caller with a
    /// fixed function set may keep it for the next set (Helm parses each chart template
    /// once per process).
    pub fn parse_trees(&self, name: &str, text: &str) -> Result<Vec<Arc<Tree>>, ParseError> {
        let trees = parse(name, text, &self.left, &self.right, &|n| self.is_func(n))?;
        Ok(trees.into_iter().map(Arc::new).collect())
    }

    /// Adds parsed trees as [`Templates::parse`] does: a later non-empty definition
    /// replaces an earlier one (Go's `AddParseTree`).
    pub fn add_trees(&mut self, trees: &[Arc<Tree>]) {
        for t in trees {
            let keep_old = self.trees.contains_key(&t.name) && super::ast::is_empty_tree(&t.root);
            if !keep_old {
                self.trees.insert(t.name.clone(), t.clone());
            }
        }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.trees.contains_key(name)
    }

    /// Names of all templates, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.trees.keys().map(String::as_str).collect();
        v.sort();
        v
    }

    pub fn tree(&self, name: &str) -> Option<&Tree> {
        self.trees.get(name).map(|t| t.as_ref())
    }

    /// Executes template `name` with `dot` as data. `env` is what functions may read besides
    /// their arguments (seed, clock, zone), so that a render can be repeated exactly.
    pub fn execute(
        &self,
        name: &str,
        dot: Value,
        opts: &ExecOptions,
        env: &mut FuncEnv,
    ) -> Result<Output, ExecError> {
        exec::execute(self, name, dot, opts, env)
    }
}
