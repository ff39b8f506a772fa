//! Go's predefined template functions (`text/template/funcs.go`), except `and`/`or`, which
//! the executor evaluates lazily. Arguments keep Go's distinction between a missing value
//! (invalid `reflect.Value`) and nil.

use super::printf::{self, go_quote};
use super::value::Value;

/// An evaluated argument: the value, and whether it is Go's "no value" (a missing key).
#[derive(Clone, Debug)]
pub struct Arg {
    pub value: Value,
    pub missing: bool,
}

pub const BUILTINS: &[&str] = &[
    "and", "or", "not", "len", "index", "slice", "print", "printf", "println", "eq", "ne", "lt",
    "le", "gt", "ge", "html", "js", "urlquery", "call",
];

/// Calls builtin `name`. `Err` holds the message Go wraps as `error calling NAME: …`,
/// or a `Fatal` message reported without that prefix (argument count and type errors).
pub fn call(name: &str, args: &[Arg]) -> Result<Value, CallError> {
    let normalized: Vec<Arg>;
    let args = if args
        .iter()
        .any(|a| string_kind_object(&a.value).is_some() || map_kind_object(&a.value).is_some())
        && matches!(
            name,
            "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "len" | "slice"
        ) {
        normalized = args.iter().map(as_string_kind).collect();
        &normalized[..]
    } else {
        args
    };
    match name {
        "not" => {
            let [a] = args else {
                return Err(arity(name, 1, args.len()));
            };
            Ok(Value::Bool(!a.value.truthy()))
        }
        "len" => {
            let [a] = args else {
                return Err(arity(name, 1, args.len()));
            };
            length(a).map_err(CallError::Call)
        }
        "index" => {
            let Some((item, idx)) = args.split_first() else {
                return Err(arity_at_least(name, 1, 0));
            };
            index(item, idx).map(|(v, _)| v).map_err(CallError::Call)
        }
        "slice" => {
            let Some((item, idx)) = args.split_first() else {
                return Err(arity_at_least(name, 1, 0));
            };
            slice(item, idx).map_err(CallError::Call)
        }
        "print" => Ok(Value::from(printf::sprint(&values(args)))),
        "println" => Ok(Value::from(printf::sprintln(&values(args)))),
        "printf" => {
            let Some((f, rest)) = args.split_first() else {
                return Err(arity_at_least(name, 1, 0));
            };
            let format = match &f.value {
                Value::String(s) => s.clone(),
                _ if f.missing => {
                    return Err(CallError::Fatal("invalid value; expected string".into()));
                }
                v => {
                    return Err(CallError::Fatal(format!(
                        "wrong type for value; expected string; got {}",
                        v.type_name()
                    )));
                }
            };
            Ok(Value::from(printf::sprintf(&format, &values(rest))))
        }
        "eq" => {
            let Some((a, rest)) = args.split_first() else {
                return Err(arity_at_least(name, 1, 0));
            };
            eq(a, rest).map(Value::Bool).map_err(CallError::Call)
        }
        "ne" | "lt" | "le" | "gt" | "ge" => {
            let [a, b] = args else {
                return Err(arity(name, 2, args.len()));
            };
            let r = match name {
                "ne" => eq(a, std::slice::from_ref(b)).map(|t| !t),
                "lt" => lt(a, b),
                "le" => lt(a, b).and_then(|t| Ok(t || eq(a, std::slice::from_ref(b))?)),
                "gt" => lt(a, b).and_then(|t| Ok(!t && !eq(a, std::slice::from_ref(b))?)),
                _ => lt(a, b).map(|t| !t),
            };
            r.map(Value::Bool).map_err(CallError::Call)
        }
        "html" => Ok(Value::from(html_escape(&eval_args(args)))),
        "js" => Ok(Value::from(js_escape(&eval_args(args)))),
        "urlquery" => Ok(Value::from(query_escape(&eval_args(args)))),
        "call" => {
            let Some(f) = args.first() else {
                return Err(arity_at_least(name, 1, 0));
            };
            if f.missing || matches!(f.value, Value::Nil) {
                return Err(CallError::Call("call of nil".into()));
            }
            Err(CallError::Call(format!(
                "non-function {} of type {}",
                printf::display(&f.value),
                f.value.type_name()
            )))
        }
        _ => Err(CallError::Fatal(format!(
            "{} is not a defined function",
            go_quote(name)
        ))),
    }
}

/// How a builtin failed.
#[derive(Debug, PartialEq)]
pub enum CallError {
    /// Reported as `error calling NAME: message`.
    Call(String),
    /// Reported as is.
    Fatal(String),
}

/// The string of an object whose Go kind is string (`json.Number`).
fn string_kind_object(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) => o.as_go_string(),
        _ => None,
    }
}

/// The entries of an object whose Go kind is map (Helm's `.Files`), as a map.
fn map_kind_object(v: &Value) -> Option<Value> {
    match v {
        Value::Object(o) => o.map_entries().map(|e| Value::map(e.into_iter().collect())),
        _ => None,
    }
}

/// An object of a basic Go kind (string, or map) as that plain value.
fn as_string_kind(a: &Arg) -> Arg {
    if let Some(s) = string_kind_object(&a.value) {
        return Arg {
            value: Value::from(s),
            missing: false,
        };
    }
    match map_kind_object(&a.value) {
        Some(m) => Arg {
            value: m,
            missing: false,
        },
        None => a.clone(),
    }
}

fn arity(name: &str, want: usize, got: usize) -> CallError {
    CallError::Fatal(format!(
        "wrong number of args for {name}: want {want} got {got}"
    ))
}

fn arity_at_least(name: &str, want: usize, got: usize) -> CallError {
    CallError::Fatal(format!(
        "wrong number of args for {name}: want at least {want} got {got}"
    ))
}

fn values(args: &[Arg]) -> Vec<Value> {
    args.iter().map(|a| a.value.clone()).collect()
}

fn is_nil(a: &Arg) -> bool {
    a.missing || matches!(a.value, Value::Nil)
}

fn length(a: &Arg) -> Result<Value, String> {
    Ok(Value::Int(match &a.value {
        _ if a.missing => return Err("len of untyped nil".into()),
        Value::Nil => return Err("len of nil pointer".into()),
        Value::String(s) => s.len() as i64,
        Value::Bytes(b) => b.len() as i64,
        Value::List(l) => l.len() as i64,
        Value::Map(m) => m.borrow().len() as i64,
        v => return Err(format!("len of type {}", v.type_name())),
    }))
}

fn index_arg(i: &Arg, len: usize, inclusive: bool) -> Result<usize, String> {
    let x: i128 = match &i.value {
        _ if is_nil(i) => return Err("cannot index slice/array with nil".into()),
        Value::Int(n) | Value::Int64(n) => *n as i128,
        Value::Uint(n) => *n as i128,
        v => {
            return Err(format!(
                "cannot index slice/array with type {}",
                v.type_name()
            ));
        }
    };
    let over = if inclusive {
        x > len as i128
    } else {
        x >= len as i128
    };
    if x < 0 || over {
        return Err(format!("index out of range: {x}"));
    }
    Ok(x as usize)
}

/// Go's `index`; also returns the keys walked (for provenance).
pub fn index(item: &Arg, indexes: &[Arg]) -> Result<(Value, Vec<String>), String> {
    if is_nil(item) {
        return Err("index of untyped nil".into());
    }
    let mut cur = item.value.clone();
    let mut keys = Vec::new();
    for i in indexes {
        let i = &as_string_kind(i);
        if let Some(s) = string_kind_object(&cur) {
            cur = Value::from(s);
        } else if let Some(m) = map_kind_object(&cur) {
            cur = m;
        }
        cur = match &cur {
            Value::Nil => return Err("index of nil pointer".into()),
            Value::List(l) => {
                let x = index_arg(i, l.len(), false)?;
                keys.push(x.to_string());
                l[x].clone()
            }
            Value::Bytes(b) => Value::Int(b[index_arg(i, b.len(), false)?] as i64),
            Value::String(s) => Value::Int(s.as_bytes()[index_arg(i, s.len(), false)?] as i64),
            Value::Map(m) => {
                let key = match &i.value {
                    Value::String(k) => k.clone(),
                    _ if is_nil(i) => return Err("value is nil; should be of type string".into()),
                    v => {
                        return Err(format!(
                            "value has type {}; should be string",
                            v.type_name()
                        ));
                    }
                };
                keys.push(key.to_string());
                m.borrow().get(&*key).cloned().unwrap_or(Value::Nil)
            }
            v => return Err(format!("can't index item of type {}", v.type_name())),
        };
    }
    Ok((cur, keys))
}

fn slice(item: &Arg, indexes: &[Arg]) -> Result<Value, String> {
    if is_nil(item) {
        return Err("slice of untyped nil".into());
    }
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    let len = match &item.value {
        Value::String(s) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            s.len()
        }
        Value::List(l) => l.len(),
        Value::Bytes(b) => b.len(),
        v => return Err(format!("can't slice item of type {}", v.type_name())),
    };
    let mut idx = [0, len, len];
    for (k, i) in indexes.iter().enumerate() {
        idx[k] = index_arg(i, len, true)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    let (a, b) = (idx[0], idx[1]);
    Ok(match &item.value {
        Value::String(s) => match s.get(a..b) {
            Some(sub) => Value::from(sub),
            None => Value::from(String::from_utf8_lossy(&s.as_bytes()[a..b]).into_owned()),
        },
        Value::List(l) => Value::list(l[a..b].to_vec()),
        Value::Bytes(bytes) => Value::Bytes(bytes[a..b].into()),
        _ => Value::Nil,
    })
}

/// Go's basic kinds for comparison; everything else (nil, containers, objects) is `Other`.
#[derive(PartialEq, Clone, Copy)]
enum Kind {
    Bool,
    Int,
    Uint,
    Float,
    String,
    Other,
}

fn kind(a: &Arg) -> Kind {
    match &a.value {
        _ if a.missing => Kind::Other,
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) | Value::Int64(_) => Kind::Int,
        Value::Uint(_) => Kind::Uint,
        Value::Float(_) => Kind::Float,
        Value::String(_) => Kind::String,
        _ => Kind::Other,
    }
}

fn int_of(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        _ => 0,
    }
}

fn uint_of(v: &Value) -> u64 {
    match v {
        Value::Uint(u) => *u,
        _ => 0,
    }
}

const BAD_COMPARISON: &str = "incompatible types for comparison";

fn eq(a: &Arg, others: &[Arg]) -> Result<bool, String> {
    if others.is_empty() {
        return Err("missing argument for comparison".into());
    }
    let k1 = kind(a);
    for b in others {
        let k2 = kind(b);
        let truth = if k1 != k2 {
            match (k1, k2) {
                (Kind::Int, Kind::Uint) => {
                    int_of(&a.value) >= 0 && int_of(&a.value) as u64 == uint_of(&b.value)
                }
                (Kind::Uint, Kind::Int) => {
                    int_of(&b.value) >= 0 && uint_of(&a.value) == int_of(&b.value) as u64
                }
                _ => {
                    if !is_nil(a) && !is_nil(b) {
                        return Err(BAD_COMPARISON.into());
                    }
                    false
                }
            }
        } else {
            match (&a.value, &b.value) {
                _ if is_nil(a) || is_nil(b) => is_nil(a) == is_nil(b),
                (Value::Bool(x), Value::Bool(y)) => x == y,
                (Value::Float(x), Value::Float(y)) => x == y,
                (Value::String(x), Value::String(y)) => x == y,
                (Value::Uint(x), Value::Uint(y)) => x == y,
                (x, y) if k1 == Kind::Int => int_of(x) == int_of(y),
                (Value::Object(x), Value::Object(y)) => std::rc::Rc::ptr_eq(x, y),
                (x, y) if std::mem::discriminant(x) == std::mem::discriminant(y) => {
                    return Err(format!(
                        "non-comparable type {}: {}",
                        printf::display(y),
                        y.type_name()
                    ));
                }
                (x, y) => {
                    return Err(format!(
                        "non-comparable types {}: {}, {}: {}",
                        printf::display(x),
                        x.type_name(),
                        y.type_name(),
                        printf::display(y)
                    ));
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

fn lt(a: &Arg, b: &Arg) -> Result<bool, String> {
    let (k1, k2) = (kind(a), kind(b));
    if k1 == Kind::Other || k2 == Kind::Other {
        return Err("invalid type for comparison".into());
    }
    if k1 != k2 {
        return match (k1, k2) {
            (Kind::Int, Kind::Uint) => {
                Ok(int_of(&a.value) < 0 || (int_of(&a.value) as u64) < uint_of(&b.value))
            }
            (Kind::Uint, Kind::Int) => {
                Ok(int_of(&b.value) >= 0 && uint_of(&a.value) < int_of(&b.value) as u64)
            }
            _ => Err(BAD_COMPARISON.into()),
        };
    }
    Ok(match (&a.value, &b.value) {
        (Value::Bool(_), _) => return Err("invalid type for comparison".into()),
        (Value::Float(x), Value::Float(y)) => x < y,
        (Value::String(x), Value::String(y)) => x < y,
        (Value::Uint(x), Value::Uint(y)) => x < y,
        (x, y) => int_of(x) < int_of(y),
    })
}

/// Go's `evalArgs` for html/js/urlquery: a lone string as is, otherwise `fmt.Sprint`, with
/// missing values printed as `<no value>`.
fn eval_args(args: &[Arg]) -> String {
    if let [
        Arg {
            value: Value::String(s),
            ..
        },
    ] = args
    {
        return s.to_string();
    }
    let vals: Vec<Value> = args
        .iter()
        .map(|a| {
            if is_nil(a) {
                Value::from("<no value>")
            } else {
                a.value.clone()
            }
        })
        .collect();
    printf::sprint(&vals)
}

/// Go's `template.HTMLEscapeString`.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
pub fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c if !c.is_ascii() && (c.is_control() || c == '\u{2028}' || c == '\u{2029}') => {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
