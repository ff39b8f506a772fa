//! Helm's toToml / fromToml (BurntSushi/toml v1): the encoder's layout (direct keys first,
//! then tables; table contents indented two spaces per level; a blank line before each
//! top-level table) and a TOML 1.0 reader whose values follow the Go decoder (int64,
//! float64, time.Time, []interface{}, map[string]interface{}).

use std::rc::Rc;

use super::super::value::{Map, Value};
use super::FuncEnv;
use super::args::{self, arity};
use super::gofmt::format_float_f;
use super::gofmt_time::GoTime;

type R = Result<Value, String>;

// ---------------- encoder ----------------

fn is_bare(k: &str) -> bool {
    !k.is_empty()
        && k.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn key_part(k: &str) -> String {
    if is_bare(k) { k.to_string() } else { quote(k) }
}

fn key_path(key: &[String]) -> String {
    key.iter()
        .map(|k| key_part(k))
        .collect::<Vec<_>>()
        .join(".")
}

fn is_table(v: &Value) -> bool {
    matches!(v, Value::Map(_)) || is_table_array(v)
}

fn is_table_array(v: &Value) -> bool {
    match v {
        Value::List(l) => !l.is_empty() && l.iter().all(|x| matches!(x, Value::Map(_))),
        _ => false,
    }
}

struct Enc {
    out: String,
    /// Nesting of the value being encoded: a map can hold itself (`set $d "self" $d`).
    depth: usize,
}

/// Deeper values are refused, as the formatters stop at their own depth.
const MAX_DEPTH: usize = 100;

fn over_budget() -> String {
    "toml: result exceeds the render's memory budget".into()
}

impl Enc {
    fn newline(&mut self) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    fn indent(&mut self, key: &[String]) {
        for _ in 1..key.len() {
            self.out.push_str("  ");
        }
    }

    fn element(&mut self, v: &Value) -> Result<(), String> {
        // Checked per element, not only per table: an inline array holding one shared list
        // twice per level doubles the text at each level.
        if !super::memory::fits(self.out.len()) {
            return Err(over_budget());
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("toml: values nest deeper than {MAX_DEPTH} levels"));
        }
        let r = self.element_inner(v);
        self.depth -= 1;
        r
    }

    fn element_inner(&mut self, v: &Value) -> Result<(), String> {
        match v {
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) | Value::Int64(i) => self.out.push_str(&i.to_string()),
            Value::Uint(u) => self.out.push_str(&u.to_string()),
            Value::Float(f) => {
                if f.is_nan() {
                    self.out
                        .push_str(if f.is_sign_negative() { "-nan" } else { "nan" });
                } else if f.is_infinite() {
                    self.out.push_str(if *f < 0.0 { "-inf" } else { "inf" });
                } else {
                    let s = format_float_f(*f);
                    self.out.push_str(&s);
                    if !s.contains('.') {
                        self.out.push_str(".0");
                    }
                }
            }
            Value::String(s) => self.out.push_str(&quote(s)),
            Value::Bytes(b) => self.out.push_str(&quote(&String::from_utf8_lossy(b))),
            Value::Object(o) => self.out.push_str(&quote(&o.format())),
            Value::Nil => return Err("toml: cannot encode a nil value".into()),
            Value::List(l) => {
                self.out.push('[');
                for (i, x) in l.iter().enumerate() {
                    if matches!(x, Value::Nil) {
                        return Err("toml: cannot encode array with nil element".into());
                    }
                    self.element(x)?;
                    if i + 1 != l.len() {
                        self.out.push_str(", ");
                    }
                }
                self.out.push(']');
            }
            Value::Map(_) => self.map(&[], v, true)?,
        }
        Ok(())
    }

    fn key_value(&mut self, key: &[String], v: &Value, inline: bool) -> Result<(), String> {
        if key.is_empty() {
            return self.element(v);
        }
        self.indent(key);
        let last = key.last().map(String::as_str).unwrap_or("");
        self.out.push_str(&key_part(last));
        self.out.push_str(" = ");
        self.element(v)?;
        if !inline {
            self.newline();
        }
        Ok(())
    }

    fn encode(&mut self, key: &[String], v: &Value) -> Result<(), String> {
        if !super::memory::fits(self.out.len()) {
            return Err(over_budget());
        }
        if key.len() > MAX_DEPTH {
            return Err(format!("toml: values nest deeper than {MAX_DEPTH} levels"));
        }
        match v {
            Value::Nil => Ok(()),
            Value::Map(_) => self.table(key, v),
            v if is_table_array(v) => {
                let Value::List(l) = v else { return Ok(()) };
                if key.is_empty() {
                    return Err("toml: top-level values must be Go maps or structs".into());
                }
                for t in l.iter() {
                    self.newline();
                    self.indent(key);
                    self.out.push_str(&format!("[[{}]]", key_path(key)));
                    self.newline();
                    self.map(key, t, false)?;
                }
                Ok(())
            }
            _ => self.key_value(key, v, false),
        }
    }

    fn table(&mut self, key: &[String], v: &Value) -> Result<(), String> {
        if key.len() == 1 {
            self.newline();
        }
        if !key.is_empty() {
            self.indent(key);
            self.out.push_str(&format!("[{}]", key_path(key)));
            self.newline();
        }
        self.map(key, v, false)
    }

    fn map(&mut self, key: &[String], v: &Value, inline: bool) -> Result<(), String> {
        let Value::Map(m) = v else { return Ok(()) };
        let m = m.borrow();
        let direct: Vec<(&String, &Value)> = m.iter().filter(|(_, x)| !is_table(x)).collect();
        let sub: Vec<(&String, &Value)> = m.iter().filter(|(_, x)| is_table(x)).collect();
        if inline {
            self.out.push('{');
        }
        let groups = [(direct, !sub.is_empty()), (sub, false)];
        for (keys, trail) in groups {
            let n = keys.len();
            for (i, (k, x)) in keys.into_iter().enumerate() {
                if matches!(x, Value::Nil) {
                    continue;
                }
                if inline {
                    self.key_value(std::slice::from_ref(k), x, true)?;
                    if trail || i + 1 != n {
                        self.out.push_str(", ");
                    }
                } else {
                    let mut sub_key = key.to_vec();
                    sub_key.push(k.clone());
                    self.encode(&sub_key, x)?;
                }
            }
        }
        if inline {
            self.out.push('}');
        }
        Ok(())
    }
}

pub fn to_toml(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("toToml", a, 1)?;
    let mut e = Enc {
        out: String::new(),
        depth: 0,
    };
    Ok(Value::from(match e.encode(&[], &a[0]) {
        Ok(()) => e.out,
        Err(msg) => msg,
    }))
}

// ---------------- decoder ----------------

struct P<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    last_key: String,
}

type PR<T> = Result<T, String>;

impl P<'_> {
    fn line(&self) -> usize {
        self.src[..self.i.min(self.src.len())].matches('\n').count() + 1
    }

    fn err(&self, msg: impl AsRef<str>) -> String {
        if self.last_key.is_empty() {
            format!("toml: line {}: {}", self.line(), msg.as_ref())
        } else {
            format!(
                "toml: line {} (last key {:?}): {}",
                self.line(),
                self.last_key,
                msg.as_ref()
            )
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn comment(&mut self) {
        if self.peek() == Some(b'#') {
            while !matches!(self.peek(), None | Some(b'\n')) {
                self.i += 1;
            }
        }
    }

    /// Whitespace, newlines and comments (inside arrays).
    fn ws_nl(&mut self) {
        loop {
            self.ws();
            self.comment();
            match self.peek() {
                Some(b'\n') => self.i += 1,
                Some(b'\r') if self.s.get(self.i + 1) == Some(&b'\n') => self.i += 2,
                _ => return,
            }
        }
    }

    fn end_of_line(&mut self) -> PR<()> {
        self.ws();
        self.comment();
        match self.peek() {
            None => Ok(()),
            Some(b'\n') => {
                self.i += 1;
                Ok(())
            }
            Some(b'\r') if self.s.get(self.i + 1) == Some(&b'\n') => {
                self.i += 2;
                Ok(())
            }
            Some(c) => Err(self.err(format!("expected a top-level item to end with a newline, comment, or EOF, but got {:?} instead", c as char))),
        }
    }

    fn key_part(&mut self) -> PR<String> {
        self.ws();
        match self.peek() {
            Some(b'"') => self.basic_string(),
            Some(b'\'') => self.literal_string(),
            _ => {
                let st = self.i;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
                {
                    self.i += 1;
                }
                if st == self.i {
                    return Err(match self.peek() {
                        None => self.err("unexpected EOF; expected key"),
                        Some(c) => self.err(format!("bare keys cannot contain {:?}", c as char)),
                    });
                }
                Ok(self.src[st..self.i].to_string())
            }
        }
    }

    fn key(&mut self) -> PR<Vec<String>> {
        let mut parts = vec![self.key_part()?];
        loop {
            self.ws();
            if self.peek() == Some(b'.') {
                self.i += 1;
                parts.push(self.key_part()?);
            } else {
                return Ok(parts);
            }
        }
    }

    fn hex_escape(&mut self, n: usize) -> PR<char> {
        let h = self
            .src
            .get(self.i..self.i + n)
            .ok_or_else(|| self.err("unexpected EOF in escape"))?;
        let v =
            u32::from_str_radix(h, 16).map_err(|_| self.err(format!("invalid escape {h:?}")))?;
        self.i += n;
        char::from_u32(v).ok_or_else(|| self.err(format!("invalid unicode escape {h:?}")))
    }

    fn basic_string(&mut self) -> PR<String> {
        let multi = self.src[self.i..].starts_with("\"\"\"");
        self.i += if multi { 3 } else { 1 };
        if multi {
            if self.peek() == Some(b'\n') {
                self.i += 1;
            } else if self.src[self.i..].starts_with("\r\n") {
                self.i += 2;
            }
        }
        let mut out = String::new();
        loop {
            let Some(c) = self.src[self.i..].chars().next() else {
                return Err(self.err("unexpected EOF; expected '\"'"));
            };
            if c == '"' {
                if !multi {
                    self.i += 1;
                    return Ok(out);
                }
                if self.src[self.i..].starts_with("\"\"\"") {
                    // Up to two extra quotes may close the string.
                    let mut n = 3;
                    while n < 5 && self.src[self.i + n..].starts_with('"') {
                        n += 1;
                    }
                    for _ in 3..n {
                        out.push('"');
                    }
                    self.i += n;
                    return Ok(out);
                }
            }
            if c == '\n' && !multi {
                return Err(self.err("strings cannot contain newlines"));
            }
            if c == '\\' {
                self.i += 1;
                let Some(e) = self.peek() else {
                    return Err(self.err("unexpected EOF"));
                };
                self.i += 1;
                match e {
                    b'b' => out.push('\x08'),
                    b't' => out.push('\t'),
                    b'n' => out.push('\n'),
                    b'f' => out.push('\x0c'),
                    b'r' => out.push('\r'),
                    b'e' => out.push('\x1b'),
                    b'"' => out.push('"'),
                    b'\\' => out.push('\\'),
                    b'u' => out.push(self.hex_escape(4)?),
                    b'U' => out.push(self.hex_escape(8)?),
                    b' ' | b'\t' | b'\n' | b'\r' if multi => {
                        // line-ending backslash: skip whitespace and newlines
                        self.i -= 1;
                        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                            self.i += 1;
                        }
                    }
                    other => return Err(self.err(format!("invalid escape character {:?}; only the following escape characters are allowed: \\b, \\t, \\n, \\f, \\r, \\\", \\\\, \\uXXXX, and \\UXXXXXXXX", other as char))),
                }
                continue;
            }
            out.push(c);
            self.i += c.len_utf8();
        }
    }

    fn literal_string(&mut self) -> PR<String> {
        let multi = self.src[self.i..].starts_with("'''");
        self.i += if multi { 3 } else { 1 };
        if multi {
            if self.peek() == Some(b'\n') {
                self.i += 1;
            } else if self.src[self.i..].starts_with("\r\n") {
                self.i += 2;
            }
            let rest = &self.src[self.i..];
            let end = rest
                .find("'''")
                .ok_or_else(|| self.err("unexpected EOF; expected \"'''\""))?;
            let mut n = end + 3;
            while n < end + 5 && rest[n..].starts_with('\'') {
                n += 1;
            }
            let s = rest[..n - 3].to_string();
            self.i += n;
            return Ok(s);
        }
        let rest = &self.src[self.i..];
        let end = rest
            .find(['\'', '\n'])
            .ok_or_else(|| self.err("unexpected EOF; expected \"'\""))?;
        if rest.as_bytes()[end] == b'\n' {
            return Err(self.err("strings cannot contain newlines"));
        }
        let s = rest[..end].to_string();
        self.i += end + 1;
        Ok(s)
    }

    fn value(&mut self, depth: usize) -> PR<Value> {
        if depth > 256 {
            return Err(self.err("nesting too deep"));
        }
        self.ws();
        match self.peek() {
            None => Err(self.err("unexpected EOF; expected value")),
            Some(b'"') => Ok(Value::from(self.basic_string()?)),
            Some(b'\'') => Ok(Value::from(self.literal_string()?)),
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.ws_nl();
                    if self.peek() == Some(b']') {
                        self.i += 1;
                        return Ok(Value::list(items));
                    }
                    items.push(self.value(depth + 1)?);
                    self.ws_nl();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {}
                        _ => {
                            return Err(
                                self.err("expected a comma (',') or array terminator (']')")
                            );
                        }
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let table = Rc::new(std::cell::RefCell::new(Map::new()));
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Value::Map(table));
                }
                loop {
                    let k = self.key()?;
                    self.ws();
                    if self.peek() != Some(b'=') {
                        return Err(self.err("expected key separator '='"));
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    insert_path(&table, &k, v).map_err(|e| self.err(e))?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::Map(table));
                        }
                        _ => {
                            return Err(
                                self.err("expected a comma or an inline table terminator '}'")
                            );
                        }
                    }
                }
            }
            Some(_) => self.scalar(),
        }
    }

    fn scalar(&mut self) -> PR<Value> {
        let st = self.i;
        while self
            .peek()
            .is_some_and(|c| !matches!(c, b',' | b']' | b'}' | b'\n' | b'\r' | b'#'))
        {
            // A space ends a value, except the one between a date and a time.
            if self.peek() == Some(b' ') {
                let tok = &self.src[st..self.i];
                let next_digit = self.s.get(self.i + 1).is_some_and(u8::is_ascii_digit);
                if !(tok.len() == 10 && tok.as_bytes()[4] == b'-' && next_digit) {
                    break;
                }
            }
            self.i += 1;
        }
        let tok = self.src[st..self.i].trim_end();
        match tok {
            "true" => return Ok(Value::Bool(true)),
            "false" => return Ok(Value::Bool(false)),
            "inf" | "+inf" => return Ok(Value::Float(f64::INFINITY)),
            "-inf" => return Ok(Value::Float(f64::NEG_INFINITY)),
            "nan" | "+nan" | "-nan" => return Ok(Value::Float(f64::NAN)),
            _ => {}
        }
        if let Some(t) = parse_datetime(tok) {
            return Ok(Value::Object(Rc::new(t)));
        }
        let clean = tok.replace('_', "");
        let unsigned = clean.trim_start_matches(['+', '-']);
        let neg = clean.starts_with('-');
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
            if let Some(d) = clean.strip_prefix(prefix) {
                return i64::from_str_radix(d, radix)
                    .map(Value::Int64)
                    .map_err(|_| self.err(format!("invalid integer {tok:?}")));
            }
        }
        if !unsigned.is_empty() && unsigned.bytes().all(|c| c.is_ascii_digit()) {
            if unsigned.len() > 1 && unsigned.starts_with('0') {
                return Err(self.err(format!(
                    "invalid integer {tok:?}: leading zeros are not allowed"
                )));
            }
            return clean
                .parse::<i64>()
                .map(Value::Int64)
                .map_err(|_| self.err(format!("integer {tok:?} is out of range")));
        }
        if !unsigned.is_empty()
            && unsigned
                .bytes()
                .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
            && unsigned.as_bytes()[0].is_ascii_digit()
        {
            let _ = neg;
            return clean
                .parse::<f64>()
                .map(Value::Float)
                .map_err(|_| self.err(format!("invalid float {tok:?}")));
        }
        if tok.is_empty() {
            return Err(match self.peek() {
                None => self.err("unexpected EOF; expected value"),
                Some(c) => self.err(format!("expected value but found {:?} instead", c as char)),
            });
        }
        Err(self.err(format!("expected value but found {tok:?} instead")))
    }
}

/// TOML datetimes → time.Time (local ones in UTC, as the Go decoder with no zone).
fn parse_datetime(tok: &str) -> Option<GoTime> {
    let b = tok.as_bytes();
    if b.len() >= 10 && b[4] == b'-' && b[7] == b'-' {
        let layouts = [
            "2006-01-02T15:04:05.999999999Z07:00",
            "2006-01-02 15:04:05.999999999Z07:00",
            "2006-01-02T15:04:05.999999999",
            "2006-01-02 15:04:05.999999999",
            "2006-01-02",
        ];
        let t = tok.replace(['t'], "T").replace('z', "Z");
        return layouts
            .iter()
            .find_map(|l| super::gofmt_time::parse(l, &t, 0, "UTC").ok());
    }
    if b.len() >= 8 && b[2] == b':' && b[5] == b':' {
        return super::gofmt_time::parse("15:04:05.999999999", tok, 0, "UTC").ok();
    }
    None
}

/// Inserts `v` at dotted `key` below `table`, creating intermediate tables.
fn insert_path(
    table: &Rc<std::cell::RefCell<Map>>,
    key: &[String],
    v: Value,
) -> Result<(), String> {
    let mut cur = table.clone();
    for (i, k) in key.iter().enumerate() {
        if i + 1 == key.len() {
            let mut m = cur.borrow_mut();
            if m.contains_key(k) {
                return Err(format!("Key '{}' has already been defined.", key.join(".")));
            }
            m.insert(k.clone(), v);
            return Ok(());
        }
        let next = {
            let mut m = cur.borrow_mut();
            let e = m.entry(k.clone()).or_insert_with(|| Value::map(Map::new()));
            match e {
                Value::Map(x) => x.clone(),
                _ => {
                    return Err(format!(
                        "Key '{}' has already been defined.",
                        key[..=i].join(".")
                    ));
                }
            }
        };
        cur = next;
    }
    Ok(())
}

/// Descends to the table at `key`, creating it; the last element of an array of tables
/// is the one a `[a.b]` header below `[[a]]` refers to.
fn table_at(
    root: &Rc<std::cell::RefCell<Map>>,
    key: &[String],
) -> Result<Rc<std::cell::RefCell<Map>>, String> {
    let mut cur = root.clone();
    for k in key {
        let next = {
            let mut m = cur.borrow_mut();
            let e = m.entry(k.clone()).or_insert_with(|| Value::map(Map::new()));
            match e {
                Value::Map(x) => x.clone(),
                Value::List(l) => match l.last() {
                    Some(Value::Map(x)) => x.clone(),
                    _ => return Err(format!("Key '{}' has already been defined.", key.join("."))),
                },
                _ => return Err(format!("Key '{}' has already been defined.", key.join("."))),
            }
        };
        cur = next;
    }
    Ok(cur)
}

pub fn parse_toml(src: &str) -> Result<Value, String> {
    let root = Rc::new(std::cell::RefCell::new(Map::new()));
    let mut cur = root.clone();
    let mut p = P {
        s: src.as_bytes(),
        src,
        i: 0,
        last_key: String::new(),
    };
    loop {
        p.ws_nl();
        match p.peek() {
            None => break,
            Some(b'[') => {
                let array = p.src[p.i..].starts_with("[[");
                p.i += if array { 2 } else { 1 };
                let key = p.key()?;
                p.ws();
                let close = if array { "]]" } else { "]" };
                if !p.src[p.i..].starts_with(close) {
                    return Err(p.err(format!("expected {close:?}")));
                }
                p.i += close.len();
                p.last_key = key.join(".");
                if array {
                    let parent = table_at(&root, &key[..key.len() - 1]).map_err(|e| p.err(e))?;
                    let new = Rc::new(std::cell::RefCell::new(Map::new()));
                    let last = key.last().cloned().unwrap_or_default();
                    let mut pm = parent.borrow_mut();
                    match pm.get_mut(&last) {
                        Some(Value::List(l)) => Rc::make_mut(l).push(Value::Map(new.clone())),
                        Some(_) => {
                            return Err(
                                p.err(format!("Key '{}' has already been defined.", p.last_key))
                            );
                        }
                        None => {
                            pm.insert(last, Value::list(vec![Value::Map(new.clone())]));
                        }
                    }
                    cur = new;
                } else {
                    cur = table_at(&root, &key).map_err(|e| p.err(e))?;
                }
                p.end_of_line()?;
            }
            Some(_) => {
                let key = p.key()?;
                p.ws();
                match p.peek() {
                    Some(b'=') => {
                        p.i += 1;
                        p.last_key = key.join(".");
                    }
                    None => return Err(p.err("unexpected EOF; expected key separator '='")),
                    Some(c) => {
                        return Err(p.err(format!(
                            "expected key separator '=', but got {:?} instead",
                            c as char
                        )));
                    }
                }
                let v = p.value(0)?;
                insert_path(&cur, &key, v).map_err(|e| p.err(e))?;
                p.end_of_line()?;
            }
        }
    }
    Ok(Value::Map(root))
}

pub fn from_toml(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("fromToml", a, 1)?;
    let s = args::string(&a[0])?;
    Ok(match parse_toml(&s) {
        Ok(v) => v,
        Err(e) => {
            let mut m = Map::new();
            m.insert("Error".into(), Value::from(e));
            Value::map(m)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: &Value) -> String {
        let mut e = FuncEnv::default();
        to_toml(&mut e, std::slice::from_ref(v))
            .unwrap_or_default()
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    #[test]
    fn round_trip_layout() {
        let src = "a = 1\nb = \"x\"\n\n[t]\n  c = [1, 2]\n  [t.u]\n    d = true\n\n[[zz]]\n  e = 1.5\n\n[[zz]]\n  e = 2.0\n";
        let v = parse_toml(src).unwrap_or_default();
        assert_eq!(enc(&v), src);
        assert!(
            parse_toml("one")
                .err()
                .is_some_and(|e| e == "toml: line 1: unexpected EOF; expected key separator '='")
        );
    }
}
