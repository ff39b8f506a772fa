//! Executor of parsed templates with Go's `text/template` semantics (`exec.go`), tracking for
//! every value its provenance (`.Values` paths) and taint (non-deterministic functions).

use std::collections::HashMap;
use std::fmt::Display;
use std::rc::Rc;

use super::ast::{Arg, Branch, Node, Pipe, Pos};
use super::builtins::{self, BUILTINS, CallError};
use super::funcs::FuncEnv;
use super::literal::Number;
use super::output::{Meta, Output, OutputSegment, SegmentKind, Taint, ValuesPath};
use super::parse::Tree;
use super::printf::{self, go_quote};
use super::template::{ExecError, ExecOptions, MissingKey, Templates};
use super::value::Value;

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
}

impl Val {
    fn new(v: Value) -> Val {
        Val {
            v,
            missing: false,
            inner: None,
            meta: Meta::default(),
        }
    }
    fn missing(meta: Meta) -> Val {
        Val {
            v: Value::Nil,
            missing: true,
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
    include_counts: HashMap<String, usize>,
    template_depth: usize,
    stack_base: usize,
    /// Address of the `.Values` map, to recognise it wherever it is reached from.
    values_root: Option<usize>,
}

struct State<'s, 'e> {
    set: &'s Templates,
    sh: &'s mut Shared<'e>,
    tmpl: Rc<str>,
    vars: Vec<(String, Val)>,
    out: Output,
}

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
    let values_root = match (&dot, &opts.values_key) {
        (Value::Map(m), Some(key)) => match m.borrow().get(key) {
            Some(Value::Map(v)) => Some(Rc::as_ptr(v) as usize),
            _ => None,
        },
        _ => None,
    };
    let mut sh = Shared {
        env,
        opts,
        steps: 0,
        output_bytes: 0,
        include_counts: HashMap::new(),
        template_depth: 0,
        stack_base: stack_addr(),
        values_root,
    };
    let Some(tree) = set.trees.get(name).cloned() else {
        return Err(ExecError {
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
    };
    st.walk(&dot, &tree.root)?;
    let mut out = st.out;
    if opts.remove_no_value {
        out.remove_no_value();
    }
    Ok(out)
}

impl<'s, 'e> State<'s, 'e> {
    fn err(&self, pos: &Pos, ctx: &dyn Display, msg: impl Display) -> ExecError {
        let mut context = ctx.to_string();
        if context.chars().count() > 20 {
            context = context.chars().take(20).collect::<String>() + "...";
        }
        ExecError {
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
                    "execution exceeded the limit of {} steps",
                    self.sh.opts.max_steps
                ),
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
                    "output exceeds the limit of {} bytes",
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
                via: Vec::new(),
            });
        }
        Ok(())
    }

    /// Writes text that derives from an `include`/`tpl` output: the parts of that output
    /// found again, in order, line by line (they survive `nindent`, `indent`, `quote`,
    /// `trim`) keep their segments from the included template; the rest belongs to the
    /// printing action.
    fn write_spliced(&mut self, text: &str, pos: &Pos, meta: &Meta, inner: &Output) -> R<()> {
        let base = self.out.text.len();
        self.write(text, SegmentKind::Action, pos, meta)?;
        if text.is_empty() {
            return Ok(());
        }
        let Some(outer) = self.out.segments.pop() else {
            return Ok(());
        };
        let mut cursor = 0;
        let mut at = 0;
        let mut spliced = Vec::new();
        let fill = |from: usize, to: usize, spliced: &mut Vec<OutputSegment>| {
            if from < to {
                let mut s = outer.clone();
                s.range = base + from..base + to;
                spliced.push(s);
            }
        };
        for seg in &inner.segments {
            let Some(seg_text) = inner.text.get(seg.range.clone()) else {
                continue;
            };
            for piece in seg_text.split('\n') {
                if piece.trim().is_empty() {
                    continue;
                }
                let Some(off) = text[cursor..].find(piece) else {
                    continue;
                };
                let start = cursor + off;
                fill(at, start, &mut spliced);
                let mut via = vec![pos.clone()];
                via.extend(seg.via.iter().cloned());
                spliced.push(OutputSegment {
                    range: base + start..base + start + piece.len(),
                    kind: seg.kind,
                    pos: seg.pos.clone(),
                    values_paths: seg.values_paths.clone(),
                    taint: seg.taint.clone(),
                    via,
                });
                cursor = start + piece.len();
                at = cursor;
            }
        }
        fill(at, text.len(), &mut spliced);
        self.out.segments.extend(spliced);
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
                            printf::display(&v.v)
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

    fn walk_if_or_with(&mut self, is_with: bool, dot: &Val, b: &Branch) -> R<Flow> {
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &b.pipe)?;
        let flow = if val.truthy() {
            if is_with {
                self.walk(&val, &b.list)
            } else {
                self.walk(dot, &b.list)
            }
        } else if let Some(e) = &b.else_list {
            self.walk(dot, e)
        } else {
            Ok(Flow::Normal)
        };
        self.vars.truncate(mark);
        flow
    }

    fn walk_range(&mut self, dot: &Val, b: &Branch) -> R<()> {
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &b.pipe)?;
        let inner_mark = self.vars.len();
        let limit = self.sh.opts.max_range_len;
        let too_long = |st: &Self, n: usize| {
            st.err(
                &b.pos,
                &b.pipe,
                format!("range over {n} elements exceeds the limit of {limit}"),
            )
        };
        let mut items: Vec<(Val, Val)> = Vec::new();
        let mut int_range: Option<(Value, u64)> = None;
        match &val.v {
            _ if val.missing => {}
            Value::Nil => {}
            Value::List(l) => {
                if l.len() > limit {
                    return Err(too_long(self, l.len()));
                }
                for (i, e) in l.iter().enumerate() {
                    let meta = self.child_meta(&val.meta, &i.to_string(), e);
                    items.push((
                        Val::new(Value::Int(i as i64)),
                        Val {
                            v: e.clone(),
                            missing: false,
                            inner: None,
                            meta,
                        },
                    ));
                }
            }
            Value::Bytes(bytes) => {
                for (i, e) in bytes.iter().enumerate() {
                    items.push((
                        Val::new(Value::Int(i as i64)),
                        Val::new(Value::Int(*e as i64)),
                    ));
                }
            }
            Value::Map(m) => {
                // Go sorts the keys up front; the body may modify the map.
                let entries: Vec<(String, Value)> = m
                    .borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if entries.len() > limit {
                    return Err(too_long(self, entries.len()));
                }
                for (k, e) in entries {
                    let meta = self.child_meta(&val.meta, &k, &e);
                    items.push((
                        Val {
                            v: Value::from(k),
                            missing: false,
                            inner: None,
                            meta: meta.clone(),
                        },
                        Val {
                            v: e,
                            missing: false,
                            inner: None,
                            meta,
                        },
                    ));
                }
            }
            Value::Int(n) | Value::Int64(n) => {
                int_range = Some((val.v.clone(), (*n).max(0) as u64))
            }
            Value::Uint(n) => int_range = Some((val.v.clone(), *n)),
            // A Go map type with methods (Helm's `.Files`).
            Value::Object(o) if o.map_entries().is_some() => {
                for (k, e) in o.map_entries().unwrap_or_default() {
                    items.push((Val::new(Value::from(k)), Val::new(e)));
                }
            }
            v => {
                return Err(self.err(
                    &b.pos,
                    &b.pipe,
                    format!("range can't iterate over {}", printf::display(v)),
                ));
            }
        }
        if let Some((kind, n)) = &int_range {
            if b.pipe.decl.len() > 1 {
                return Err(self.err(
                    &b.pos,
                    &b.pipe,
                    format!(
                        "can't use {} to iterate over more than one variable",
                        printf::display(kind)
                    ),
                ));
            }
            if *n > limit as u64 {
                return Err(too_long(self, *n as usize));
            }
        }
        let count = int_range
            .as_ref()
            .map(|(_, n)| *n as usize)
            .unwrap_or(items.len());
        #[allow(clippy::needless_range_loop)] // `items` is empty for integer ranges
        for i in 0..count {
            let (index, elem) = match &int_range {
                Some((kind, _)) => {
                    let v = match kind {
                        Value::Int64(_) => Value::Int64(i as i64),
                        Value::Uint(_) => Value::Uint(i as u64),
                        _ => Value::Int(i as i64),
                    };
                    let elem = Val {
                        v,
                        missing: false,
                        inner: None,
                        meta: val.meta.derived(),
                    };
                    (Val::missing(Meta::default()), elem)
                }
                None => match items.get(i) {
                    Some(it) => it.clone(),
                    None => break,
                },
            };
            self.step(&b.pos, &b.pipe)?;
            let decl = &b.pipe.decl;
            if let Some((_, first)) = decl.first() {
                if b.pipe.is_assign {
                    let v = if decl.len() > 1 {
                        index.clone()
                    } else {
                        elem.clone()
                    };
                    self.set_var(first, v, &b.pos)?;
                } else {
                    self.set_top_var(1, elem.clone());
                }
            }
            if let Some((_, second)) = decl.get(1) {
                if b.pipe.is_assign {
                    self.set_var(second, elem.clone(), &b.pos)?;
                } else {
                    self.set_top_var(2, index);
                }
            }
            let flow = self.walk(&elem, &b.list);
            self.vars.truncate(inner_mark);
            if let Flow::Break = flow? {
                break;
            }
        }
        if count == 0
            && let Some(e) = &b.else_list
        {
            self.walk(dot, e)?;
        }
        self.vars.truncate(mark);
        Ok(())
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
            Arg::String { text, .. } => Val::new(Value::String(text.clone())),
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

    fn eval_field_chain(
        &mut self,
        dot: &Val,
        mut receiver: Val,
        node: &Arg,
        idents: &[String],
        rest: &[Arg],
        final_: Option<Val>,
    ) -> R<Val> {
        let Some((last, init)) = idents.split_last() else {
            return Ok(receiver);
        };
        for ident in init {
            receiver = self.eval_field(dot, ident, node, &[], None, receiver)?;
        }
        self.eval_field(dot, last, node, rest, final_, receiver)
    }

    /// Provenance of `parent.key` holding `v`: the `.Values` map itself starts a path.
    fn child_meta(&self, parent: &Meta, key: &str, v: &Value) -> Meta {
        if let (Value::Map(m), Some(root)) = (v, self.sh.values_root)
            && Rc::as_ptr(m) as usize == root
        {
            let mut meta = Meta::at_path(ValuesPath::from(Vec::new()));
            meta.taint = parent.taint.clone();
            return meta;
        }
        parent.child(key)
    }

    fn eval_field(
        &mut self,
        dot: &Val,
        name: &str,
        node: &Arg,
        rest: &[Arg],
        final_: Option<Val>,
        receiver: Val,
    ) -> R<Val> {
        let pos = node.pos();
        if receiver.missing {
            if self.sh.opts.missing_key == MissingKey::Error {
                return Err(self.err(
                    pos,
                    node,
                    format!("nil data; no entry for key {}", go_quote(name)),
                ));
            }
            return Ok(Val::missing(receiver.meta.child(name)));
        }
        let has_args = !rest.is_empty() || final_.is_some();
        match &receiver.v {
            Value::Nil => Err(self.err(
                pos,
                node,
                format!("nil pointer evaluating interface {{}}.{name}"),
            )),
            Value::Map(m) => {
                if has_args {
                    return Err(self.err(
                        pos,
                        node,
                        format!("{name} is not a method but has arguments"),
                    ));
                }
                let got = m.borrow().get(name).cloned();
                match got {
                    Some(v) => {
                        let meta = self.child_meta(&receiver.meta, name, &v);
                        Ok(Val {
                            v,
                            missing: false,
                            inner: None,
                            meta,
                        })
                    }
                    None => {
                        let meta = receiver.meta.child(name);
                        match self.sh.opts.missing_key {
                            MissingKey::Invalid => Ok(Val::missing(meta)),
                            MissingKey::Zero => Ok(Val {
                                v: Value::Nil,
                                missing: false,
                                inner: None,
                                meta,
                            }),
                            MissingKey::Error => Err(self.err(
                                pos,
                                node,
                                format!("map has no entry for key {}", go_quote(name)),
                            )),
                        }
                    }
                }
            }
            Value::Object(o) => {
                let o = o.clone();
                if has_args {
                    let mut args = Vec::with_capacity(rest.len() + 1);
                    let mut meta = receiver.meta.derived();
                    for a in rest {
                        let v = self.eval_arg(dot, a)?;
                        meta.merge(&v.meta);
                        args.push(v.v);
                    }
                    if let Some(f) = final_ {
                        meta.merge(&f.meta);
                        args.push(f.v);
                    }
                    return match o.call(name, &args) {
                        Some(Ok(v)) => Ok(Val {
                            v,
                            missing: false,
                            inner: None,
                            meta,
                        }),
                        Some(Err(e)) => {
                            Err(self.err(pos, node, format!("error calling {name}: {e}")))
                        }
                        None if o.field(name).is_some() => Err(self.err(
                            pos,
                            node,
                            format!("{name} has arguments but cannot be invoked as function"),
                        )),
                        None => Err(self.err(
                            pos,
                            node,
                            format!("can't evaluate field {name} in type {}", o.type_name()),
                        )),
                    };
                }
                let meta = receiver.meta.child(name);
                if let Some(v) = o.field(name) {
                    let meta = self.child_meta(&receiver.meta, name, &v);
                    return Ok(Val {
                        v,
                        missing: false,
                        inner: None,
                        meta,
                    });
                }
                match o.call(name, &[]) {
                    Some(Ok(v)) => Ok(Val {
                        v,
                        missing: false,
                        inner: None,
                        meta,
                    }),
                    Some(Err(e)) => Err(self.err(pos, node, format!("error calling {name}: {e}"))),
                    None => Err(self.err(
                        pos,
                        node,
                        format!("can't evaluate field {name} in type {}", o.type_name()),
                    )),
                }
            }
            v => Err(self.err(
                pos,
                node,
                format!("can't evaluate field {name} in type {}", v.type_name()),
            )),
        }
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
            let want = name == "or";
            let mut v = Val::missing(Meta::default());
            for a in rest {
                v = self.eval_arg(dot, a)?;
                if v.truthy() == want {
                    return Ok(v);
                }
            }
            if let Some(f) = final_ {
                v = f;
            }
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
        if NONDETERMINISTIC_FUNCS.contains(&name) {
            meta.taint = Some(Rc::new(Taint {
                func: name.to_string(),
                pos: pos.clone(),
            }));
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
                        inner: None,
                        meta: m,
                    })
                }
                Err(e) => Err(self.err(pos, ctx, format!("error calling index: {e}"))),
            };
        }
        // Text derived from an include keeps a link to it (see `write_spliced`).
        let inner = args.iter().rev().find_map(|a| a.inner.clone());
        if is_builtin(name) {
            let bargs: Vec<builtins::Arg> = args.iter().map(Val::builtin_arg).collect();
            return match builtins::call(name, &bargs) {
                Ok(v) => Ok(Val {
                    v,
                    missing: false,
                    inner,
                    meta,
                }),
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
        let vals: Vec<Value> = args.into_iter().map(|a| a.v).collect();
        match f(self.sh.env, &vals) {
            Ok(v) if matches!(&v, Value::String(s) if s.len() > self.sh.opts.max_output_bytes) => {
                Err(self.err(
                    pos,
                    ctx,
                    format!("result of {name} exceeds the output limit"),
                ))
            }
            Ok(v) => Ok(Val {
                v,
                missing: false,
                inner,
                meta,
            }),
            // Argument errors Go raises before calling are reported without the prefix.
            Err(e) => match e.strip_prefix(UNWRAPPED) {
                Some(msg) => Err(self.err(pos, ctx, msg)),
                None => Err(self.err(pos, ctx, format!("error calling {name}: {e}"))),
            },
        }
    }

    /// Runs template `name` of `set` with `data` into a fresh buffer, sharing limits.
    fn execute_nested(&mut self, set: &Templates, name: &str, data: &Val) -> R<Output> {
        let Some(tree) = set.trees.get(name).cloned() else {
            return Err(ExecError {
                message: format!(
                    "template: no template {} associated with template {}",
                    go_quote(name),
                    go_quote(&self.sh.opts.tpl_name)
                ),
                pos: None,
                template: name.to_string(),
            });
        };
        self.execute_tree(set, &tree, data)
    }

    fn execute_tree(&mut self, set: &Templates, tree: &Tree, data: &Val) -> R<Output> {
        let dot = if matches!(data.v, Value::Nil) {
            Val::missing(data.meta.clone())
        } else {
            data.clone()
        };
        let mut st = State {
            set,
            sh: &mut *self.sh,
            tmpl: tree.name.as_str().into(),
            vars: vec![("$".into(), dot.clone())],
            out: Output::default(),
        };
        st.walk(&dot, &tree.root)?;
        Ok(st.out)
    }

    fn call_include(
        &mut self,
        pos: &Pos,
        ctx: &dyn Display,
        args: &[Val],
        mut meta: Meta,
    ) -> R<Val> {
        let [name, data] = args else {
            return Err(self.err(
                pos,
                ctx,
                format!(
                    "wrong number of args for include: want 2 got {}",
                    args.len()
                ),
            ));
        };
        let Value::String(name) = &name.v else {
            return Err(self.err(
                pos,
                ctx,
                format!(
                    "wrong type for value; expected string; got {}",
                    name.v.type_name()
                ),
            ));
        };
        let count = self.sh.include_counts.entry(name.to_string()).or_insert(0);
        if *count > self.sh.opts.max_include_depth {
            return Err(self.err(
                pos,
                ctx,
                format!("error calling include: rendering template has a nested reference name: {name}: unable to execute template"),
            ));
        }
        *count += 1;
        let set = self.set;
        let r = self.execute_nested(set, name, data);
        if let Some(c) = self.sh.include_counts.get_mut(&**name) {
            *c -= 1;
        }
        match r {
            Ok(out) => {
                meta.at = None;
                meta.from.clear();
                merge_output_meta(&mut meta, &out);
                let text = Value::from(out.text.as_str());
                let inner = Some(Rc::new(out));
                Ok(Val {
                    v: text,
                    missing: false,
                    inner,
                    meta,
                })
            }
            Err(e) => Err(self.err(pos, ctx, format!("error calling include: {e}"))),
        }
    }

    fn call_tpl(&mut self, pos: &Pos, ctx: &dyn Display, args: &[Val], mut meta: Meta) -> R<Val> {
        let [text, data] = args else {
            return Err(self.err(
                pos,
                ctx,
                format!("wrong number of args for tpl: want 2 got {}", args.len()),
            ));
        };
        let Value::String(text) = &text.v else {
            return Err(self.err(
                pos,
                ctx,
                format!(
                    "wrong type for value; expected string; got {}",
                    text.v.type_name()
                ),
            ));
        };
        let mut set = self.set.clone();
        let tpl_name = self.sh.opts.tpl_name.clone();
        let tree = match set.parse_main(&tpl_name, text) {
            Ok(tree) => tree,
            Err(e) => {
                return Err(self.err(
                    pos,
                    ctx,
                    format!(
                        "error calling tpl: cannot parse template {}: {e}",
                        go_quote(text)
                    ),
                ));
            }
        };
        match self.execute_tree(&set, &tree, data) {
            Ok(mut out) => {
                out.remove_no_value();
                merge_output_meta(&mut meta, &out);
                let text = Value::from(out.text.as_str());
                let inner = Some(Rc::new(out));
                Ok(Val {
                    v: text,
                    missing: false,
                    inner,
                    meta,
                })
            }
            Err(e) => Err(self.err(
                pos,
                ctx,
                format!(
                    "error calling tpl: error during tpl function execution for {}: {e}",
                    go_quote(text)
                ),
            )),
        }
    }
}

/// ORs the provenance of everything a nested template printed into `meta`.
fn merge_output_meta(meta: &mut Meta, out: &Output) {
    for s in out
        .segments
        .iter()
        .filter(|s| s.kind == SegmentKind::Action)
    {
        meta.merge(&Meta {
            at: None,
            from: s.values_paths.clone(),
            taint: s.taint.clone(),
        });
    }
}
