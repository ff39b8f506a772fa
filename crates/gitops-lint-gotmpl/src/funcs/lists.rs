//! List functions (Sprig list.go). Go's versions take `interface{}` and use reflection, so
//! any slice works; a non-slice is an error naming its reflect.Kind, and a nil argument is a
//! nil-pointer panic (reflect.TypeOf(nil).Kind()). `must*` and plain variants only differ in
//! Go by error vs panic, which a template reports identically.

use super::super::value::Value;
use super::FuncEnv;
use super::args::{self, arity, arity_min, check_alloc};
use super::defaults::is_empty;
use super::reflect::{NIL_DEREF, deep_equal, kind_name};

type R = Result<Value, String>;

/// The elements of a Go slice value, or the error Sprig gives for anything else.
fn elems(v: &Value, what: impl FnOnce(&str) -> String) -> Result<Vec<Value>, String> {
    match v {
        Value::List(l) => Ok(l.as_ref().clone()),
        Value::Bytes(b) => Ok(b.iter().map(|x| Value::Int(i64::from(*x))).collect()),
        Value::Nil => Err(NIL_DEREF.into()),
        other => Err(what(kind_name(other))),
    }
}

fn list_v(v: Vec<Value>) -> R {
    Ok(Value::list(v))
}

pub fn list(_: &mut FuncEnv, a: &[Value]) -> R {
    list_v(a.to_vec())
}

pub fn push(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("append", a, 2)?;
    let mut l = elems(&a[0], |k| format!("Cannot push on type {k}"))?;
    l.push(a[1].clone());
    list_v(l)
}

pub fn must_push(e: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustAppend", a, 2)?;
    push(e, a)
}

pub fn prepend(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("prepend", a, 2)?;
    let mut l = elems(&a[0], |k| format!("Cannot prepend on type {k}"))?;
    l.insert(0, a[1].clone());
    list_v(l)
}

pub fn must_prepend(e: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustPrepend", a, 2)?;
    prepend(e, a)
}

fn first_impl(name: &str, a: &[Value]) -> R {
    arity(name, a, 1)?;
    let l = elems(&a[0], |k| format!("Cannot find first on type {k}"))?;
    Ok(l.into_iter().next().unwrap_or(Value::Nil))
}

pub fn first(_: &mut FuncEnv, a: &[Value]) -> R {
    first_impl("first", a)
}

pub fn must_first(_: &mut FuncEnv, a: &[Value]) -> R {
    first_impl("mustFirst", a)
}

fn last_impl(name: &str, a: &[Value]) -> R {
    arity(name, a, 1)?;
    let l = elems(&a[0], |k| format!("Cannot find last on type {k}"))?;
    Ok(l.into_iter().last().unwrap_or(Value::Nil))
}

pub fn last(_: &mut FuncEnv, a: &[Value]) -> R {
    last_impl("last", a)
}

pub fn must_last(_: &mut FuncEnv, a: &[Value]) -> R {
    last_impl("mustLast", a)
}

fn rest_impl(name: &str, a: &[Value]) -> R {
    arity(name, a, 1)?;
    let l = elems(&a[0], |k| format!("Cannot find rest on type {k}"))?;
    if l.is_empty() {
        // Go returns a nil []interface{}: prints as "[]".
        return list_v(Vec::new());
    }
    list_v(l[1..].to_vec())
}

pub fn rest(_: &mut FuncEnv, a: &[Value]) -> R {
    rest_impl("rest", a)
}

pub fn must_rest(_: &mut FuncEnv, a: &[Value]) -> R {
    rest_impl("mustRest", a)
}

fn initial_impl(name: &str, a: &[Value]) -> R {
    arity(name, a, 1)?;
    let l = elems(&a[0], |k| format!("Cannot find initial on type {k}"))?;
    if l.is_empty() {
        return list_v(Vec::new());
    }
    list_v(l[..l.len() - 1].to_vec())
}

pub fn initial(_: &mut FuncEnv, a: &[Value]) -> R {
    initial_impl("initial", a)
}

pub fn must_initial(_: &mut FuncEnv, a: &[Value]) -> R {
    initial_impl("mustInitial", a)
}

fn reverse_impl(name: &str, a: &[Value]) -> R {
    arity(name, a, 1)?;
    let mut l = elems(&a[0], |k| format!("Cannot find reverse on type {k}"))?;
    l.reverse();
    list_v(l)
}

pub fn reverse(_: &mut FuncEnv, a: &[Value]) -> R {
    reverse_impl("reverse", a)
}

pub fn must_reverse(_: &mut FuncEnv, a: &[Value]) -> R {
    reverse_impl("mustReverse", a)
}

/// What `deep_equal` compares a scalar by, hashable: two scalars are deep-equal exactly
/// when their keys are equal (a float by value, so `0.0` and `-0.0` are one; NaN equals
/// nothing and has no key).
#[derive(Hash, PartialEq, Eq)]
enum ScalarKey<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Int64(i64),
    Uint(u64),
    Float(u64),
    Str(&'a str),
    Bytes(&'a [u8]),
}

fn scalar_key(v: &Value) -> Option<ScalarKey<'_>> {
    Some(match v {
        Value::Nil => ScalarKey::Nil,
        Value::Bool(b) => ScalarKey::Bool(*b),
        Value::Int(i) => ScalarKey::Int(*i),
        Value::Int64(i) => ScalarKey::Int64(*i),
        Value::Uint(u) => ScalarKey::Uint(*u),
        Value::Float(f) if f.is_nan() => return None,
        Value::Float(f) => ScalarKey::Float(if *f == 0.0 { 0 } else { f.to_bits() }),
        Value::String(s) => ScalarKey::Str(s),
        Value::Bytes(b) => ScalarKey::Bytes(b),
        _ => return None,
    })
}

/// Sprig's uniq: the first of each run of deep-equal elements, in order. Scalars are looked
/// up in a set (a list of a million strings took minutes compared pairwise); lists, maps and
/// NaNs are compared with the kept ones of their own sort, as deep_equal does.
fn uniq_impl(name: &str, a: &[Value]) -> R {
    arity(name, a, 1)?;
    let l = elems(&a[0], |k| format!("Cannot find uniq on type {k}"))?;
    let mut seen: std::collections::HashSet<ScalarKey<'_>> = std::collections::HashSet::new();
    let mut kept_others: Vec<usize> = Vec::new();
    let mut keep: Vec<usize> = Vec::new();
    for (i, x) in l.iter().enumerate() {
        let new = match scalar_key(x) {
            Some(k) => seen.insert(k),
            None if matches!(x, Value::Float(_)) => true,
            None => !kept_others.iter().any(|&j| deep_equal(x, &l[j])),
        };
        if new {
            if scalar_key(x).is_none() {
                kept_others.push(i);
            }
            keep.push(i);
        }
    }
    let out: Vec<Value> = keep.into_iter().map(|i| l[i].clone()).collect();
    list_v(out)
}

pub fn uniq(_: &mut FuncEnv, a: &[Value]) -> R {
    uniq_impl("uniq", a)
}

pub fn must_uniq(_: &mut FuncEnv, a: &[Value]) -> R {
    uniq_impl("mustUniq", a)
}

fn without_impl(name: &str, a: &[Value]) -> R {
    arity_min(name, a, 1)?;
    let l = elems(&a[0], |k| format!("Cannot find without on type {k}"))?;
    let omit = &a[1..];
    list_v(
        l.into_iter()
            .filter(|x| !omit.iter().any(|o| deep_equal(x, o)))
            .collect(),
    )
}

pub fn without(_: &mut FuncEnv, a: &[Value]) -> R {
    without_impl("without", a)
}

pub fn must_without(_: &mut FuncEnv, a: &[Value]) -> R {
    without_impl("mustWithout", a)
}

fn has_impl(name: &str, a: &[Value]) -> R {
    arity(name, a, 2)?;
    if matches!(a[1], Value::Nil) {
        return Ok(Value::Bool(false));
    }
    let l = elems(&a[1], |k| format!("Cannot find has on type {k}"))?;
    Ok(Value::Bool(l.iter().any(|x| deep_equal(&a[0], x))))
}

pub fn has(_: &mut FuncEnv, a: &[Value]) -> R {
    has_impl("has", a)
}

pub fn must_has(_: &mut FuncEnv, a: &[Value]) -> R {
    has_impl("mustHas", a)
}

fn slice_impl(name: &str, a: &[Value]) -> R {
    arity_min(name, a, 1)?;
    let l = elems(&a[0], |k| {
        format!("list should be type of slice or array but {k}")
    })?;
    if l.is_empty() {
        return Ok(Value::Nil);
    }
    let start = a.get(1).map(super::conv::to_int64).unwrap_or(0);
    let end = match a.get(2) {
        Some(v) => super::conv::to_int64(v),
        None => l.len() as i64,
    };
    if start < 0 || end < start || end > l.len() as i64 {
        return Err("reflect.Value.Slice: slice index out of bounds".into());
    }
    let out = l[start as usize..end as usize].to_vec();
    match &a[0] {
        Value::Bytes(_) => Ok(Value::Bytes(
            out.iter()
                .map(|v| match v {
                    Value::Int(i) => *i as u8,
                    _ => 0,
                })
                .collect::<Vec<u8>>()
                .into(),
        )),
        _ => list_v(out),
    }
}

pub fn slice(_: &mut FuncEnv, a: &[Value]) -> R {
    slice_impl("slice", a)
}

pub fn must_slice(_: &mut FuncEnv, a: &[Value]) -> R {
    slice_impl("mustSlice", a)
}

/// Checks the call's room for the whole result before building it: the same list given
/// many times (`concat $l $l`, doubled in a `range`) grows without bound otherwise.
pub fn concat(_: &mut FuncEnv, a: &[Value]) -> R {
    let mut total: usize = 0;
    for v in a {
        total = total.saturating_add(match v {
            Value::List(l) => l.len(),
            Value::Bytes(b) => b.len(),
            _ => 0,
        });
    }
    super::memory::spend(total.saturating_mul(std::mem::size_of::<Value>()))
        .map_err(|e| format!("concat: {e}"))?;
    let mut out = Vec::with_capacity(total);
    for v in a {
        out.extend(elems(v, |k| format!("Cannot concat type {k} as list"))?);
    }
    list_v(out)
}

fn chunk_impl(name: &str, a: &[Value]) -> R {
    arity(name, a, 2)?;
    let size = args::int(&a[0])?;
    let l = elems(&a[1], |k| format!("Cannot chunk type {k}"))?;
    if l.is_empty() {
        return list_v(Vec::new());
    }
    if size <= 0 {
        return Err("runtime error: makeslice: len out of range".into());
    }
    check_alloc(name, l.len())?;
    // The copies of the elements, and one list per chunk.
    let chunks = l.len().div_ceil(size as usize);
    super::args::list_fits(name, l.len())?;
    super::args::pieces_fit(name, chunks, 0)?;
    list_v(
        l.chunks(size as usize)
            .map(|c| Value::list(c.to_vec()))
            .collect(),
    )
}

pub fn chunk(_: &mut FuncEnv, a: &[Value]) -> R {
    chunk_impl("chunk", a)
}

pub fn must_chunk(_: &mut FuncEnv, a: &[Value]) -> R {
    chunk_impl("mustChunk", a)
}

fn compact_impl(name: &str, a: &[Value]) -> R {
    arity(name, a, 1)?;
    let l = elems(&a[0], |k| format!("Cannot compact on type {k}"))?;
    list_v(l.into_iter().filter(|x| !is_empty(x)).collect())
}

pub fn compact(_: &mut FuncEnv, a: &[Value]) -> R {
    compact_impl("compact", a)
}

pub fn must_compact(_: &mut FuncEnv, a: &[Value]) -> R {
    compact_impl("mustCompact", a)
}
