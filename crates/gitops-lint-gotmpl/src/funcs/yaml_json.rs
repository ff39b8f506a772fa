//! Helm's toYaml/fromYaml/toJson/fromJson family and Sprig's JSON variants.
//!
//! Helm's `toYaml` is sigs.k8s.io/yaml.Marshal: Go value → json.Marshal → goyaml.v2 parse
//! of that JSON → goyaml.v2 emit, then one trailing newline trimmed. The JSON step is why
//! a float64 1000000 prints as `1000000` here but as `1e+06` through `{{ . }}`.

use super::super::value::{Map, Value};
use super::FuncEnv;
use super::args::{self, arity};
use super::gofmt::format_float_g;
use super::json::{self, json_float, json_kind};
use gitops_lint_base::yaml as y;
use gitops_lint_base::yaml::emit::{Flavor, YNode, emit_within, sort_keys};

type R = Result<Value, String>;

/// Value → the node goyaml.v2 gets after the JSON round trip.
fn to_ynode_v2(v: &Value, depth: usize) -> Result<YNode, String> {
    if depth > super::args::MAX_DEPTH {
        return Err("json: unsupported value: encountered a cycle".into());
    }
    super::memory::spend(node_bytes(v))?;
    Ok(match v {
        Value::Nil => YNode::Null,
        Value::Bool(b) => YNode::Bool(*b),
        Value::Int(i) | Value::Int64(i) => YNode::Number(i.to_string()),
        Value::Uint(u) => YNode::Number(u.to_string()),
        Value::Float(f) => {
            let t = json_float(*f)?;
            if !t.contains(['.', 'e']) && (t.parse::<i64>().is_ok() || t.parse::<u64>().is_ok()) {
                YNode::Number(t)
            } else {
                YNode::Number(format_float_g(t.parse::<f64>().unwrap_or(*f)))
            }
        }
        Value::String(s) => YNode::Str(s.to_string()),
        Value::Bytes(b) => YNode::Str(super::encoding::base64_encode(b)),
        Value::Object(_) => {
            // Through json.Marshal, like every other value.
            let text = json::encode(v, false, None)?;
            match json::parse(&text) {
                Ok(Value::String(s)) => YNode::Str(s.to_string()),
                Ok(other @ (Value::Map(_) | Value::List(_))) => to_ynode_v2(&other, depth + 1)?,
                _ => YNode::Str(text),
            }
        }
        Value::List(l) => YNode::Seq(
            l.iter()
                .map(|x| to_ynode_v2(x, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(m) => {
            let mut entries = m
                .borrow()
                .iter()
                .map(|(k, x)| Ok((k.clone(), to_ynode_v2(x, depth + 1)?)))
                .collect::<Result<Vec<_>, String>>()?;
            sort_keys(&mut entries, Flavor::V2);
            YNode::Map(entries)
        }
    })
}

/// Value → goyaml.v3's view (no JSON step: floats keep Go's 'g' format).
fn to_ynode_v3(v: &Value, depth: usize) -> Result<YNode, String> {
    if depth > super::args::MAX_DEPTH {
        return Err("encountered a cycle".into());
    }
    if let Value::Float(_) | Value::List(_) | Value::Map(_) = v {
        // Other kinds are converted (and counted) by to_ynode_v2.
        super::memory::spend(node_bytes(v))?;
    }
    Ok(match v {
        Value::Float(f) => YNode::Number(match format_float_g(*f).as_str() {
            "+Inf" => ".inf".into(),
            "-Inf" => "-.inf".into(),
            "NaN" => ".nan".into(),
            s => s.to_string(),
        }),
        Value::List(l) => YNode::Seq(
            l.iter()
                .map(|x| to_ynode_v3(x, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(m) => {
            let mut entries = m
                .borrow()
                .iter()
                .map(|(k, x)| Ok((k.clone(), to_ynode_v3(x, depth + 1)?)))
                .collect::<Result<Vec<_>, String>>()?;
            sort_keys(&mut entries, Flavor::V3);
            YNode::Map(entries)
        }
        other => to_ynode_v2(other, depth)?,
    })
}

/// What converting one value to a `YNode` allocates: the node, a copied string, the keys of
/// a map. Shared structure converts once per reference, so this is charged per visit.
fn node_bytes(v: &Value) -> usize {
    let own = match v {
        Value::String(s) => s.len(),
        Value::Bytes(b) => b.len() * 4 / 3,
        Value::List(l) => l.len() * std::mem::size_of::<YNode>(),
        Value::Map(m) => m
            .try_borrow()
            .map(|m| {
                m.keys()
                    .map(|k| k.len() + std::mem::size_of::<(String, YNode)>())
                    .sum()
            })
            .unwrap_or(0),
        _ => 0,
    };
    own + std::mem::size_of::<YNode>()
}

/// sigs.k8s.io/yaml.Marshal without Helm's trim.
pub fn marshal_yaml(v: &Value) -> Result<String, String> {
    Ok(emit_within(
        &to_ynode_v2(v, 0)?,
        Flavor::V2,
        &super::memory::fits,
    ))
}

pub fn to_yaml(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("toYaml", a, 1)?;
    let out = marshal_yaml(&a[0]).unwrap_or_default();
    Ok(Value::from(out.strip_suffix('\n').unwrap_or(&out)))
}

pub fn must_to_yaml(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustToYaml", a, 1)?;
    let out = marshal_yaml(&a[0])?;
    Ok(Value::from(out.strip_suffix('\n').unwrap_or(&out)))
}

pub fn to_yaml_pretty(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("toYamlPretty", a, 1)?;
    let out = to_ynode_v3(&a[0], 0)
        .map(|n| emit_within(&n, Flavor::V3, &super::memory::fits))
        .unwrap_or_default();
    Ok(Value::from(out.strip_suffix('\n').unwrap_or(&out)))
}

/// YAML node → the value json.Unmarshal gives after sigs.k8s.io/yaml's YAML→JSON step:
/// every number is a float64.
fn node_to_value(n: &y::Node) -> Value {
    match &n.value {
        y::Value::Null => Value::Nil,
        y::Value::Bool(b) => Value::Bool(*b),
        y::Value::Int(i) => Value::Float(*i as f64),
        y::Value::Float(f) => Value::Float(*f),
        y::Value::String(s) => Value::from(s.as_str()),
        y::Value::Seq(items) => Value::list(items.iter().map(node_to_value).collect()),
        y::Value::Map(entries) => {
            let mut m = Map::new();
            for e in entries {
                m.insert(e.key.key_str().into_owned(), node_to_value(&e.value));
            }
            Value::map(m)
        }
    }
}

/// sigs.k8s.io/yaml.Unmarshal's YAML → JSON value step (first document only).
fn parse_yaml(text: &str) -> Result<Value, String> {
    let parsed = y::parse_str(
        text,
        gitops_lint_base::source::FileId(0),
        &y::Limits::default(),
    );
    if let Some(doc) = parsed.docs.first() {
        return Ok(node_to_value(&doc.root));
    }
    if let Some(e) = parsed.error {
        let line = text[..(e.span.start as usize).min(text.len())]
            .matches('\n')
            .count()
            + 1;
        return Err(format!(
            "error converting YAML to JSON: yaml: line {line}: {}",
            libyaml_problem(&e.message)
        ));
    }
    Ok(Value::Nil)
}

/// go-yaml prints only libyaml's "problem", not its "while parsing ..." context.
fn libyaml_problem(msg: &str) -> String {
    let problem = match msg.split_once(", ") {
        Some((ctx, rest)) if ctx.starts_with("while ") => rest,
        _ => msg,
    };
    match problem {
        "expected ',' or ']'" => "did not find expected ',' or ']'".into(),
        "expected ',' or '}'" => "did not find expected ',' or '}'".into(),
        other => other.to_string(),
    }
}

fn type_err(got: &Value, want: &str) -> String {
    format!(
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type {want}",
        json_kind(got)
    )
}

pub fn from_yaml(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("fromYaml", a, 1)?;
    let s = args::string(&a[0])?;
    Ok(match parse_yaml(&s) {
        Ok(v @ Value::Map(_)) => v,
        Ok(Value::Nil) => Value::map(Map::new()),
        Ok(other) => error_map(type_err(&other, "map[string]interface {}")),
        Err(e) => error_map(e),
    })
}

pub fn from_yaml_array(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("fromYamlArray", a, 1)?;
    let s = args::string(&a[0])?;
    Ok(match parse_yaml(&s) {
        Ok(v @ Value::List(_)) => v,
        Ok(Value::Nil) => Value::list(Vec::new()),
        Ok(other) => Value::list(vec![Value::from(type_err(&other, "[]interface {}"))]),
        Err(e) => Value::list(vec![Value::from(e)]),
    })
}

fn error_map(msg: String) -> Value {
    let mut m = Map::new();
    m.insert("Error".into(), Value::from(msg));
    Value::map(m)
}

pub fn to_json(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("toJson", a, 1)?;
    Ok(Value::from(
        json::encode(&a[0], true, None).unwrap_or_default(),
    ))
}

pub fn must_to_json(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustToJson", a, 1)?;
    Ok(Value::from(json::encode(&a[0], true, None)?))
}

pub fn to_pretty_json(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("toPrettyJson", a, 1)?;
    Ok(Value::from(
        json::encode(&a[0], true, Some("  ")).unwrap_or_default(),
    ))
}

pub fn must_to_pretty_json(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustToPrettyJson", a, 1)?;
    Ok(Value::from(json::encode(&a[0], true, Some("  "))?))
}

pub fn to_raw_json(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("toRawJson", a, 1)?;
    Ok(Value::from(
        json::encode(&a[0], false, None).unwrap_or_default(),
    ))
}

pub fn must_to_raw_json(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustToRawJson", a, 1)?;
    Ok(Value::from(json::encode(&a[0], false, None)?))
}

/// Helm's fromJson: into a map; errors land under the "Error" key.
pub fn from_json(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("fromJson", a, 1)?;
    let s = args::string(&a[0])?;
    Ok(match json::parse(&s) {
        Ok(v @ Value::Map(_)) => v,
        Ok(Value::Nil) => Value::map(Map::new()),
        Ok(other) => error_map(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_kind(&other)
        )),
        Err(e) => error_map(e),
    })
}

pub fn from_json_array(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("fromJsonArray", a, 1)?;
    let s = args::string(&a[0])?;
    Ok(match json::parse(&s) {
        Ok(v @ Value::List(_)) => v,
        Ok(Value::Nil) => Value::list(Vec::new()),
        Ok(other) => Value::list(vec![Value::from(format!(
            "json: cannot unmarshal {} into Go value of type []interface {{}}",
            json_kind(&other)
        ))]),
        Err(e) => Value::list(vec![Value::from(e)]),
    })
}

/// Sprig's mustFromJson (Helm keeps it): any JSON value, errors returned.
pub fn must_from_json(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustFromJson", a, 1)?;
    json::parse(&args::string(&a[0])?)
}
