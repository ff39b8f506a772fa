//! Defaults and flow control: default, empty, coalesce, all, any, ternary, deepCopy, fail,
//! and Helm's `required` and `lookup` (a placeholder: `helm template` has no cluster).

use std::cell::RefCell;
use std::rc::Rc;

use super::super::value::{Map, Value};
use super::FuncEnv;
use super::args::{self, arity, arity_min};

type R = Result<Value, String>;

/// Helm wraps `required`'s message in these so that its error cleanup can cut the message
/// out of Go's error chain: the executor (or Helm layer) prints `execution error at
/// (file:line:col): MESSAGE` with the text between them.
pub const WARN_START: &str = "HELM_ERR_START";
pub const WARN_END: &str = "HELM_ERR_END";

/// Sprig's `empty`: the zero value of its kind (structs are never empty).
pub fn is_empty(v: &Value) -> bool {
    match v {
        // Structs are never empty; map-kind objects (Helm's `.Files`) are when they have no
        // entries.
        Value::Object(o) => o.map_entries().is_some_and(|e| e.is_empty()),
        other => !other.truthy(),
    }
}

pub fn default(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("default", a, 1)?;
    match a.get(1) {
        Some(given) if !is_empty(given) => Ok(given.clone()),
        _ => Ok(a[0].clone()),
    }
}

pub fn empty(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("empty", a, 1)?;
    Ok(Value::Bool(is_empty(&a[0])))
}

pub fn coalesce(_: &mut FuncEnv, a: &[Value]) -> R {
    Ok(a.iter()
        .find(|v| !is_empty(v))
        .cloned()
        .unwrap_or(Value::Nil))
}

pub fn all(_: &mut FuncEnv, a: &[Value]) -> R {
    Ok(Value::Bool(a.iter().all(|v| !is_empty(v))))
}

pub fn any(_: &mut FuncEnv, a: &[Value]) -> R {
    Ok(Value::Bool(a.iter().any(|v| !is_empty(v))))
}

pub fn ternary(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("ternary", a, 3)?;
    let c = args::boolean(&a[2])?;
    Ok(if c { a[0].clone() } else { a[1].clone() })
}

/// A deep copy: maps and lists are duplicated, so later `set`s do not leak between copies.
pub fn deep_copy_value(v: &Value, depth: usize) -> Value {
    if depth > super::args::MAX_DEPTH {
        return v.clone();
    }
    // Shared structure is copied once per reference: past the render's memory budget the
    // copy stops (the executor then fails the render).
    let bytes = super::memory::container_bytes(v);
    if bytes > 0 && super::memory::spend(bytes).is_err() {
        return Value::Nil;
    }
    match v {
        Value::List(l) => Value::list(l.iter().map(|x| deep_copy_value(x, depth + 1)).collect()),
        Value::Map(m) => {
            let copied: Map = m
                .borrow()
                .iter()
                .map(|(k, x)| (k.clone(), deep_copy_value(x, depth + 1)))
                .collect();
            Value::Map(Rc::new(RefCell::new(copied)))
        }
        other => other.clone(),
    }
}

pub fn deep_copy(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("deepCopy", a, 1)?;
    Ok(deep_copy_value(&a[0], 0))
}

pub fn must_deep_copy(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustDeepCopy", a, 1)?;
    Ok(deep_copy_value(&a[0], 0))
}

pub fn fail(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("fail", a, 1)?;
    Err(args::string(&a[0])?.to_string())
}

/// Helm's `required`: nil or "" is an error carrying the message between Helm's markers.
pub fn required(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("required", a, 2)?;
    let warn = args::string(&a[0])?;
    match &a[1] {
        Value::Nil => Err(format!("{WARN_START}{warn}{WARN_END}")),
        Value::String(s) if s.is_empty() => Err(format!("{WARN_START}{warn}{WARN_END}")),
        v => Ok(v.clone()),
    }
}

/// Helm's `lookup` under `helm template`: always an empty map.
pub fn lookup_placeholder(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("lookup", a, 4)?;
    for v in a {
        args::string(v)?;
    }
    Ok(Value::map(Map::new()))
}
