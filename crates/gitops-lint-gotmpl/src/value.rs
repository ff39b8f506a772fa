//! The data model of the template engine: Go's dynamic values as Helm charts see them.
//!
//! Shared contract between the executor (lexer/parser/exec) and the function library
//! (Go builtins, Sprig, Helm). Values are cheap to clone (`Rc`). Maps are shared and mutable,
//! as Go maps are reference types: `$_ := set $d "k" 1` must be visible through every other
//! reference to `$d` (charts rely on it). A render runs on one thread; each render builds its
//! own values, so `Value` need not be `Send`.
//!
//! Go kinds are kept apart where a chart can observe the difference: `Int` (Go `int`, e.g.
//! template literals, `len`, `atoi`) vs `Int64` (Go `int64`, e.g. `--set` numbers, `int64`)
//! only differ in `typeOf`/`%T`. Numbers from values files are not `Float`: Helm 3.18 reads
//! them as `json.Number` (an `Object` that prints as written, compares as a string and
//! converts for the numeric functions; see `render/helm`); `Float` is float64 from functions
//! such as `float64` and from JSON decoding.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// A Go map[string]interface{}: iteration in sorted key order, as `range` and `%v` do.
pub type Map = BTreeMap<String, Value>;

#[derive(Clone, Default)]
pub enum Value {
    /// Untyped nil (a missing map key under `missingkey=zero`, `nil` literal, `default`'s empty).
    #[default]
    Nil,
    Bool(bool),
    /// Go `int`.
    Int(i64),
    /// Go `int64`.
    Int64(i64),
    /// Go `uint64` (rare: only arithmetic overflow paths and `%x` on negative values).
    Uint(u64),
    /// Go `float64`.
    Float(f64),
    String(Rc<str>),
    /// Go `[]byte` (`.Files.GetBytes`, `b64dec` intermediates).
    Bytes(Rc<[u8]>),
    /// Go `[]interface{}` (also stands for `[]string`, `[]int`; `typeOf` reports `[]interface {}`).
    List(Rc<Vec<Value>>),
    /// Go `map[string]interface{}`.
    Map(Rc<RefCell<Map>>),
    /// Anything with fields and methods: `.Files`, `.Capabilities`, `.Release`, a semver
    /// version, a generated certificate, a `time.Time`.
    Object(Rc<dyn GoObject>),
}

/// A Go struct or pointer with fields and methods, reached through `.Field` / `.Method args`.
pub trait GoObject {
    /// Go type name for `typeOf` / `%T` (e.g. `*semver.Version`, `time.Time`).
    fn type_name(&self) -> &str;
    /// Field or zero-argument method value, `None` when the object has no such member.
    fn field(&self, name: &str) -> Option<Value>;
    /// Method call with arguments. `None` when there is no such method.
    fn call(&self, _name: &str, _args: &[Value]) -> Option<Result<Value, String>> {
        None
    }
    /// How `{{ . }}` / `%v` prints it (Go's fmt of the underlying struct or its String()).
    fn format(&self) -> String;
    /// `Some(text)` when the Go kind of the object is `string`, as for `json.Number`, which
    /// Helm 3 uses for numbers of a chart's values.yaml (a `0` there is true in `if`, and
    /// `1000000` prints as is). `eq`/`lt`/`len`/`index`/`slice` then treat it as that string.
    fn as_go_string(&self) -> Option<&str> {
        None
    }
    /// For a Go map type that also has methods (Helm's `.Files`): its entries, sorted by
    /// key, so `range` can iterate it. `None` for structs.
    fn map_entries(&self) -> Option<Vec<(String, Value)>> {
        None
    }
    /// Downcast support for functions that take a specific object (dates, semver).
    fn as_any(&self) -> &dyn std::any::Any;
}

impl Value {
    pub fn str(s: impl Into<Rc<str>>) -> Value {
        Value::String(s.into())
    }
    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Rc::new(v))
    }
    pub fn map(m: Map) -> Value {
        Value::Map(Rc::new(RefCell::new(m)))
    }

    /// Go's notion of "truth" used by `if`, `with`, `and`, `or`, `not`: the zero value of
    /// its kind is false.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Uint(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.borrow().is_empty(),
            // A Go map type with methods (`.Files`) is false when empty, like any map.
            Value::Object(o) => o.map_entries().is_none_or(|e| !e.is_empty()),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Go type name as `printf "%T"` and Sprig's `typeOf` print it.
    pub fn type_name(&self) -> &str {
        match self {
            Value::Nil => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint(_) => "uint64",
            Value::Float(_) => "float64",
            Value::String(_) => "string",
            Value::Bytes(_) => "[]uint8",
            Value::List(_) => "[]interface {}",
            Value::Map(_) => "map[string]interface {}",
            Value::Object(o) => o.type_name(),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.into())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s.into())
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => write!(f, "nil"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Int64(i) => write!(f, "{i}i64"),
            Value::Uint(u) => write!(f, "{u}u"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::String(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => write!(f, "bytes{b:?}"),
            Value::List(l) => f.debug_list().entries(l.iter()).finish(),
            Value::Map(m) => f.debug_map().entries(m.borrow().iter()).finish(),
            Value::Object(o) => write!(f, "<{}>", o.type_name()),
        }
    }
}
