//! Field access: `.a.b` on maps (missing-key modes), objects (fields and methods) and nil,
//! with the provenance of the value reached.

use std::rc::Rc;

use super::{R, State, Val};
use crate::ast::{Arg, Pos};
use crate::output::{Meta, Taint, ValuesPath};
use crate::printf::go_quote;
use crate::template::MissingKey;
use crate::value::Value;

impl State<'_, '_> {
    pub(super) fn eval_field_chain(
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
    pub(super) fn child_meta(&self, parent: &Meta, key: &str, v: &Value) -> Meta {
        if let (Value::Map(m), Some(root)) = (v, self.sh.values_root)
            && Rc::as_ptr(m) as usize == root
        {
            let mut meta = Meta::at_path(ValuesPath::from(Vec::new()));
            meta.taint = parent.taint.clone();
            return meta;
        }
        parent.child(key)
    }

    /// `.Release.IsInstall`, `.IsUpgrade` and `.Revision` differ between an install and an
    /// upgrade: a read of one is recorded where it happens.
    fn release_state_read(
        &self,
        map: &Rc<std::cell::RefCell<crate::value::Map>>,
        name: &str,
        pos: &Pos,
    ) -> Option<Rc<Taint>> {
        let is_release = self.sh.release_root == Some(Rc::as_ptr(map) as usize);
        (is_release && matches!(name, "IsInstall" | "IsUpgrade" | "Revision")).then(|| {
            Rc::new(Taint {
                func: format!(".Release.{name}"),
                pos: pos.clone(),
            })
        })
    }

    pub(super) fn eval_field(
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
                        let mut meta = self.child_meta(&receiver.meta, name, &v);
                        // A tainted value stored with `set` stays tainted when read back.
                        if meta.taint.is_none()
                            && let Some(t) = self
                                .sh
                                .stored_taint
                                .get(&(Rc::as_ptr(m) as usize, name.to_string()))
                        {
                            meta.taint = Some(t.clone());
                        }
                        if meta.release.is_none() {
                            meta.release = self.release_state_read(m, name, pos);
                        }
                        Ok(Val {
                            v,
                            missing: false,
                            depth: receiver.depth,
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
                                depth: receiver.depth,
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
                    let mut args_depth = self.depth_of(&receiver);
                    for a in rest {
                        let v = self.eval_arg(dot, a)?;
                        meta.merge(&v.meta);
                        args_depth = args_depth.max(self.depth_of(&v));
                        args.push(v.v);
                    }
                    if let Some(f) = final_ {
                        meta.merge(&f.meta);
                        args_depth = args_depth.max(self.depth_of(&f));
                        args.push(f.v);
                    }
                    return match o.call(name, &args) {
                        Some(Ok(v)) => self.function_result(pos, node, v, meta, None, args_depth),
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
                        depth: receiver.depth,
                        inner: None,
                        meta,
                    });
                }
                match o.call(name, &[]) {
                    Some(Ok(v)) => Ok(Val {
                        v,
                        missing: false,
                        depth: receiver.depth,
                        inner: None,
                        meta,
                    }),
                    Some(Err(e)) => Err(self.err(pos, node, format!("error calling {name}: {e}"))),
                    // A Go map type with methods: not a method, so a key.
                    None if o.map_entries().is_some() => {
                        let entries = o.map_entries().unwrap_or_default();
                        match entries.into_iter().find(|(k, _)| k == name) {
                            Some((_, v)) => Ok(Val {
                                v,
                                missing: false,
                                depth: receiver.depth,
                                inner: None,
                                meta,
                            }),
                            None => match self.sh.opts.missing_key {
                                MissingKey::Invalid => Ok(Val::missing(meta)),
                                MissingKey::Zero => Ok(Val {
                                    v: Value::Nil,
                                    missing: false,
                                    depth: 0,
                                    inner: None,
                                    meta,
                                }),
                                MissingKey::Error => Err(self.err(
                                    pos,
                                    node,
                                    format!("map has no entry for key {}", go_quote(name)),
                                )),
                            },
                        }
                    }
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
}
