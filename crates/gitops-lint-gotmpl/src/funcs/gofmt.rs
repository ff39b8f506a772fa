//! Go's `fmt` as the function library needs it: `%v` of any value, `strconv.FormatFloat`
//! ('g' and 'e' shortest), `%q` (strconv.Quote).

use super::super::value::Value;

/// `fmt.Sprintf("%v", v)`.
pub fn format_v(v: &Value) -> String {
    let mut out = String::new();
    write_v(&mut out, v, 0);
    out
}

/// Go's fmt stops at a map that contains itself only by running out of stack; we print
/// `...` past this depth, as printf.rs does.
const MAX_FORMAT_DEPTH: usize = 100;

fn write_v(out: &mut String, v: &Value, depth: usize) {
    // Shared structure prints once per reference: the render's memory budget bounds it.
    if !super::memory::fits(out.len()) {
        return;
    }
    if depth > MAX_FORMAT_DEPTH {
        out.push_str("...");
        return;
    }
    match v {
        Value::Nil => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Uint(u) => out.push_str(&u.to_string()),
        Value::Float(f) => out.push_str(&format_float_g(*f)),
        Value::String(s) => out.push_str(s),
        Value::Bytes(b) => {
            out.push('[');
            for (i, x) in b.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(&x.to_string());
            }
            out.push(']');
        }
        Value::List(l) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if !super::memory::fits(out.len()) {
                    break;
                }
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, x, depth + 1);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push_str("map[");
            for (i, (k, x)) in m.borrow().iter().enumerate() {
                if !super::memory::fits(out.len()) {
                    break;
                }
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, x, depth + 1);
            }
            out.push(']');
        }
        Value::Object(o) => out.push_str(&o.format()),
    }
}

/// Shortest decimal digits of a finite, non-zero |f| and the position of the decimal point:
/// value = 0.DIGITS × 10^dp (strconv's `decimal` representation).
pub fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` prints the shortest round-tripping digits, e.g. "1.2345e6".
    let s = format!("{:e}", f.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let digits = digits.trim_end_matches('0').to_string();
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits
    };
    (digits, exp + 1)
}

fn special_float(f: f64) -> Option<String> {
    if f.is_nan() {
        return Some("NaN".into());
    }
    if f.is_infinite() {
        return Some(if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        });
    }
    None
}

/// strconv.FormatFloat(f, 'g', -1, 64), which is also `%v`.
pub fn format_float_g(f: f64) -> String {
    if let Some(s) = special_float(f) {
        return s;
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits, dp) = shortest_digits(f);
    let exp = dp - 1;
    let neg = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        format!("{neg}{}", format_e_digits(&digits, exp))
    } else {
        format!("{neg}{}", format_f_digits(&digits, dp))
    }
}

/// strconv.FormatFloat(f, 'e', -1, 64).
pub fn format_float_e(f: f64) -> String {
    if let Some(s) = special_float(f) {
        return s;
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0e+00".into()
        } else {
            "0e+00".into()
        };
    }
    let (digits, dp) = shortest_digits(f);
    let neg = if f < 0.0 { "-" } else { "" };
    format!("{neg}{}", format_e_digits(&digits, dp - 1))
}

/// strconv.FormatFloat(f, 'f', -1, 64).
pub fn format_float_f(f: f64) -> String {
    if let Some(s) = special_float(f) {
        return s;
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits, dp) = shortest_digits(f);
    let neg = if f < 0.0 { "-" } else { "" };
    format!("{neg}{}", format_f_digits(&digits, dp))
}

fn format_e_digits(digits: &str, exp: i32) -> String {
    let mut s = String::new();
    s.push_str(&digits[..1]);
    if digits.len() > 1 {
        s.push('.');
        s.push_str(&digits[1..]);
    }
    s.push('e');
    s.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        s.push('0');
    }
    s.push_str(&e.to_string());
    s
}

fn format_f_digits(digits: &str, dp: i32) -> String {
    let nd = digits.len() as i32;
    if dp <= 0 {
        let mut s = String::from("0.");
        for _ in 0..(-dp) {
            s.push('0');
        }
        s.push_str(digits);
        return s;
    }
    if nd <= dp {
        let mut s = digits.to_string();
        for _ in 0..(dp - nd) {
            s.push('0');
        }
        return s;
    }
    let (a, b) = digits.split_at(dp as usize);
    format!("{a}.{b}")
}

/// Go's `unicode.IsPrint`, approximated without Unicode tables: everything but controls,
/// non-ASCII spaces, format characters, surrogates and private use.
pub fn is_go_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    if c.is_control() || (c.is_whitespace()) {
        return false;
    }
    !matches!(u,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB
        | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF | 0xFFFE | 0xFFFF)
}

/// strconv.Quote / `%q` of a string.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if is_go_print(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_go() {
        for (f, want) in [
            (1_000_000.0, "1e+06"),
            (100_000.0, "100000"),
            (1.5, "1.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123_456_789.0, "1.23456789e+08"),
            (-2.0, "-2"),
            (3.0, "3"),
            (1e21, "1e+21"),
            (0.1 + 0.2, "0.30000000000000004"),
        ] {
            assert_eq!(format_float_g(f), want, "{f}");
        }
        assert_eq!(format_float_f(1e21), "1000000000000000000000");
        assert_eq!(format_float_e(1e-7), "1e-07");
    }

    #[test]
    fn quote_like_go() {
        assert_eq!(go_quote("a\"b\\\n\t\u{1}é"), "\"a\\\"b\\\\\\n\\t\\x01é\"");
        assert_eq!(go_quote("\u{a0}"), "\"\\u00a0\"");
    }
}
