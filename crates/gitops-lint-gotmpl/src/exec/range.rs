//! `range` over lists, maps (in key order), integers (Go 1.22), with `break`/`continue`.

use super::{Flow, R, State, Val};
use crate::ast::Branch;
use crate::output::Meta;
use crate::printf;
use crate::value::Value;

impl State<'_, '_> {
    pub(super) fn walk_range(&mut self, dot: &Val, b: &Branch) -> R<()> {
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &b.pipe)?;
        // Errors end the whole execution, so the conditions need restoring only on success.
        let saved_conditions = self.push_conditions(&val.meta);
        let inner_mark = self.vars.len();
        let limit = self.sh.opts.max_range_len;
        let too_long = |st: &Self, n: usize| {
            st.err(
                &b.pos,
                &b.pipe,
                format!(
                    "range over {n} elements exceeds the limit of {limit} (limits.max-range-length)"
                ),
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
                            depth: val.depth,
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
                            depth: val.depth,
                            inner: None,
                            meta: meta.clone(),
                        },
                        Val {
                            v: e,
                            missing: false,
                            depth: val.depth,
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
                    let meta = val.meta.child(&k);
                    items.push((
                        Val {
                            v: Value::from(k),
                            missing: false,
                            depth: val.depth,
                            inner: None,
                            meta: meta.clone(),
                        },
                        Val {
                            v: e,
                            missing: false,
                            depth: val.depth,
                            inner: None,
                            meta,
                        },
                    ));
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
                        depth: val.depth,
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
        self.conditions = saved_conditions;
        Ok(())
    }
}
