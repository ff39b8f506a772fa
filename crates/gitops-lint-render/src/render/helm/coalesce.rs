//! Helm's value coalescing (`pkg/chartutil/coalesce.go`): user values over chart defaults,
//! each subchart's values scoped under its name, `global` copied down, and `null` deleting a
//! key it overrides when coalescing (kept when merging, as import-values does).
//!
//! Written over shared maps on purpose: Helm mutates maps that several places refer to, and
//! the results depend on it.

use super::chart::Chart;
use super::values::{deep_copy, deep_copy_map, entries, get, is_table, remove, set};
use crate::render::gotmpl::value::{Map, Value};

pub const GLOBAL_KEY: &str = "global";

/// `CoalesceValues`: a copy of `vals` with the chart's defaults (and its subcharts') filled in.
pub fn coalesce_values(chart: &Chart, vals: &Map) -> Result<Value, String> {
    let dest = Value::map(deep_copy_map(vals));
    coalesce(chart, &dest, false)?;
    Ok(dest)
}

/// `MergeValues`: as [`coalesce_values`] but `null`s are kept.
pub fn merge_values(chart: &Chart, vals: &Map) -> Result<Value, String> {
    let dest = Value::map(deep_copy_map(vals));
    coalesce(chart, &dest, true)?;
    Ok(dest)
}

fn coalesce(chart: &Chart, dest: &Value, merge: bool) -> Result<(), String> {
    coalesce_chart_values(chart, dest, merge);
    coalesce_deps(chart, dest, merge)
}

fn coalesce_deps(chart: &Chart, dest: &Value, merge: bool) -> Result<(), String> {
    for sub in &chart.dependencies {
        let name = sub.name();
        match get(dest, name) {
            None => set(dest, name, Value::map(Map::new())),
            Some(v) if !is_table(&v) => {
                return Err(format!(
                    "type mismatch on {name}: %!t({}={})",
                    v.type_name(),
                    go_plain(&v)
                ));
            }
            Some(_) => {}
        }
        if let Some(dv) = get(dest, name) {
            coalesce_globals(&dv, dest);
            coalesce(sub, &dv, merge)?;
        }
    }
    Ok(())
}

fn go_plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Float(f) => format!("{f}"),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) | Value::Int64(i) => i.to_string(),
        other => format!("{other:?}"),
    }
}

/// Copy `src.global` into `dest.global` (dest's own globals win inside tables).
fn coalesce_globals(dest: &Value, src: &Value) {
    let dg = match get(dest, GLOBAL_KEY) {
        None => Value::map(Map::new()),
        Some(v) if is_table(&v) => v,
        Some(_) => return,
    };
    let sg = match get(src, GLOBAL_KEY) {
        None => Value::map(Map::new()),
        Some(v) if is_table(&v) => v,
        Some(_) => return,
    };
    for (key, val) in entries(&sg) {
        if is_table(&val) {
            // A shallow copy, as Helm's copyMap.
            let vv = Value::map(entries(&val).into_iter().collect());
            match get(&dg, &key) {
                None => set(&dg, &key, vv),
                Some(destv) if is_table(&destv) => {
                    coalesce_tables(&vv, &destv, true);
                    set(&dg, &key, vv);
                }
                Some(_) => {}
            }
        } else if get(&dg, &key).is_some_and(|dv| is_table(&dv)) {
            // a table is not replaced by a scalar
        } else {
            set(&dg, &key, val);
        }
    }
    set(dest, GLOBAL_KEY, dg);
}

/// The chart's own defaults under the values in `v` (v wins).
fn coalesce_chart_values(chart: &Chart, v: &Value, merge: bool) {
    let defaults = Value::map(deep_copy_map(&chart.values.map));
    for (key, val) in entries(&defaults) {
        match get(v, &key) {
            Some(Value::Nil) if !merge => remove(v, &key),
            Some(dest @ Value::Map(_)) => {
                if is_table(&val) {
                    let merge = merge || chart.dependencies.iter().any(|d| d.name() == key);
                    coalesce_tables(&dest, &val, merge);
                }
            }
            Some(_) => {}
            None => set(v, &key, val),
        }
    }
}

/// `coalesceTablesFullKey`: fill `dst` from `src`; dst is authoritative. A `null` in dst
/// deletes the key only where src has it (it overrides a default); a `null` for a key src
/// lacks stays, so `hasKey` is true and `toYaml` prints it (helm 3.18; 3.19.5 and later
/// delete that one too).
pub fn coalesce_tables(dst: &Value, src: &Value, merge: bool) -> Value {
    if !is_table(src) {
        return dst.clone();
    }
    if !is_table(dst) {
        return src.clone();
    }
    for (key, val) in entries(src) {
        match get(dst, &key) {
            Some(Value::Nil) if !merge => remove(dst, &key),
            None => set(dst, &key, val),
            Some(dv) => {
                if is_table(&val) && is_table(&dv) {
                    coalesce_tables(&dv, &val, merge);
                }
            }
        }
    }
    dst.clone()
}

/// Remove `null`s recursively (Helm's `trimNilValues`, used by import-values).
pub fn trim_nil_values(v: &Value) -> Value {
    let copy = deep_copy(v);
    fn walk(v: &Value) {
        for (k, val) in entries(v) {
            match val {
                Value::Nil => remove(v, &k),
                Value::Map(_) => walk(&val),
                _ => {}
            }
        }
    }
    walk(&copy);
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::helm::values::{JsonNumber, parse_values_text};

    fn num(v: Option<Value>) -> Option<f64> {
        v.as_ref().and_then(JsonNumber::of).map(|n| n.value)
    }

    fn map(text: &str) -> Value {
        Value::map(parse_values_text(text, None).unwrap_or_default().map)
    }

    #[test]
    fn user_values_win_and_null_deletes() {
        let dst = map("a: 1\nb: null\nc: {x: 1}\n");
        let src = map("a: 2\nb: 3\nc: {x: 2, z: 3}\nd: 4\n");
        coalesce_tables(&dst, &src, false);
        assert_eq!(num(get(&dst, "a")), Some(1.0));
        assert!(get(&dst, "b").is_none());
        assert!(get(&dst, "d").is_some());
        let c = get(&dst, "c").unwrap_or_default();
        assert_eq!(num(get(&c, "z")), Some(3.0));
    }

    #[test]
    fn null_without_a_default_stays() {
        let dst = map("res:\n  limits: {cpu: null}\n  requests: null\n");
        let src = map("res:\n  limits: {cpu: 1, memory: 2}\n");
        coalesce_tables(&dst, &src, false);
        let res = get(&dst, "res").unwrap_or_default();
        assert!(matches!(get(&res, "requests"), Some(Value::Nil)));
        let limits = get(&res, "limits").unwrap_or_default();
        assert!(get(&limits, "cpu").is_none());
        assert_eq!(num(get(&limits, "memory")), Some(2.0));
    }

    #[test]
    fn merge_keeps_null() {
        let dst = map("b: null\n");
        let src = map("b: 3\n");
        coalesce_tables(&dst, &src, true);
        assert!(matches!(get(&dst, "b"), Some(Value::Nil)));
    }
}
