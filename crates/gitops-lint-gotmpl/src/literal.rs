//! Literal decoding as Go's strconv does it for templates: numbers (`ParseInt`/`ParseUint`/
//! `ParseFloat` with base prefixes and `_` separators), quoted strings and character constants.

/// A numeric literal classified like `parse.NumberNode`: which Go kinds can hold it exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Number {
    pub text: String,
    pub int: Option<i64>,
    pub uint: Option<u64>,
    pub float: Option<f64>,
    /// (real, imaginary) for complex literals such as `1+2i` or `3i`.
    pub complex: Option<(f64, f64)>,
}

/// Classifies a number token the way `parse.(*Tree).newNumber` does.
pub fn parse_number(text: &str, is_char: bool, is_complex: bool) -> Result<Number, String> {
    let mut n = Number {
        text: text.to_string(),
        int: None,
        uint: None,
        float: None,
        complex: None,
    };
    if is_char {
        let inner = text.get(1..).unwrap_or("");
        let (c, tail) = unquote_char(inner, '\'')?;
        if tail != "'" {
            return Err(format!("malformed character constant: {text}"));
        }
        n.int = Some(c as i64);
        n.uint = Some(c as u64);
        n.float = Some(c as u32 as f64);
        return Ok(n);
    }
    if is_complex {
        // "re+imi" or "re-imi": split at the last sign that is not an exponent sign.
        let body = text.strip_suffix('i').unwrap_or(text);
        let bytes = body.as_bytes();
        let split = (1..bytes.len()).rev().find(|&i| {
            (bytes[i] == b'+' || bytes[i] == b'-')
                && !matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P')
        });
        let parsed = split.and_then(|i| Some((parse_float(&body[..i])?, parse_float(&body[i..])?)));
        let Some((re, im)) = parsed else {
            return Err(format!(
                "illegal number syntax: {}",
                super::printf::go_quote(text)
            ));
        };
        n.complex = Some((re, im));
        simplify_complex(&mut n);
        return Ok(n);
    }
    if let Some(body) = text.strip_suffix('i')
        && let Some(f) = parse_float(body)
    {
        n.complex = Some((0.0, f));
        simplify_complex(&mut n);
        return Ok(n);
    }
    let u = parse_uint(text);
    if let Some(u) = u {
        n.uint = Some(u);
    }
    if let Some(i) = parse_int(text) {
        n.int = Some(i);
        if i == 0 {
            n.uint = Some(0); // "-0"
        }
    }
    if let Some(i) = n.int {
        n.float = Some(i as f64);
    } else if let Some(u) = n.uint {
        n.float = Some(u as f64);
    } else if let Some(f) = parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Err(format!(
                "integer overflow: {}",
                super::printf::go_quote(text)
            ));
        }
        n.float = Some(f);
        if f.fract() == 0.0 && (-9.223372036854776e18..9.223372036854776e18).contains(&f) {
            n.int = Some(f as i64);
        }
        if f.fract() == 0.0 && (0.0..1.8446744073709552e19).contains(&f) {
            n.uint = Some(f as u64);
        }
    }
    if n.int.is_none() && n.uint.is_none() && n.float.is_none() {
        return Err(format!(
            "illegal number syntax: {}",
            super::printf::go_quote(text)
        ));
    }
    Ok(n)
}

fn simplify_complex(n: &mut Number) {
    if let Some((re, im)) = n.complex
        && im == 0.0
    {
        n.float = Some(re);
        if re.fract() == 0.0 && (-9.223372036854776e18..9.223372036854776e18).contains(&re) {
            n.int = Some(re as i64);
        }
        if re.fract() == 0.0 && (0.0..1.8446744073709552e19).contains(&re) {
            n.uint = Some(re as u64);
        }
    }
}

/// Go's rule for `_` in literals: only between digits, or right after a base prefix.
fn underscore_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// `strconv.ParseUint(s, 0, 64)`.
pub fn parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() || s.starts_with(['+', '-']) {
        return None;
    }
    if s.contains('_') && !underscore_ok(s) {
        return None;
    }
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// `strconv.ParseInt(s, 0, 64)`.
pub fn parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let u = parse_uint(body)?;
    if neg {
        if u <= 1u64 << 63 {
            Some((u as i128).wrapping_neg() as i64)
        } else {
            None
        }
    } else {
        i64::try_from(u).ok()
    }
}

/// `strconv.ParseFloat(s, 64)` for the syntax the lexer accepts (decimal and hex floats).
pub fn parse_float(s: &str) -> Option<f64> {
    if s.contains('_') && !underscore_ok(s) {
        return None;
    }
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    let (neg, body) = match clean.as_bytes().first() {
        Some(b'-') => (true, &clean[1..]),
        Some(b'+') => (false, &clean[1..]),
        _ => (false, clean.as_str()),
    };
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        parse_hex_float(hex)?
    } else {
        if body.is_empty()
            || !body
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    Some(if neg { -v } else { v })
}

fn parse_hex_float(s: &str) -> Option<f64> {
    // Go requires the binary exponent in hexadecimal floats.
    let i = s.find(['p', 'P'])?;
    let (mant, exp) = (&s[..i], s[i + 1..].parse::<i32>().ok()?);
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int_part.chars().chain(frac_part.chars()) {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let shift = exp - 4 * frac_part.len() as i32;
    Some(v * 2f64.powi(shift))
}

/// `strconv.UnquoteChar`: decodes one (possibly escaped) character, returns it and the rest.
pub fn unquote_char(s: &str, quote: char) -> Result<(char, &str), String> {
    let syntax = || "invalid syntax".to_string();
    let mut chars = s.chars();
    let c = chars.next().ok_or_else(syntax)?;
    if c == quote && (quote == '\'' || quote == '"') {
        return Err(syntax());
    }
    if c != '\\' {
        return Ok((c, chars.as_str()));
    }
    let e = chars.next().ok_or_else(syntax)?;
    let simple = match e {
        'a' => Some('\x07'),
        'b' => Some('\x08'),
        'f' => Some('\x0c'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\x0b'),
        '\\' => Some('\\'),
        '\'' | '"' => {
            if e != quote {
                return Err(syntax());
            }
            Some(e)
        }
        _ => None,
    };
    if let Some(c) = simple {
        return Ok((c, chars.as_str()));
    }
    let rest = chars.as_str();
    let (len, radix) = match e {
        'x' => (2, 16),
        'u' => (4, 16),
        'U' => (8, 16),
        '0'..='7' => (2, 8),
        _ => return Err(syntax()),
    };
    let digits = rest.get(..len).ok_or_else(syntax)?;
    let mut v = u32::from_str_radix(digits, radix).map_err(|_| syntax())?;
    if e.is_digit(8) {
        v += e.to_digit(8).unwrap_or(0) << 6;
        if v > 255 {
            return Err(syntax());
        }
    }
    let c = char::from_u32(v).ok_or_else(syntax)?;
    Ok((c, &rest[len..]))
}

/// `strconv.Unquote` for `"…"` and `` `…` `` strings (raw strings drop `\r`, as Go does).
pub fn unquote(s: &str) -> Result<String, String> {
    let syntax = || "invalid syntax".to_string();
    if let Some(raw) = s.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
        return Ok(raw.replace('\r', ""));
    }
    let mut inner = s
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or_else(syntax)?;
    let mut out = String::with_capacity(inner.len());
    while !inner.is_empty() {
        if inner.starts_with('\n') {
            return Err(syntax());
        }
        let (c, rest) = unquote_char(inner, '"')?;
        out.push(c);
        inner = rest;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_forms() {
        assert_eq!(
            parse_number("0x_1p-4", false, false).map(|n| n.float),
            Ok(Some(0.0625))
        );
        assert_eq!(
            parse_number("0377", false, false).map(|n| n.int),
            Ok(Some(255))
        );
        assert_eq!(
            parse_number("1e19", false, false).map(|n| (n.int, n.uint)),
            Ok((None, Some(10_000_000_000_000_000_000)))
        );
        assert!(parse_number("0xi", false, false).is_err());
        assert_eq!(
            parse_number("'\\n'", true, false).map(|n| n.int),
            Ok(Some(10))
        );
    }
}
