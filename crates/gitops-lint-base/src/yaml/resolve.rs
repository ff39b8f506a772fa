//! Kubernetes' reading of plain YAML scalars: go-yaml v2 (YAML 1.1) as sigs.k8s.io/yaml uses
//! it. `yes`/`on` are booleans, `0644` is octal 420, `1_000` is 1000, `08` is float 8.

use super::node::Value;

/// Resolve a plain (unquoted, untagged) scalar.
pub fn resolve_plain(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            return Value::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            return Value::Bool(false);
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN),
        _ => {}
    }
    let first = text.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return Value::String(text.to_string());
    }
    let plain: String = text.chars().filter(|&c| c != '_').collect();
    if let Some(i) = parse_go_int(&plain) {
        return match i {
            GoInt::Signed(i) => Value::Int(i),
            GoInt::Unsigned(u) => Value::Float(u as f64),
        };
    }
    if is_yaml_float(&plain)
        && let Ok(f) = plain.parse::<f64>()
    {
        return Value::Float(f);
    }
    Value::String(text.to_string())
}

enum GoInt {
    Signed(i64),
    Unsigned(u64),
}

/// Go's `strconv.ParseInt(s, 0, 64)` then `ParseUint(s, 0, 64)`: sign, `0x`/`0o`/`0b`
/// prefixes and C-style leading-zero octal.
fn parse_go_int(s: &str) -> Option<GoInt> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(rest) = lower.strip_prefix("0x") {
        (16, rest.to_string())
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (8, rest.to_string())
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (2, rest.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(&body, radix).ok()?;
    if neg {
        if magnitude <= i64::MAX as u64 + 1 {
            return Some(GoInt::Signed((magnitude as i128).wrapping_neg() as i64));
        }
        return None;
    }
    if magnitude <= i64::MAX as u64 {
        Some(GoInt::Signed(magnitude as i64))
    } else {
        Some(GoInt::Unsigned(magnitude))
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`: the float pattern of go-yaml
/// (v2 and v3), shared by the parser and both emitters.
pub fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_yaml_1_1_scalars() {
        let cases: &[(&str, Value)] = &[
            ("yes", Value::Bool(true)),
            ("On", Value::Bool(true)),
            ("off", Value::Bool(false)),
            ("tRUE", Value::String("tRUE".into())),
            ("0777", Value::Int(511)),
            ("0o777", Value::Int(511)),
            ("0x1F", Value::Int(31)),
            ("0b101", Value::Int(5)),
            ("1_000", Value::Int(1000)),
            ("08", Value::Float(8.0)),
            ("Null", Value::Null),
            ("~", Value::Null),
            ("2001-12-14", Value::String("2001-12-14".into())),
            ("1000m", Value::String("1000m".into())),
            ("-12", Value::Int(-12)),
            ("1.5", Value::Float(1.5)),
            ("1e3", Value::Float(1000.0)),
            (".5", Value::Float(0.5)),
            ("1.2.3", Value::String("1.2.3".into())),
        ];
        for (text, want) in cases {
            assert_eq!(&resolve_plain(text), want, "{text}");
        }
    }
}
