//! Executor of parsed templates with Go's `text/template` semantics (`exec.go`), tracking for
//! every value its provenance (`.Values` paths) and taint (non-deterministic functions).

use gitops_lint_base::hash::FastMap;
use std::fmt::Display;
use std::rc::Rc;

use super::ast::{Arg, Branch, Node, Pipe, Pos};
use super::builtins::{self, BUILTINS, CallError};
use super::funcs::{FuncEnv, memory};
use super::literal::Number;
use super::output::{Meta, Output, OutputSegment, SegmentKind, Taint, ValuesPath};
use super::printf::{self, go_quote};
use super::template::{ExecError, ExecOptions, Templates};
use super::value::Value;

mod field;
mod include;
mod range;

/// Functions whose result differs between two renders (random, clock, cluster, crypto salts).
pub const NONDETERMINISTIC_FUNCS: &[&str] = &[
    "randAlphaNum",
    "randAlpha",
    "randNumeric",
    "randAscii",
    "randBytes",
    "randInt",
    "uuidv4",
    "shuffle",
    "now",
    "ago",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "genPrivateKey",
    "bcrypt",
    "htpasswd",
    "encryptAES",
    "lookup",
    "getHostByName",
];

/// Functions whose result order follows Go's random map iteration order: the
/// output is non-deterministic unless a sort follows.
pub const ORDER_DEPENDENT_FUNCS: &[&str] = &["keys", "values"];

/// Functions that put a list in a fixed order, which cancels [`ORDER_DEPENDENT_FUNCS`].
pub const SORTING_FUNCS: &[&str] = &["sortAlpha", "mustSortAlpha"];

/// Deepest nesting of lists and maps a template may build (`list (list (list …))` in a
/// loop): real charts stay far below, and dropping a deeper value would recurse.
const MAX_VALUE_DEPTH: u32 = 1000;

/// Leading mark of a function error that Go reports without `error calling NAME:` (the
/// function library's contract, `funcs::UNWRAPPED`).
const UNWRAPPED: char = '\u{1}';

pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

/// A value during execution: Go distinguishes a missing value (invalid `reflect.Value`,
/// printed `<no value>`) from nil; `meta` carries provenance and taint.
#[derive(Clone, Debug, Default)]
pub(crate) struct Val {
    pub v: Value,
    pub missing: bool,
    pub meta: Meta,
    /// When the value is (or was computed from) the output of `include`/`tpl`: that output
    /// with its segments, so printing it can point into the included template.
    pub inner: Option<Rc<Output>>,
    /// Upper bound of the container nesting of `v` built during this execution. Bounded
    /// (`MAX_VALUE_DEPTH`) because dropping or walking a deeper value recurses.
    pub depth: u32,
}

impl Val {
    fn new(v: Value) -> Val {
        Val {
            v,
            missing: false,
            depth: 0,
            inner: None,
            meta: Meta::default(),
        }
    }
    fn missing(meta: Meta) -> Val {
        Val {
            v: Value::Nil,
            missing: true,
            depth: 0,
            inner: None,
            meta,
        }
    }
    fn truthy(&self) -> bool {
        !self.missing && self.v.truthy()
    }
    /// Go unwraps interface values after each pipeline command: a nil interface becomes
    /// "no value".
    fn unwrap_interface(mut self) -> Val {
        if matches!(self.v, Value::Nil) {
            self.missing = true;
        }
        self
    }
    fn builtin_arg(&self) -> builtins::Arg {
        builtins::Arg {
            value: self.v.clone(),
            missing: self.missing,
        }
    }
}

enum Flow {
    Normal,
    Break,
    Continue,
}

type R<T> = Result<T, ExecError>;

/// State shared by an execution and the nested executions of `include`/`tpl`.
struct Shared<'e> {
    env: &'e mut FuncEnv,
    opts: &'e ExecOptions,
    steps: u64,
    output_bytes: usize,
    include_counts: FastMap<String, usize>,
    /// Nesting bounds of the lists and maps functions returned, by address.
    depths: FastMap<usize, u32>,
    template_depth: usize,
    stack_base: usize,
    /// Address of the `.Values` map, to recognise it wherever it is reached from.
    values_root: Option<usize>,
    /// Address of the `.Release` map (shared by subcharts), for its install/upgrade state.
    release_root: Option<usize>,
    /// Taint of values stored into maps with `set`, by (map address, key): Go maps are
    /// shared, so a generated password set into `.Values` and printed later is still random.
    stored_taint: FastMap<(usize, String), Rc<Taint>>,
}

struct State<'s, 'e> {
    set: &'s Templates,
    sh: &'s mut Shared<'e>,
    tmpl: Rc<str>,
    vars: Vec<(String, Val)>,
    out: Output,
    /// `.Values` paths of the `if`/`with`/`range` conditions enclosing the current node.
    conditions: Rc<Vec<ValuesPath>>,
    /// The release state read by the innermost enclosing `if`/`with` condition that read one.
    release_branch: Option<Rc<Taint>>,
}

/// At most this many condition paths are recorded per segment.
const MAX_CONDITIONS: usize = 16;

/// How often (in steps) the executor looks at the clock: often enough to stop within
/// milliseconds of the deadline, rarely enough to cost nothing measurable.
const DEADLINE_CHECK_STEPS: u64 = 4096;

fn stack_addr() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

pub fn execute(
    set: &Templates,
    name: &str,
    dot: Value,
    opts: &ExecOptions,
    env: &mut FuncEnv,
) -> Result<Output, ExecError> {
    let map_at = |key: &Option<String>| match (&dot, key) {
        (Value::Map(m), Some(key)) => match m.borrow().get(key) {
            Some(Value::Map(v)) => Some(Rc::as_ptr(v) as usize),
            _ => None,
        },
        _ => None,
    };
    let (values_root, release_root) = (map_at(&opts.values_key), map_at(&opts.release_key));
    let mut sh = Shared {
        env,
        opts,
        steps: 0,
        output_bytes: 0,
        include_counts: FastMap::default(),
        depths: FastMap::default(),
        template_depth: 0,
        stack_base: stack_addr(),
        values_root,
        release_root,
        stored_taint: FastMap::default(),
    };
    let Some(tree) = set.trees.get(name).cloned() else {
        return Err(ExecError {
            cause: None,
            message: format!(
                "template: no template {} associated with template {}",
                go_quote(name),
                go_quote(name)
            ),
            pos: None,
            template: name.to_string(),
        });
    };
    let dot = if matches!(dot, Value::Nil) {
        Val::missing(Meta::default())
    } else {
        Val::new(dot)
    };
    let mut st = State {
        set,
        sh: &mut sh,
        tmpl: name.into(),
        vars: vec![("$".into(), dot.clone())],
        out: Output::default(),
        conditions: Rc::default(),
        release_branch: None,
    };
    st.walk(&dot, &tree.root)?;
    let mut out = st.out;
    if opts.remove_no_value {
        out.remove_no_value();
    }
    Ok(out)
}

impl<'s, 'e> State<'s, 'e> {
    /// Go's `state.errorf`: the node's full text as context (Go no longer cuts it to 20
    /// characters; helm 3.18 prints it whole).
    fn err(&self, pos: &Pos, ctx: &dyn Display, msg: impl Display) -> ExecError {
        let context = ctx.to_string();
        ExecError {
            cause: None,
            message: format!(
                "template: {pos}: executing {} at <{context}>: {msg}",
                go_quote(&self.tmpl)
            ),
            pos: Some(pos.clone()),
            template: self.tmpl.to_string(),
        }
    }

    fn step(&mut self, pos: &Pos, ctx: &dyn Display) -> R<()> {
        self.sh.steps += 1;
        if self.sh.steps > self.sh.opts.max_steps {
            return Err(self.err(
                pos,
                ctx,
                format!(
                    "execution exceeded the limit of {} steps (limits.max-template-steps)",
                    self.sh.opts.max_steps
                ),
            ));
        }
        if self.sh.steps.is_multiple_of(DEADLINE_CHECK_STEPS)
            && let Some(deadline) = self.sh.opts.deadline
            && std::time::Instant::now() > deadline
        {
            return Err(self.err(
                pos,
                ctx,
                "rendering took longer than the time limit (limits.max-render-seconds)",
            ));
        }
        if self.sh.stack_base.abs_diff(stack_addr()) > self.sh.opts.max_stack_bytes {
            return Err(self.err(pos, ctx, "exceeded maximum template depth (stack budget)"));
        }
        Ok(())
    }

    fn write(&mut self, text: &str, kind: SegmentKind, pos: &Pos, meta: &Meta) -> R<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.sh.output_bytes += text.len();
        if self.sh.output_bytes > self.sh.opts.max_output_bytes {
            return Err(self.err(
                pos,
                &"output",
                format!(
                    "output exceeds the limit of {} bytes (limits.max-template-output-bytes)",
                    self.sh.opts.max_output_bytes
                ),
            ));
        }
        let start = self.out.text.len();
        self.out.text.push_str(text);
        if self.sh.opts.record_segments {
            self.out.segments.push(OutputSegment {
                range: start..self.out.text.len(),
                kind,
                pos: pos.clone(),
                values_paths: meta.from.clone(),
                taint: meta.taint.clone(),
                release: meta.release.clone(),
                release_branch: self.release_branch.clone(),
                via: Vec::new(),
                conditions: self.conditions.clone(),
            });
        }
        Ok(())
    }

    fn walk(&mut self, dot: &Val, list: &[Node]) -> R<Flow> {
        for node in list {
            match node {
                Node::Text { pos, text } => {
                    self.step(pos, &"text")?;
                    self.write(text, SegmentKind::Text, pos, &Meta::default())?;
                }
                Node::Action { pos, pipe } => {
                    self.step(pos, pipe)?;
                    let v = self.eval_pipeline(dot, pipe)?;
                    if pipe.decl.is_empty() {
                        let text = if v.missing || matches!(v.v, Value::Nil) {
                            "<no value>".to_string()
                        } else {
                            // Printing a map that holds itself twice per level doubles per
                            // level: the output limit bounds what the printer may build.
                            let room = self
                                .sh
                                .opts
                                .max_output_bytes
                                .saturating_sub(self.sh.output_bytes)
                                .min(self.sh.env.memory.room());
                            match memory::within(room, || printf::display(&v.v)) {
                                (_, true) => return Err(self.memory_exceeded(pos, pipe)),
                                (text, false) => text,
                            }
                        };
                        match &v.inner {
                            Some(inner) if self.sh.opts.record_segments => {
                                self.write_spliced(&text, pos, &v.meta, inner)?
                            }
                            _ => self.write(&text, SegmentKind::Action, pos, &v.meta)?,
                        }
                    }
                }
                Node::If(b) | Node::With(b) => {
                    self.step(&b.pos, &b.pipe)?;
                    match self.walk_if_or_with(matches!(node, Node::With(_)), dot, b)? {
                        Flow::Normal => {}
                        flow => return Ok(flow),
                    }
                }
                Node::Range(b) => {
                    self.step(&b.pos, &b.pipe)?;
                    self.walk_range(dot, b)?;
                }
                Node::Template { pos, name, pipe } => {
                    self.step(pos, &name)?;
                    self.walk_template(dot, pos, name, pipe.as_ref())?;
                }
                Node::Break(_) => return Ok(Flow::Break),
                Node::Continue(_) => return Ok(Flow::Continue),
            }
        }
        Ok(Flow::Normal)
    }

    /// Adds the paths a condition depends on to the enclosing conditions; returns the old set.
    fn push_conditions(&mut self, meta: &Meta) -> Rc<Vec<ValuesPath>> {
        let old = self.conditions.clone();
        if meta.from.iter().any(|p| !old.contains(p)) && old.len() < MAX_CONDITIONS {
            let mut new = (*old).clone();
            for p in &meta.from {
                if new.len() < MAX_CONDITIONS && !new.contains(p) {
                    new.push(p.clone());
                }
            }
            self.conditions = Rc::new(new);
        }
        old
    }

    fn walk_if_or_with(&mut self, is_with: bool, dot: &Val, b: &Branch) -> R<Flow> {
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &b.pipe)?;
        let saved = self.push_conditions(&val.meta);
        let saved_release = self.release_branch.clone();
        if val.meta.release.is_some() {
            self.release_branch = val.meta.release.clone();
        }
        let flow = self.walk_branch(is_with, dot, &val, b);
        self.conditions = saved;
        self.release_branch = saved_release;
        self.vars.truncate(mark);
        flow
    }

    fn walk_branch(&mut self, is_with: bool, dot: &Val, val: &Val, b: &Branch) -> R<Flow> {
        if val.truthy() {
            if is_with {
                self.walk(val, &b.list)
            } else {
                self.walk(dot, &b.list)
            }
        } else if let Some(e) = &b.else_list {
            self.walk(dot, e)
        } else {
            Ok(Flow::Normal)
        }
    }

    fn walk_template(&mut self, dot: &Val, pos: &Pos, name: &str, pipe: Option<&Pipe>) -> R<()> {
        let Some(tree) = self.set.trees.get(name).cloned() else {
            return Err(self.err(
                pos,
                &name,
                format!("template {} not defined", go_quote(name)),
            ));
        };
        let new_dot = match pipe {
            Some(p) => self.eval_pipeline(dot, p)?,
            None => Val::missing(Meta::default()),
        };
        self.sh.template_depth += 1;
        if self.sh.template_depth > 100_000 {
            return Err(self.err(pos, &name, "exceeded maximum template depth (100000)"));
        }
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$".into(), new_dot.clone())]);
        let saved_name = std::mem::replace(&mut self.tmpl, name.into());
        let r = self.walk(&new_dot, &tree.root);
        self.vars = saved_vars;
        self.tmpl = saved_name;
        self.sh.template_depth -= 1;
        r.map(|_| ())
    }

    fn set_var(&mut self, name: &str, v: Val, pos: &Pos) -> R<()> {
        match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
            Some(slot) => {
                slot.1 = v;
                Ok(())
            }
            None => Err(self.err(pos, &name, format!("undefined variable: {name}"))),
        }
    }

    fn set_top_var(&mut self, n: usize, v: Val) {
        let len = self.vars.len();
        if let Some(slot) = len.checked_sub(n).and_then(|i| self.vars.get_mut(i)) {
            slot.1 = v;
        }
    }

    fn var_value(&self, name: &str, pos: &Pos) -> R<Val> {
        match self.vars.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(self.err(pos, &name, format!("undefined variable: {name}"))),
        }
    }

    fn eval_pipeline(&mut self, dot: &Val, pipe: &Pipe) -> R<Val> {
        let mut value: Option<Val> = None;
        for cmd in &pipe.cmds {
            self.step(&cmd.pos, cmd)?;
            let v = self.eval_command(dot, cmd, value.take())?;
            value = Some(v.unwrap_interface());
        }
        let value = value.unwrap_or_else(|| Val::missing(Meta::default()));
        for (pos, name) in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, value.clone(), pos)?;
            } else {
                self.vars.push((name.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, first: &Arg, rest: &[Arg], has_final: bool) -> R<()> {
        if !rest.is_empty() || has_final {
            return Err(self.err(
                first.pos(),
                first,
                format!("can't give argument to non-function {first}"),
            ));
        }
        Ok(())
    }

    fn eval_command(
        &mut self,
        dot: &Val,
        cmd: &super::ast::Command,
        final_: Option<Val>,
    ) -> R<Val> {
        let Some((first, rest)) = cmd.args.split_first() else {
            return Err(self.err(&cmd.pos, cmd, "empty command"));
        };
        match first {
            Arg::Field { idents, .. } => {
                return self.eval_field_chain(dot, dot.clone(), first, idents, rest, final_);
            }
            Arg::Chain { node, fields, .. } => {
                if matches!(node.as_ref(), Arg::Nil(_)) {
                    return Err(self.err(
                        first.pos(),
                        first,
                        format!("indirection through explicit nil in {first}"),
                    ));
                }
                let recv = self.eval_arg(dot, node)?;
                return self.eval_field_chain(dot, recv, first, fields, rest, final_);
            }
            Arg::Identifier { name, pos } => {
                return self.eval_function(dot, name, pos, cmd, rest, final_);
            }
            Arg::Pipe(p) => {
                if !rest.is_empty() || final_.is_some() {
                    let msg = format!("can't give argument to non-function {p}");
                    return Err(self.err(&cmd.pos, cmd, msg));
                }
                return self.eval_pipeline(dot, p);
            }
            Arg::Variable { idents, pos } => {
                return self.eval_variable(dot, first, pos, idents, rest, final_);
            }
            _ => {}
        }
        self.not_a_function(first, rest, final_.is_some())?;
        self.eval_constant(dot, first)
    }

    fn eval_constant(&mut self, dot: &Val, arg: &Arg) -> R<Val> {
        Ok(match arg {
            Arg::Bool { val, .. } => Val::new(Value::Bool(*val)),
            Arg::Dot(_) => dot.clone(),
            Arg::Nil(pos) => return Err(self.err(pos, arg, "nil is not a command")),
            Arg::Number { pos, num } => Val::new(self.ideal_constant(pos, arg, num)?),
            Arg::String { text, .. } => Val::new(Value::str(&**text)),
            _ => {
                return Err(self.err(
                    arg.pos(),
                    arg,
                    format!("can't evaluate command {}", go_quote(&arg.to_string())),
                ));
            }
        })
    }

    fn ideal_constant(&self, pos: &Pos, arg: &Arg, num: &Number) -> R<Value> {
        let t = &num.text;
        let is_hex_int = t.len() > 2
            && t.starts_with('0')
            && matches!(t.as_bytes()[1], b'x' | b'X')
            && !t.contains(['p', 'P']);
        let is_rune = t.starts_with('\'');
        if num.complex.is_some() {
            return Err(self.err(pos, arg, "complex numbers are not supported"));
        }
        if let Some(f) = num.float
            && !is_hex_int
            && !is_rune
            && t.contains(['.', 'e', 'E', 'p', 'P'])
        {
            return Ok(Value::Float(f));
        }
        if let Some(i) = num.int {
            return Ok(Value::Int(i));
        }
        if num.uint.is_some() {
            return Err(self.err(pos, arg, format!("{t} overflows int")));
        }
        Ok(Value::Nil)
    }

    /// Evaluates an operand passed to a function or used as a chain receiver.
    fn eval_arg(&mut self, dot: &Val, arg: &Arg) -> R<Val> {
        match arg {
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(_) => Ok(Val::new(Value::Nil)),
            Arg::Field { idents, .. } => {
                self.eval_field_chain(dot, dot.clone(), arg, idents, &[], None)
            }
            Arg::Variable { idents, pos } => self.eval_variable(dot, arg, pos, idents, &[], None),
            Arg::Pipe(p) => self.eval_pipeline(dot, p),
            Arg::Identifier { name, pos } => self.eval_function(dot, name, pos, arg, &[], None),
            Arg::Chain { node, fields, .. } => {
                if matches!(node.as_ref(), Arg::Nil(_)) {
                    return Err(self.err(
                        arg.pos(),
                        arg,
                        format!("indirection through explicit nil in {arg}"),
                    ));
                }
                let recv = self.eval_arg(dot, node)?;
                self.eval_field_chain(dot, recv, arg, fields, &[], None)
            }
            Arg::Bool { .. } | Arg::Number { .. } | Arg::String { .. } => {
                self.eval_constant(dot, arg)
            }
        }
    }

    fn eval_variable(
        &mut self,
        dot: &Val,
        node: &Arg,
        pos: &Pos,
        idents: &[String],
        rest: &[Arg],
        final_: Option<Val>,
    ) -> R<Val> {
        let Some((name, fields)) = idents.split_first() else {
            return Err(self.err(pos, node, "empty variable"));
        };
        let value = self.var_value(name, pos)?;
        if fields.is_empty() {
            self.not_a_function(node, rest, final_.is_some())?;
            return Ok(value);
        }
        self.eval_field_chain(dot, value, node, fields, rest, final_)
    }

    fn eval_function(
        &mut self,
        dot: &Val,
        name: &str,
        pos: &Pos,
        ctx: &dyn Display,
        rest: &[Arg],
        final_: Option<Val>,
    ) -> R<Val> {
        if name == "and" || name == "or" {
            if rest.is_empty() && final_.is_none() {
                return Err(self.err(
                    pos,
                    ctx,
                    format!("wrong number of args for {name}: want at least 1 got 0"),
                ));
            }
            // The result is the deciding operand itself; it also depends on the operands
            // evaluated before it, whose paths join its provenance.
            let want = name == "or";
            let mut seen = Meta::default();
            let mut v = Val::missing(Meta::default());
            for a in rest {
                v = self.eval_arg(dot, a)?;
                if v.truthy() == want {
                    v.meta.merge(&seen);
                    return Ok(v);
                }
                seen.merge(&v.meta);
            }
            if let Some(f) = final_ {
                v = f;
            }
            v.meta.merge(&seen);
            return Ok(v);
        }
        let mut args = Vec::with_capacity(rest.len() + 1);
        for a in rest {
            args.push(self.eval_arg(dot, a)?);
        }
        if let Some(f) = final_ {
            args.push(f);
        }
        let mut meta = Meta::default();
        for a in &args {
            meta.merge(&a.meta);
        }
        let args_depth = args.iter().map(|a| self.depth_of(a)).max().unwrap_or(0);
        if NONDETERMINISTIC_FUNCS.contains(&name) || ORDER_DEPENDENT_FUNCS.contains(&name) {
            meta.taint = Some(Rc::new(Taint {
                func: name.to_string(),
                pos: pos.clone(),
            }));
        } else if SORTING_FUNCS.contains(&name)
            && meta
                .taint
                .as_ref()
                .is_some_and(|t| ORDER_DEPENDENT_FUNCS.contains(&t.func.as_str()))
        {
            // Sorting removes the only non-determinism of `keys`/`values`: Go's map order.
            meta.taint = None;
        }
        if name == "index" && args.len() >= 2 {
            // Keep `index .Values "a" "b"` located at its path.
            let bargs: Vec<builtins::Arg> = args.iter().map(Val::builtin_arg).collect();
            return match builtins::index(&bargs[0], &bargs[1..]) {
                Ok((v, keys)) => {
                    let mut m = args[0].meta.clone();
                    for k in &keys {
                        m = self.child_meta(&m, k, &v);
                    }
                    if keys.len() + 1 != args.len() {
                        m = m.derived();
                    }
                    for a in &args[1..] {
                        m.merge(&a.meta);
                    }
                    Ok(Val {
                        v,
                        missing: false,
                        depth: args[0].depth,
                        inner: None,
                        meta: m,
                    })
                }
                Err(e) => Err(self.err(pos, ctx, format!("error calling index: {e}"))),
            };
        }
        // Text derived from an include keeps a link to it (see `write_spliced`).
        let inner = args.iter().rev().find_map(|a| a.inner.clone());
        let lens_before: Vec<(usize, usize)> = args
            .iter()
            .filter_map(|a| memory::container_len(&a.v))
            .collect();
        let room = self.sh.env.memory.room();
        if is_builtin(name) {
            let bargs: Vec<builtins::Arg> = args.iter().map(Val::builtin_arg).collect();
            let (result, overflowed) = memory::within(room, || builtins::call(name, &bargs));
            if overflowed {
                return Err(self.memory_exceeded(pos, ctx));
            }
            return match result {
                Ok(v) => {
                    self.charge_result(pos, ctx, &v, &lens_before)?;
                    self.function_result(pos, ctx, v, meta, inner, args_depth)
                }
                Err(CallError::Call(e)) => {
                    Err(self.err(pos, ctx, format!("error calling {name}: {e}")))
                }
                Err(CallError::Fatal(e)) => Err(self.err(pos, ctx, e)),
            };
        }
        match name {
            "include" => return self.call_include(pos, ctx, &args, meta),
            "tpl" => return self.call_tpl(pos, ctx, &args, meta),
            _ => {}
        }
        let Some(f) = (self.set.funcs)(name) else {
            return Err(self.err(
                pos,
                ctx,
                format!("{} is not a defined function", go_quote(name)),
            ));
        };
        if name == "set"
            && let [map, key, value] = args.as_slice()
            && let (Value::Map(m), Value::String(k)) = (&map.v, &key.v)
        {
            let slot = (Rc::as_ptr(m) as usize, k.to_string());
            match &value.meta.taint {
                Some(t) => {
                    self.sh.stored_taint.insert(slot, t.clone());
                }
                None => {
                    self.sh.stored_taint.remove(&slot);
                }
            }
        }
        let vals: Vec<Value> = args.into_iter().map(|a| a.v).collect();
        let env = &mut *self.sh.env;
        let (result, overflowed) = memory::within(room, || f(env, &vals));
        if overflowed {
            return Err(self.memory_exceeded(pos, ctx));
        }
        if let Ok(v) = &result {
            self.charge_result(pos, ctx, v, &lens_before)?;
        }
        match result {
            Ok(v) if matches!(&v, Value::String(s) if s.len() > self.sh.opts.max_output_bytes) => {
                Err(self.err(
                    pos,
                    ctx,
                    format!("result of {name} exceeds the output limit"),
                ))
            }
            Ok(v) => self.function_result(pos, ctx, v, meta, inner, args_depth),
            // Argument errors Go raises before calling are reported without the prefix.
            Err(e) => match e.strip_prefix(UNWRAPPED) {
                Some(msg) => Err(self.err(pos, ctx, msg)),
                None => Err(self.err(pos, ctx, format!("error calling {name}: {e}"))),
            },
        }
    }

    fn memory_exceeded(&self, pos: &Pos, ctx: &dyn Display) -> ExecError {
        self.err(pos, ctx, memory::exceeded(self.sh.env.memory.limit))
    }

    /// Charges what a function's result holds that nothing else did, or what it added in
    /// place to a container it was given.
    fn charge_result(
        &mut self,
        pos: &Pos,
        ctx: &dyn Display,
        v: &Value,
        lens_before: &[(usize, usize)],
    ) -> R<()> {
        let room = self.sh.env.memory.room();
        let bytes =
            memory::growth_bytes(v, lens_before).unwrap_or_else(|| memory::fresh_bytes(v, room));
        self.sh
            .env
            .memory
            .charge(bytes)
            .map_err(|msg| self.err(pos, ctx, msg))
    }

    /// Nesting bound of a value: its own, or the one recorded for its container, which
    /// covers maps deepened in place by `set`.
    fn depth_of(&self, v: &Val) -> u32 {
        let recorded = container_addr(&v.v)
            .and_then(|a| self.sh.depths.get(&a))
            .copied();
        v.depth.max(recorded.unwrap_or(0))
    }

    /// A function's result; containers count one level deeper than their deepest argument.
    fn function_result(
        &mut self,
        pos: &Pos,
        ctx: &dyn Display,
        v: Value,
        meta: Meta,
        inner: Option<Rc<Output>>,
        args_depth: u32,
    ) -> R<Val> {
        let depth = if matches!(v, Value::List(_) | Value::Map(_)) {
            args_depth + 1
        } else {
            0
        };
        if depth > MAX_VALUE_DEPTH {
            return Err(self.err(
                pos,
                ctx,
                format!("value nesting exceeds {MAX_VALUE_DEPTH} levels"),
            ));
        }
        if let Some(addr) = container_addr(&v) {
            let slot = self.sh.depths.entry(addr).or_insert(0);
            *slot = (*slot).max(depth);
        }
        Ok(Val {
            v,
            missing: false,
            depth,
            inner,
            meta,
        })
    }
}

/// Identity of a list or map, to remember its nesting bound.
fn container_addr(v: &Value) -> Option<usize> {
    match v {
        Value::List(l) => Some(Rc::as_ptr(l) as *const u8 as usize),
        Value::Map(m) => Some(Rc::as_ptr(m) as *const u8 as usize),
        _ => None,
    }
}
