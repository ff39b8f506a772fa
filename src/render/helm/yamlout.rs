//! Bridge to the function library for what the chart layer needs from it: `toYaml` (for
//! `.Files.AsConfig`/`AsSecrets`) and the function resolver handed to the engine.

use crate::render::gotmpl::funcs::{Func, FuncEnv};
use crate::render::gotmpl::value::Value;

/// `toYAML` as Helm's engine has it (sigs.k8s.io/yaml, trailing newline trimmed).
pub fn to_yaml(v: &Value) -> String {
    let out = minimal_yaml(v, 0);
    out.strip_suffix('\n').unwrap_or(&out).to_string()
}

/// The template functions (Sprig + Helm) the engine resolves by name.
pub fn lookup_func(_name: &str) -> Option<Func> {
    None
}

/// The clock and random source of a render: the current time (as `helm template` has it)
/// and a fixed seed, so random output is repeatable between runs.
pub fn func_env() -> FuncEnv {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    FuncEnv {
        seed: 0,
        now_unix_nanos: now,
        utc_offset_secs: 0,
    }
}

/// Stand-in until the function library's emitter is merged: maps of strings only.
fn minimal_yaml(v: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    match v {
        Value::Map(m) => {
            let m = m.borrow();
            if m.is_empty() {
                return "{}\n".into();
            }
            let mut out = String::new();
            for (k, v) in m.iter() {
                let s = v.as_str().unwrap_or_default();
                if s.contains('\n') {
                    let chomp = if s.ends_with('\n') { "" } else { "-" };
                    out.push_str(&format!("{pad}{k}: |{chomp}\n"));
                    for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                        if line.is_empty() {
                            out.push('\n');
                        } else {
                            out.push_str(&format!("{pad}  {line}\n"));
                        }
                    }
                } else if s.is_empty() {
                    out.push_str(&format!("{pad}{k}: \"\"\n"));
                } else {
                    out.push_str(&format!("{pad}{k}: {s}\n"));
                }
            }
            out
        }
        _ => "null\n".into(),
    }
}
