//! Dict functions (Sprig dict.go) and mergo's merge semantics as Sprig calls them.
//!
//! Maps are shared references (`Rc<RefCell<..>>`), like Go maps: `set`, `unset`, `merge`
//! mutate their first argument in place and charts rely on that.

use std::cell::RefCell;
use std::rc::Rc;

use super::super::value::{Map, Value};
use super::FuncEnv;
use super::args::{self, arity, arity_min};
use super::conv::strval;
use super::defaults::is_empty;

type R = Result<Value, String>;

/// Go's message for a failed `x.(map[string]interface{})` assertion.
fn not_a_map(v: &Value) -> String {
    let t = match v {
        Value::Nil => "nil",
        other => other.type_name(),
    };
    format!("interface conversion: interface {{}} is {t}, not map[string]interface {{}}")
}

pub fn dict(_: &mut FuncEnv, a: &[Value]) -> R {
    let mut m = Map::new();
    for pair in a.chunks(2) {
        let key = strval(&pair[0]);
        m.insert(key, pair.get(1).cloned().unwrap_or_else(|| Value::from("")));
    }
    Ok(Value::map(m))
}

pub fn get(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("get", a, 2)?;
    let m = args::map(&a[0])?;
    let k = args::string(&a[1])?;
    Ok(m.and_then(|m| m.borrow().get(&*k).cloned())
        .unwrap_or_else(|| Value::from("")))
}

pub fn set(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("set", a, 3)?;
    let m = args::map(&a[0])?.ok_or("assignment to entry in nil map")?;
    let k = args::string(&a[1])?;
    m.borrow_mut().insert(k.to_string(), a[2].clone());
    Ok(Value::Map(m))
}

pub fn unset(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("unset", a, 2)?;
    let m = args::map(&a[0])?;
    let k = args::string(&a[1])?;
    match m {
        Some(m) => {
            m.borrow_mut().remove(&*k);
            Ok(Value::Map(m))
        }
        None => Ok(Value::Nil),
    }
}

pub fn has_key(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("hasKey", a, 2)?;
    let m = args::map(&a[0])?;
    let k = args::string(&a[1])?;
    Ok(Value::Bool(m.is_some_and(|m| m.borrow().contains_key(&*k))))
}

pub fn pluck(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("pluck", a, 1)?;
    let k = args::string(&a[0])?;
    let mut out = Vec::new();
    for d in &a[1..] {
        if let Some(m) = args::map(d)?
            && let Some(v) = m.borrow().get(&*k)
        {
            out.push(v.clone());
        }
    }
    Ok(Value::list(out))
}

/// Go iterates maps in random order; we return keys sorted (one of Go's possible outputs,
/// and the one a chart that pipes into `sortAlpha` sees anyway).
pub fn keys(_: &mut FuncEnv, a: &[Value]) -> R {
    let mut out = Vec::new();
    for d in a {
        if let Some(m) = args::map(d)? {
            out.extend(m.borrow().keys().map(|k| Value::from(k.as_str())));
        }
    }
    Ok(Value::list(out))
}

pub fn values(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("values", a, 1)?;
    let m = args::map(&a[0])?;
    Ok(Value::list(
        m.map(|m| m.borrow().values().cloned().collect())
            .unwrap_or_default(),
    ))
}

pub fn pick(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("pick", a, 1)?;
    let m = args::map(&a[0])?;
    let mut out = Map::new();
    for k in &a[1..] {
        let k = args::string(k)?;
        if let Some(m) = &m
            && let Some(v) = m.borrow().get(&*k)
        {
            out.insert(k.to_string(), v.clone());
        }
    }
    Ok(Value::map(out))
}

pub fn omit(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("omit", a, 1)?;
    let m = args::map(&a[0])?;
    let mut drop = Vec::new();
    for k in &a[1..] {
        drop.push(args::string(k)?);
    }
    let mut out = Map::new();
    if let Some(m) = m {
        for (k, v) in m.borrow().iter() {
            if !drop.iter().any(|d| **d == **k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(Value::map(out))
}

pub fn dig(_: &mut FuncEnv, a: &[Value]) -> R {
    if a.len() < 3 {
        return Err("dig needs at least three arguments".into());
    }
    let mut cur = match &a[a.len() - 1] {
        Value::Map(m) => m.clone(),
        other => return Err(not_a_map(other)),
    };
    let default = &a[a.len() - 2];
    let ks = &a[..a.len() - 2];
    let mut names = Vec::new();
    for k in ks {
        match k {
            Value::String(s) => names.push(s.clone()),
            other => {
                let t = if matches!(other, Value::Nil) {
                    "nil"
                } else {
                    other.type_name()
                };
                return Err(format!(
                    "interface conversion: interface {{}} is {t}, not string"
                ));
            }
        }
    }
    for (i, k) in names.iter().enumerate() {
        let step = match cur.borrow().get(&**k) {
            None => return Ok(default.clone()),
            Some(v) => v.clone(),
        };
        if i + 1 == names.len() {
            return Ok(step);
        }
        cur = match step {
            Value::Map(m) => m,
            other => return Err(not_a_map(&other)),
        };
    }
    Ok(default.clone())
}

/// mergo.Merge / MergeWithOverwrite for map[string]interface{} (mergo v1 map branch):
/// nested maps merge recursively in place, missing keys take the source value (shared,
/// not copied), lists are replaced only when overwriting, and with overwrite any non-nil
/// source value wins, even an empty one (`false`, `""`, `0`).
fn merge_into(dst: &Rc<RefCell<Map>>, src: &Rc<RefCell<Map>>, overwrite: bool, depth: usize) {
    if Rc::ptr_eq(dst, src) || depth > 256 {
        return;
    }
    let src_entries: Vec<(String, Value)> = src
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, sv) in src_entries {
        let dv = dst.borrow().get(&k).cloned();
        if matches!(sv, Value::Nil) {
            if overwrite {
                dst.borrow_mut().insert(k, Value::Nil);
            }
            continue;
        }
        match (&sv, &dv) {
            (Value::Map(sm), Some(Value::Map(dm))) => {
                merge_into(dm, sm, overwrite, depth + 1);
                if !dm.borrow().is_empty() {
                    continue;
                }
            }
            (Value::List(_), Some(d)) => {
                if overwrite {
                    dst.borrow_mut().insert(k.clone(), sv.clone());
                }
                if !is_empty(d) {
                    continue;
                }
            }
            _ => {}
        }
        let set = overwrite || dv.as_ref().is_none_or(is_empty);
        if set {
            dst.borrow_mut().insert(k, sv);
        }
    }
}

fn merge_impl(name: &str, a: &[Value], overwrite: bool) -> R {
    arity_min(name, a, 1)?;
    let dst = args::map(&a[0])?.unwrap_or_else(|| Rc::new(RefCell::new(Map::new())));
    for s in &a[1..] {
        if let Some(src) = args::map(s)? {
            merge_into(&dst, &src, overwrite, 0);
        }
    }
    Ok(Value::Map(dst))
}

pub fn merge(_: &mut FuncEnv, a: &[Value]) -> R {
    merge_impl("merge", a, false)
}

pub fn must_merge(_: &mut FuncEnv, a: &[Value]) -> R {
    merge_impl("mustMerge", a, false)
}

pub fn merge_overwrite(_: &mut FuncEnv, a: &[Value]) -> R {
    merge_impl("mergeOverwrite", a, true)
}

pub fn must_merge_overwrite(_: &mut FuncEnv, a: &[Value]) -> R {
    merge_impl("mustMergeOverwrite", a, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::funcs::gofmt::format_v;

    fn d(pairs: &[(&str, Value)]) -> Value {
        let mut m = Map::new();
        for (k, v) in pairs {
            m.insert((*k).to_string(), v.clone());
        }
        Value::map(m)
    }

    #[test]
    fn mergo_semantics() {
        let mut e = FuncEnv::default();
        // Sprig's documented mergeOverwrite example: false overwrites true.
        let dst = d(&[
            ("default", Value::from("default")),
            ("overwrite", Value::from("me")),
            ("key", Value::Bool(true)),
        ]);
        let src = d(&[
            ("overwrite", Value::from("overwritten")),
            ("key", Value::Bool(false)),
        ]);
        let out = merge_overwrite(&mut e, &[dst.clone(), src.clone()]).unwrap_or_default();
        assert_eq!(
            format_v(&out),
            "map[default:default key:false overwrite:overwritten]"
        );
        // merge keeps non-empty destination values, fills empty ones.
        let dst = d(&[
            ("a", Value::from("x")),
            ("b", Value::from("")),
            ("l", Value::list(vec![Value::Int(1)])),
        ]);
        let src = d(&[
            ("a", Value::from("y")),
            ("b", Value::from("z")),
            ("c", Value::Nil),
            ("l", Value::list(vec![Value::Int(2)])),
            ("n", d(&[("k", Value::Int(1))])),
        ]);
        let out = merge(&mut e, &[dst, src]).unwrap_or_default();
        assert_eq!(format_v(&out), "map[a:x b:z l:[1] n:map[k:1]]");
        // Nested maps merge recursively, in place.
        let inner = d(&[("x", Value::Int(1))]);
        let dst = d(&[("n", inner.clone())]);
        let src = d(&[("n", d(&[("x", Value::Int(2)), ("y", Value::Int(3))]))]);
        let _ = merge(&mut e, &[dst, src]);
        assert_eq!(format_v(&inner), "map[x:1 y:3]");
    }

    #[test]
    fn dig_and_friends() {
        let mut e = FuncEnv::default();
        let m = d(&[("a", d(&[("b", Value::from("c"))]))]);
        let v = dig(
            &mut e,
            &[
                Value::from("a"),
                Value::from("b"),
                Value::from("def"),
                m.clone(),
            ],
        );
        assert_eq!(
            v.ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .as_deref(),
            Some("c")
        );
        let v = dig(
            &mut e,
            &[
                Value::from("a"),
                Value::from("z"),
                Value::from("def"),
                m.clone(),
            ],
        );
        assert_eq!(
            v.ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .as_deref(),
            Some("def")
        );
        let err = dig(
            &mut e,
            &[
                Value::from("a"),
                Value::from("b"),
                Value::from("x"),
                Value::from("def"),
                m.clone(),
            ],
        );
        assert_eq!(
            err.err().as_deref(),
            Some("interface conversion: interface {} is string, not map[string]interface {}")
        );
        assert!(set(&mut e, &[Value::Nil, Value::from("k"), Value::Int(1)]).is_err());
        let got = get(&mut e, &[m, Value::from("missing")]).unwrap_or_default();
        assert_eq!(got.as_str(), Some(""));
    }
}
