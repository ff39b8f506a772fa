//! A float's text as go-yaml prints it (and as a plain scalar's resolved value reads back).

/// Format a float as Go's `strconv.FormatFloat(f, 'g', -1, 64)` does (`1e+06`, `0.5`).
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Shortest round-trip digits and exponent, from Rust's `{:e}` (e.g. "1.5e6").
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if neg { "-" } else { "" };
    // strconv's shortest %g switches to exponent form when exp < -4 || exp >= 6.
    let eprec = 6;
    if exp < -4 || exp >= eprec {
        let mut m = digits[..1].to_string();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{m}e{esign}{:02}", exp.abs());
    }
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{sign}{digits}{}", "0".repeat(int_len - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_float_format() {
        assert_eq!(format_float(1e6), "1e+06");
        assert_eq!(format_float(1000.0), "1000");
        assert_eq!(format_float(0.5), "0.5");
        assert_eq!(format_float(123456789.0), "1.23456789e+08");
        assert_eq!(format_float(0.0001), "0.0001");
        assert_eq!(format_float(0.00001), "1e-05");
        assert_eq!(format_float(-2.5), "-2.5");
    }
}
