//! Conversions: Sprig's `strval`/`strslice` and spf13/cast's ToInt64/ToFloat64 rules.

use super::super::value::Value;
use super::FuncEnv;
use super::args;
use super::gofmt::format_v;

/// Sprig's `strval`: strings and bytes as-is, Stringers/errors via their text, else `%v`.
pub fn strval(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        _ => format_v(v),
    }
}

/// Sprig's `strslice`: a list becomes its elements' strvals with nils dropped; nil becomes
/// an empty list; anything else a one-element list.
pub fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::List(l) => {
            // One string per element, each a copy: a list holding one large string many
            // times would copy it that many times. Each copy is taken from the call's room;
            // past it the list is cut short and the executor fails the render.
            let mut out = Vec::new();
            for x in l.iter().filter(|x| !matches!(x, Value::Nil)) {
                let s = strval(x);
                if super::memory::spend(s.len() + std::mem::size_of::<String>()).is_err() {
                    break;
                }
                out.push(s);
            }
            out
        }
        Value::Bytes(b) => b.iter().map(|x| x.to_string()).collect(),
        Value::Nil => Vec::new(),
        _ => vec![strval(v)],
    }
}

/// cast's trimZeroDecimal: "5.00" → "5" so that whole-number strings parse as ints.
fn trim_zero_decimal(s: &str) -> &str {
    let b = s.as_bytes();
    let mut found_zero = false;
    for i in (1..=b.len()).rev() {
        match b[i - 1] {
            b'.' => {
                if found_zero {
                    return &s[..i - 1];
                }
            }
            b'0' => found_zero = true,
            _ => return s,
        }
    }
    s
}

/// strconv.ParseInt(s, base, 64) for base 0 (prefixes, underscores) or an explicit base.
pub fn parse_go_int(s: &str, base: u32) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let mag = parse_go_uint_body(body, base)?;
    if neg {
        if mag > (i64::MAX as u64) + 1 {
            return None;
        }
        Some((mag as i64).wrapping_neg())
    } else {
        i64::try_from(mag).ok()
    }
}

/// strconv.ParseUint's digits part (no sign).
pub fn parse_go_uint_body(body: &str, base: u32) -> Option<u64> {
    if body.is_empty() {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let (radix, digits, prefixed) = if base == 0 {
        if let Some(r) = lower.strip_prefix("0x") {
            (16, r.to_string(), true)
        } else if let Some(r) = lower.strip_prefix("0o") {
            (8, r.to_string(), true)
        } else if let Some(r) = lower.strip_prefix("0b") {
            (2, r.to_string(), true)
        } else if lower.len() > 1 && lower.starts_with('0') {
            (8, lower[1..].to_string(), true)
        } else {
            (10, lower.clone(), false)
        }
    } else {
        (base, lower.clone(), false)
    };
    let digits = if base == 0 && digits.contains('_') {
        // Go allows underscores only between digits (or after a base prefix).
        if digits.starts_with('_') && !prefixed || digits.ends_with('_') || digits.contains("__") {
            return None;
        }
        digits.replace('_', "")
    } else {
        digits
    };
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(&digits, radix).ok()
}

/// strconv.ParseFloat(s, 64).
pub fn parse_go_float(s: &str) -> Option<f64> {
    let t = s.trim_start_matches(['+', '-']);
    let lower = t.to_ascii_lowercase();
    if lower.starts_with("0x") {
        return None; // hex floats: not worth it
    }
    if lower.contains('_') {
        return None;
    }
    let ok_word = matches!(lower.as_str(), "inf" | "infinity" | "nan");
    if !ok_word
        && !t
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    s.parse::<f64>().ok()
}

/// Go's float64 → int64 conversion as amd64 performs it (out of range gives MinInt64).
pub fn float_to_i64(f: f64) -> i64 {
    if f.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// cast.ToInt64 (errors give 0).
pub fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint(u) => *u as i64,
        Value::Float(f) => float_to_i64(*f),
        Value::String(s) => parse_go_int(trim_zero_decimal(s), 0).unwrap_or(0),
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

/// cast.ToFloat64 (errors give 0).
pub fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Uint(u) => *u as f64,
        Value::Float(f) => *f,
        Value::String(s) => parse_go_float(s).unwrap_or(0.0),
        Value::Bool(b) => f64::from(u8::from(*b)),
        _ => 0.0,
    }
}

pub fn to_string(_: &mut FuncEnv, a: &[Value]) -> Result<Value, String> {
    args::arity("toString", a, 1)?;
    Ok(Value::from(strval(&a[0])))
}

pub fn to_strings(_: &mut FuncEnv, a: &[Value]) -> Result<Value, String> {
    args::arity("toStrings", a, 1)?;
    Ok(Value::list(
        strslice(&a[0]).into_iter().map(Value::from).collect(),
    ))
}

pub fn atoi(_: &mut FuncEnv, a: &[Value]) -> Result<Value, String> {
    args::arity("atoi", a, 1)?;
    let s = args::string(&a[0])?;
    let n = match parse_go_int(&s, 10) {
        Some(n) => n,
        // Atoi's range errors return the clamped value; syntax errors 0.
        None if !s.is_empty()
            && s.trim_start_matches(['+', '-'])
                .bytes()
                .all(|c| c.is_ascii_digit())
            && !s.trim_start_matches(['+', '-']).is_empty() =>
        {
            if s.starts_with('-') {
                i64::MIN
            } else {
                i64::MAX
            }
        }
        None => 0,
    };
    Ok(Value::Int(n))
}

pub fn int64(_: &mut FuncEnv, a: &[Value]) -> Result<Value, String> {
    args::arity("int64", a, 1)?;
    Ok(Value::Int64(to_int64(&a[0])))
}

pub fn int(_: &mut FuncEnv, a: &[Value]) -> Result<Value, String> {
    args::arity("int", a, 1)?;
    Ok(Value::Int(to_int64(&a[0])))
}

pub fn float64(_: &mut FuncEnv, a: &[Value]) -> Result<Value, String> {
    args::arity("float64", a, 1)?;
    Ok(Value::Float(to_float64(&a[0])))
}

/// toDecimal: the value's `%v` read as an octal number ("0777" → 511), 0 on error.
pub fn to_decimal(_: &mut FuncEnv, a: &[Value]) -> Result<Value, String> {
    args::arity("toDecimal", a, 1)?;
    Ok(Value::Int64(parse_go_int(&format_v(&a[0]), 8).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cast_rules() {
        assert_eq!(to_int64(&Value::from("0x10")), 16);
        assert_eq!(to_int64(&Value::from("010")), 8);
        assert_eq!(to_int64(&Value::from("5.00")), 5);
        assert_eq!(to_int64(&Value::from("5.5")), 0);
        assert_eq!(to_int64(&Value::Float(3.9)), 3);
        assert_eq!(to_int64(&Value::Float(-3.9)), -3);
        assert_eq!(to_int64(&Value::Nil), 0);
        assert_eq!(to_float64(&Value::from("1.5")), 1.5);
        assert_eq!(to_float64(&Value::from("x")), 0.0);
        assert_eq!(parse_go_int("1_000", 0), Some(1000));
        assert_eq!(parse_go_int("-9223372036854775808", 10), Some(i64::MIN));
    }
}
