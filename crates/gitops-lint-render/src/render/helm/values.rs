//! Values as Helm holds them: YAML read through JSON (numbers become `float64`, keys become
//! strings), as engine [`Value`]s whose maps are shared like Go maps; plus the small
//! helpers Helm's `chartutil.Values` offers (deep copy, `Table`, `PathValue`).

use super::chart::ChartFile;
use crate::render::gotmpl::value::{Map, Value};
use crate::source::{FileId, Span};
use crate::yaml::{Node, Value as Y};

/// A values file: the merged map plus the parsed documents (for provenance).
#[derive(Clone, Debug, Default)]
pub struct ValuesDoc {
    pub map: Map,
    /// Shared: charts are cloned while dependencies are processed, trees are not.
    pub roots: std::sync::Arc<Vec<Node>>,
    pub file: Option<FileId>,
}

/// A YAML syntax error worded as go-yaml v2 words it inside Helm's messages
/// (`yaml: line N: problem`): parser errors count lines from 0, scanner errors from 1.
pub fn go_yaml_error(err: &crate::yaml::YamlError, text: &str) -> String {
    let upto = (err.span.start as usize).min(text.len());
    let line1 = text[..upto].matches('\n').count() + 1;
    let msg = err.message.as_str();
    let (parser, problem) = match msg.split_once(", ") {
        Some((ctx, p)) if ctx.starts_with("while parsing") => (true, p),
        Some((ctx, p)) if ctx.starts_with("while scanning") => (false, p),
        _ => (false, msg),
    };
    let (problem, line) = match problem {
        // libyaml reports a dangling simple key at the end of the stream one line on.
        "simple key expected" => ("could not find expected ':'", line1 + 1),
        p if parser => (p, line1.saturating_sub(1)),
        p => (p, line1),
    };
    if line == 0 {
        format!("yaml: {problem}")
    } else {
        format!("yaml: line {line}: {problem}")
    }
}

/// A number of a values file as Helm 3.18.0 holds it: Go's `json.Number`, a *string* type
/// holding the JSON text. So `0` is true in `if`, `kindIs "string"` holds, and `1000000`
/// prints as written; Sprig's numeric functions parse it (see `yamlout`).
#[derive(Clone, Debug)]
pub struct JsonNumber {
    pub text: String,
    pub value: f64,
}

impl JsonNumber {
    pub fn value(text: String, value: f64) -> Value {
        Value::Object(std::rc::Rc::new(JsonNumber { text, value }))
    }

    /// The JSON number inside a value, if it is one.
    pub fn of(v: &Value) -> Option<&JsonNumber> {
        match v {
            Value::Object(o) => o.as_any().downcast_ref::<JsonNumber>(),
            _ => None,
        }
    }
}

impl crate::render::gotmpl::value::GoObject for JsonNumber {
    fn type_name(&self) -> &str {
        "json.Number"
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        if !args.is_empty() {
            return None;
        }
        match name {
            "String" => Some(Ok(Value::str(self.text.as_str()))),
            "Float64" => Some(Ok(Value::Float(self.value))),
            "Int64" => {
                Some(self.text.parse::<i64>().map(Value::Int64).map_err(|_| {
                    format!("strconv.ParseInt: parsing {:?}: invalid syntax", self.text)
                }))
            }
            _ => None,
        }
    }
    fn format(&self) -> String {
        self.text.clone()
    }
    fn as_go_string(&self) -> Option<&str> {
        Some(&self.text)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Go's `encoding/json` text of a float64 (`strconv` 'f' format, or 'e' for very large or
/// small magnitudes), as the YAML → JSON step writes it.
pub fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        // Rust `1e21` → Go `1e+21`; Rust `1.5e-7` → Go `1.5e-07`.
        match s.split_once('e') {
            Some((m, e)) => {
                let (sign, digits) = match e.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', e),
                };
                format!("{m}e{sign}{digits:0>2}")
            }
            None => s,
        }
    } else {
        format!("{f}")
    }
}

/// YAML → JSON → Go: what Helm 3.18.0's values loader yields (numbers as `json.Number`).
pub fn node_to_value(node: &Node) -> Value {
    match &node.value {
        Y::Null => Value::Nil,
        Y::Bool(b) => Value::Bool(*b),
        Y::Int(i) => JsonNumber::value(i.to_string(), *i as f64),
        Y::Float(f) if f.is_finite() => JsonNumber::value(go_json_float(*f), *f),
        Y::Float(f) => Value::Float(*f),
        Y::String(s) => Value::str(s.as_str()),
        Y::Seq(items) => Value::list(items.iter().map(node_to_value).collect()),
        Y::Map(entries) => {
            let mut m = Map::new();
            for e in entries {
                m.insert(e.key.key_str().into_owned(), node_to_value(&e.value));
            }
            Value::map(m)
        }
    }
}

/// Parse a values text (possibly several documents, merged in order as Helm's
/// `LoadValues` does).
pub fn parse_values_text(text: &str, file: Option<FileId>) -> Result<ValuesDoc, String> {
    let parsed = super::parse_cache::parse_values(text, file.unwrap_or_default());
    if let Some(err) = &parsed.error {
        return Err(format!(
            "error converting YAML to JSON: {}",
            go_yaml_error(err, text)
        ));
    }
    let mut doc = ValuesDoc {
        file,
        roots: parsed.map_roots.clone(),
        ..ValuesDoc::default()
    };
    for root in &parsed.docs {
        match node_to_value(root) {
            Value::Nil => {}
            Value::Map(m) => {
                let m = m.borrow().clone();
                doc.map = merge_maps(&doc.map, &m);
            }
            other => {
                return Err(format!(
                    "error unmarshaling JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    json_kind(&other)
                ));
            }
        }
    }
    Ok(doc)
}

pub fn load_values(f: &ChartFile) -> Result<ValuesDoc, String> {
    parse_values_text(&f.text(), f.file)
}

pub(super) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "bool",
        Value::Float(_) | Value::Int(_) | Value::Int64(_) | Value::Uint(_) => "number",
        Value::List(_) => "array",
        _ => "string",
    }
}

/// `values.mergeMaps` of the CLI (`-f` files over each other): maps merge recursively,
/// anything else replaces.
pub fn merge_maps(a: &Map, b: &Map) -> Map {
    let mut out = a.clone();
    for (k, v) in b {
        if let Value::Map(bm) = v
            && let Some(Value::Map(am)) = out.get(k)
        {
            let merged = merge_maps(&am.borrow(), &bm.borrow());
            out.insert(k.clone(), Value::map(merged));
            continue;
        }
        out.insert(k.clone(), v.clone());
    }
    out
}

/// A fresh copy of every nested map and list (Go's `copystructure.Copy`).
pub fn deep_copy(v: &Value) -> Value {
    match v {
        Value::Map(m) => Value::map(deep_copy_map(&m.borrow())),
        Value::List(l) => Value::list(l.iter().map(deep_copy).collect()),
        other => other.clone(),
    }
}

pub fn deep_copy_map(m: &Map) -> Map {
    m.iter().map(|(k, v)| (k.clone(), deep_copy(v))).collect()
}

/// A snapshot of a map's entries, so that callers can mutate maps while "iterating"
/// (Go allows it; `RefCell` does not allow overlapping borrows).
pub fn entries(v: &Value) -> Vec<(String, Value)> {
    match v {
        Value::Map(m) => m
            .borrow()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

pub fn get(v: &Value, key: &str) -> Option<Value> {
    match v {
        Value::Map(m) => m.borrow().get(key).cloned(),
        _ => None,
    }
}

pub fn set(v: &Value, key: &str, val: Value) {
    if let Value::Map(m) = v {
        m.borrow_mut().insert(key.to_string(), val);
    }
}

pub fn remove(v: &Value, key: &str) {
    if let Value::Map(m) = v {
        m.borrow_mut().remove(key);
    }
}

pub fn is_table(v: &Value) -> bool {
    matches!(v, Value::Map(_))
}

/// `Values.Table("a.b")`: the map at a dotted path, or an error when a step is missing or
/// not a map.
pub fn table(root: &Value, path: &str) -> Option<Value> {
    let mut cur = root.clone();
    for part in path.split('.') {
        if part.is_empty() {
            continue;
        }
        let next = get(&cur, part)?;
        if !is_table(&next) {
            return None;
        }
        cur = next;
    }
    Some(cur)
}

/// `Values.PathValue("a.b.c")`: the non-table value at a path (`None`: no value).
pub fn path_value(root: &Value, path: &str) -> Option<Value> {
    let path = path.trim_start_matches('.');
    let (parent, key) = match path.rsplit_once('.') {
        Some((p, k)) => (Some(p), k),
        None => (None, path),
    };
    let t = match parent {
        Some(p) => table(root, p)?,
        None => root.clone(),
    };
    match get(&t, key)? {
        v @ Value::Map(_) => {
            let _ = v;
            None
        }
        v => Some(v),
    }
}

/// Build `{a: {b: data}}` from `a.b` (`.` means the data itself).
pub fn path_to_map(path: &str, data: Value) -> Value {
    if path == "." {
        return data;
    }
    let mut out = data;
    for part in path.split('.').rev() {
        if part.is_empty() {
            continue;
        }
        let mut m = Map::new();
        m.insert(part.to_string(), out);
        out = Value::map(m);
    }
    out
}

/// Where each values path was last set (lowest precedence first, later wins): the
/// provenance of `.Values.x` in rendered output.
#[derive(Default, Debug)]
pub struct ValueOrigins {
    spans: crate::hash::FastMap<String, (Span, String)>,
}

impl ValueOrigins {
    /// Record every path of `root` under `scope` (`sub.` for a subchart's own values).
    pub fn add(&mut self, scope: &[String], root: &Node, label: &str) {
        let prefix = scope.join(".");
        root.walk(|path, node| {
            if path.is_empty() {
                return;
            }
            let mut key = prefix.clone();
            for seg in path {
                if !key.is_empty() {
                    key.push('.');
                }
                match seg {
                    crate::yaml::PathSeg::Key(k) => key.push_str(k),
                    crate::yaml::PathSeg::Index(i) => key.push_str(&i.to_string()),
                }
            }
            self.spans
                .insert(key, (written_at(node), label.to_string()));
        });
    }

    /// Record one dotted path (`a.b.0`) as set by `span`.
    pub fn set_path(&mut self, path: &str, span: Span, label: &str) {
        self.spans
            .insert(path.to_string(), (span, label.to_string()));
    }

    /// Add another index's entries over these (they take precedence).
    pub fn extend(&mut self, other: &ValueOrigins) {
        for (k, v) in &other.spans {
            self.spans.insert(k.clone(), v.clone());
        }
    }

    /// The span and label for a dotted values path (a subchart's `global.x` falls back to
    /// the parent's `global.x`).
    pub fn lookup(&self, path: &str) -> Option<&(Span, String)> {
        if let Some(hit) = self.spans.get(path) {
            return Some(hit);
        }
        let parts: Vec<&str> = path.split('.').collect();
        let g = parts.iter().position(|p| *p == "global")?;
        self.spans.get(&parts[g..].join("."))
    }
}

/// Where a values node was written: a node a chart rendered (an Application's
/// `valuesObject` templated by an app-of-apps chart) points at the template action that
/// printed it, and carries the values line that action printed as a related `value from`
/// label: that line is where a person changes the value.
pub fn written_at(node: &Node) -> Span {
    node.related
        .as_deref()
        .and_then(|r| r.iter().rev().find(|r| r.label.starts_with("value from ")))
        .map_or(node.span, |r| r.span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_float64_and_keys_strings() {
        let doc = parse_values_text("a: 1\nb: {c: true}\n1: x\nc: 1.5\n", None).unwrap_or_default();
        let a = doc
            .map
            .get("a")
            .and_then(|v| JsonNumber::of(v).map(|n| n.text.clone()));
        assert_eq!(a.as_deref(), Some("1"));
        let c = doc
            .map
            .get("c")
            .and_then(|v| JsonNumber::of(v).map(|n| n.value));
        assert_eq!(c, Some(1.5));
        assert_eq!(go_json_float(1e21), "1e+21");
        assert_eq!(go_json_float(1000000.0), "1000000");
        assert!(doc.map.contains_key("1"));
        assert!(matches!(
            path_value(&Value::map(doc.map.clone()), "b.c"),
            Some(Value::Bool(true))
        ));
    }

    #[test]
    fn multi_documents_merge() {
        let doc = parse_values_text("a: {x: 1}\n---\na: {y: 2}\n", None).unwrap_or_default();
        let a = doc.map.get("a").cloned().unwrap_or_default();
        assert_eq!(entries(&a).len(), 2);
    }
}
