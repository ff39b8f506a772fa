//! Helm's `--set` language (`pkg/strvals`): `a.b=c,d[0]=e`, lists `a={x,y}`, `\` escapes,
//! typed values (`--set`: int64, bool, null), strings (`--set-string`) and JSON (`--set-json`).

use super::values::{get, set};
use crate::render::gotmpl::value::{Map, Value};

const MAX_INDEX: usize = 65536;
const MAX_NESTED_NAME_LEVEL: usize = 30;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Typed,
    String,
    Json,
}

#[derive(Debug, PartialEq)]
enum Stop {
    Eof,
    NotList,
    Err(String),
}

impl From<String> for Stop {
    fn from(s: String) -> Self {
        Stop::Err(s)
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    mode: Mode,
}

/// `strvals.ParseInto`: apply `--set` text to `dest`.
pub fn parse_into(text: &str, dest: &Value) -> Result<(), String> {
    run(text, dest, Mode::Typed)
}

/// `strvals.ParseIntoString`.
pub fn parse_into_string(text: &str, dest: &Value) -> Result<(), String> {
    run(text, dest, Mode::String)
}

/// `strvals.ParseJSON`.
pub fn parse_json(text: &str, dest: &Value) -> Result<(), String> {
    run(text, dest, Mode::Json)
}

fn run(text: &str, dest: &Value, mode: Mode) -> Result<(), String> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
        mode,
    };
    loop {
        match p.key(dest, 0) {
            Ok(()) => continue,
            Err(Stop::Eof) => return Ok(()),
            Err(Stop::NotList) => return Err("not a list".into()),
            Err(Stop::Err(e)) => return Err(e),
        }
    }
}

fn typed_val(v: &str, string: bool) -> Value {
    if string {
        return Value::str(v);
    }
    if v.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if v.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if v.eq_ignore_ascii_case("null") {
        return Value::Nil;
    }
    if v == "0" {
        return Value::Int64(0);
    }
    if !v.is_empty()
        && !v.starts_with('0')
        && let Ok(i) = v.parse::<i64>()
        && !v.starts_with('+')
    {
        return Value::Int64(i);
    }
    Value::str(v)
}

/// JSON → Go's `interface{}` (numbers are float64).
pub fn json_to_value(j: &serde_json::Value) -> Value {
    match j {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => Value::str(s.as_str()),
        serde_json::Value::Array(a) => Value::list(a.iter().map(json_to_value).collect()),
        serde_json::Value::Object(o) => {
            let m: Map = o
                .iter()
                .map(|(k, v)| (k.clone(), json_to_value(v)))
                .collect();
            Value::map(m)
        }
    }
}

impl Parser {
    fn read(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }
    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    /// Read until one of `stop` (consumed), honouring `\` escapes. `None` stop = EOF.
    fn until(&mut self, stop: &[char]) -> (String, Option<char>) {
        let mut v = String::new();
        loop {
            match self.read() {
                None => return (v, None),
                Some(c) if stop.contains(&c) => return (v, Some(c)),
                Some('\\') => match self.read() {
                    None => return (v, None),
                    Some(n) => v.push(n),
                },
                Some(c) => v.push(c),
            }
        }
    }

    fn empty_val(&mut self) -> bool {
        loop {
            match self.read() {
                None | Some(',') => return true,
                Some(c) if c.is_whitespace() => {}
                Some(_) => {
                    self.unread();
                    return false;
                }
            }
        }
    }

    fn json_value(&mut self) -> Result<Value, Stop> {
        let rest: String = self.chars[self.pos..].iter().collect();
        let mut stream = serde_json::Deserializer::from_str(&rest).into_iter::<serde_json::Value>();
        match stream.next() {
            Some(Ok(v)) => {
                let consumed = rest[..stream.byte_offset()].chars().count();
                self.pos += consumed;
                self.empty_val();
                Ok(json_to_value(&v))
            }
            Some(Err(e)) => Err(Stop::Err(e.to_string())),
            None => Err(Stop::Err("unexpected end of JSON input".into())),
        }
    }

    fn key(&mut self, data: &Value, level: usize) -> Result<(), Stop> {
        let (k, last) = self.until(&['=', '[', ',', '.']);
        match last {
            None => {
                if k.is_empty() {
                    return Err(Stop::Eof);
                }
                Err(Stop::Err(format!("key {k:?} has no value")))
            }
            Some('[') => {
                let i = self.key_index()?;
                let list = match get(data, &k) {
                    Some(Value::List(l)) => l.as_ref().clone(),
                    Some(Value::Nil) | None => Vec::new(),
                    Some(other) => {
                        return Err(Stop::Err(format!(
                            "unable to parse key: interface conversion: interface {{}} is {}, not []interface {{}}",
                            other.type_name()
                        )));
                    }
                };
                let (list, res) = self.list_item(list, i, level);
                set_key(data, &k, Value::list(list));
                res
            }
            Some('=') => {
                if self.mode == Mode::Json {
                    if self.empty_val() {
                        set_key(data, &k, Value::Nil);
                        return Ok(());
                    }
                    let v = self.json_value()?;
                    set_key(data, &k, v);
                    return Ok(());
                }
                match self.val_list() {
                    Ok(list) => {
                        set_key(data, &k, Value::list(list));
                        Ok(())
                    }
                    Err(Stop::Eof) => {
                        set_key(data, &k, Value::str(""));
                        Err(Stop::Eof)
                    }
                    Err(Stop::NotList) => {
                        let (rs, _) = self.until(&[',']);
                        set_key(data, &k, typed_val(&rs, self.mode == Mode::String));
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            Some(',') => {
                set_key(data, &k, Value::str(""));
                Err(Stop::Err(format!(
                    "key {k:?} has no value (cannot end with ,)"
                )))
            }
            Some(_) => {
                let level = level + 1;
                if level > MAX_NESTED_NAME_LEVEL {
                    return Err(Stop::Err(format!(
                        "value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}"
                    )));
                }
                let inner = match get(data, &k) {
                    Some(v @ Value::Map(_)) => v,
                    Some(Value::Nil) | None => Value::map(Map::new()),
                    Some(other) => {
                        return Err(Stop::Err(format!(
                            "unable to parse key: interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                            other.type_name()
                        )));
                    }
                };
                let res = self.key(&inner, level);
                let empty = matches!(&inner, Value::Map(m) if m.borrow().is_empty());
                if res.is_ok() && empty {
                    return Err(Stop::Err(format!("key map {k:?} has no value")));
                }
                if !empty {
                    set_key(data, &k, inner);
                }
                res
            }
        }
    }

    fn key_index(&mut self) -> Result<i64, Stop> {
        let (v, last) = self.until(&[']']);
        if last.is_none() {
            return Err(Stop::Eof);
        }
        v.parse::<i64>().map_err(|_| {
            Stop::Err(format!(
                "error parsing index: strconv.Atoi: parsing {v:?}: invalid syntax"
            ))
        })
    }

    fn list_item(
        &mut self,
        mut list: Vec<Value>,
        i: i64,
        level: usize,
    ) -> (Vec<Value>, Result<(), Stop>) {
        if i < 0 {
            return (
                list,
                Err(Stop::Err(format!("negative {i} index not allowed"))),
            );
        }
        let (k, last) = self.until(&['[', '.', '=']);
        if !k.is_empty() {
            return (
                list,
                Err(Stop::Err(format!(
                    "unexpected data at end of array index: {k:?}"
                ))),
            );
        }
        match last {
            None => (list, Err(Stop::Eof)),
            Some('=') => {
                let v = if self.mode == Mode::Json {
                    if self.empty_val() {
                        Ok(Value::Nil)
                    } else {
                        self.json_value()
                    }
                } else {
                    match self.val_list() {
                        Ok(l) => Ok(Value::list(l)),
                        Err(Stop::Eof) => Ok(Value::str("")),
                        Err(Stop::NotList) => {
                            let (rs, _) = self.until(&[',']);
                            Ok(typed_val(&rs, self.mode == Mode::String))
                        }
                        Err(e) => Err(e),
                    }
                };
                match v {
                    Ok(v) => set_index(list, i as usize, v),
                    Err(e) => (list, Err(e)),
                }
            }
            Some('[') => {
                let next = match self.key_index() {
                    Ok(n) => n,
                    Err(e) => return (list, Err(e)),
                };
                let current = match list.get(i as usize) {
                    Some(Value::List(l)) => l.as_ref().clone(),
                    _ => Vec::new(),
                };
                let (inner, res) = self.list_item(current, next, level);
                if let Err(e) = res {
                    return (list, Err(e));
                }
                set_index(list, i as usize, Value::list(inner))
            }
            Some(_) => {
                let inner = match list.get(i as usize) {
                    Some(v @ Value::Map(_)) => v.clone(),
                    _ => Value::map(Map::new()),
                };
                if let Err(e) = self.key(&inner, level) {
                    return (list, Err(e));
                }
                if (i as usize) < list.len() {
                    list[i as usize] = inner;
                    return (list, Ok(()));
                }
                set_index(list, i as usize, inner)
            }
        }
    }

    fn val_list(&mut self) -> Result<Vec<Value>, Stop> {
        match self.read() {
            None => return Err(Stop::Eof),
            Some('{') => {}
            Some(_) => {
                self.unread();
                return Err(Stop::NotList);
            }
        }
        let mut list = Vec::new();
        loop {
            let (rs, last) = self.until(&[',', '}']);
            match last {
                None => return Err(Stop::Err("list must terminate with '}'".into())),
                Some('}') => {
                    if let Some(c) = self.read()
                        && c != ','
                    {
                        self.unread();
                    }
                    list.push(typed_val(&rs, self.mode == Mode::String));
                    return Ok(list);
                }
                Some(_) => list.push(typed_val(&rs, self.mode == Mode::String)),
            }
        }
    }
}

fn set_key(data: &Value, key: &str, val: Value) {
    if !key.is_empty() {
        set(data, key, val);
    }
}

fn set_index(mut list: Vec<Value>, index: usize, val: Value) -> (Vec<Value>, Result<(), Stop>) {
    if index > MAX_INDEX {
        return (
            list,
            Err(Stop::Err(format!(
                "index of {index} is greater than maximum supported index of {MAX_INDEX}"
            ))),
        );
    }
    if list.len() <= index {
        list.resize(index + 1, Value::Nil);
    }
    list[index] = val;
    (list, Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<String, String> {
        let v = Value::map(Map::new());
        parse_into(text, &v)?;
        Ok(format!("{v:?}"))
    }

    #[test]
    fn set_syntax() {
        assert_eq!(parse("a.b=c").as_deref(), Ok(r#"{"a": {"b": "c"}}"#));
        assert_eq!(
            parse("a=1,b=true,c=null,d=012").as_deref(),
            Ok(r#"{"a": 1i64, "b": true, "c": nil, "d": "012"}"#)
        );
        assert_eq!(parse("a={x,y}").as_deref(), Ok(r#"{"a": ["x", "y"]}"#));
        assert_eq!(parse("a[1]=x").as_deref(), Ok(r#"{"a": [nil, "x"]}"#));
        assert_eq!(parse("a[0].b=x").as_deref(), Ok(r#"{"a": [{"b": "x"}]}"#));
        assert_eq!(parse(r"a=x\,y").as_deref(), Ok(r#"{"a": "x,y"}"#));
        assert_eq!(parse(r"a\.b=1").as_deref(), Ok(r#"{"a.b": 1i64}"#));
        assert_eq!(parse("a=").as_deref(), Ok(r#"{"a": ""}"#));
        assert!(parse("a").is_err());
        assert!(parse("a[-1]=x").is_err());
    }

    #[test]
    fn json_values() {
        let v = Value::map(Map::new());
        assert!(parse_json(r#"a={"b":[1,2]},c=true"#, &v).is_ok());
        assert_eq!(format!("{v:?}"), r#"{"a": {"b": [1.0, 2.0]}, "c": true}"#);
    }
}
