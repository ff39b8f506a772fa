//! Executor behaviour Helm charts depend on: whitespace trimming, map order, missing keys,
//! include/tpl, float printing, limits, and the provenance/taint records of the output.

use std::rc::Rc;

use super::funcs::{Func, FuncEnv};
use super::output::{Output, SegmentKind};
use super::template::{ExecOptions, MissingKey, Templates};
use super::value::{Map, Value};

/// Stand-ins for library functions (the real ones live in `funcs`).
fn lib(name: &str) -> Option<Func> {
    Some(match name {
        "randAlphaNum" => |_, _| Ok(Value::from("xYz12")),
        "b64enc" => |_, a| {
            Ok(Value::from(format!(
                "b64({})",
                super::printf::display(&a[0])
            )))
        },
        "quote" => |_, a| {
            Ok(Value::from(format!(
                "\"{}\"",
                super::printf::display(&a[0])
            )))
        },
        "default" => |_, a| match a {
            [d, v] if v.truthy() => Ok(v.clone()),
            [d, _] | [d] => Ok(d.clone()),
            _ => Err("wrong number of args".into()),
        },
        "list" => |_, a| Ok(Value::list(a.to_vec())),
        "set" => |_, a| match a {
            [Value::Map(m), Value::String(k), v] => {
                m.borrow_mut().insert(k.to_string(), v.clone());
                Ok(a[0].clone())
            }
            _ => Err("set: bad args".into()),
        },
        "dict" => |_, a| {
            let mut m = Map::new();
            for kv in a.chunks(2) {
                if let [Value::String(k), v] = kv {
                    m.insert(k.to_string(), v.clone());
                }
            }
            Ok(Value::map(m))
        },
        _ => return None,
    })
}

fn env() -> FuncEnv {
    FuncEnv::new(1, 0, 0)
}

fn values(pairs: &[(&str, Value)]) -> Value {
    let mut top = Map::new();
    top.insert(
        "Values".into(),
        Value::map(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        ),
    );
    let mut release = Map::new();
    release.insert("Name".into(), Value::from("rel"));
    top.insert("Release".into(), Value::map(release));
    Value::map(top)
}

fn run_with(src: &str, dot: Value, opts: &ExecOptions) -> Result<Output, String> {
    let mut set = Templates::new(Rc::new(lib));
    set.parse("chart/templates/t.yaml", src)
        .map_err(|e| e.to_string())?;
    set.execute("chart/templates/t.yaml", dot, opts, &mut env())
        .map_err(|e| e.to_string())
}

fn run(src: &str, dot: Value) -> Result<String, String> {
    run_with(src, dot, &ExecOptions::default()).map(|o| o.text)
}

fn helm(src: &str, dot: Value) -> Result<Output, String> {
    run_with(src, dot, &ExecOptions::helm())
}

#[test]
fn trim_markers_and_comments() {
    let src = "a:\n  {{- /* note */ -}}\n  b\n{{- if true }}\nc: 1\n{{- end }}\n";
    assert_eq!(run(src, Value::Nil).as_deref(), Ok("a:b\nc: 1\n"));
    assert_eq!(run("x {{- 1 -}} y", Value::Nil).as_deref(), Ok("x1y"));
    // "{{-3}}" is the number -3, not a trim marker.
    assert_eq!(run("x {{-3}} y", Value::Nil).as_deref(), Ok("x -3 y"));
}

#[test]
fn range_over_map_is_in_key_order_with_else_break_continue() {
    let m: Map = [("b", 2), ("a", 1), ("c", 3)]
        .iter()
        .map(|(k, v)| (k.to_string(), Value::Int(*v)))
        .collect();
    let dot = values(&[("m", Value::map(m))]);
    let src =
        "{{range $k, $v := .Values.m}}{{if eq $k \"c\"}}{{break}}{{end}}{{$k}}={{$v}};{{end}}";
    assert_eq!(run(src, dot.clone()).as_deref(), Ok("a=1;b=2;"));
    assert_eq!(
        run(
            "{{range $i := 3}}{{if eq $i 1}}{{continue}}{{end}}{{$i}}{{end}}",
            Value::Nil
        )
        .as_deref(),
        Ok("02")
    );
    assert_eq!(
        run("{{range .Values.none}}x{{else}}empty{{end}}", dot).as_deref(),
        Ok("empty")
    );
}

#[test]
fn missing_keys_go_and_helm() {
    let dot = values(&[("a", Value::Int(1))]);
    assert_eq!(
        run("[{{.Values.nope}}]", dot.clone()).as_deref(),
        Ok("[<no value>]")
    );
    // Go's default: fields of a missing value are missing too.
    assert_eq!(
        run("[{{.Values.nope.deeper}}]", dot.clone()).as_deref(),
        Ok("[<no value>]")
    );
    let out = helm("[{{.Values.nope}}]", dot.clone()).map(|o| o.text);
    assert_eq!(out.as_deref(), Ok("[]"));
    let err = helm("{{.Values.nope.deeper}}", dot.clone())
        .err()
        .unwrap_or_default();
    assert!(
        err.contains("nil pointer evaluating interface {}.deeper"),
        "{err}"
    );
    assert!(err.starts_with("template: chart/templates/t.yaml:1:9: executing \"chart/templates/t.yaml\" at <.Values.nope.deeper>"), "{err}");
    // the whole expression, however long (helm 3.18 prints it uncut)
    let err = helm("{{.Values.nope.mcImage.repository.name}}", dot.clone())
        .err()
        .unwrap_or_default();
    assert!(
        err.contains(
            "at <.Values.nope.mcImage.repository.name>: nil pointer evaluating interface {}.mcImage"
        ),
        "{err}"
    );
    let strict = ExecOptions {
        missing_key: MissingKey::Error,
        ..ExecOptions::default()
    };
    let err = run_with("{{.Values.nope}}", dot, &strict)
        .err()
        .unwrap_or_default();
    assert!(err.contains("map has no entry for key \"nope\""), "{err}");
}

#[test]
fn floats_from_values_print_like_go() {
    let dot = values(&[
        ("big", Value::Float(1e6)),
        ("small", Value::Float(0.5)),
        ("n", Value::Float(3.0)),
    ]);
    assert_eq!(
        run(
            "{{.Values.big}} {{.Values.small}} {{.Values.n}} {{printf \"%d\" 3}}",
            dot
        )
        .as_deref(),
        Ok("1e+06 0.5 3 3")
    );
}

#[test]
fn include_and_template_and_tpl() {
    let dot = values(&[("name", Value::from("web"))]);
    let src = "{{define \"x.name\"}}{{.Values.name}}-{{.Release.Name}}{{end}}{{include \"x.name\" . | quote}} {{template \"x.name\" .}}";
    assert_eq!(run(src, dot.clone()).as_deref(), Ok("\"web-rel\" web-rel"));
    // `tpl ""` inside a tpl renders nothing (Go runs the new, empty tree, not the old one).
    let nested = "{{tpl \"a{{ tpl \\\"\\\" . }}b\" .}}";
    assert_eq!(run(nested, dot.clone()).as_deref(), Ok("ab"));
    let tpl = "{{tpl \"{{ .Values.name }}:{{ .Values.missing }}\" .}}";
    assert_eq!(run(tpl, dot.clone()).as_deref(), Ok("web:"));
    // A later definition replaces an earlier one.
    let mut set = Templates::new(Rc::new(lib));
    assert!(set.parse("a", "{{define \"d\"}}one{{end}}").is_ok());
    assert!(set.parse("b", "{{define \"d\"}}two{{end}}").is_ok());
    assert!(set.parse("main", "{{include \"d\" .}}").is_ok());
    let out = set
        .execute("main", Value::Nil, &ExecOptions::default(), &mut env())
        .map(|o| o.text);
    assert_eq!(out.as_deref(), Ok("two"));
    let err = run("{{include \"nope\" .}}", dot).err().unwrap_or_default();
    assert!(err.contains("error calling include: template: no template \"nope\" associated with template \"gotpl\""), "{err}");
}

#[test]
fn include_recursion_is_a_located_error() {
    // Deep recursion needs a big stack; run it where one is guaranteed.
    let handle = std::thread::Builder::new().stack_size(256 << 20).spawn(|| {
        let opts = ExecOptions {
            max_stack_bytes: 200 << 20,
            ..ExecOptions::helm()
        };
        run_with(
            "{{define \"r\"}}x{{include \"r\" .}}{{end}}{{include \"r\" .}}",
            Value::Nil,
            &opts,
        )
        .err()
    });
    let err = handle
        .ok()
        .and_then(|h| h.join().ok())
        .flatten()
        .unwrap_or_default();
    assert!(
        err.contains(
            "rendering template has a nested reference name: r: unable to execute template"
        ),
        "{err}"
    );
    // With the default stack budget the recursion stops early, still with an error.
    let err = helm(
        "{{define \"r\"}}{{include \"r\" .}}{{end}}{{include \"r\" .}}",
        Value::Nil,
    )
    .err()
    .unwrap_or_default();
    assert!(err.contains("error calling include"), "{err}");
    let err = helm(
        "{{define \"t\"}}{{template \"t\" .}}{{end}}{{template \"t\" .}}",
        Value::Nil,
    )
    .err()
    .unwrap_or_default();
    assert!(err.contains("exceeded maximum template depth"), "{err}");
}

#[test]
fn limits_stop_hostile_templates() {
    let err = run("{{range 100000000000}}x{{end}}", Value::Nil)
        .err()
        .unwrap_or_default();
    assert!(err.contains("exceeds the limit"), "{err}");
    let opts = ExecOptions {
        max_steps: 1000,
        ..ExecOptions::default()
    };
    let err = run_with("{{range 900}}{{.}}{{end}}", Value::Nil, &opts)
        .err()
        .unwrap_or_default();
    assert!(err.contains("steps"), "{err}");
    let opts = ExecOptions {
        max_output_bytes: 100,
        ..ExecOptions::default()
    };
    let err = run_with("{{range 200}}xx{{end}}", Value::Nil, &opts)
        .err()
        .unwrap_or_default();
    assert!(err.contains("output exceeds"), "{err}");
    let deep = "{{".to_string() + &"(".repeat(5000) + "1" + &")".repeat(5000) + "}}";
    let err = run(&deep, Value::Nil).err().unwrap_or_default();
    assert!(err.contains("max expression depth exceeded"), "{err}");
    let deep_ifs = "{{if true}}".repeat(5000) + &"{{end}}".repeat(5000);
    assert!(run(&deep_ifs, Value::Nil).is_err());
}

#[test]
fn parse_errors_read_like_go() {
    let err = run("line1\n{{ .Values.x }\n", Value::Nil)
        .err()
        .unwrap_or_default();
    assert_eq!(
        err,
        "template: chart/templates/t.yaml:2: unexpected \"}\" in operand"
    );
    let mut set = Templates::with_builtins_only();
    let e = set.parse("f", "line1\n  {{ .Values.x }\n").err();
    assert_eq!(e.map(|e| (e.line, e.col, e.offset)), Some((2, 15, 21)));
    let err = run("{{ if .x }}", Value::Nil).err().unwrap_or_default();
    assert_eq!(err, "template: chart/templates/t.yaml:1: unexpected EOF");
    let err = run("{{ nosuchfunc 1 }}", Value::Nil)
        .err()
        .unwrap_or_default();
    assert_eq!(
        err,
        "template: chart/templates/t.yaml:1: function \"nosuchfunc\" not defined"
    );
}

#[test]
fn provenance_of_a_values_field() {
    let dot = values(&[("replicaCount", Value::Float(3.0))]);
    let out = helm("replicas: {{ .Values.replicaCount }}\n", dot).unwrap_or_default();
    assert_eq!(out.text, "replicas: 3\n");
    let seg = out
        .segments
        .iter()
        .find(|s| s.kind == SegmentKind::Action)
        .cloned();
    let seg = seg.expect("an action segment");
    assert_eq!(&out.text[seg.range.clone()], "3");
    assert_eq!(seg.values_path(), Some(&["replicaCount".to_string()][..]));
    assert_eq!(
        (seg.pos.line, seg.pos.col, &*seg.pos.file),
        (1, 13, "chart/templates/t.yaml")
    );
    assert!(seg.taint.is_none());
    assert_eq!(
        out.segment_at(10).map(|s| s.kind),
        Some(SegmentKind::Action)
    );
    assert_eq!(out.segment_at(0).map(|s| s.kind), Some(SegmentKind::Text));
    assert!(out.segment_at(out.text.len()).is_none());
    let text = out
        .segments
        .iter()
        .find(|s| s.kind == SegmentKind::Text)
        .map(|s| s.range.clone());
    assert_eq!(text, Some(0..10));
}

#[test]
fn provenance_through_variables_with_range_include_and_functions() {
    let mut image = Map::new();
    image.insert("tag".into(), Value::from("1.2"));
    let ports = Value::list(vec![Value::Int(80), Value::Int(443)]);
    let dot = values(&[("image", Value::map(image)), ("ports", ports)]);
    let paths = |src: &str| -> Vec<Vec<String>> {
        let out = helm(src, dot.clone()).unwrap_or_default();
        out.segments
            .iter()
            .filter(|s| s.kind == SegmentKind::Action)
            .flat_map(|s| s.values_paths.iter().map(|p| p.to_vec()))
            .collect()
    };
    let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        paths("{{ $i := .Values.image }}{{ $i.tag }}"),
        vec![p(&["image", "tag"])]
    );
    assert_eq!(
        paths("{{ with .Values.image }}{{ .tag | quote }}{{ end }}"),
        vec![p(&["image", "tag"])]
    );
    assert_eq!(
        paths("{{ range .Values.ports }}{{ . }}{{ end }}"),
        vec![p(&["ports", "0"]), p(&["ports", "1"])]
    );
    assert_eq!(
        paths("{{ index $.Values \"image\" \"tag\" }}"),
        vec![p(&["image", "tag"])]
    );
    assert_eq!(
        paths("{{ default \"x\" .Values.image.missing }}"),
        vec![p(&["image", "missing"])]
    );
    let inc =
        "{{define \"t\"}}{{ .tag }}{{end}}{{ include \"t\" (dict \"tag\" .Values.image.tag) }}";
    assert_eq!(paths(inc), vec![p(&["image", "tag"])]);
    let root =
        "{{define \"t\"}}{{ .ctx.Values.image.tag }}{{end}}{{ include \"t\" (dict \"ctx\" $) }}";
    assert_eq!(paths(root), vec![p(&["image", "tag"])]);
    assert_eq!(paths("{{ .Release.Name }}"), Vec::<Vec<String>>::new());
}

#[test]
fn taint_flows_through_variables_and_functions() {
    let src = "{{- $pw := randAlphaNum 10 -}}\npassword: {{ $pw | b64enc }}\nplain: {{ \"x\" | b64enc }}\n";
    let out = helm(src, values(&[])).unwrap_or_default();
    assert_eq!(out.text, "password: b64(xYz12)\nplain: b64(x)\n");
    let tainted: Vec<_> = out
        .segments
        .iter()
        .filter_map(|s| {
            s.taint
                .as_ref()
                .map(|t| (&out.text[s.range.clone()], t.clone()))
        })
        .collect();
    assert_eq!(tainted.len(), 1);
    let (text, taint) = &tainted[0];
    assert_eq!(*text, "b64(xYz12)");
    assert_eq!(taint.func, "randAlphaNum");
    assert_eq!((taint.pos.line, taint.pos.col), (1, 11));
    // Through include as well, and into a checksum of the included text (grafana's
    // `checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}`).
    let inc = "{{define \"pw\"}}{{ randAlphaNum 3 }}{{end}}v: {{ include \"pw\" . | quote }}\nsum: {{ include \"pw\" . | b64enc }}";
    let out = helm(inc, values(&[])).unwrap_or_default();
    let tainted: Vec<&str> = out
        .segments
        .iter()
        .filter(|s| {
            s.taint
                .as_ref()
                .is_some_and(|t| t.func == "randAlphaNum" && t.pos.line == 1)
        })
        .map(|s| &out.text[s.range.clone()])
        .collect();
    // (The stand-in b64enc keeps its input visible, so the included text is found in it.)
    assert_eq!(tainted, vec!["\"", "xYz12", "\"", "b64(", "xYz12", ")"]);
}

#[test]
fn release_state_reads_are_recorded_apart_from_taint() {
    let dot = values(&[]);
    if let Value::Map(top) = &dot
        && let Some(Value::Map(r)) = top.borrow().get("Release")
    {
        r.borrow_mut().insert("IsInstall".into(), Value::Bool(true));
        r.borrow_mut().insert("Revision".into(), Value::Int(1));
    }
    let src = "a: {{ .Release.Revision }}\n{{ $i := .Release.IsInstall }}{{ if $i }}b: x{{ end }}\nc: {{ .Release.Name }}";
    let out = helm(src, dot).unwrap_or_default();
    assert_eq!(out.text, "a: 1\nb: x\nc: rel");
    let reads: Vec<(&str, Option<String>, Option<String>)> = out
        .segments
        .iter()
        .map(|s| {
            assert!(
                s.taint.is_none(),
                "release state is not a non-deterministic call"
            );
            let name = |t: &Option<Rc<crate::output::Taint>>| {
                t.as_ref()
                    .map(|t| format!("{}@{}:{}", t.func, t.pos.line, t.pos.col))
            };
            (
                &out.text[s.range.clone()],
                name(&s.release),
                name(&s.release_branch),
            )
        })
        .collect();
    assert_eq!(
        reads,
        vec![
            ("a: ", None, None),
            ("1", Some(".Release.Revision@1:14".into()), None),
            ("\n", None, None),
            ("b: x", None, Some(".Release.IsInstall@2:17".into())),
            ("\nc: ", None, None),
            ("rel", None, None),
        ]
    );
}

#[test]
fn no_value_removal_keeps_segments_aligned() {
    let dot = values(&[("a", Value::from("A"))]);
    let out = helm("x{{.Values.nope}}y{{.Values.a}}z", dot).unwrap_or_default();
    assert_eq!(out.text, "xyAz");
    let printed: Vec<&str> = out
        .segments
        .iter()
        .map(|s| &out.text[s.range.clone()])
        .collect();
    assert_eq!(printed, vec!["x", "y", "A", "z"]);
}

#[test]
fn comparisons_follow_go_kinds() {
    assert_eq!(
        run("{{eq 1 1 2}} {{lt 1 2}} {{eq \"a\" \"a\"}}", Value::Nil).as_deref(),
        Ok("true true true")
    );
    let err = run("{{eq 1 1.0}}", Value::Nil).err().unwrap_or_default();
    assert!(err.contains("incompatible types for comparison"), "{err}");
    let dot = values(&[("n", Value::Int64(2)), ("f", Value::Float(2.0))]);
    assert_eq!(
        run(
            "{{eq .Values.n 2}} {{and 0 1}} {{or 0 \"\" 3}}",
            dot.clone()
        )
        .as_deref(),
        Ok("true 0 3")
    );
    assert_eq!(
        run("{{eq .Values.nope \"x\"}}", dot).as_deref(),
        Ok("false")
    );
}

#[test]
fn nesting_depth_real_charts_need_is_accepted() {
    let ifs = "{{if true}}".repeat(30) + "x" + &"{{end}}".repeat(30);
    assert_eq!(run(&ifs, Value::Nil).as_deref(), Ok("x"));
    let parens = "{{".to_string() + &"(".repeat(30) + "1" + &")".repeat(30) + "}}";
    assert_eq!(run(&parens, Value::Nil).as_deref(), Ok("1"));
}

#[test]
fn included_text_points_into_the_helper() {
    let lib_and_nindent = |name: &str| -> Option<Func> {
        match name {
            "nindent" => Some(|_, a| {
                let (Value::Int(n), Value::String(s)) = (&a[0], &a[1]) else {
                    return Err("args".into());
                };
                let pad = " ".repeat(*n as usize);
                Ok(Value::from(format!(
                    "\n{pad}{}",
                    s.replace('\n', &format!("\n{pad}"))
                )))
            }),
            other => lib(other),
        }
    };
    let mut set = Templates::new(Rc::new(lib_and_nindent));
    let helpers = "{{- define \"labels\" -}}\napp: {{ .Values.app }}\ntier: web\n{{- end }}";
    assert!(set.parse("chart/templates/_helpers.tpl", helpers).is_ok());
    let main = "metadata:\n  labels:{{ include \"labels\" . | nindent 4 }}\n";
    assert!(set.parse("chart/templates/deploy.yaml", main).is_ok());
    let out = set
        .execute(
            "chart/templates/deploy.yaml",
            values(&[("app", Value::from("shop"))]),
            &ExecOptions::helm(),
            &mut env(),
        )
        .unwrap_or_default();
    assert_eq!(
        out.text,
        "metadata:\n  labels:\n    app: shop\n    tier: web\n"
    );
    let find = |needle: &str| {
        let at = out.text.find(needle).unwrap_or(usize::MAX);
        out.segments
            .iter()
            .find(|s| s.range.contains(&at))
            .cloned()
            .expect("segment")
    };
    let shop = find("shop");
    assert_eq!(
        (&*shop.pos.file, shop.pos.line),
        ("chart/templates/_helpers.tpl", 2)
    );
    assert_eq!(shop.values_path(), Some(&["app".to_string()][..]));
    assert_eq!(
        shop.via.iter().map(|p| (p.line, p.col)).collect::<Vec<_>>(),
        vec![(2, 12)]
    );
    let tier = find("tier");
    assert_eq!(
        (tier.kind, &*tier.pos.file),
        (SegmentKind::Text, "chart/templates/_helpers.tpl")
    );
    // The indentation nindent added belongs to the include action in deploy.yaml.
    let indent = find("\n    app");
    assert_eq!(
        (&*indent.pos.file, indent.kind),
        ("chart/templates/deploy.yaml", SegmentKind::Action)
    );
    // Segments tile the output in order.
    let mut at = 0;
    for s in &out.segments {
        assert_eq!(s.range.start, at);
        at = s.range.end;
    }
    assert_eq!(at, out.text.len());
}

/// Helm 3 reads a chart's values.yaml numbers as `json.Number` (a Go string type).
struct JsonNumber(String);

impl super::value::GoObject for JsonNumber {
    fn type_name(&self) -> &str {
        "json.Number"
    }
    fn field(&self, _: &str) -> Option<Value> {
        None
    }
    fn format(&self) -> String {
        self.0.clone()
    }
    fn as_go_string(&self) -> Option<&str> {
        Some(&self.0)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn json_numbers_behave_like_go_strings() {
    let num = |s: &str| Value::Object(Rc::new(JsonNumber(s.to_string())));
    let dot = values(&[
        ("zero", num("0")),
        ("big", num("1000000")),
        ("port", num("80")),
    ]);
    let src = "{{if .Values.zero}}z={{.Values.zero}}{{end}} {{.Values.big}} {{eq .Values.port \"80\"}} {{len .Values.big}} {{printf \"%v|%d\" .Values.port .Values.port}}";
    assert_eq!(
        run(src, dot.clone()).as_deref(),
        Ok("z=0 1000000 true 7 80|%!d(json.Number=80)")
    );
    let err = run("{{eq .Values.port 80}}", dot).err().unwrap_or_default();
    assert!(err.contains("incompatible types for comparison"), "{err}");
}

/// Random token soup must never panic, hang or overflow the stack: it parses or fails, and
/// executes or fails.
#[test]
fn random_templates_never_panic() {
    const TOKENS: &[&str] = &[
        "{{",
        "}}",
        "{{-",
        "-}}",
        " ",
        "\n",
        "(",
        ")",
        "|",
        ".",
        "$",
        "$x",
        ":=",
        "=",
        ",",
        "\"s\"",
        "`r`",
        "'c'",
        "1",
        "-2",
        "0x1F",
        "1e3",
        "1.5",
        "nil",
        "true",
        "if",
        "else",
        "end",
        "range",
        "with",
        "define",
        "template",
        "block",
        "break",
        "continue",
        ".Values",
        ".a",
        ".b",
        "index",
        "len",
        "slice",
        "printf",
        "print",
        "eq",
        "lt",
        "and",
        "or",
        "not",
        "include",
        "tpl",
        "\"t\"",
        "/*",
        "*/",
        "x",
        "%v",
        "html",
        "js",
        "urlquery",
        "call",
        "{{ define \"t\" }}",
        "{{ end }}",
        "{{ range $i, $v := .Values.l }}",
        "{{ template \"t\" . }}",
        "{{ include \"t\" . }}",
        "é",
        "日本",
        "\u{2028}",
        "\t",
        "\\",
        "\"\\x\"",
        "'\\u00e9'",
        "#",
        "@",
        "\u{0}",
    ];
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut l = Map::new();
    l.insert(
        "l".into(),
        Value::list(vec![Value::Int(1), Value::from("a")]),
    );
    l.insert("a".into(), Value::map(Map::new()));
    let mut top = Map::new();
    top.insert("Values".into(), Value::map(l));
    let dot = Value::map(top);
    let opts = ExecOptions {
        max_steps: 20_000,
        ..ExecOptions::helm()
    };
    for _ in 0..3000 {
        let n = 1 + (next() % 24) as usize;
        let src: String = (0..n)
            .map(|_| TOKENS[(next() % TOKENS.len() as u64) as usize])
            .collect();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut set = Templates::new(Rc::new(lib));
            if set.parse("t", &src).is_ok() {
                let _ = set.execute("t", dot.clone(), &opts, &mut env());
            }
        }));
        assert!(result.is_ok(), "panicked on {src:?}");
    }
}

#[test]
fn errors_inside_include_keep_the_inner_location() {
    let mut set = Templates::new(Rc::new(lib));
    assert!(
        set.parse(
            "c/templates/_h.tpl",
            "{{ define \"h\" }}\n  {{ index .Values.list 5 }}{{ end }}"
        )
        .is_ok()
    );
    assert!(
        set.parse("c/templates/cm.yaml", "a: {{ include \"h\" . }}")
            .is_ok()
    );
    let dot = values(&[("list", Value::list(vec![]))]);
    let err = set
        .execute("c/templates/cm.yaml", dot, &ExecOptions::helm(), &mut env())
        .err();
    let err = err.expect("an error");
    assert!(err.message.starts_with("template: c/templates/cm.yaml:1:6: executing \"c/templates/cm.yaml\" at <include \"h\" .>: error calling include: template: c/templates/_h.tpl:2:5: executing \"h\" at <index .Values.list 5>: error calling index: index out of range: 5"), "{}", err.message);
    let inner = err.innermost();
    assert_eq!(
        inner.pos.as_ref().map(|p| (&*p.file, p.line, p.col)),
        Some(("c/templates/_h.tpl", 2, 5))
    );
    assert_eq!(inner.template, "h");
}

#[test]
fn deeply_nested_values_are_refused_before_they_can_overflow_the_stack() {
    let deep_list = "{{ $l := list }}{{ range 5000 }}{{ $l = list $l }}{{ end }}ok";
    let err = run(deep_list, Value::Nil).err().unwrap_or_default();
    assert!(err.contains("value nesting exceeds 1000 levels"), "{err}");
    // Deepening a map in place with `set` is tracked too.
    let deep_set = "{{ $a := dict }}{{ range 5000 }}{{ $b := dict }}{{ $_ := set $b \"x\" $a }}{{ $a = $b }}{{ end }}ok";
    let err = run(deep_set, Value::Nil).err().unwrap_or_default();
    assert!(err.contains("value nesting exceeds 1000 levels"), "{err}");
    // Ordinary nesting is fine.
    let shallow = "{{ $l := list }}{{ range 50 }}{{ $l = list $l }}{{ end }}ok";
    assert_eq!(run(shallow, Value::Nil).as_deref(), Ok("ok"));
}

#[test]
fn segments_record_the_conditions_that_produced_them() {
    let mut ingress = Map::new();
    ingress.insert("enabled".into(), Value::Bool(true));
    ingress.insert("hosts".into(), Value::list(vec![Value::from("a.example")]));
    let dot = values(&[("ingress", Value::map(ingress))]);
    let src = "{{- if .Values.ingress.enabled }}\nkind: Ingress\n{{- range .Values.ingress.hosts }}\nhost: {{ . }}\n{{- end }}\n{{- end }}\nplain\n";
    let out = helm(src, dot).unwrap_or_default();
    assert_eq!(out.text, "\nkind: Ingress\nhost: a.example\nplain\n");
    let conds = |needle: &str| -> Vec<String> {
        let at = out.text.find(needle).unwrap_or(usize::MAX);
        out.segment_at(at)
            .map(|s| s.conditions.iter().map(|p| p.join(".")).collect())
            .unwrap_or_default()
    };
    assert_eq!(conds("kind"), vec!["ingress.enabled"]);
    assert_eq!(conds("a.example"), vec!["ingress.enabled", "ingress.hosts"]);
    assert_eq!(conds("plain"), Vec::<String>::new());
    let src = "{{ if and .Values.ingress.enabled (not .Values.ingress.off) }}x{{ end }}";
    let out = helm(src, values(&[])).unwrap_or_default();
    assert!(out.text.is_empty());
    let mut ingress = Map::new();
    ingress.insert("enabled".into(), Value::Bool(true));
    let out = helm(src, values(&[("ingress", Value::map(ingress))])).unwrap_or_default();
    let paths: Vec<String> = out.segments[0]
        .conditions
        .iter()
        .map(|p| p.join("."))
        .collect();
    assert_eq!(paths, vec!["ingress.off", "ingress.enabled"]);
}

/// Helm's `.Files`: a Go map type (path → bytes) with methods.
struct Files(Vec<(String, Value)>);

impl super::value::GoObject for Files {
    fn type_name(&self) -> &str {
        "engine.files"
    }
    fn field(&self, _: &str) -> Option<Value> {
        None
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        match (name, args) {
            ("Get", [Value::String(p)]) => Some(Ok(self
                .0
                .iter()
                .find(|(k, _)| **k == **p)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| Value::from("")))),
            _ => None,
        }
    }
    fn format(&self) -> String {
        "map[...]".into()
    }
    fn map_entries(&self) -> Option<Vec<(String, Value)>> {
        Some(self.0.clone())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn map_kind_objects_range_index_and_measure_like_maps() {
    let files = Value::Object(Rc::new(Files(vec![
        ("a.conf".into(), Value::from("A")),
        ("b.conf".into(), Value::from("B")),
    ])));
    let empty = Value::Object(Rc::new(Files(vec![])));
    let mut top = Map::new();
    top.insert("Files".into(), files);
    top.insert("None".into(), empty);
    let src = "{{ range $p, $c := .Files }}{{ $p }}={{ $c }};{{ end }} {{ len .Files }} {{ index .Files \"b.conf\" }} {{ .Files.Get \"a.conf\" }} {{ if .None }}x{{ else }}empty{{ end }}";
    assert_eq!(
        run(src, Value::map(top)).as_deref(),
        Ok("a.conf=A;b.conf=B; 2 B A empty")
    );
}
