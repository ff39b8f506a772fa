//! Bridge to the function library for what the chart layer needs from it: `toYaml` (for
//! `.Files.AsConfig`/`AsSecrets`) and the function resolver handed to the engine.

use super::values::JsonNumber;
use crate::render::gotmpl::funcs::{Func, FuncEnv};
use crate::render::gotmpl::value::Value;

/// `toYAML` as Helm's engine has it (sigs.k8s.io/yaml, trailing newline trimmed): the
/// library's `toYaml`.
pub fn to_yaml(v: &Value) -> String {
    let Some(f) = lookup_func("toYaml") else {
        return String::new();
    };
    match f(&mut func_env(), std::slice::from_ref(v)) {
        Ok(Value::String(s)) => s.to_string(),
        _ => String::new(),
    }
}

/// The template functions (Sprig + Helm) the engine resolves by name. Functions that Go
/// would feed a `json.Number` through `cast` (numbers) or `json.Marshal` (serialisers)
/// get values-file numbers converted first; everything else sees the `json.Number`.
pub fn lookup_func(name: &str) -> Option<Func> {
    wrapped(name).or_else(|| crate::render::gotmpl::funcs::lookup(name))
}

#[derive(Clone, Copy)]
enum Conv {
    /// Top-level `json.Number` arguments become float64 (cast.ToFloat64/ToInt64 parse them).
    Number,
    /// Every `json.Number` inside the arguments becomes float64 (json.Marshal writes numbers).
    DeepNumber,
    /// Top-level `json.Number` arguments become strings (reflect sees a string kind).
    Text,
    /// Every `json.Number` inside becomes a string (goyaml.v3 quotes it: `toYamlPretty`).
    DeepText,
}

/// Containers already converted in one call, by address: a map that holds another map twice
/// converts it once and shares the copy, so the copy is no larger than the input (a copy per
/// reference doubles per level of a `dict "l" $d "r" $d` chain).
type Converted = std::collections::HashMap<usize, Value>;

fn convert(v: &Value, conv: Conv, depth: usize, seen: &mut Converted) -> Value {
    if let Some(n) = JsonNumber::of(v) {
        return match conv {
            Conv::Number => Value::Float(n.value),
            // Serialisers write the number as its text; an integer stays an integer
            // (`toToml` distinguishes `13` from `13.0`).
            Conv::DeepNumber => n
                .text
                .parse::<i64>()
                .map(Value::Int64)
                .unwrap_or(Value::Float(n.value)),
            Conv::Text | Conv::DeepText => Value::str(n.text.as_str()),
        };
    }
    let deep = matches!(conv, Conv::DeepNumber | Conv::DeepText);
    if !deep || depth > 200 {
        return v.clone();
    }
    // Helm's built-in structs marshal through their JSON field names.
    if let Some(plain) = super::builtins::as_json_value(v) {
        return convert(&plain, conv, depth + 1, seen);
    }
    let addr = match v {
        Value::Map(m) => std::rc::Rc::as_ptr(m) as *const u8 as usize,
        Value::List(l) => std::rc::Rc::as_ptr(l) as *const u8 as usize,
        other => return other.clone(),
    };
    if let Some(done) = seen.get(&addr) {
        return done.clone();
    }
    let out = match v {
        Value::Map(m) => Value::map(
            m.borrow()
                .iter()
                .map(|(k, e)| (k.clone(), convert(e, conv, depth + 1, seen)))
                .collect(),
        ),
        Value::List(l) => Value::list(
            l.iter()
                .map(|e| convert(e, conv, depth + 1, seen))
                .collect(),
        ),
        other => other.clone(),
    };
    seen.insert(addr, out.clone());
    out
}

fn call(name: &str, env: &mut FuncEnv, args: &[Value], conv: Conv) -> Result<Value, String> {
    let f = crate::render::gotmpl::funcs::lookup(name)
        .ok_or_else(|| format!("function {name:?} not defined"))?;
    let mut seen = Converted::new();
    let converted: Vec<Value> = args
        .iter()
        .map(|a| convert(a, conv, 0, &mut seen))
        .collect();
    f(env, &converted)
}

macro_rules! wrappers {
    ($($fname:ident => $name:literal, $conv:ident;)*) => {
        $(
            fn $fname(env: &mut FuncEnv, a: &[Value]) -> Result<Value, String> {
                call($name, env, a, Conv::$conv)
            }
        )*
        fn wrapped(name: &str) -> Option<Func> {
            match name {
                $($name => Some($fname as Func),)*
                _ => None,
            }
        }
    };
}

wrappers! {
    w_int => "int", Number;
    w_int64 => "int64", Number;
    w_float64 => "float64", Number;
    w_add => "add", Number;
    w_add1 => "add1", Number;
    w_sub => "sub", Number;
    w_mul => "mul", Number;
    w_div => "div", Number;
    w_mod => "mod", Number;
    w_max => "max", Number;
    w_min => "min", Number;
    w_biggest => "biggest", Number;
    w_addf => "addf", Number;
    w_add1f => "add1f", Number;
    w_subf => "subf", Number;
    w_mulf => "mulf", Number;
    w_divf => "divf", Number;
    w_maxf => "maxf", Number;
    w_minf => "minf", Number;
    w_round => "round", Number;
    w_ceil => "ceil", Number;
    w_floor => "floor", Number;
    w_to_yaml => "toYaml", DeepNumber;
    w_must_to_yaml => "mustToYaml", DeepNumber;
    w_to_json => "toJson", DeepNumber;
    w_must_to_json => "mustToJson", DeepNumber;
    w_to_pretty_json => "toPrettyJson", DeepNumber;
    w_must_to_pretty_json => "mustToPrettyJson", DeepNumber;
    w_to_raw_json => "toRawJson", DeepNumber;
    w_must_to_raw_json => "mustToRawJson", DeepNumber;
    w_to_toml => "toToml", DeepNumber;
    w_to_yaml_pretty => "toYamlPretty", DeepText;
    w_kind_of => "kindOf", Text;
    w_kind_is => "kindIs", Text;
}

/// The clock and random source of a render: the current time (as `helm template` has it)
/// and a fixed seed, so random output is repeatable between runs.
pub fn func_env() -> FuncEnv {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    FuncEnv::new(0, now, 0)
}
