//! The CEL of `checks:` entries: compiled once when the configuration is read (a parse
//! error, an unknown variable or function is a configuration error on the `expr` line) and
//! evaluated by the `cel` crate's interpreter under a cost meter.
//!
//! The interpreter has no cost limit of its own, so the compiled program is rewritten before
//! it runs: every value handed to a function or operator, put in a list or map, or iterated
//! by a comprehension passes through an internal function (`@gitops-lint.cost`) that charges
//! the meter one unit plus the value's size (nodes of lists and maps, 16 bytes of string a
//! unit), and every iteration of a comprehension is charged the size of its body. Over the
//! limit, that function fails, and the first iteration after it stops the loop: an
//! expression over a large input stops at its limit instead of running on. The shapes the
//! interpreter recognises (`all`/`exists` steps, `map`/`filter` appends) are kept, so errors
//! are absorbed as CEL says and appends stay linear.

use ::cel::common::ast::operators;
use ::cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use ::cel::common::types::{CelBytes, CelList, CelMap, CelString, DYN_TYPE, INT_TYPE};
use ::cel::common::value::{CowVal, Val};
use ::cel::{Context, Env, ExecutionError, Value};
use std::cell::Cell;
use std::sync::{Arc, OnceLock};

/// The variables an expression reads: the rendered object, the objects of its app, the app,
/// and the object's namespace.
pub const VARIABLES: &[&str] = &["object", "objects", "app", "namespace"];

/// Type names CEL lets an expression name as values (`type(x) == string`).
const TYPE_NAMES: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "dyn",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "type",
    "uint",
];

/// The metering function: not a CEL identifier, so no expression can call it.
const COST: &str = "@gitops-lint.cost";

/// Longest expression text: the parser is third-party code fed from the repository.
pub const MAX_EXPRESSION_BYTES: usize = 8 * 1024;
/// Most nodes of a parsed expression (macros expanded).
pub const MAX_EXPRESSION_NODES: usize = 2000;

/// An expression ready to run.
#[derive(Debug)]
pub struct Program {
    metered: IdedExpr,
    /// Whether it reads `objects` (the app's objects are converted only for those).
    pub reads_objects: bool,
}

/// Why an expression was refused, with the 1-based line and column in the expression when
/// known.
#[derive(Debug, PartialEq)]
pub struct CompileError {
    pub message: String,
    pub at: Option<(usize, usize)>,
}

impl CompileError {
    /// ` (column 12 of the expression)`, ` (line 2, column 3 of the expression)`.
    pub fn position(&self) -> String {
        match self.at {
            Some((1, c)) => format!(" (column {c} of the expression)"),
            Some((l, c)) => format!(" (line {l}, column {c} of the expression)"),
            None => String::new(),
        }
    }
}

fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // Both overloads are new names in a fresh environment: they cannot conflict.
        let _ = env.add_overload(COST, "gitops_lint_cost", vec![DYN_TYPE], cost);
        let _ = env.add_overload(
            COST,
            "gitops_lint_cost_iteration",
            vec![DYN_TYPE, INT_TYPE],
            cost_iteration,
        );
        Arc::new(env)
    })
}

impl Program {
    /// Parse and check `source`: the variables it reads must be [`VARIABLES`] (or bound by a
    /// comprehension), the functions it calls must exist.
    pub fn compile(source: &str) -> Result<Program, CompileError> {
        if source.len() > MAX_EXPRESSION_BYTES {
            return Err(CompileError {
                message: format!("the expression is longer than {MAX_EXPRESSION_BYTES} bytes"),
                at: None,
            });
        }
        // The parser is third-party code run on repository input: a panic in it is a
        // refused expression, never a crash of the linter.
        let parsed =
            std::panic::catch_unwind(|| env().compile(source)).map_err(|_| CompileError {
                message: "the CEL parser failed on this expression".into(),
                at: None,
            })?;
        let program = parsed.map_err(|errors| {
            let first = errors.errors.first();
            CompileError {
                message: first
                    .map(|e| format!("does not parse as CEL: {}", e.msg))
                    .unwrap_or_else(|| "does not parse as CEL".into()),
                at: first.and_then(|e| {
                    Some((
                        usize::try_from(e.pos.0).ok()?,
                        usize::try_from(e.pos.1).ok()?,
                    ))
                }),
            }
        })?;
        let expr = program.expression().clone();
        // The node's byte offset in the source, as a 1-based line and character column.
        let position = |id: u64| {
            let (start, _) = program.source_info().offset_for(id)?;
            let before = source.get(..usize::try_from(start).ok()?)?;
            let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
            Some((
                before.matches('\n').count() + 1,
                before[line_start..].chars().count() + 1,
            ))
        };
        let nodes = count_nodes(&expr);
        if nodes > MAX_EXPRESSION_NODES {
            return Err(CompileError {
                message: format!(
                    "the expression has {nodes} nodes, more than {MAX_EXPRESSION_NODES}"
                ),
                at: None,
            });
        }
        check_names(&expr, &mut Vec::new()).map_err(|(id, message)| CompileError {
            message,
            at: position(id),
        })?;
        let reads_objects = reads_variable(&expr, "objects", &mut Vec::new());
        Ok(Program {
            metered: meter(expr, &mut Vec::new()),
            reads_objects,
        })
    }

    /// Run against `scope` (which binds [`VARIABLES`]) with at most `limit` cost units.
    pub fn evaluate(&self, scope: &Context, limit: u64) -> Outcome {
        METER.with(|m| m.set((0, limit)));
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Value::resolve(&self.metered, scope)
        }));
        let (used, _) = METER.with(|m| m.replace((0, 0)));
        if used > limit {
            return Outcome::OverBudget { used };
        }
        match run {
            Err(_) => Outcome::Error {
                message: "the CEL interpreter failed".into(),
                used,
            },
            Ok(Ok(Value::Bool(b))) => Outcome::Value { value: b, used },
            Ok(Ok(other)) => Outcome::Error {
                message: format!(
                    "the expression must give true or false, it gave a {}",
                    other.type_of()
                ),
                used,
            },
            Ok(Err(e)) => Outcome::Error {
                message: e.to_string(),
                used,
            },
        }
    }
}

/// The result of one evaluation and the cost units it used.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Value {
        value: bool,
        used: u64,
    },
    Error {
        message: String,
        used: u64,
    },
    /// Stopped at its limit: undecided.
    OverBudget {
        used: u64,
    },
}

/// A scope for the evaluations of one app's objects: `objects` bound once (it may be large),
/// the rest per object in [`object_scope`].
pub fn app_scope(objects: Option<Value>) -> Context<'static, 'static> {
    let mut ctx = Context::with_env(env().clone());
    if let Some(objects) = objects {
        ctx.add_variable_from_value("objects", objects);
    }
    ctx
}

/// `object`, `app` and `namespace` over an app's scope.
pub fn object_scope<'p>(
    parent: &'p Context<'p, 'static>,
    object: Value,
    app: Value,
    namespace: Value,
) -> Context<'p, 'static> {
    let mut ctx = parent.new_inner_scope();
    ctx.add_variable_from_value("object", object);
    ctx.add_variable_from_value("app", app);
    ctx.add_variable_from_value("namespace", namespace);
    ctx
}

thread_local! {
    /// (units used, limit) of the evaluation running on this thread.
    static METER: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

fn charge(units: u64) -> Result<(), ExecutionError> {
    METER.with(|m| {
        let (used, limit) = m.get();
        let used = used.saturating_add(units);
        m.set((used, limit));
        if used > limit {
            Err(ExecutionError::function_error(
                "cost",
                "the check's cost limit is reached",
            ))
        } else {
            Ok(())
        }
    })
}

/// What the meter has left (sizes are counted only that far).
fn room() -> u64 {
    METER.with(|m| {
        let (used, limit) = m.get();
        limit.saturating_sub(used).saturating_add(1)
    })
}

/// `@gitops-lint.cost(v)`: charge `v`'s size, give `v` back.
fn cost<'b, 'v>(mut args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let value = args.pop().ok_or(ExecutionError::MissingArgumentOrTarget)?;
    charge(1 + size_of(&*value, room()))?;
    Ok(value)
}

/// `@gitops-lint.cost(v, n)`: one iteration of a comprehension whose body has `n` nodes.
fn cost_iteration<'b, 'v>(mut args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let body = args
        .pop()
        .and_then(|n| {
            n.downcast_ref::<::cel::common::types::CelInt>()
                .map(|i| *i.inner())
        })
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(1);
    let value = args.pop().ok_or(ExecutionError::MissingArgumentOrTarget)?;
    charge(body.max(1) + size_of(&*value, room()))?;
    Ok(value)
}

/// The size of a value: its list and map nodes and a unit per 16 bytes of string, counted
/// up to `cap` (so counting never costs more than the meter has left).
fn size_of(value: &dyn Val, cap: u64) -> u64 {
    let mut total = 0u64;
    let mut stack: Vec<&dyn Val> = vec![value];
    while let Some(v) = stack.pop() {
        if total >= cap {
            break;
        }
        if let Some(list) = v.downcast_ref::<CelList>() {
            total += list.inner().len() as u64;
            stack.extend(list.inner().iter().map(|b| &**b));
        } else if let Some(map) = v.downcast_ref::<CelMap>() {
            total += map.inner().len() as u64;
            stack.extend(map.inner().values().map(|b| &**b));
        } else if let Some(s) = v.downcast_ref::<CelString>() {
            total += s.inner().len() as u64 / 16;
        } else if let Some(b) = v.downcast_ref::<CelBytes>() {
            total += b.inner().len() as u64 / 16;
        }
    }
    total
}

fn count_nodes(e: &IdedExpr) -> usize {
    let mut n = 0;
    visit(e, &mut |_| n += 1);
    n
}

/// Calls `f` on every node (iteratively: the tree is as deep as the parser allowed).
fn visit<'e>(root: &'e IdedExpr, f: &mut impl FnMut(&'e IdedExpr)) {
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        f(e);
        match &e.expr {
            Expr::Call(c) => {
                stack.extend(c.target.as_deref());
                stack.extend(c.args.iter());
            }
            Expr::Comprehension(c) => stack.extend([
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ]),
            Expr::List(l) => stack.extend(l.elements.iter()),
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        stack.push(&me.key);
                        stack.push(&me.value);
                    }
                }
            }
            Expr::Select(s) => stack.push(&s.operand),
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        stack.push(&f.value);
                    }
                }
            }
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
    }
}

/// `a.b.c` as its segments, when `e` is a name (an identifier and field selections on it).
fn qualified_name(e: &IdedExpr) -> Option<Vec<&str>> {
    let mut segments = Vec::new();
    let mut e = e;
    loop {
        match &e.expr {
            Expr::Ident(name) => {
                segments.push(name.as_str());
                segments.reverse();
                return Some(segments);
            }
            Expr::Select(s) if !s.test => {
                segments.push(s.field.as_str());
                e = &s.operand;
            }
            _ => return None,
        }
    }
}

/// Does the environment declare a function of this name (global or member)?
fn known_function(name: &str) -> bool {
    // `add_function` refuses exactly the names the environment declares.
    Context::with_env(env().clone())
        .add_function(name, || true)
        .is_err()
}

/// Operators and the interpreter's internal calls, which are not declared as functions.
fn is_operator(name: &str) -> bool {
    name.starts_with('_')
        || name.starts_with('@')
        || name == operators::LOGICAL_NOT
        || name == operators::NEGATE
}

/// Unknown variables and functions, and message construction, which nothing here declares.
fn check_names(e: &IdedExpr, bound: &mut Vec<String>) -> Result<(), (u64, String)> {
    match &e.expr {
        Expr::Ident(name) => {
            if !bound.iter().any(|b| b == name)
                && !VARIABLES.contains(&name.as_str())
                && !TYPE_NAMES.contains(&name.as_str())
            {
                return Err((
                    e.id,
                    format!(
                        "unknown variable `{name}` (a check reads {})",
                        VARIABLES.join(", ")
                    ),
                ));
            }
            Ok(())
        }
        Expr::Literal(_) | Expr::Unspecified => Ok(()),
        Expr::Select(s) => check_names(&s.operand, bound),
        Expr::Call(c) => {
            // `optional.of(x)`: a function named by a qualified name, not a method call.
            let namespace = c.target.as_deref().and_then(qualified_name).filter(|segs| {
                let root = segs.first().copied().unwrap_or_default();
                !bound.iter().any(|b| b == root) && !VARIABLES.contains(&root)
            });
            let name = match &namespace {
                Some(segs) => format!("{}.{}", segs.join("."), c.func_name),
                None => c.func_name.clone(),
            };
            if !is_operator(&c.func_name) && !known_function(&name) {
                return Err((e.id, format!("unknown function `{name}`")));
            }
            if namespace.is_none()
                && let Some(t) = &c.target
            {
                check_names(t, bound)?;
            }
            c.args.iter().try_for_each(|a| check_names(a, bound))
        }
        Expr::Comprehension(c) => {
            check_names(&c.iter_range, bound)?;
            check_names(&c.accu_init, bound)?;
            let depth = bound.len();
            bound.push(c.iter_var.clone());
            bound.extend(c.iter_var2.clone());
            bound.push(c.accu_var.clone());
            let inner = [&c.loop_cond, &c.loop_step, &c.result]
                .into_iter()
                .try_for_each(|x| check_names(x, bound));
            bound.truncate(depth);
            inner
        }
        Expr::List(l) => l.elements.iter().try_for_each(|x| check_names(x, bound)),
        Expr::Map(m) => m.entries.iter().try_for_each(|entry| match &entry.expr {
            EntryExpr::MapEntry(me) => {
                check_names(&me.key, bound)?;
                check_names(&me.value, bound)
            }
            EntryExpr::StructField(_) => Err((entry.id, "unexpected field".into())),
        }),
        Expr::Struct(s) => Err((
            e.id,
            format!(
                "`{}{{…}}`: message construction is not supported in checks",
                s.type_name
            ),
        )),
    }
}

/// Whether `name` is read as a free variable (not one a comprehension binds).
fn reads_variable(e: &IdedExpr, name: &str, bound: &mut Vec<String>) -> bool {
    match &e.expr {
        Expr::Ident(n) => n == name && !bound.iter().any(|b| b == n),
        Expr::Comprehension(c) => {
            if reads_variable(&c.iter_range, name, bound)
                || reads_variable(&c.accu_init, name, bound)
            {
                return true;
            }
            let depth = bound.len();
            bound.push(c.iter_var.clone());
            bound.extend(c.iter_var2.clone());
            bound.push(c.accu_var.clone());
            let inner = [&c.loop_cond, &c.loop_step, &c.result]
                .into_iter()
                .any(|x| reads_variable(x, name, bound));
            bound.truncate(depth);
            inner
        }
        Expr::Select(s) => reads_variable(&s.operand, name, bound),
        Expr::Call(c) => {
            c.target
                .as_deref()
                .is_some_and(|t| reads_variable(t, name, bound))
                || c.args.iter().any(|a| reads_variable(a, name, bound))
        }
        Expr::List(l) => l.elements.iter().any(|x| reads_variable(x, name, bound)),
        Expr::Map(m) => m.entries.iter().any(|entry| match &entry.expr {
            EntryExpr::MapEntry(me) => {
                reads_variable(&me.key, name, bound) || reads_variable(&me.value, name, bound)
            }
            EntryExpr::StructField(f) => reads_variable(&f.value, name, bound),
        }),
        Expr::Struct(_) | Expr::Literal(_) | Expr::Unspecified => false,
    }
}

fn call(func: &str, args: Vec<IdedExpr>) -> IdedExpr {
    IdedExpr {
        id: 0,
        expr: Expr::Call(CallExpr {
            func_name: func.to_string(),
            target: None,
            args,
        }),
    }
}

/// `@gitops-lint.cost(e)`.
fn charged(e: IdedExpr) -> IdedExpr {
    call(COST, vec![e])
}

/// `@gitops-lint.cost(e, n)`: an iteration of a body of `n` nodes.
fn charged_iteration(e: IdedExpr, n: usize) -> IdedExpr {
    let n = IdedExpr {
        id: 0,
        expr: Expr::Literal(LiteralValue::Int(
            i64::try_from(n).unwrap_or(i64::MAX).into(),
        )),
    };
    call(COST, vec![e, n])
}

fn is_ident(e: &IdedExpr, name: &str) -> bool {
    matches!(&e.expr, Expr::Ident(n) if n == name)
}

/// The expression with the meter's calls in it (see the module documentation). `bound` are
/// the names comprehensions around it bind.
fn meter(e: IdedExpr, bound: &mut Vec<String>) -> IdedExpr {
    let IdedExpr { id, expr } = e;
    let expr = match expr {
        Expr::Literal(_) | Expr::Ident(_) | Expr::Unspecified | Expr::Struct(_) => expr,
        Expr::Select(mut s) => {
            s.operand = Box::new(meter(*s.operand, bound));
            Expr::Select(s)
        }
        Expr::List(mut l) => {
            l.elements = l
                .elements
                .into_iter()
                .map(|x| charged(meter(x, bound)))
                .collect();
            Expr::List(l)
        }
        Expr::Map(mut m) => {
            for entry in &mut m.entries {
                if let EntryExpr::MapEntry(me) = &mut entry.expr {
                    me.key = charged(meter(std::mem::take(&mut me.key), bound));
                    me.value = charged(meter(std::mem::take(&mut me.value), bound));
                }
            }
            Expr::Map(m)
        }
        Expr::Call(mut c) => {
            // A function's namespace (`optional` of `optional.of`) stays a name; a value the
            // method is called on is charged like an argument.
            c.target = c.target.map(|t| {
                let namespace = qualified_name(&t).is_some_and(|segs| {
                    let root = segs.first().copied().unwrap_or_default();
                    !VARIABLES.contains(&root) && !bound.iter().any(|b| b == root)
                });
                if namespace {
                    t
                } else {
                    Box::new(charged(meter(*t, bound)))
                }
            });
            c.args = c
                .args
                .into_iter()
                .map(|a| charged(meter(a, bound)))
                .collect();
            Expr::Call(c)
        }
        Expr::Comprehension(c) => Expr::Comprehension(Box::new(meter_comprehension(*c, bound))),
    };
    IdedExpr { id, expr }
}

fn meter_comprehension(c: ComprehensionExpr, bound: &mut Vec<String>) -> ComprehensionExpr {
    let body = count_nodes(&c.loop_cond) + count_nodes(&c.loop_step);
    let accu = c.accu_var.clone();
    let iter_range = charged(meter(c.iter_range.clone(), bound));
    let accu_init = meter(c.accu_init.clone(), bound);
    let depth = bound.len();
    bound.push(c.iter_var.clone());
    bound.extend(c.iter_var2.clone());
    bound.push(c.accu_var.clone());
    let metered = meter_loop(c, iter_range, accu_init, &accu, body, bound);
    bound.truncate(depth);
    metered
}

fn meter_loop(
    c: ComprehensionExpr,
    iter_range: IdedExpr,
    accu_init: IdedExpr,
    accu: &str,
    body: usize,
    bound: &mut Vec<String>,
) -> ComprehensionExpr {
    let result = meter(c.result, bound);
    // `map`/`filter`: `@result + [x]`, or `p ? @result + [x] : @result`. The interpreter
    // appends in place for exactly this shape (a literal condition, an identifier result):
    // keep it, and charge the iteration in the guard or the appended element.
    if let (true, Expr::Literal(_)) = (is_ident(&result, accu), &c.loop_cond.expr)
        && let Some(step) = meter_append(&c.loop_step, accu, body, bound)
    {
        return ComprehensionExpr {
            iter_range,
            accu_init,
            loop_cond: c.loop_cond,
            loop_step: step,
            result,
            ..c
        };
    }
    // Anything else: the condition is evaluated first in each iteration, and a failure
    // there ends the loop. The step keeps its root call (`@result && p`): the interpreter
    // reads it to absorb errors as `all`/`exists` do.
    let loop_step = match c.loop_step.expr {
        Expr::Call(mut call) => {
            call.args = call
                .args
                .into_iter()
                .map(|a| {
                    if is_ident(&a, accu) {
                        a
                    } else {
                        charged(meter(a, bound))
                    }
                })
                .collect();
            IdedExpr {
                id: c.loop_step.id,
                expr: Expr::Call(call),
            }
        }
        other => meter(
            IdedExpr {
                id: c.loop_step.id,
                expr: other,
            },
            bound,
        ),
    };
    ComprehensionExpr {
        iter_range,
        accu_init,
        loop_cond: charged_iteration(meter(c.loop_cond, bound), body),
        loop_step,
        result,
        ..c
    }
}

/// The metered append step, when `step` has the shape the interpreter appends in place.
fn meter_append(
    step: &IdedExpr,
    accu: &str,
    body: usize,
    bound: &mut Vec<String>,
) -> Option<IdedExpr> {
    let mut appended = |e: &IdedExpr| -> Option<IdedExpr> {
        let Expr::Call(c) = &e.expr else { return None };
        if c.func_name != operators::ADD || c.target.is_some() {
            return None;
        }
        let [lhs, rhs] = c.args.as_slice() else {
            return None;
        };
        let Expr::List(list) = &rhs.expr else {
            return None;
        };
        if !is_ident(lhs, accu) {
            return None;
        }
        Some(IdedExpr {
            id: e.id,
            expr: Expr::Call(CallExpr {
                func_name: c.func_name.clone(),
                target: None,
                args: vec![
                    lhs.clone(),
                    IdedExpr {
                        id: rhs.id,
                        expr: Expr::List(::cel::common::ast::ListExpr {
                            elements: list
                                .elements
                                .iter()
                                .map(|x| meter(x.clone(), bound))
                                .collect(),
                            optional_indices: list.optional_indices.clone(),
                        }),
                    },
                ],
            }),
        })
    };
    let charge_elements = |e: IdedExpr, iteration: bool| -> IdedExpr {
        let IdedExpr { id, expr } = e;
        let Expr::Call(mut c) = expr else {
            return IdedExpr { id, expr };
        };
        if let Some(list) = c.args.get_mut(1)
            && let Expr::List(l) = &mut list.expr
        {
            l.elements = std::mem::take(&mut l.elements)
                .into_iter()
                .map(|x| {
                    if iteration {
                        charged_iteration(x, body)
                    } else {
                        charged(x)
                    }
                })
                .collect();
        }
        IdedExpr {
            id,
            expr: Expr::Call(c),
        }
    };
    if let Some(step) = appended(step) {
        return Some(charge_elements(step, true));
    }
    let Expr::Call(c) = &step.expr else {
        return None;
    };
    if c.func_name != operators::CONDITIONAL || c.target.is_some() {
        return None;
    }
    let [guard, then, otherwise] = c.args.as_slice() else {
        return None;
    };
    if !is_ident(otherwise, accu) {
        return None;
    }
    let then = charge_elements(appended(then)?, false);
    Some(IdedExpr {
        id: step.id,
        expr: Expr::Call(CallExpr {
            func_name: c.func_name.clone(),
            target: None,
            args: vec![
                charged_iteration(meter(guard.clone(), bound), body),
                then,
                otherwise.clone(),
            ],
        }),
    })
}

/// A JSON value as a CEL value.
/// A JSON value as CEL sees it. Integers stay `int` (as Kubernetes' CEL reads JSON numbers),
/// where `cel::to_value` through serde would hand positive ones over as `uint`.
pub fn json_value(json: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match json {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => n
            .as_i64()
            .map(Value::Int)
            .or_else(|| n.as_f64().map(Value::Float))
            .unwrap_or(Value::Null),
        J::String(s) => Value::String(Arc::new(s.clone())),
        J::Array(items) => Value::List(Arc::new(items.iter().map(json_value).collect())),
        J::Object(m) => {
            let map: std::collections::HashMap<::cel::objects::Key, Value> = m
                .iter()
                .map(|(k, v)| (k.clone().into(), json_value(v)))
                .collect();
            Value::Map(::cel::objects::Map { map: Arc::new(map) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::first_doc;

    fn run(expr: &str, object: &str, limit: u64) -> Outcome {
        let program = match Program::compile(expr) {
            Ok(p) => p,
            Err(e) => panic!("{expr}: {e:?}"),
        };
        let obj = json_value(&first_doc(object).to_json());
        let objects = Value::List(Arc::new(vec![obj.clone(), obj.clone()]));
        let app = app_scope(Some(objects));
        let scope = object_scope(&app, obj, Value::Null, Value::Null);
        program.evaluate(&scope, limit)
    }

    fn value(expr: &str, object: &str) -> Option<bool> {
        match run(expr, object, 1_000_000) {
            Outcome::Value { value, .. } => Some(value),
            _ => None,
        }
    }

    const APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  syncPolicy:\n    syncOptions: [CreateNamespace=true]\n";

    #[test]
    fn expressions_see_the_object_and_macros_work_metered() {
        let e = "has(object.spec.syncPolicy.syncOptions) && 'RespectIgnoreDifferences=true' in object.spec.syncPolicy.syncOptions";
        assert_eq!(value(e, APP), Some(false));
        let with = APP.replace("CreateNamespace=true", "RespectIgnoreDifferences=true");
        assert_eq!(value(e, &with), Some(true));
        assert_eq!(
            value(
                "object.spec.syncPolicy.syncOptions.all(o, o.contains('='))",
                APP
            ),
            Some(true)
        );
        assert_eq!(
            value(
                "object.spec.syncPolicy.syncOptions.exists(o, o == 'x')",
                APP
            ),
            Some(false)
        );
        assert_eq!(
            value(
                "object.spec.syncPolicy.syncOptions.exists_one(o, o.startsWith('Create'))",
                APP
            ),
            Some(true)
        );
        assert_eq!(
            value(
                "object.spec.syncPolicy.syncOptions.map(o, o + '!') == ['CreateNamespace=true!']",
                APP
            ),
            Some(true)
        );
        assert_eq!(
            value(
                "object.spec.syncPolicy.syncOptions.filter(o, o.size() > 100).size() == 0",
                APP
            ),
            Some(true)
        );
        assert_eq!(
            value(
                "objects.filter(o, o.kind == 'Application').size() == 2",
                APP
            ),
            Some(true)
        );
        assert_eq!(
            value(
                "size(object.metadata.name) == 3 && type(object) == map",
                APP
            ),
            Some(true)
        );
        assert_eq!(value("optional.of(1).hasValue()", APP), Some(true));
        // Errors are absorbed as CEL says: `false` wins over an error in `all`.
        assert_eq!(
            value(
                "[1, 2].all(x, object.spec.missing == x || x > 1) == false || true",
                APP
            ),
            Some(true)
        );
        assert_eq!(value("[0, 1].all(x, 1 / x > 0)", APP), None);
        assert_eq!(value("[0, 1].exists(x, 1 / x > 0)", APP), Some(true));
    }

    #[test]
    fn a_missing_field_is_an_error_and_a_non_bool_is_refused() {
        assert!(
            matches!(run("object.spec.replicas > 1", APP, 1000), Outcome::Error { ref message, .. } if message.contains("replicas"))
        );
        assert!(
            matches!(run("object.metadata.name", APP, 1000), Outcome::Error { ref message, .. } if message.contains("true or false"))
        );
    }

    #[test]
    fn unknown_names_and_bad_syntax_are_compile_errors_with_a_column() {
        let err = |e: &str| Program::compile(e).err();
        let e = err("object.spec && request.user == 'x'");
        assert!(
            e.as_ref().is_some_and(
                |e| e.message.contains("unknown variable `request`") && e.at == Some((1, 16))
            ),
            "{e:?}"
        );
        let e = err("object.metadata.name.frobnicate()");
        assert!(
            e.as_ref()
                .is_some_and(|e| e.message.contains("unknown function `frobnicate`")),
            "{e:?}"
        );
        let e = err("object.metadata.(");
        assert!(
            e.as_ref().is_some_and(
                |e| e.message.starts_with("does not parse as CEL") && e.at == Some((1, 17))
            ),
            "{e:?}"
        );
        let e = err("object.metadata.name == 'x' &&\n  frob(1)");
        assert!(
            e.as_ref()
                .is_some_and(|e| e.at == Some((2, 7))
                    && e.position() == " (line 2, column 7 of the expression)"),
            "{e:?}"
        );
        let e = err("google.protobuf.Int64Value{value: 1} == 1");
        assert!(e.is_some());
        assert!(err("[1].all(x, x > 0) && objects.exists(o, o.kind == object.kind)").is_none());
        assert!(Program::compile("objects.size() > 0").is_ok_and(|p| p.reads_objects));
        assert!(Program::compile("[1].all(objects, objects > 0)").is_ok_and(|p| !p.reads_objects));
        assert!(err(&"1 + ".repeat(5000)).is_some_and(|e| e.message.contains("longer than")));
    }

    #[test]
    fn unbounded_work_stops_at_the_limit() {
        // 400 × 400 × 400 iterations, and strings doubled in each: far beyond the limit.
        let big = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  xs: [{}]\n",
            (0..400)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let started = std::time::Instant::now();
        for e in [
            "object.data.xs.all(a, object.data.xs.all(b, object.data.xs.all(c, a + b + c >= 0)))",
            "object.data.xs.exists(a, object.data.xs.exists(b, object.data.xs.exists(c, a + b + c < 0)))",
            "object.data.xs.map(a, object.data.xs.map(b, object.data.xs.map(c, string(a) + string(b)))).size() > 0",
            "object.data.xs.filter(a, object.data.xs.filter(b, object.data.xs.filter(c, c > a).size() > 0).size() > 0).size() > 0",
            "object.data.xs.all(a, object.data.xs.map(b, object.data.xs).size() > 0)",
        ] {
            assert!(
                matches!(run(e, &big, 1_000_000), Outcome::OverBudget { .. }),
                "{e}"
            );
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        // A modest expression is charged and decided.
        match run("object.data.xs.all(a, a >= 0)", &big, 1_000_000) {
            Outcome::Value { value: true, used } => {
                assert!((400..20_000).contains(&used), "{used}")
            }
            other => panic!("{other:?}"),
        }
    }
}
