//! Kubernetes quantity and Go duration canonical forms: what the API server
//! stores for `1000m` (`1`), `0.1` (`100m`), `3072Mi` (`3Gi`), and `8760h` (`8760h0m0s`).
//! A port of `resource.Quantity`'s `CanonicalizeBytes` for the values people write.

/// How a quantity was written, which decides its canonical suffix family.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Format {
    DecimalSI,
    BinarySI,
    DecimalExponent,
}

/// An exact value `mantissa × 10^exp10` (binary suffixes are expanded into the mantissa).
#[derive(Debug)]
struct Exact {
    negative: bool,
    mantissa: u128,
    exp10: i32,
    format: Format,
}

fn parse(text: &str) -> Option<Exact> {
    let s = text.trim();
    if s.is_empty() || s != text {
        return None;
    }
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(num_end);
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return None;
    }
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
    let digits = format!("{int_part}{frac_part}");
    let mut mantissa: u128 = digits.parse().ok()?;
    let mut exp10 = -(frac_part.len() as i32);
    let format = match suffix {
        "" => Format::DecimalSI,
        "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => {
            exp10 += match suffix {
                "n" => -9,
                "u" => -6,
                "m" => -3,
                "k" => 3,
                "M" => 6,
                "G" => 9,
                "T" => 12,
                "P" => 15,
                _ => 18,
            };
            Format::DecimalSI
        }
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
            let power = match suffix {
                "Ki" => 1,
                "Mi" => 2,
                "Gi" => 3,
                "Ti" => 4,
                "Pi" => 5,
                _ => 6,
            };
            mantissa = mantissa.checked_mul(1024u128.checked_pow(power)?)?;
            Format::BinarySI
        }
        _ => {
            let e = suffix.strip_prefix(['e', 'E'])?;
            exp10 += e.parse::<i32>().ok()?;
            Format::DecimalExponent
        }
    };
    if exp10.abs() > 30 {
        return None;
    }
    Some(Exact {
        negative,
        mantissa,
        exp10,
        format,
    })
}

/// Is the value an integer? Returns it when it fits.
fn as_integer(q: &Exact) -> Option<u128> {
    if q.exp10 >= 0 {
        q.mantissa.checked_mul(10u128.checked_pow(q.exp10 as u32)?)
    } else {
        let div = 10u128.checked_pow((-q.exp10) as u32)?;
        q.mantissa.is_multiple_of(div).then(|| q.mantissa / div)
    }
}

/// Compare two quantities by value (`1Gi` > `1G`, `500Mi` < `1Gi`); `None` when either does
/// not parse or the two cannot be brought to one exponent.
pub fn compare_quantities(a: &str, b: &str) -> Option<std::cmp::Ordering> {
    let (a, b) = (parse(a)?, parse(b)?);
    let signed = |q: &Exact, exp: i32| -> Option<i128> {
        let m = q
            .mantissa
            .checked_mul(10u128.checked_pow((q.exp10 - exp) as u32)?)?;
        let m = i128::try_from(m).ok()?;
        Some(if q.negative { -m } else { m })
    };
    let exp = a.exp10.min(b.exp10);
    Some(signed(&a, exp)?.cmp(&signed(&b, exp)?))
}

/// The canonical text of a quantity, or None when it does not parse.
pub fn canonical_quantity(text: &str) -> Option<String> {
    let mut q = parse(text)?;
    let sign = if q.negative && q.mantissa != 0 {
        "-"
    } else {
        ""
    };
    // Values below one nano round up to 1n, as the API server does.
    if q.exp10 < -9 {
        let div = 10u128.pow((-9 - q.exp10) as u32);
        q.mantissa = q.mantissa.div_ceil(div);
        q.exp10 = -9;
    }
    let mut format = q.format;
    if format == Format::BinarySI {
        // Small or fractional binary values are written in decimal.
        match as_integer(&q) {
            Some(v) if v >= 1024 => {
                let mut v = v;
                let mut power = 0;
                while power < 6 && v.is_multiple_of(1024) {
                    v /= 1024;
                    power += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
                return Some(format!("{sign}{v}{suffix}"));
            }
            _ => format = Format::DecimalSI,
        }
    }
    // Decimal: the largest exponent (a multiple of 3) that keeps the mantissa integral.
    let (mut m, mut e) = (q.mantissa, q.exp10);
    if m == 0 {
        return Some("0".into());
    }
    while m.is_multiple_of(10) {
        m /= 10;
        e += 1;
    }
    let rem = e.rem_euclid(3);
    m = m.checked_mul(10u128.pow(rem as u32))?;
    e -= rem;
    if format == Format::DecimalExponent {
        return Some(if e == 0 {
            format!("{sign}{m}")
        } else {
            format!("{sign}{m}e{e}")
        });
    }
    let suffix = match e {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ if e > 18 => {
            m = m.checked_mul(10u128.checked_pow((e - 18) as u32)?)?;
            "E"
        }
        _ => return None,
    };
    Some(format!("{sign}{m}{suffix}"))
}

/// Go's `time.Duration.String()` for a duration string (`8760h` → `8760h0m0s`).
pub fn canonical_duration(text: &str) -> Option<String> {
    let mut rest = text.trim();
    if rest.is_empty() || rest != text {
        return None;
    }
    let negative = rest.starts_with('-');
    rest = rest.trim_start_matches(['-', '+']);
    if rest == "0" {
        return Some("0s".into());
    }
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..end].parse().ok()?;
        rest = &rest[end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        nanos += value * scale;
        rest = &rest[unit_end..];
    }
    let total = nanos.round() as u128;
    let sign = if negative && total > 0 { "-" } else { "" };
    if total == 0 {
        return Some("0s".into());
    }
    if total < 1_000_000_000 {
        // Sub-second durations use the smallest unit that gives a leading digit.
        let (unit, div) = if total < 1_000 {
            ("ns", 1)
        } else if total < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return Some(format!("{sign}{}{unit}", trim_fraction(total, div)));
    }
    let h = total / 3_600_000_000_000;
    let m = (total / 60_000_000_000) % 60;
    let s_nanos = total % 60_000_000_000;
    let s = trim_fraction(s_nanos, 1_000_000_000);
    Some(if h > 0 {
        format!("{sign}{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{sign}{m}m{s}s")
    } else {
        format!("{sign}{s}s")
    })
}

fn trim_fraction(value: u128, div: u128) -> String {
    let whole = value / div;
    let frac = value % div;
    if frac == 0 {
        return whole.to_string();
    }
    let width = div.to_string().len() - 1;
    let frac = format!("{frac:0width$}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_compare_by_value() {
        use std::cmp::Ordering::*;
        assert_eq!(compare_quantities("1Gi", "1G"), Some(Greater));
        assert_eq!(compare_quantities("500Mi", "1Gi"), Some(Less));
        assert_eq!(compare_quantities("1024Mi", "1Gi"), Some(Equal));
        assert_eq!(compare_quantities("1.5Gi", "1536Mi"), Some(Equal));
        assert_eq!(compare_quantities("100m", "1"), Some(Less));
        assert_eq!(compare_quantities("ten", "1"), None);
    }

    #[test]
    fn quantities_canonicalize_as_the_api_server_does() {
        let c = |s: &str| canonical_quantity(s);
        assert_eq!(c("1000m").as_deref(), Some("1"));
        assert_eq!(c("0.1").as_deref(), Some("100m"));
        assert_eq!(c("1024Mi").as_deref(), Some("1Gi"));
        assert_eq!(c("3072Mi").as_deref(), Some("3Gi"));
        assert_eq!(c("1536Mi").as_deref(), Some("1536Mi"));
        assert_eq!(c("1.5Gi").as_deref(), Some("1536Mi"));
        assert_eq!(c("0.5Gi").as_deref(), Some("512Mi"));
        assert_eq!(c("0.5Ki").as_deref(), Some("512"));
        assert_eq!(c("3072").as_deref(), Some("3072"));
        assert_eq!(c("1000").as_deref(), Some("1k"));
        assert_eq!(c("500m").as_deref(), Some("500m"));
        assert_eq!(c("250m").as_deref(), Some("250m"));
        assert_eq!(c("512Ki").as_deref(), Some("512Ki"));
        assert_eq!(c("100Ki").as_deref(), Some("100Ki"));
        assert_eq!(c("1e3").as_deref(), Some("1e3"));
        assert_eq!(c("2G").as_deref(), Some("2G"));
        assert_eq!(c("0").as_deref(), Some("0"));
        assert_eq!(c("abc"), None);
    }

    #[test]
    fn durations_print_as_go_does() {
        let d = |s: &str| canonical_duration(s);
        assert_eq!(d("8760h").as_deref(), Some("8760h0m0s"));
        assert_eq!(d("2160h0m0s").as_deref(), Some("2160h0m0s"));
        assert_eq!(d("90m").as_deref(), Some("1h30m0s"));
        assert_eq!(d("30s").as_deref(), Some("30s"));
        assert_eq!(d("1.5s").as_deref(), Some("1.5s"));
        assert_eq!(d("500ms").as_deref(), Some("500ms"));
        assert_eq!(d("x"), None);
    }
}
