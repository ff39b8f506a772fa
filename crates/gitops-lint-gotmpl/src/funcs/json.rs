//! Go's encoding/json as templates see it: `json.Marshal` (sorted keys, HTML escaping,
//! Go's float format) and `json.Unmarshal` into interface{} (numbers become float64) with
//! Go's error texts.

use super::super::value::{Map, Value};
use super::encoding::base64_encode;
use super::gofmt::{format_float_e, format_float_f, format_float_g};

/// Go's float64 JSON encoding: 'f' unless the exponent is extreme, then 'e' with "e-7".
pub fn json_float(f: f64) -> Result<String, String> {
    if !f.is_finite() {
        return Err(format!("json: unsupported value: {}", format_float_g(f)));
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format_float_e(f);
        // clean up e-09 to e-9
        if let Some(i) = s.find("e-0") {
            return Ok(format!("{}e-{}", &s[..i], &s[i + 3..]));
        }
        return Ok(s);
    }
    Ok(format_float_f(f))
}

pub fn write_json_string(out: &mut String, s: &str, escape_html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '<' | '>' | '&' if escape_html => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// json.Marshal (indent = None) or json.MarshalIndent(v, "", indent).
pub fn encode(v: &Value, escape_html: bool, indent: Option<&str>) -> Result<String, String> {
    let mut out = String::new();
    write_value(&mut out, v, escape_html, indent, 0)?;
    Ok(out)
}

fn newline(out: &mut String, indent: Option<&str>, depth: usize) {
    if let Some(ind) = indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(ind);
        }
    }
}

fn write_value(
    out: &mut String,
    v: &Value,
    html: bool,
    indent: Option<&str>,
    depth: usize,
) -> Result<(), String> {
    if depth > super::args::MAX_DEPTH {
        return Err(
            "json: unsupported value: encountered a cycle via map[string]interface {}".into(),
        );
    }
    if !super::memory::fits(out.len()) {
        return Err("json: result exceeds the render's memory budget".into());
    }
    match v {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Uint(u) => out.push_str(&u.to_string()),
        Value::Float(f) => out.push_str(&json_float(*f)?),
        Value::String(s) => write_json_string(out, s, html),
        Value::Bytes(b) => write_json_string(out, &base64_encode(b), html),
        Value::Object(o) => match object_json(o.as_ref()) {
            Some(v) => write_value(out, &v, html, indent, depth + 1)?,
            None => write_json_string(out, &o.format(), html),
        },
        Value::List(l) => {
            if l.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                write_value(out, x, html, indent, depth + 1)?;
            }
            newline(out, indent, depth);
            out.push(']');
        }
        Value::Map(m) => {
            let m = m.borrow();
            if m.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                write_json_string(out, k, html);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_value(out, x, html, indent, depth + 1)?;
            }
            newline(out, indent, depth);
            out.push('}');
        }
    }
    Ok(())
}

/// What json.Marshal makes of the Go objects this library creates: time.Time marshals as
/// an RFC 3339 string, a semver version as its string, a certificate as a struct.
fn object_json(o: &dyn super::super::value::GoObject) -> Option<Value> {
    let any = o.as_any();
    if let Some(t) = any.downcast_ref::<super::gofmt_time::GoTime>() {
        return Some(Value::from(super::gofmt_time::format(
            t,
            "2006-01-02T15:04:05.999999999Z07:00",
        )));
    }
    // Map-kind objects (Helm's `.Files`, a map[string][]byte) marshal as objects.
    if let Some(entries) = o.map_entries() {
        return Some(Value::map(entries.into_iter().collect()));
    }
    if let Some(c) = any.downcast_ref::<super::crypto_certs::Certificate>() {
        let mut m = Map::new();
        m.insert("Cert".into(), Value::from(c.cert.as_str()));
        m.insert("Key".into(), Value::from(c.key.as_str()));
        return Some(Value::map(m));
    }
    None
}

/// Go's quoteChar for syntax errors.
fn quote_char(c: char) -> String {
    match c {
        '\'' => "'\\''".into(),
        '"' => "'\"'".into(),
        c => {
            let q = super::gofmt::go_quote(&c.to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
}

const EOF_ERR: &str = "unexpected end of JSON input";

impl Parser<'_> {
    fn peek_char(&self) -> Option<char> {
        self.src.get(self.i..).and_then(|r| r.chars().next())
    }

    fn bad(&self, ctx: &str) -> String {
        match self.peek_char() {
            None => EOF_ERR.into(),
            Some(c) => format!("invalid character {} {ctx}", quote_char(c)),
        }
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > super::args::MAX_DEPTH {
            return Err("exceeded max depth".into());
        }
        self.ws();
        match self.s.get(self.i) {
            None => Err(EOF_ERR.into()),
            Some(b'{') => {
                self.i += 1;
                let mut m = Map::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Value::map(m));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return Err(self.bad("looking for beginning of object key string"));
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return Err(self.bad("after object key"));
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    m.insert(k, v);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::map(m));
                        }
                        _ => return Err(self.bad("after object key:value pair")),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut l = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::list(l));
                }
                loop {
                    l.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::list(l));
                        }
                        _ => return Err(self.bad("after array element")),
                    }
                }
            }
            Some(b'"') => Ok(Value::from(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Nil),
            Some(c) if *c == b'-' || c.is_ascii_digit() => self.number(),
            Some(_) => Err(self.bad("looking for beginning of value")),
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, String> {
        for (k, w) in word.bytes().enumerate() {
            match self.s.get(self.i) {
                None => return Err(EOF_ERR.into()),
                Some(&c) if c == w => self.i += 1,
                Some(_) => {
                    return Err(self.bad(&format!(
                        "in literal {word} (expecting {})",
                        quote_char(w as char)
                    )));
                }
            }
            let _ = k;
        }
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let st = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        self.i - st
    }

    fn number(&mut self) -> Result<Value, String> {
        let st = self.i;
        if self.s[self.i] == b'-' {
            self.i += 1;
        }
        match self.s.get(self.i) {
            None => return Err(EOF_ERR.into()),
            Some(b'0') => self.i += 1,
            Some(c) if c.is_ascii_digit() => {
                self.digits();
            }
            Some(_) => return Err(self.bad("in numeric literal")),
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.bad("after decimal point in numeric literal"));
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.bad("in exponent of numeric literal"));
            }
        }
        let text = &self.src[st..self.i];
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => Err(format!(
                "json: cannot unmarshal number {text} into Go value of type float64"
            )),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // opening quote
        let mut out = String::new();
        loop {
            let Some(c) = self.peek_char() else {
                return Err(EOF_ERR.into());
            };
            match c {
                '"' => {
                    self.i += 1;
                    return Ok(out);
                }
                '\\' => {
                    self.i += 1;
                    let Some(e) = self.s.get(self.i).copied() else {
                        return Err(EOF_ERR.into());
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\x08'),
                        b'f' => out.push('\x0c'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let u = self.hex4()?;
                            if (0xD800..0xDC00).contains(&u)
                                && self.s.get(self.i) == Some(&b'\\')
                                && self.s.get(self.i + 1) == Some(&b'u')
                            {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    let cp = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                                    out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
                                    continue;
                                }
                                self.i = save;
                            }
                            out.push(char::from_u32(u).unwrap_or('\u{fffd}'));
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.bad("in string escape code"));
                        }
                    }
                }
                c if (c as u32) < 0x20 => return Err(self.bad("in string literal")),
                c => {
                    out.push(c);
                    self.i += c.len_utf8();
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut u = 0u32;
        for _ in 0..4 {
            let Some(c) = self.s.get(self.i).copied() else {
                return Err(EOF_ERR.into());
            };
            let Some(d) = (c as char).to_digit(16) else {
                return Err(self.bad("in \\u hexadecimal character escape"));
            };
            u = u * 16 + d;
            self.i += 1;
        }
        Ok(u)
    }
}

/// json.Unmarshal into interface{}: the value, or Go's syntax error text.
pub fn parse(src: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: src.as_bytes(),
        src,
        i: 0,
    };
    let v = p.value(0)?;
    p.ws();
    if p.i < p.s.len() {
        return Err(p.bad("after top-level value"));
    }
    Ok(v)
}

/// The JSON type word Go uses in "cannot unmarshal X into Go value of type T".
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Map(_) => "object",
        Value::List(_) => "array",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Nil => "null",
        _ => "number",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_like_encoding() {
        assert_eq!(json_float(1e6).ok().as_deref(), Some("1000000"));
        assert_eq!(json_float(1e21).ok().as_deref(), Some("1e+21"));
        assert_eq!(json_float(1e-7).ok().as_deref(), Some("1e-7"));
        assert_eq!(json_float(0.5).ok().as_deref(), Some("0.5"));
        let v = Value::from("<a&b>");
        assert_eq!(
            encode(&v, true, None).ok().as_deref(),
            Some("\"\\u003ca\\u0026b\\u003e\"")
        );
    }

    #[test]
    fn go_like_errors() {
        assert_eq!(parse("[1,2").err().as_deref(), Some(EOF_ERR));
        assert_eq!(
            parse("{\"a\" 1}").err().as_deref(),
            Some("invalid character '1' after object key")
        );
        assert_eq!(parse("nul").err().as_deref(), Some(EOF_ERR));
        assert_eq!(
            parse("x").err().as_deref(),
            Some("invalid character 'x' looking for beginning of value")
        );
        assert!(parse("{\"a\":[1,2.5,\"x\",null,true]}").is_ok());
    }
}
