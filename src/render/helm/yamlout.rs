//! Bridge to the function library for what the chart layer needs from it: `toYaml` (for
//! `.Files.AsConfig`/`AsSecrets`) and the function resolver handed to the engine.

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

/// The template functions (Sprig + Helm) the engine resolves by name.
pub fn lookup_func(name: &str) -> Option<Func> {
    crate::render::gotmpl::funcs::lookup(name)
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
