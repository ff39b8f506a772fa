//! Runs Go's own text/template test tables (from the shared corpus) against this engine.
//!
//! The corpus is found through `GITOPS_LINT_CORPUS` (the `corpus` directory) or at
//! `<manifest dir>/../shared/corpus`; without it the test prints why and passes.
//! `testdata/known_differences.tsv` lists cases that are not applicable to the `Value`
//! data model (`n/a`) or known to differ (`diff`); the test fails when a listed `diff` case
//! starts passing or an unlisted case fails.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::rc::Rc;

use serde_json::Value as Json;

use super::funcs::{Func, FuncEnv};
use super::literal::parse_number;
use super::template::{ExecOptions, Templates};
use super::value::{GoObject, Map, Value};

fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("GITOPS_LINT_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    dir.join("helm/text-template-vectors.json")
        .exists()
        .then_some(dir)
}

/// A Go struct or pointer of the test data, with the fields it has and how fmt prints it.
struct TestObject {
    type_name: &'static str,
    fields: BTreeMap<&'static str, Value>,
    printed: String,
}

impl GoObject for TestObject {
    fn type_name(&self) -> &str {
        self.type_name
    }
    fn field(&self, name: &str) -> Option<Value> {
        self.fields.get(name).cloned()
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        // The methods of `*T` and `*U` (exec_test.go), over plain data.
        let is_t = self.type_name == "*template.T";
        Some(Ok(match (name, args) {
            ("Method0", []) if is_t => Value::from("M0"),
            ("Method1", [Value::Int(a)]) if is_t => Value::Int(*a),
            ("Method2", [a @ (Value::Int(_) | Value::Uint(_)), Value::String(b)]) if is_t => {
                Value::from(format!("Method2: {} {b}", super::printf::display(a)))
            }
            ("Method3", [v]) if is_t => {
                Value::from(format!("Method3: {}", super::printf::display(v)))
            }
            ("MAdd", [Value::Int(a), Value::List(b)]) if is_t => {
                let sum: Result<Vec<Value>, String> = b
                    .iter()
                    .map(|x| int_arg(x).map(|x| Value::Int(x + a)))
                    .collect();
                return Some(sum.map(Value::list));
            }
            ("MyError", [Value::Bool(fail)]) if is_t => {
                return Some(if *fail {
                    Err("my error".into())
                } else {
                    Ok(Value::Bool(false))
                });
            }
            ("GetU", []) if is_t => self.fields.get("U").cloned().unwrap_or_default(),
            ("Copy", []) if is_t => Value::Object(Rc::new(TestObject {
                type_name: self.type_name,
                fields: self.fields.clone(),
                printed: self.printed.clone(),
            })),
            ("TrueFalse", [Value::Bool(b)]) if self.type_name == "*template.U" => {
                Value::from(if *b { "true" } else { "" })
            }
            _ => return None,
        }))
    }
    fn format(&self) -> String {
        self.printed.clone()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn object(type_name: &'static str, fields: &[(&'static str, Value)], printed: &str) -> Value {
    Value::Object(Rc::new(TestObject {
        type_name,
        fields: fields.iter().cloned().collect(),
        printed: printed.to_string(),
    }))
}

fn json_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(a) => Value::list(a.iter().map(json_value).collect()),
        Json::Object(o) => Value::map(
            o.iter()
                .map(|(k, v)| (k.clone(), json_value(v)))
                .collect::<Map>(),
        ),
    }
}

/// The Go test value `tVal` (a `*T`), as far as plain data can express it.
fn t_val(def: &Json) -> Value {
    let fields = &def["fields"];
    let u = object("*template.U", &[("V", Value::from("v"))], "{v}");
    let mut f: Vec<(&'static str, Value)> = vec![
        ("True", Value::Bool(true)),
        ("I", Value::Int(17)),
        ("U16", Value::Uint(16)),
        ("X", Value::from("x")),
        ("S", Value::from("xyz")),
        ("FloatZero", Value::Float(0.0)),
        // complex128(0): only its truth is observed by the applicable cases.
        ("ComplexZero", Value::Float(0.0)),
        ("U", u),
        ("SI", json_value(&fields["SI"])),
        ("SICap", json_value(&fields["SICap"]["value"])),
        ("SIEmpty", Value::list(vec![])),
        ("SB", json_value(&fields["SB"])),
        ("AI", json_value(&fields["AI"]["value"])),
        ("MSI", json_value(&fields["MSI"])),
        ("MSIone", json_value(&fields["MSIone"])),
        ("MSIEmpty", Value::map(Map::new())),
        ("MXI", json_value(&fields["MXI"]["value"])),
        ("SMSI", json_value(&fields["SMSI"])),
        ("Empty0", Value::Nil),
        ("Empty1", Value::Int(3)),
        ("Empty2", Value::from("empty2")),
        ("Empty3", json_value(&fields["Empty3"])),
        (
            "Empty4",
            object(
                "*template.U",
                &[("V", Value::from("UinEmpty"))],
                "{UinEmpty}",
            ),
        ),
        ("PI", Value::Int(23)),
        ("PS", Value::from("a string")),
        ("PSI", json_value(&fields["PSI"]["value"])),
        ("NIL", object("*int", &[], "<nil>")),
    ];
    f.push(("MII", object("map[int]int", &[], "map[1:1]")));
    // Values printed through their String()/Error() methods.
    for (name, printed) in [
        ("V0", "<6666>"),
        ("V1", "<7777>"),
        ("V2", "nilV"),
        ("W0", "[888]"),
        ("W1", "[999]"),
        ("W2", "nilW"),
        ("Str", "foozle"),
        ("Err", "erroozle"),
    ] {
        f.push((name, object("*template.V", &[], printed)));
    }
    // An interface I holding &T{X: "x"}, and a pointer to I holding S{"a", "b"}.
    f.push((
        "NonEmptyInterface",
        object("*template.T", &[("X", Value::from("x"))], "&{...}"),
    ));
    f.push((
        "NonEmptyInterfacePtS",
        Value::list(vec![Value::from("a"), Value::from("b")]),
    ));
    object("*template.T", &f, "&{...}")
}

fn cmp_struct() -> Value {
    let mut m = Map::new();
    m.insert("Uthree".into(), Value::Uint(3));
    m.insert("Ufour".into(), Value::Uint(4));
    m.insert("NegOne".into(), Value::Int(-1));
    m.insert("Three".into(), Value::Int(3));
    m.insert("Ptr".into(), object("*int", &[], "0"));
    m.insert("NilPtr".into(), Value::Nil);
    m.insert("Iface1".into(), object("*strings.Builder", &[], ""));
    m.insert("NilIface".into(), Value::Nil);
    m.insert("Map".into(), Value::Nil);
    m.insert("NonNilMap".into(), Value::map(Map::new()));
    Value::map(m)
}

fn int_arg(v: &Value) -> Result<i64, String> {
    match v {
        Value::Int(i) | Value::Int64(i) => Ok(*i),
        v => Err(format!(
            "wrong type for value; expected int; got {}",
            v.type_name()
        )),
    }
}

fn str_arg(v: &Value) -> Result<&str, String> {
    match v {
        Value::String(s) => Ok(s),
        v => Err(format!(
            "wrong type for value; expected string; got {}",
            v.type_name()
        )),
    }
}

/// The FuncMap the Go exec tests install.
fn test_funcs(name: &str) -> Option<Func> {
    Some(match name {
        "add" => |_, a| {
            a.iter()
                .map(int_arg)
                .sum::<Result<i64, _>>()
                .map(Value::Int)
        },
        "dddArg" => |_, a| {
            let (n, rest) = a.split_first().ok_or("missing")?;
            let strs: Result<Vec<&str>, _> = rest.iter().map(str_arg).collect();
            Ok(Value::from(format!(
                "{} [{}]\n",
                int_arg(n)?,
                strs?.join(" ")
            )))
        },
        "die" => |_, _| Err("die".to_string()),
        "echo" => |_, a| Ok(a.first().cloned().unwrap_or_default()),
        "makemap" => |_, a| {
            let mut m = Map::new();
            for kv in a.chunks(2) {
                if let [k, v] = kv {
                    m.insert(str_arg(k)?.to_string(), v.clone());
                }
            }
            Ok(Value::map(m))
        },
        "mapOfThree" => |_, _| {
            let mut m = Map::new();
            m.insert("three".into(), Value::Int(3));
            Ok(Value::map(m))
        },
        "oneArg" => |_, a| match a {
            [s] => Ok(Value::from(format!("oneArg={}", str_arg(s)?))),
            _ => Err("wrong number of args for oneArg".into()),
        },
        "returnInt" => |_, _| Ok(Value::Int(7)),
        "twoArgs" => |_, a| match a {
            [x, y] => Ok(Value::from(format!(
                "twoArgs={}{}",
                str_arg(x)?,
                str_arg(y)?
            ))),
            _ => Err("wrong number of args for twoArgs".into()),
        },
        "typeOf" => |_, a| {
            Ok(Value::from(
                a.first().map(Value::type_name).unwrap_or("<nil>"),
            ))
        },
        "valueString" => |_, a| match a {
            [s] => str_arg(s).map(|_| Value::from("value is ignored")),
            _ => Err("wrong number of args for valueString".into()),
        },
        "zeroArgs" => |_, _| Ok(Value::from("zeroArgs")),
        "vfunc" => |_, _| Ok(Value::from("vfunc")),
        "contains" => |_, a| match a {
            [s, sub] => Ok(Value::Bool(str_arg(s)?.contains(str_arg(sub)?))),
            _ => Err("wrong number of args".into()),
        },
        _ => return None,
    })
}

fn env() -> FuncEnv {
    FuncEnv::new(1, 0, 0)
}

fn render(name: &str, input: &str, data: Value) -> Result<String, String> {
    let mut set = Templates::new(Rc::new(test_funcs));
    set.parse(name, input).map_err(|e| e.to_string())?;
    set.execute(name, data, &ExecOptions::default(), &mut env())
        .map(|o| o.text)
        .map_err(|e| e.to_string())
}

/// The `n/a` and `diff` entries of the checked-in list.
/// (suite, id) of a vector.
type CaseKey = (String, String);

fn listed() -> (BTreeSet<CaseKey>, BTreeSet<CaseKey>) {
    let text = include_str!("testdata/known_differences.tsv");
    let mut na = BTreeSet::new();
    let mut diff = BTreeSet::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(
            cols.len() >= 4 && !cols[3].trim().is_empty(),
            "bad line (want kind, suite, id, reason): {line}"
        );
        let key = (cols[1].to_string(), cols[2].to_string());
        match cols[0] {
            "n/a" => na.insert(key),
            "diff" => diff.insert(key),
            k => panic!("unknown kind {k}"),
        };
    }
    (na, diff)
}

/// A stable id for a vector: its name and its input, with tabs and newlines escaped.
fn id(name: &str, input: &str) -> String {
    format!("{name} :: {}", input.escape_default())
}

#[test]
fn go_text_template_vectors() {
    let Some(dir) = corpus_dir() else {
        println!("text/template vectors: skipped, corpus not found (set GITOPS_LINT_CORPUS)");
        return;
    };
    let raw =
        std::fs::read_to_string(dir.join("helm/text-template-vectors.json")).unwrap_or_default();
    let doc: Json = serde_json::from_str(&raw).unwrap_or(Json::Null);
    let (na, diff) = listed();
    let tval = t_val(&doc["data_definitions"]["tVal"]);

    // (suite, id, passed, detail)
    let mut results: Vec<(String, String, bool, String)> = Vec::new();
    let mut needs_go = 0;
    let (mut errors_same, mut errors_total) = (0, 0);

    for t in doc["exec_tests"].as_array().into_iter().flatten() {
        let name = t["name"].as_str().unwrap_or("");
        let input = t["input"].as_str().unwrap_or("");
        // Cases needing only T's and U's methods, Stringers and interface fields run against
        // `TestObject`s; func values, iterators and typed nils cannot be expressed.
        const MODELLED: &[&str] = &[
            "method .",
            "String()/Error() method",
            "non-empty interface field",
            "pointer to interface field",
            "unexported struct field",
        ];
        let modelled = t["go_method_reasons"].as_array().is_some_and(|r| {
            r.iter().all(|x| {
                x.as_str()
                    .is_some_and(|x| MODELLED.iter().any(|m| x.starts_with(m)))
            })
        });
        if t["needs_go_methods"].as_bool() == Some(true) && !modelled {
            needs_go += 1;
            continue;
        }
        let data = match &t["data"] {
            Json::Null => Value::Nil,
            d if d.get("ref").and_then(Json::as_str) == Some("tVal") => tval.clone(),
            d => match (d["go_type"].as_str(), d.get("json")) {
                (Some("uint64"), Some(j)) => Value::Uint(j.as_u64().unwrap_or(0)),
                (Some("int64"), Some(j)) => Value::Int64(j.as_i64().unwrap_or(0)),
                (Some(ty), Some(j)) if ty.starts_with("uint") => {
                    Value::Uint(j.as_u64().unwrap_or(0))
                }
                (_, Some(j)) => json_value(j),
                _ => Value::Nil,
            },
        };
        let got = render(name, input, data);
        let ok = t["ok"].as_bool() == Some(true);
        if let (Err(msg), Some(go)) = (
            &got,
            t.get("go_exec_error")
                .or(t.get("go_parse_error"))
                .and_then(Json::as_str),
        ) {
            errors_total += 1;
            if msg == go {
                errors_same += 1;
            } else if std::env::var_os("GOTMPL_SHOW_ERRORS").is_some() {
                println!("ERROR TEXT {name}: ours {msg:?}\n                 go   {go:?}");
            }
        }
        let want = t["output"].as_str().unwrap_or("");
        let passed = match (&got, ok) {
            (Ok(out), true) => out == want,
            (Err(_), false) => true,
            _ => false,
        };
        results.push((
            "exec".into(),
            id(name, input),
            passed,
            format!("got {got:?}, want {}", if ok { want } else { "an error" }),
        ));
    }

    for t in doc["cmp_tests"]["cases"].as_array().into_iter().flatten() {
        let expr = t["expr"].as_str().unwrap_or("");
        let template = t["template"].as_str().unwrap_or("");
        let got = render("cmp", template, cmp_struct());
        let passed = match (&got, t["ok"].as_bool() == Some(true)) {
            (Ok(out), true) => out == t["truth"].as_str().unwrap_or(""),
            (Err(_), false) => true,
            _ => false,
        };
        results.push(("cmp".into(), id(expr, ""), passed, format!("got {got:?}")));
    }

    for (i, pair) in doc["delim_pairs"]
        .as_array()
        .map(|a| a.chunks(2).collect::<Vec<_>>())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let (l, r) = (
            pair[0].as_str().unwrap_or(""),
            pair.get(1).and_then(Json::as_str).unwrap_or(""),
        );
        let (tl, tr) = (
            if l.is_empty() { "{{" } else { l },
            if r.is_empty() { "}}" } else { r },
        );
        let text = format!("{tl}.Str{tr}{tl}/*comment*/{tr}{tl}\"{tl}\"{tr}");
        let mut set = Templates::new(Rc::new(test_funcs));
        set.delims(l, r);
        let mut m = Map::new();
        m.insert("Str".into(), Value::from("Hello, world"));
        let got = set
            .parse("delims", &text)
            .map_err(|e| e.to_string())
            .and_then(|_| {
                set.execute("delims", Value::map(m), &ExecOptions::default(), &mut env())
                    .map_err(|e| e.to_string())
            });
        let passed = got
            .as_ref()
            .map(|o| o.text == format!("Hello, world{tl}"))
            .unwrap_or(false);
        results.push((
            "delims".into(),
            id(&format!("pair {i}"), &text),
            passed,
            format!("got {got:?}"),
        ));
    }

    for t in doc["parse_tests"]["cases"].as_array().into_iter().flatten() {
        let name = t["name"].as_str().unwrap_or("");
        let input = t["input"].as_str().unwrap_or("");
        let funcs = |n: &str| n == "printf" || n == "contains";
        let got = super::parse::parse(name, input, "", "", &funcs).map(|trees| {
            let mut s = String::new();
            if let Some(main) = trees.iter().find(|t| t.name == name) {
                super::ast::write_list(&mut s, &main.root, true);
            }
            s
        });
        let passed = match (&got, t["ok"].as_bool() == Some(true)) {
            (Ok(s), true) => s == t["result"].as_str().unwrap_or(""),
            (Err(_), false) => true,
            _ => false,
        };
        results.push((
            "parse".into(),
            id(name, input),
            passed,
            format!("got {got:?}, want {}", t["result"]),
        ));
    }

    for t in doc["parse_error_tests"]["cases"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = t["name"].as_str().unwrap_or("");
        let input = t["input"].as_str().unwrap_or("");
        let got = Templates::with_builtins_only().parse(name, input);
        let want = t["error_contains"].as_str().unwrap_or("");
        let passed = matches!(&got, Err(e) if e.message.contains(want));
        results.push((
            "parse_error".into(),
            id(name, input),
            passed,
            format!("got {got:?}, want {want}"),
        ));
    }

    for t in doc["number_tests"]["cases"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let text = t["text"].as_str().unwrap_or("");
        let is_char = text.starts_with('\'');
        let is_complex = !is_char
            && text.ends_with('i')
            && text.len() > 1
            && text[1..].contains(['+', '-'])
            && {
                let b = text.as_bytes();
                (1..b.len()).any(|i| {
                    matches!(b[i], b'+' | b'-') && !matches!(b[i - 1], b'e' | b'E' | b'p' | b'P')
                })
            };
        let got = parse_number(text, is_char, is_complex);
        let flag = |k: &str| t[k].as_bool() == Some(true);
        let ok = flag("isInt") || flag("isUint") || flag("isFloat") || flag("isComplex");
        let passed = match &got {
            Err(_) => !ok,
            Ok(n) => {
                ok && n.int.is_some() == flag("isInt")
                    && n.uint.is_some() == flag("isUint")
                    && n.float.is_some() == flag("isFloat")
                    && n.complex.is_some() == flag("isComplex")
                    && n.int.is_none_or(|i| Some(i) == t["int64"].as_i64())
                    && n.uint.is_none_or(|u| Some(u) == t["uint64"].as_u64())
                    && n.float.is_none_or(|f| Some(f) == t["float64"].as_f64())
            }
        };
        results.push((
            "number".into(),
            id(text, ""),
            passed,
            format!("got {got:?}"),
        ));
    }

    let mut applicable = 0;
    let mut passed = 0;
    let mut unexpected = Vec::new();
    let mut seen = BTreeSet::new();
    for (suite, case, ok, detail) in &results {
        let key = (suite.clone(), case.clone());
        seen.insert(key.clone());
        if na.contains(&key) {
            // Keep the list honest: a case the data model "cannot express" must not pass.
            if *ok {
                unexpected.push(format!(
                    "{suite}\t{case}\tlisted as not applicable but passes"
                ));
            }
            continue;
        }
        applicable += 1;
        if *ok {
            passed += 1;
        }
        if *ok == diff.contains(&key) {
            let what = if *ok {
                "listed as a known difference but passes"
            } else {
                "fails"
            };
            unexpected.push(format!("{suite}\t{case}\t{what}: {detail}"));
        }
    }
    let stale: Vec<_> = na.union(&diff).filter(|k| !seen.contains(*k)).collect();
    println!(
        "text/template vectors: {passed}/{applicable} ({:.1}%); not applicable: {} needing Go func values, iterators or typed nils + {} listed",
        100.0 * passed as f64 / applicable.max(1) as f64,
        needs_go,
        na.len()
    );
    println!("text/template error messages identical to Go's: {errors_same}/{errors_total}");
    for u in &unexpected {
        println!("UNEXPECTED {u}");
    }
    assert!(
        stale.is_empty(),
        "known_differences.tsv lists cases that do not exist: {stale:?}"
    );
    assert!(
        unexpected.is_empty(),
        "{} vectors differ from known_differences.tsv",
        unexpected.len()
    );
    assert!(passed * 100 >= applicable * 95, "score below 95%");
}

/// Every template of the corpus charts (26 real charts and their subcharts) must parse.
#[test]
fn corpus_chart_templates_parse() {
    let Some(dir) = corpus_dir() else {
        println!("chart templates: skipped, corpus not found (set GITOPS_LINT_CORPUS)");
        return;
    };
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.components().any(|c| c.as_os_str() == "templates")
                && p.extension()
                    .is_some_and(|x| x == "yaml" || x == "tpl" || x == "txt" || x == "yml")
            {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&dir.join("helm/charts"), &mut files);
    files.sort();
    let dummy: Func = |_, _| Ok(Value::Nil);
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let mut set = Templates::new(Rc::new(move |_: &str| Some(dummy)));
        if let Err(e) = set.parse(&f.display().to_string(), &text) {
            failures.push(e.to_string());
        }
    }
    println!(
        "chart templates parsed: {}/{}",
        files.len() - failures.len(),
        files.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}
