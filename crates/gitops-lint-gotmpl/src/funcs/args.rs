//! Argument checking as Go's reflect-based call does it before running a template function.
//!
//! Go checks arity and converts every argument to the parameter's static type; failures are
//! reported without the `error calling NAME:` prefix, so they carry [`UNWRAPPED`].

use std::cell::RefCell;
use std::rc::Rc;

use super::super::value::{Map, Value};

/// Marks an error text that Go raises before the call (not wrapped in `error calling`).
pub const UNWRAPPED: char = '\u{1}';

/// Upper bound for anything a template can make us allocate element by element (repeat,
/// until, seq, rand*, indent): Go would happily allocate gigabytes; a linter must not.
pub const MAX_ALLOC: usize = 10_000_000;

/// Nesting limit of the recursive walks (JSON/YAML encoding, JSON parsing, deepCopy, merge),
/// the same depth the YAML parser allows. Go's json.Marshal reports a cycle only past depth
/// 1000 and its decoder allows 10000, but recursing that deep could exhaust a render
/// thread's stack here; real chart data is far shallower.
pub const MAX_DEPTH: usize = 256;

pub fn unwrapped(msg: impl AsRef<str>) -> String {
    format!("{UNWRAPPED}{}", msg.as_ref())
}

/// Exactly `n` arguments.
pub fn arity(name: &str, args: &[Value], n: usize) -> Result<(), String> {
    if args.len() != n {
        return Err(unwrapped(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        )));
    }
    Ok(())
}

/// At least `n` arguments (variadic functions).
pub fn arity_min(name: &str, args: &[Value], n: usize) -> Result<(), String> {
    if args.len() < n {
        return Err(unwrapped(format!(
            "wrong number of args for {name}: want at least {n} got {}",
            args.len()
        )));
    }
    Ok(())
}

fn wrong_type(expected: &str, v: &Value) -> String {
    if matches!(v, Value::Nil) {
        return unwrapped(format!("invalid value; expected {expected}"));
    }
    unwrapped(format!(
        "wrong type for value; expected {expected}; got {}",
        v.type_name()
    ))
}

/// A Go `string` parameter.
pub fn string(v: &Value) -> Result<Rc<str>, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        _ => Err(wrong_type("string", v)),
    }
}

/// A Go `int` parameter (a template literal is an `int`; int64 and float64 values are not
/// assignable, as in Go).
pub fn int(v: &Value) -> Result<i64, String> {
    match v {
        Value::Int(i) => Ok(*i),
        _ => Err(wrong_type("int", v)),
    }
}

/// A Go `float64` parameter (an untyped template constant converts; values must be float64).
pub fn float(v: &Value) -> Result<f64, String> {
    match v {
        Value::Float(f) => Ok(*f),
        Value::Int(i) => Ok(*i as f64),
        _ => Err(wrong_type("float64", v)),
    }
}

/// A Go `bool` parameter.
pub fn boolean(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(wrong_type("bool", v)),
    }
}

/// A Go `map[string]interface{}` parameter. `nil` converts to a nil map (reads see nothing).
pub fn map(v: &Value) -> Result<Option<Rc<RefCell<Map>>>, String> {
    match v {
        Value::Map(m) => Ok(Some(m.clone())),
        Value::Nil => Ok(None),
        _ => Err(wrong_type("map[string]interface {}", v)),
    }
}

/// Checks that a requested size stays under [`MAX_ALLOC`].
pub fn check_alloc(name: &str, n: usize) -> Result<(), String> {
    if n > MAX_ALLOC {
        return Err(format!(
            "{name}: result of {n} elements exceeds the limit of {MAX_ALLOC}"
        ));
    }
    if !super::memory::fits(n) {
        return Err(format!(
            "{name}: a result of {n} elements exceeds the render's memory budget"
        ));
    }
    Ok(())
}

/// What one string costs in a list or map a function builds, besides its text: the slot or
/// entry, and the string's own allocation.
const PIECE_BYTES: usize = super::memory::ENTRY_BYTES + 32;

/// Before a function builds `count` strings of `bytes` text in all (`splitList`, `regexSplit`,
/// `regexFindAll`): do they fit the element cap and the call's room? Counted before any is
/// built, since a 32 MB string split into characters is 2 GB of small strings.
pub fn pieces_fit(name: &str, count: usize, bytes: usize) -> Result<(), String> {
    if count > MAX_ALLOC {
        return Err(format!(
            "{name}: result of {count} elements exceeds the limit of {}",
            MAX_ALLOC
        ));
    }
    super::memory::spend(count.saturating_mul(PIECE_BYTES).saturating_add(bytes))
        .map_err(|e| format!("{name}: {e}"))
}

/// Before a function builds a list of `count` elements (`until`, `seq`, `chunk`): the
/// element cap and the call's room for the slots (a count of ten million is 320 MB).
pub fn list_fits(name: &str, count: usize) -> Result<(), String> {
    if count > MAX_ALLOC {
        return Err(format!(
            "{name}: result of {count} elements exceeds the limit of {}",
            MAX_ALLOC
        ));
    }
    super::memory::spend(
        count
            .saturating_mul(super::memory::SLOT_BYTES)
            .saturating_add(super::memory::LIST_BYTES),
    )
    .map_err(|e| format!("{name}: {e}"))
}
