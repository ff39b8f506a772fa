//! `include`, `tpl` and the splicing of their output's provenance into the caller's.

use std::fmt::Display;
use std::rc::Rc;

use super::{R, State, Val};
use crate::ast::Pos;
use crate::output::{Meta, Output, OutputSegment, SegmentKind};
use crate::parse::Tree;
use crate::printf::go_quote;
use crate::template::{ExecError, Templates};
use crate::value::Value;

impl State<'_, '_> {
    /// Writes text that derives from an `include`/`tpl` output: the parts of that output
    /// found again, in order, line by line (they survive `nindent`, `indent`, `quote`,
    /// `trim`) keep their segments from the included template; the rest belongs to the
    /// printing action.
    pub(super) fn write_spliced(
        &mut self,
        text: &str,
        pos: &Pos,
        meta: &Meta,
        inner: &Output,
    ) -> R<()> {
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
                let Some(off) = find_from(&text[cursor..], piece) else {
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
                    release: seg.release.clone(),
                    release_branch: seg.release_branch.clone(),
                    via,
                    conditions: seg.conditions.clone(),
                });
                cursor = start + piece.len();
                at = cursor;
            }
        }
        fill(at, text.len(), &mut spliced);
        self.out.segments.extend(spliced);
        Ok(())
    }

    /// Runs template `name` of `set` with `data` into a fresh buffer, sharing limits.
    pub(super) fn execute_nested(&mut self, set: &Templates, name: &str, data: &Val) -> R<Output> {
        let Some(tree) = set.trees.get(name).cloned() else {
            return Err(ExecError {
                cause: None,
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

    pub(super) fn execute_tree(&mut self, set: &Templates, tree: &Tree, data: &Val) -> R<Output> {
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
            // Text included under a condition depends on it too.
            conditions: self.conditions.clone(),
            release_branch: self.release_branch.clone(),
        };
        st.walk(&dot, &tree.root)?;
        Ok(st.out)
    }

    pub(super) fn call_include(
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
                    depth: 0,
                    inner,
                    meta,
                })
            }
            Err(e) => {
                let mut outer = self.err(pos, ctx, format!("error calling include: {e}"));
                outer.cause = Some(Box::new(e));
                Err(outer)
            }
        }
    }

    pub(super) fn call_tpl(
        &mut self,
        pos: &Pos,
        ctx: &dyn Display,
        args: &[Val],
        mut meta: Meta,
    ) -> R<Val> {
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
                    depth: 0,
                    inner,
                    meta,
                })
            }
            Err(e) => {
                let msg = format!(
                    "error calling tpl: error during tpl function execution for {}: {e}",
                    go_quote(text)
                );
                let mut outer = self.err(pos, ctx, msg);
                outer.cause = Some(Box::new(e));
                Err(outer)
            }
        }
    }
}

/// ORs the provenance of everything a nested template printed into `meta`; text an
/// install/upgrade branch let through makes the whole result depend on that state.
fn merge_output_meta(meta: &mut Meta, out: &Output) {
    if meta.release.is_none() {
        meta.release = out.segments.iter().find_map(|s| s.release_branch.clone());
    }
    for s in out
        .segments
        .iter()
        .filter(|s| s.kind == SegmentKind::Action)
    {
        meta.merge(&Meta {
            at: None,
            from: s.values_paths.clone(),
            taint: s.taint.clone(),
            release: s.release.clone(),
        });
    }
}

/// `hay.find(needle)`, trying first the places an included line usually is: right after the
/// indentation and newlines `indent`/`nindent` put before it. Positions are tried in order,
/// so the first match is the first occurrence; only a miss pays for a substring search
/// (setting one up per line was ~1% of a lint).
fn find_from(hay: &str, needle: &str) -> Option<usize> {
    let lead = hay.len() - hay.trim_start_matches([' ', '\n', '\t', '\r']).len();
    (0..=lead)
        .find(|&i| hay.as_bytes()[i..].starts_with(needle.as_bytes()))
        .or_else(|| hay.find(needle))
}

#[cfg(test)]
mod tests {
    use super::find_from;

    #[test]
    fn find_from_is_str_find() {
        let cases = [
            ("\n    name: x\n", "name: x"),
            ("\n    name: x\n", "  name: x"),
            ("   ", "a"),
            ("", "a"),
            ("a: 1\nb: 2", "b: 2"),
            ("  {{{  x", " x"),
            ("\n  key: v\n  key: v", "key: v"),
            ("  é: 1", "é: 1"),
        ];
        for (hay, needle) in cases {
            assert_eq!(
                find_from(hay, needle),
                hay.find(needle),
                "{hay:?} {needle:?}"
            );
        }
    }
}
