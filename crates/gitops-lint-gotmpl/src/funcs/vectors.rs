//! Runs Sprig v3.3.0's own test cases (shared corpus `helm/sprig-vectors.json`) and Helm's
//! pkg/engine funcs table (`helm/helm-testdata/engine-funcs-vectors.json`) through the
//! engine with this function library, twice:
//! - as the Go tests ran them (typed data from `vars_typed`: time.Time, int64, []int,
//!   struct fixtures), against `expected`;
//! - as helm 3.18 rendered them (data as chart values, i.e. float64 numbers, and
//!   `missingkey=zero`), against the oracle's output.
//!
//! The corpus is found through `GITOPS_LINT_CORPUS` or `<manifest dir>/../shared/corpus`;
//! without it the test prints why and passes. Not applicable: cases that depend on the
//! real clock or Go's PRNG (`nondeterministic`), on `env`/`expandenv` (not in Helm), on a
//! typed nil pointer, or that have no oracle output (helm failed). The file
//! `testdata/sprig_known_differences.tsv` lists the remaining cases known to differ, each
//! with a reason: the test fails when a listed case starts passing or an unlisted one fails.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

use serde_json::Value as Json;

use super::super::template::{ExecOptions, Templates};
use super::super::value::{Map, Value};
use super::{FuncEnv, lookup};

fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("GITOPS_LINT_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    dir.join("helm/sprig-vectors.json").exists().then_some(dir)
}

/// JSON test data → template data (JSON integers are Go `int` literals in the Go tests).
fn to_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(a) => Value::list(a.iter().map(to_value).collect()),
        Json::Object(o) => {
            let mut m = Map::new();
            for (k, v) in o {
                m.insert(k.clone(), to_value(v));
            }
            Value::map(m)
        }
    }
}

/// Values as Helm loads them from YAML: every number is a float64.
fn to_helm_value(j: &Json) -> Value {
    match j {
        Json::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
        Json::Array(a) => Value::list(a.iter().map(to_helm_value).collect()),
        Json::Object(o) => {
            let mut m = Map::new();
            for (k, v) in o {
                m.insert(k.clone(), to_helm_value(v));
            }
            Value::map(m)
        }
        other => to_value(other),
    }
}

/// A Go struct or pointer of the Sprig tests (typeOf/kindOf fixtures).
struct Fixture {
    type_name: String,
    fields: Map,
}

impl super::super::value::GoObject for Fixture {
    fn type_name(&self) -> &str {
        &self.type_name
    }
    fn field(&self, name: &str) -> Option<Value> {
        self.fields.get(name).cloned()
    }
    fn format(&self) -> String {
        format!("{:?}", self.fields)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `vars_typed` → data keeping the Go types JSON loses; `None` when our value model cannot
/// express it (a typed nil pointer).
fn to_typed_value(j: &Json) -> Option<Value> {
    let Some(ty) = j.get("$type").and_then(Json::as_str) else {
        return match j {
            Json::Object(o) => {
                let mut m = Map::new();
                for (k, v) in o {
                    m.insert(k.clone(), to_typed_value(v)?);
                }
                Some(Value::map(m))
            }
            other => Some(to_value(other)),
        };
    };
    let value = j.get("value").unwrap_or(&Json::Null);
    match ty {
        "time.Time" => {
            let t = super::gofmt_time::parse(
                "2006-01-02T15:04:05.999999999Z07:00",
                value.as_str()?,
                0,
                "UTC",
            )
            .ok()?;
            Some(Value::Object(Rc::new(t)))
        }
        "*time.Time" => to_typed_value(value),
        "int64" => Some(Value::Int64(value.as_i64()?)),
        // Go's int32 has no variant of its own; the date functions treat it like int.
        "int32" => Some(Value::Int(value.as_i64()?)),
        "[]int" => Some(Value::list(
            value
                .as_array()?
                .iter()
                .map(|x| Value::Int(x.as_i64().unwrap_or(0)))
                .collect(),
        )),
        t if value.is_null() && j.get("fields").is_none() => {
            let _ = t;
            None
        }
        t => {
            let mut fields = Map::new();
            let src = j.get("fields").or_else(|| value.get("fields"));
            if let Some(Json::Object(o)) = src {
                for (k, v) in o {
                    fields.insert(k.clone(), to_value(v));
                }
            }
            Some(Value::Object(Rc::new(Fixture {
                type_name: t.to_string(),
                fields,
            })))
        }
    }
}

/// The Sprig tests' fixed instant (2019-06-13T20:39:39Z).
const SPRIG_NOW: i128 = 1_560_458_379_000_000_000;
/// When the oracle rendered the vectors (its `now` shows in clock-dependent outputs).
const ORACLE_NOW: i128 = 1_796_046_270_000_000_000;

fn render(template: &str, data: Value, opts: &ExecOptions, now: i128) -> Result<String, String> {
    let mut set = Templates::new(Rc::new(lookup));
    set.parse("t", template).map_err(|e| e.to_string())?;
    let mut env = FuncEnv::new(1, now, 0);
    set.execute("t", data, opts, &mut env)
        .map(|o| o.text)
        .map_err(|e| e.to_string())
}

fn known_differences() -> BTreeMap<String, String> {
    include_str!("testdata/sprig_known_differences.tsv")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(id, why)| (id.trim().to_string(), why.trim().to_string()))
        .collect()
}

fn load(dir: &std::path::Path, rel: &str) -> Vec<Json> {
    let raw = std::fs::read_to_string(dir.join(rel)).unwrap_or_default();
    let doc: Json = serde_json::from_str(&raw).unwrap_or(Json::Null);
    doc.get("vectors")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default()
}

#[test]
fn sprig_and_helm_vectors() {
    let Some(dir) = corpus_dir() else {
        println!("sprig vectors: skipped, corpus not found (set GITOPS_LINT_CORPUS)");
        return;
    };
    let known = known_differences();
    let mut problems = Vec::new();
    for (prefix, rel) in [
        ("sprig", "helm/sprig-vectors.json"),
        ("helm", "helm/helm-testdata/engine-funcs-vectors.json"),
    ] {
        let (mut pass, mut applicable, mut na) = (0, 0, 0);
        for v in load(&dir, rel) {
            let id = format!(
                "{prefix}-{}",
                v.get("id").and_then(Json::as_i64).unwrap_or(-1)
            );
            let typed = v.get("vars_typed").map(to_typed_value);
            // Typed data we can express runs; a typed nil pointer cannot. Nested Go map
            // types (`vars_go_type`) are all map[string]interface{} here.
            let go_typed = match &typed {
                Some(t) => t.is_none(),
                None => v
                    .get("needs_go_values")
                    .and_then(Json::as_bool)
                    .unwrap_or(false),
            };
            let nondet = v
                .get("nondeterministic")
                .and_then(Json::as_bool)
                .unwrap_or(false);
            let uses_env = v.get("env").is_some_and(|e| !e.is_null());
            if go_typed || nondet || uses_env {
                na += 1;
                continue;
            }
            applicable += 1;
            let template = v.get("template").and_then(Json::as_str).unwrap_or("");
            let expected = v.get("expected").and_then(Json::as_str).unwrap_or("");
            let data = match typed {
                Some(Some(d)) => d,
                _ => to_value(v.get("vars").unwrap_or(&Json::Null)),
            };
            let got = render(template, data, &ExecOptions::default(), SPRIG_NOW);
            let ok = got.as_deref() == Ok(expected);
            if ok {
                pass += 1;
            }
            match (ok, known.contains_key(&id)) {
                (true, true) => {
                    problems.push(format!("{id}: listed as a known difference but passes"))
                }
                (false, false) => problems.push(format!(
                    "{id}: {template:?}\n   want {expected:?}\n   got  {got:?}"
                )),
                _ => {}
            }
        }
        println!("{prefix} vectors: {pass}/{applicable} ({na} not applicable)");

        // The same cases as helm 3.18 rendered them: vars are chart values (numbers are
        // float64), `missingkey=zero`, and the oracle's own output is the expectation.
        let (mut pass, mut applicable, mut na) = (0, 0, 0);
        for v in load(&dir, rel) {
            let id = format!(
                "{prefix}-helm-{}",
                v.get("id").and_then(Json::as_i64).unwrap_or(-1)
            );
            let nondet = v
                .get("nondeterministic")
                .and_then(Json::as_bool)
                .unwrap_or(false);
            let Some(expected) = v.pointer("/helm_v3_18_0/output").and_then(Json::as_str) else {
                na += 1;
                continue;
            };
            if nondet {
                na += 1;
                continue;
            }
            applicable += 1;
            let template = v.get("template").and_then(Json::as_str).unwrap_or("");
            let data = to_helm_value(v.get("vars").unwrap_or(&Json::Null));
            // The oracle captured `include`'s result, before Helm deletes "<no value>".
            let opts = ExecOptions {
                remove_no_value: false,
                ..ExecOptions::helm()
            };
            let got = render(template, data, &opts, ORACLE_NOW);
            let ok = got.as_deref() == Ok(expected);
            if ok {
                pass += 1;
            }
            match (ok, known.contains_key(&id)) {
                (true, true) => {
                    problems.push(format!("{id}: listed as a known difference but passes"))
                }
                (false, false) => problems.push(format!(
                    "{id}: {template:?}\n   want {expected:?}\n   got  {got:?}"
                )),
                _ => {}
            }
        }
        println!(
            "{prefix} vectors as helm 3.18 renders them: {pass}/{applicable} ({na} not applicable)"
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
