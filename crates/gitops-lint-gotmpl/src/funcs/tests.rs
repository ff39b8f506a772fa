//! Cross-family tests: the lookup table is complete and consistent.

use super::*;

#[test]
fn every_name_resolves() {
    for n in ALL_NAMES {
        assert!(lookup(n).is_some(), "{n}");
    }
    for n in ["env", "expandenv", "include", "tpl", "printf", "len"] {
        assert!(lookup(n).is_none(), "{n}");
    }
    assert!(is_nondeterministic("randAlphaNum"));
    assert!(!is_nondeterministic("sha256sum"));
}

fn call(env: &mut FuncEnv, name: &str, args: &[Value]) -> Result<Value, String> {
    match lookup(name) {
        Some(f) => f(env, args),
        None => Err(format!("no function {name}")),
    }
}

fn s(v: Result<Value, String>) -> String {
    match v {
        Ok(Value::String(s)) => s.to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
fn objects_marshal_like_go() {
    let mut e = FuncEnv::new(0, 1_560_458_379_000_000_000, 0);
    let now = call(&mut e, "now", &[]).unwrap_or_default();
    assert_eq!(
        s(call(&mut e, "toJson", std::slice::from_ref(&now))),
        "\"2019-06-13T20:39:39Z\""
    );
    assert_eq!(
        s(call(&mut e, "toYaml", &[now])),
        "\"2019-06-13T20:39:39Z\""
    );
}

#[test]
fn helm_typical_pipelines() {
    let mut e = FuncEnv::default();
    let mut m = super::super::value::Map::new();
    m.insert("cpu".into(), Value::from("100m"));
    m.insert("memory".into(), Value::Float(1e6));
    m.insert("enabled".into(), Value::from("yes"));
    m.insert(
        "list".into(),
        Value::list(vec![Value::Float(1.5), Value::from("a b")]),
    );
    let v = Value::map(m);
    assert_eq!(
        s(call(&mut e, "toYaml", std::slice::from_ref(&v))),
        "cpu: 100m\nenabled: \"yes\"\nlist:\n- 1.5\n- a b\nmemory: 1000000"
    );
    assert_eq!(
        s(call(&mut e, "toJson", &[v])),
        "{\"cpu\":\"100m\",\"enabled\":\"yes\",\"list\":[1.5,\"a b\"],\"memory\":1000000}"
    );
    assert_eq!(
        s(call(
            &mut e,
            "quote",
            &[Value::Float(1e6), Value::Nil, Value::Int(3)]
        )),
        "\"1e+06\" \"3\""
    );
    assert_eq!(
        s(call(
            &mut e,
            "default",
            &[Value::from("x"), Value::from("")]
        )),
        "x"
    );
    assert_eq!(
        s(call(
            &mut e,
            "nindent",
            &[Value::Int(2), Value::from("a\nb")]
        )),
        "\n  a\n  b"
    );
    assert_eq!(
        s(call(&mut e, "trunc", &[Value::Int(63), Value::from("abc")])),
        "abc"
    );
    assert!(
        call(&mut e, "trunc", &[Value::Float(63.0), Value::from("abc")])
            .is_err_and(|m| m.ends_with("wrong type for value; expected int; got float64"))
    );
    assert!(
        call(&mut e, "upper", &[Value::from("a"), Value::from("b")]).is_err_and(
            |m| classify_error(&m) == (false, "wrong number of args for upper: want 1 got 2")
        )
    );
    assert_eq!(
        call(
            &mut e,
            "required",
            &[Value::from("need x"), Value::from("")]
        )
        .err()
        .as_deref(),
        Some("HELM_ERR_STARTneed xHELM_ERR_END")
    );
}

#[test]
fn hostile_sizes_are_capped() {
    let mut e = FuncEnv::default();
    assert!(call(&mut e, "repeat", &[Value::Int(1 << 40), Value::from("ab")]).is_err());
    assert!(call(&mut e, "until", &[Value::Int(1 << 40)]).is_err());
    assert!(
        call(
            &mut e,
            "untilStep",
            &[Value::Int(0), Value::Int(i64::MAX), Value::Int(1)]
        )
        .is_err()
    );
    assert!(call(&mut e, "seq", &[Value::Int(1 << 40)]).is_err());
    assert!(call(&mut e, "randAlphaNum", &[Value::Int(1 << 40)]).is_err());
    assert!(
        call(
            &mut e,
            "indent",
            &[Value::Int(1 << 40), Value::from("a\nb")]
        )
        .is_err()
    );
    assert!(call(&mut e, "randBytes", &[Value::Int(1 << 40)]).is_err());
}

#[test]
fn cyclic_maps_do_not_hang() {
    let mut e = FuncEnv::default();
    let d = call(&mut e, "dict", &[]).unwrap_or_default();
    let _ = call(&mut e, "set", &[d.clone(), Value::from("self"), d.clone()]);
    assert_eq!(s(call(&mut e, "toYaml", std::slice::from_ref(&d))), "");
    assert_eq!(s(call(&mut e, "toJson", std::slice::from_ref(&d))), "");
    assert!(call(&mut e, "mustToJson", std::slice::from_ref(&d)).is_err());
    assert!(call(&mut e, "deepCopy", std::slice::from_ref(&d)).is_ok());
    let other = call(&mut e, "dict", &[Value::from("self"), d.clone()]).unwrap_or_default();
    assert!(call(&mut e, "merge", &[d.clone(), other]).is_ok());
    let deep = "[".repeat(5000);
    assert!(call(&mut e, "mustFromJson", &[Value::from(deep)]).is_err());
}

/// Every function with every combination of up to three hostile arguments: errors are
/// fine, panics and runaway allocations are not.
#[test]
fn no_panics_on_hostile_arguments() {
    let mut nested = super::super::value::Map::new();
    nested.insert(
        "k".into(),
        Value::list(vec![Value::Nil, Value::Float(f64::NAN)]),
    );
    let pool = [
        Value::Nil,
        Value::Bool(true),
        Value::Int(0),
        Value::Int(-1),
        Value::Int(i64::MAX),
        Value::Int(i64::MIN),
        Value::Int64(7),
        Value::Float(f64::NAN),
        Value::Float(-1e300),
        Value::from(""),
        Value::from("é☃😀 a:b\n\t"),
        Value::Bytes(vec![0xff, 0, b'a'].into()),
        Value::list(vec![Value::Int(1), Value::from("x"), Value::Nil]),
        Value::map(nested),
    ];
    for name in ALL_NAMES {
        // Key generation and key derivation are slow by design; their argument checks
        // are covered by their own tests.
        if name.starts_with("gen") || *name == "derivePassword" {
            continue;
        }
        let Some(f) = lookup(name) else { continue };
        let mut e = FuncEnv::new(1, 1_700_000_000_000_000_000, 3600);
        let _ = f(&mut e, &[]);
        for a in &pool {
            let _ = f(&mut e, std::slice::from_ref(a));
            for b in &pool {
                let _ = f(&mut e, &[a.clone(), b.clone()]);
                for c in &pool {
                    let _ = f(&mut e, &[a.clone(), b.clone(), c.clone()]);
                }
            }
        }
    }
}

#[test]
fn from_yaml_errors_read_like_go_yaml() {
    let mut e = FuncEnv::default();
    let v = call(&mut e, "fromYaml", &[Value::from("foo: [1, 2")]).unwrap_or_default();
    assert_eq!(
        super::gofmt::format_v(&v),
        "map[Error:error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']']"
    );
    let v = call(&mut e, "fromYaml", &[Value::from("a: 1\nb: [x]\nc: 1.5")]).unwrap_or_default();
    assert_eq!(super::gofmt::format_v(&v), "map[a:1 b:[x] c:1.5]");
    assert!(matches!(v, Value::Map(ref m) if matches!(m.borrow().get("a"), Some(Value::Float(_)))));
}

#[test]
fn heavy_calls_are_budgeted_per_render() {
    let mut env = FuncEnv::default();
    for _ in 0..MAX_HEAVY_CALLS {
        assert!(env.spend_heavy("bcrypt").is_ok());
    }
    // The budget is spent: every heavy function now fails before computing anything.
    let args = [
        Value::Int(1),
        Value::from("long"),
        Value::from("m"),
        Value::from("a"),
        Value::from("b"),
    ];
    let e = call(&mut env, "derivePassword", &args);
    assert!(e.is_err_and(|m| m.contains("key generations or password hashes")));
    assert!(call(&mut env, "genPrivateKey", &[Value::from("rsa")]).is_err());
    assert!(call(&mut env, "htpasswd", &[Value::from("u"), Value::from("p")]).is_err());
}

/// The render-twice check skips the second render of a chart whose first one read neither
/// the seed, the clock nor the zone: every function that does must say so.
#[test]
fn functions_that_read_the_seed_clock_or_zone_say_so() {
    let readers: &[(&str, Vec<Value>)] = &[
        ("now", vec![]),
        ("randAlphaNum", vec![Value::Int(8)]),
        ("uuidv4", vec![]),
        ("shuffle", vec![Value::from("abc")]),
        ("date", vec![Value::from("2006"), Value::Int(0)]),
        (
            "dateInZone",
            vec![Value::from("2006"), Value::Int(0), Value::from("Local")],
        ),
        ("ago", vec![Value::Int(0)]),
        ("genPrivateKey", vec![Value::from("ecdsa")]),
    ];
    for (name, args) in readers {
        let mut e = FuncEnv::new(1, 1_700_000_000_000_000_000, 3600);
        assert!(!e.clock_was_read());
        let r = call(&mut e, name, args);
        assert!(r.is_ok(), "{name}: {r:?}");
        assert!(e.clock_was_read(), "{name} read the clock or seed unseen");
    }
    let pure: &[(&str, Vec<Value>)] = &[
        ("upper", vec![Value::from("a")]),
        ("sha256sum", vec![Value::from("a")]),
        (
            "derivePassword",
            vec![
                Value::Int(1),
                Value::from("long"),
                Value::from("p"),
                Value::from("u"),
                Value::from("s"),
            ],
        ),
        ("b64enc", vec![Value::from("a")]),
    ];
    for (name, args) in pure {
        let mut e = FuncEnv::new(1, 1_700_000_000_000_000_000, 3600);
        let r = call(&mut e, name, args);
        assert!(r.is_ok(), "{name}: {r:?}");
        assert!(
            !e.clock_was_read(),
            "{name} is a pure function of its arguments"
        );
    }
}

#[test]
fn the_function_table_is_sorted_and_each_name_resolves() {
    for pair in super::FUNCS.windows(2) {
        assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
    }
    for (name, _) in super::FUNCS {
        assert!(super::lookup(name).is_some(), "{name}");
    }
    assert!(super::lookup("env").is_none() && super::lookup("include").is_none());
}

#[test]
fn uniq_keeps_the_first_of_deep_equal_elements_in_order() {
    use super::super::value::Value;
    let mut env = super::FuncEnv::default();
    let list = |v: Vec<Value>| Value::list(v);
    let input = list(vec![
        Value::from("a"),
        Value::Int(1),
        Value::Int64(1),
        Value::from("a"),
        Value::Float(0.0),
        Value::Float(-0.0),
        Value::Float(f64::NAN),
        Value::Float(f64::NAN),
        list(vec![Value::Int(1)]),
        list(vec![Value::Int(1)]),
        Value::Int(1),
    ]);
    let out = super::lists::uniq(&mut env, &[input]).expect("uniq");
    let Value::List(l) = out else {
        panic!("{out:?}")
    };
    let kinds: Vec<String> = l.iter().map(|v| format!("{v:?}")).collect();
    // int and int64 differ (reflect.DeepEqual compares types); 0.0 == -0.0; NaN equals
    // nothing, so both stay; the second [1] goes.
    assert_eq!(l.len(), 7, "{kinds:?}");
}

/// Two lists built by doubling 64 times hold 2^64 paths each: compared pair by pair they
/// would never finish; with the pairs already found equal remembered, they take 64 steps.
#[test]
fn deep_equal_of_shared_structure_compares_each_pair_once() {
    use super::super::value::Value;
    let doubled = || {
        let mut l = Value::list(vec![Value::Int(1), Value::Int(2)]);
        for _ in 0..64 {
            l = Value::list(vec![l.clone(), l]);
        }
        l
    };
    let (a, b) = (doubled(), doubled());
    assert!(super::reflect::deep_equal(&a, &b));
    let c = Value::list(vec![a.clone(), Value::Int(3)]);
    let d = Value::list(vec![b, Value::Int(4)]);
    assert!(!super::reflect::deep_equal(&c, &d));
}

/// `until`, `seq` and `chunk` count their list's slots against the call's room before they
/// build it: five million elements are far more bytes than the room here, though fewer than
/// the element cap, so each call fails by name instead of building and then being charged.
#[test]
fn list_builders_check_their_room_before_building() {
    use super::memory::{SLOT_BYTES, within};
    let count: i64 = 5_000_000;
    let room = 100 << 20;
    assert!((count as usize) * SLOT_BYTES > room && (count as usize) < args::MAX_ALLOC);
    let long = Value::list(vec![Value::Int(0); count as usize]);
    let cases: Vec<(&str, Vec<Value>)> = vec![
        ("until", vec![Value::Int(count)]),
        ("seq", vec![Value::Int(count)]),
        ("chunk", vec![Value::Int(2), long]),
    ];
    for (name, args) in cases {
        let mut env = FuncEnv::default();
        let (out, overflowed) = within(room, || call(&mut env, name, &args));
        match out {
            Err(e) => assert!(e.starts_with(name), "{name}: {e}"),
            Ok(_) => panic!("{name} built {count} elements in {room} bytes of room"),
        }
        assert!(overflowed, "{name}");
    }
}
