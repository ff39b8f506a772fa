//! Reflection: typeOf, kindOf, typeIs, typeIsLike, kindIs, deepEqual (Go's reflect.DeepEqual).

use std::rc::Rc;

use super::super::value::Value;
use super::FuncEnv;
use super::args::{self, arity};

type R = Result<Value, String>;

pub const NIL_DEREF: &str = "runtime error: invalid memory address or nil pointer dereference";

/// Go's reflect.Kind name of a value (`invalid` for nil).
pub fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "invalid",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Int64(_) => "int64",
        Value::Uint(_) => "uint64",
        Value::Float(_) => "float64",
        Value::String(_) => "string",
        Value::Bytes(_) | Value::List(_) => "slice",
        Value::Map(_) => "map",
        Value::Object(o) => {
            if o.map_entries().is_some() {
                "map"
            } else if o.type_name().starts_with('*') {
                "ptr"
            } else {
                "struct"
            }
        }
    }
}

/// reflect.DeepEqual over our values: types must match exactly (int ≠ int64 ≠ float64).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    deep_equal_in(a, b, &mut std::collections::HashSet::new())
}

/// `same` holds the pairs of lists and maps already found equal in this comparison: two
/// values built by doubling a list 40 times hold 2^40 paths but 40 distinct pairs, and are
/// compared in 40 steps rather than forever (Go's DeepEqual keeps such a set as well).
fn deep_equal_in(
    a: &Value,
    b: &Value,
    same: &mut std::collections::HashSet<(usize, usize)>,
) -> bool {
    match (a, b) {
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) | (Value::Int64(x), Value::Int64(y)) => x == y,
        (Value::Uint(x), Value::Uint(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            let pair = (Rc::as_ptr(x) as usize, Rc::as_ptr(y) as usize);
            if Rc::ptr_eq(x, y) || same.contains(&pair) {
                return true;
            }
            let equal = x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(p, q)| deep_equal_in(p, q, same));
            if equal {
                same.insert(pair);
            }
            equal
        }
        (Value::Map(x), Value::Map(y)) => {
            let pair = (Rc::as_ptr(x) as usize, Rc::as_ptr(y) as usize);
            if Rc::ptr_eq(x, y) || same.contains(&pair) {
                return true;
            }
            let (mx, my) = (x.borrow(), y.borrow());
            let equal = mx.len() == my.len()
                && mx
                    .iter()
                    .all(|(k, v)| my.get(k).is_some_and(|w| deep_equal_in(v, w, same)));
            if equal {
                same.insert(pair);
            }
            equal
        }
        (Value::Object(x), Value::Object(y)) => {
            Rc::ptr_eq(x, y) || (x.type_name() == y.type_name() && x.format() == y.format())
        }
        _ => false,
    }
}

pub fn type_of(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("typeOf", a, 1)?;
    Ok(Value::from(a[0].type_name()))
}

pub fn type_is(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("typeIs", a, 2)?;
    let t = args::string(&a[0])?;
    Ok(Value::Bool(*t == *a[1].type_name()))
}

pub fn type_is_like(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("typeIsLike", a, 2)?;
    let t = args::string(&a[0])?;
    if matches!(a[1], Value::Nil) {
        return Err(NIL_DEREF.into());
    }
    let s = a[1].type_name();
    Ok(Value::Bool(*t == *s || format!("*{t}") == s))
}

pub fn kind_of(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("kindOf", a, 1)?;
    Ok(Value::from(kind_name(&a[0])))
}

pub fn kind_is(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("kindIs", a, 2)?;
    let t = args::string(&a[0])?;
    Ok(Value::Bool(*t == *kind_name(&a[1])))
}

pub fn deep_equal_fn(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("deepEqual", a, 2)?;
    Ok(Value::Bool(deep_equal(&a[0], &a[1])))
}
