//! Go's fmt as templates use it (`print`, `printf`, `println`, and `{{ . }}` output):
//! verbs, flags, width/precision, the `%!v(type=value)` error forms, and Go's float printing.

use super::funcs::memory;
use super::value::{Map, Value};

/// Go's `strconv.Quote`.
pub fn go_quote(s: &str) -> String {
    quote_with(s, '"', false)
}

fn quote_with(s: &str, q: char, ascii_only: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            '\u{FFFD}' => out.push_str("\\ufffd"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if ascii_only && !c.is_ascii() || c.is_control() || is_unprintable(c) => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// Approximates `!unicode.IsPrint` for the non-control characters Go escapes.
fn is_unprintable(c: char) -> bool {
    matches!(c as u32, 0x80..=0x9f | 0xad | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb)
        || (c.is_whitespace() && c != ' ')
}

/// Go's `strconv.CanBackquote`.
fn can_backquote(s: &str) -> bool {
    s.chars()
        .all(|c| c != '`' && c != '\u{FFFD}' && (c == '\t' || !(c.is_control())))
}

/// Go's `fmt.Sprint`: operands separated by a space when neither side is a string.
pub fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    let mut prev_string = false;
    for (i, a) in args.iter().enumerate() {
        let is_string = matches!(a, Value::String(_));
        if i > 0 && !is_string && !prev_string {
            out.push(' ');
        }
        format_value(&mut out, a, &Spec::verb('v'), 0);
        prev_string = is_string;
    }
    out
}

/// Go's `fmt.Sprintln`: always a space between operands, and a final newline.
pub fn sprintln(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        format_value(&mut out, a, &Spec::verb('v'), 0);
    }
    out.push('\n');
    out
}

/// `{{ x }}` output of a value, as Go's `fmt.Fprint` prints one operand.
pub fn display(v: &Value) -> String {
    let mut out = String::new();
    format_value(&mut out, v, &Spec::verb('v'), 0);
    out
}

#[derive(Clone, Default)]
struct Spec {
    verb: char,
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

impl Spec {
    fn verb(verb: char) -> Spec {
        Spec {
            verb,
            ..Spec::default()
        }
    }
}

/// Go's `fmt.Sprintf`.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut arg_i = 0;
    // An explicit argument index (`%[2]d`) disables the EXTRA check, as in Go.
    let mut reordered = false;
    let mut chars = format.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        let mut good_index = true;
        // Flags.
        while let Some(&(_, f)) = chars.peek() {
            match f {
                '-' => {
                    spec.minus = true;
                    spec.zero = false;
                }
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                ' ' => spec.space = true,
                '0' => spec.zero = !spec.minus,
                _ => break,
            }
            chars.next();
        }
        // Width.
        arg_number(
            &mut chars,
            &mut arg_i,
            &mut reordered,
            &mut good_index,
            args.len(),
        );
        if chars.peek().map(|p| p.1) == Some('*') {
            chars.next();
            match args.get(arg_i) {
                Some(Value::Int(n) | Value::Int64(n)) => {
                    if *n < 0 {
                        spec.minus = true;
                        spec.zero = false;
                    }
                    spec.width = Some(n.unsigned_abs().min(1 << 20) as usize);
                }
                _ => out.push_str("%!(BADWIDTH)"),
            }
            arg_i += 1;
        } else {
            spec.width = read_num(&mut chars);
        }
        // Precision.
        if chars.peek().map(|p| p.1) == Some('.') {
            chars.next();
            arg_number(
                &mut chars,
                &mut arg_i,
                &mut reordered,
                &mut good_index,
                args.len(),
            );
            if chars.peek().map(|p| p.1) == Some('*') {
                chars.next();
                match args.get(arg_i) {
                    Some(Value::Int(n) | Value::Int64(n)) if *n >= 0 => {
                        spec.prec = Some((*n).min(1 << 20) as usize)
                    }
                    _ => out.push_str("%!(BADPREC)"),
                }
                arg_i += 1;
            } else {
                spec.prec = Some(read_num(&mut chars).unwrap_or(0));
            }
        }
        arg_number(
            &mut chars,
            &mut arg_i,
            &mut reordered,
            &mut good_index,
            args.len(),
        );
        let Some((_, verb)) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        spec.verb = verb;
        if verb == 'v' {
            // `%+v` only changes how structs print (field names); numbers get no sign.
            spec.plus = false;
        }
        if verb == '%' {
            out.push('%');
            continue;
        }
        if !good_index {
            out.push_str(&format!("%!{verb}(BADINDEX)"));
            continue;
        }
        let Some(arg) = args.get(arg_i) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        arg_i += 1;
        format_value(&mut out, arg, &spec, 0);
    }
    if !reordered && arg_i < args.len() {
        out.push_str("%!(EXTRA ");
        for (i, a) in args[arg_i..].iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            match a {
                Value::Nil => out.push_str("<nil>"),
                _ => {
                    out.push_str(a.type_name());
                    out.push('=');
                    format_value(&mut out, a, &Spec::verb('v'), 0);
                }
            }
        }
        out.push(')');
    }
    out
}

/// Go's `[n]` argument index before a width, precision or verb.
fn arg_number(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    arg_i: &mut usize,
    reordered: &mut bool,
    good: &mut bool,
    nargs: usize,
) {
    if chars.peek().map(|p| p.1) != Some('[') {
        return;
    }
    chars.next();
    *reordered = true;
    let n = read_num(chars);
    if chars.peek().map(|p| p.1) != Some(']') {
        *good = false;
        return;
    }
    chars.next();
    match n {
        Some(n) if (1..=nargs).contains(&n) => *arg_i = n - 1,
        _ => *good = false,
    }
}

fn read_num(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>) -> Option<usize> {
    let mut n: Option<usize> = None;
    while let Some(&(_, d)) = chars.peek() {
        let Some(v) = d.to_digit(10) else { break };
        n = Some(
            n.unwrap_or(0)
                .saturating_mul(10)
                .saturating_add(v as usize)
                .min(1 << 20),
        );
        chars.next();
    }
    n
}

fn bad_verb(out: &mut String, v: &Value, verb: char) {
    out.push_str("%!");
    out.push(verb);
    out.push('(');
    match v {
        Value::Nil => out.push_str("<nil>"),
        _ => {
            out.push_str(v.type_name());
            out.push('=');
            format_value(out, v, &Spec::verb('v'), 0);
        }
    }
    out.push(')');
}

fn pad(out: &mut String, s: &str, spec: &Spec) {
    let len = s.chars().count();
    let w = spec.width.unwrap_or(0);
    if len >= w {
        out.push_str(s);
        return;
    }
    let fill = w - len;
    // The padding is as wide as the template asks: checked before it is written.
    if !memory::fits(out.len().saturating_add(fill).saturating_add(s.len())) {
        return;
    }
    if spec.minus {
        out.push_str(s);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if spec.zero && !matches!(spec.verb, 's' | 'q' | 'v' | 'c' | 't' | 'T') {
        // Zero padding goes after the sign.
        let (sign, rest) = match s.as_bytes().first() {
            Some(b'+' | b'-' | b' ') => s.split_at(1),
            _ => ("", s),
        };
        out.push_str(sign);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(rest);
    } else {
        let padc = if spec.zero && matches!(spec.verb, 's' | 'q' | 'v' | 'x' | 'X') {
            '0'
        } else {
            ' '
        };
        out.extend(std::iter::repeat_n(padc, fill));
        out.push_str(s);
    }
}

/// Nesting beyond this is not printed: a map can contain itself (`set $d "self" $d`), which
/// would otherwise recurse forever.
const MAX_FORMAT_DEPTH: usize = 100;

/// The render's memory budget bounds what one formatting builds (shared structure prints
/// once per reference); past it the text is cut short and the executor fails the render.
fn out_of_room(out: &str) -> bool {
    !memory::fits(out.len())
}

fn format_value(out: &mut String, v: &Value, spec: &Spec, depth: usize) {
    if out_of_room(out) {
        return;
    }
    if depth > MAX_FORMAT_DEPTH {
        out.push_str("...");
        return;
    }
    if spec.verb == 'v' && spec.sharp {
        return go_syntax(out, v, depth);
    }
    if spec.verb == 'T' {
        pad(out, v.type_name(), spec);
        return;
    }
    match v {
        Value::Nil => {
            if depth > 0 || spec.verb == 'v' {
                pad(out, "<nil>", spec);
            } else {
                bad_verb(out, v, spec.verb);
            }
        }
        Value::Bool(b) => match spec.verb {
            't' | 'v' => pad(out, if *b { "true" } else { "false" }, spec),
            _ => bad_verb(out, v, spec.verb),
        },
        Value::Int(i) | Value::Int64(i) => format_int(out, v, *i < 0, i.unsigned_abs(), spec),
        Value::Uint(u) => format_int(out, v, false, *u, spec),
        Value::Float(f) => format_float(out, v, *f, spec),
        Value::String(s) => format_str(out, v, s, spec),
        Value::Bytes(b) => match spec.verb {
            'x' | 'X' => hex_bytes(out, b, spec),
            's' | 'q' => format_str(out, v, &String::from_utf8_lossy(b), spec),
            _ => {
                out.push('[');
                for (i, byte) in b.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    format_value(out, &Value::Int(*byte as i64), spec, depth + 1);
                }
                out.push(']');
            }
        },
        Value::List(l) => {
            out.push('[');
            for (i, e) in l.iter().enumerate() {
                if out_of_room(out) {
                    break;
                }
                if i > 0 {
                    out.push(' ');
                }
                format_value(out, e, spec, depth + 1);
            }
            out.push(']');
        }
        Value::Map(m) => format_map(out, &m.borrow(), spec, depth),
        Value::Object(o) => match spec.verb {
            'v' | 's' => pad(out, &o.format(), spec),
            'q' => pad(out, &go_quote(&o.format()), spec),
            _ => bad_verb(out, v, spec.verb),
        },
    }
}

/// `%#v`: the value as Go source, for the types templates see.
fn go_syntax(out: &mut String, v: &Value, depth: usize) {
    if out_of_room(out) {
        return;
    }
    if depth > MAX_FORMAT_DEPTH {
        out.push_str("...");
        return;
    }
    match v {
        Value::Nil => out.push_str(if depth == 0 {
            "<nil>"
        } else {
            "interface {}(nil)"
        }),
        Value::String(s) => out.push_str(&go_quote(s)),
        Value::Uint(u) => out.push_str(&format!("0x{u:x}")),
        Value::Float(f) => {
            let s = format_float_go(*f, 'g', None);
            out.push_str(&s);
            if !s.contains(['.', 'e', 'I', 'N']) {
                out.push_str(".0");
            }
        }
        Value::Bytes(b) => {
            out.push_str("[]byte{");
            let items: Vec<String> = b.iter().map(|x| format!("0x{x:x}")).collect();
            out.push_str(&items.join(", "));
            out.push('}');
        }
        Value::List(l) => {
            out.push_str("[]interface {}{");
            for (i, e) in l.iter().enumerate() {
                if out_of_room(out) {
                    break;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                go_syntax(out, e, depth + 1);
            }
            out.push('}');
        }
        Value::Map(m) => {
            out.push_str("map[string]interface {}{");
            for (i, (k, e)) in m.borrow().iter().enumerate() {
                if out_of_room(out) {
                    break;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&go_quote(k));
                out.push(':');
                go_syntax(out, e, depth + 1);
            }
            out.push('}');
        }
        other => format_value(out, other, &Spec::verb('v'), depth + 1),
    }
}

fn format_map(out: &mut String, m: &Map, spec: &Spec, depth: usize) {
    out.push_str("map[");
    for (i, (k, e)) in m.iter().enumerate() {
        if out_of_room(out) {
            break;
        }
        if i > 0 {
            out.push(' ');
        }
        format_str(out, &Value::Nil, k, spec);
        out.push(':');
        format_value(out, e, spec, depth + 1);
    }
    out.push(']');
}

fn format_str(out: &mut String, v: &Value, s: &str, spec: &Spec) {
    let s: std::borrow::Cow<str> = match spec.prec {
        Some(p) if matches!(spec.verb, 's' | 'q' | 'v') => {
            s.chars().take(p).collect::<String>().into()
        }
        _ => s.into(),
    };
    match spec.verb {
        's' | 'v' => pad(out, &s, spec),
        'q' => {
            let q = if spec.sharp && can_backquote(&s) {
                format!("`{s}`")
            } else {
                quote_with(&s, '"', spec.plus)
            };
            pad(out, &q, spec)
        }
        'x' | 'X' => hex_bytes(out, s.as_bytes(), spec),
        _ => bad_verb(out, v, spec.verb),
    }
}

/// `%x` / `%X` of a string or byte slice: two hex digits per byte.
fn hex_bytes(out: &mut String, bytes: &[u8], spec: &Spec) {
    let mut h = String::new();
    for (i, b) in bytes.iter().enumerate() {
        if spec.space && i > 0 {
            h.push(' ');
        }
        if spec.sharp && (spec.space || i == 0) {
            h.push_str(if spec.verb == 'x' { "0x" } else { "0X" });
        }
        if spec.verb == 'x' {
            h.push_str(&format!("{b:02x}"));
        } else {
            h.push_str(&format!("{b:02X}"));
        }
    }
    pad(out, &h, spec)
}

fn format_int(out: &mut String, v: &Value, neg: bool, mag: u64, spec: &Spec) {
    let digits = match spec.verb {
        'd' | 'v' => mag.to_string(),
        'b' => format!("{mag:b}"),
        'o' | 'O' => format!("{mag:o}"),
        'x' => format!("{mag:x}"),
        'X' => format!("{mag:X}"),
        'c' => {
            let c = if neg {
                '\u{FFFD}'
            } else {
                char::from_u32(mag as u32)
                    .filter(|_| mag <= 0x10FFFF)
                    .unwrap_or('\u{FFFD}')
            };
            return pad(out, &c.to_string(), spec);
        }
        'q' => {
            let c = if neg {
                '\u{FFFD}'
            } else {
                char::from_u32(mag as u32)
                    .filter(|_| mag <= 0x10FFFF)
                    .unwrap_or('\u{FFFD}')
            };
            let q = if spec.sharp && can_backquote(&c.to_string()) && c != '\'' {
                format!("'{c}'")
            } else {
                quote_with(&c.to_string(), '\'', spec.plus)
            };
            return pad(out, &q, spec);
        }
        'U' => {
            let mut s = format!("U+{mag:04X}");
            if spec.sharp
                && let Some(c) = char::from_u32(mag as u32)
                && !c.is_control()
            {
                s.push_str(&format!(" '{c}'"));
            }
            return pad(out, &s, spec);
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
            // Go prints integers under float verbs as bad verbs.
            return bad_verb(out, v, spec.verb);
        }
        _ => return bad_verb(out, v, spec.verb),
    };
    let mut digits = digits;
    if let Some(p) = spec.prec {
        if p == 0 && mag == 0 {
            digits.clear();
        } else if digits.len() < p {
            digits = "0".repeat(p - digits.len()) + &digits;
        }
    }
    let mut s = String::new();
    if neg {
        s.push('-');
    } else if spec.plus {
        s.push('+');
    } else if spec.space {
        s.push(' ');
    }
    if spec.sharp {
        match spec.verb {
            'b' => s.push_str("0b"),
            'o' if !digits.starts_with('0') => s.push('0'),
            'x' => s.push_str("0x"),
            'X' => s.push_str("0X"),
            _ => {}
        }
    }
    if spec.verb == 'O' {
        s.push_str("0o");
    }
    s.push_str(&digits);
    // A precision disables zero padding for integers, as in Go.
    let spec2 = if spec.prec.is_some() {
        Spec {
            zero: false,
            ..spec.clone()
        }
    } else {
        spec.clone()
    };
    pad(out, &s, &spec2);
}

/// Decimal digits of |f| without trailing zeros, and the decimal point position
/// (value = 0.d1d2… × 10^dp). `sig` = None gives the shortest round-trip digits.
/// An f64's exact decimal expansion has at most 767 significant digits and 1074 after the
/// point, so digits past these are zeros. Rust's formatter panics on a precision over
/// `u16::MAX` ("Formatting argument out of range"); asking for more than these is never needed.
const MAX_EXACT_SIG_DIGITS: usize = 800;
const MAX_EXACT_FRAC_DIGITS: usize = 1100;

fn float_digits(f: f64, sig: Option<usize>) -> (Vec<u8>, i32) {
    let s = match sig {
        None => format!("{:e}", f.abs()),
        Some(n) => format!(
            "{:.*e}",
            n.saturating_sub(1).min(MAX_EXACT_SIG_DIGITS),
            f.abs()
        ),
    };
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits == [b'0'] {
        return (digits, 1);
    }
    (digits, exp + 1)
}

fn fmt_e(digits: &[u8], dp: i32, prec: usize, upper: bool) -> String {
    let mut s = String::new();
    s.push(digits.first().copied().unwrap_or(b'0') as char);
    if prec > 0 {
        s.push('.');
        for i in 1..=prec {
            s.push(digits.get(i).copied().unwrap_or(b'0') as char);
        }
    }
    let exp = if digits == [b'0'] { 0 } else { dp - 1 };
    s.push(if upper { 'E' } else { 'e' });
    s.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        s.push('0');
    }
    s.push_str(&e.to_string());
    s
}

fn fmt_f(digits: &[u8], dp: i32, prec: usize) -> String {
    let mut s = String::new();
    if dp > 0 {
        for i in 0..dp as usize {
            s.push(digits.get(i).copied().unwrap_or(b'0') as char);
        }
    } else {
        s.push('0');
    }
    if prec > 0 {
        s.push('.');
        for i in 0..prec as i32 {
            let j = dp + i;
            let d = if j < 0 {
                b'0'
            } else {
                digits.get(j as usize).copied().unwrap_or(b'0')
            };
            s.push(d as char);
        }
    }
    s
}

/// `%.Nf` for any N: the exact digits, then zeros past the last one an f64 can have.
fn fixed_point(f: f64, prec: usize) -> String {
    let exact = prec.min(MAX_EXACT_FRAC_DIGITS);
    let mut s = format!("{f:.exact$}");
    s.extend(std::iter::repeat_n('0', prec - exact));
    s
}

/// Go's `strconv.FormatFloat(f, fmt, prec, 64)` for 'e', 'f', 'g' (and upper-case forms).
pub fn format_float_go(f: f64, verb: char, prec: Option<usize>) -> String {
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
    let neg = f.is_sign_negative();
    let body = match verb {
        'e' | 'E' => {
            let p = prec.unwrap_or(6);
            let (d, dp) = float_digits(f, Some(p + 1));
            fmt_e(&d, dp, p, verb == 'E')
        }
        'f' | 'F' => fixed_point(f.abs(), prec.unwrap_or(6)),
        _ => {
            let shortest = prec.is_none();
            let (d, dp) = match prec {
                None => float_digits(f, None),
                Some(p) => float_digits(f, Some(p.max(1))),
            };
            let mut p = match prec {
                None => d.len(),
                Some(p) => p.max(1),
            };
            let mut eprec = p as i32;
            if eprec > d.len() as i32 && d.len() as i32 >= dp {
                eprec = d.len() as i32;
            }
            if shortest {
                eprec = 6;
            }
            let exp = dp - 1;
            if (exp < -4 || exp >= eprec) && d != [b'0'] {
                p = p.min(d.len());
                fmt_e(&d, dp, p - 1, verb == 'G')
            } else {
                if p as i32 > dp {
                    p = d.len();
                }
                fmt_f(&d, dp, (p as i32 - dp).max(0) as usize)
            }
        }
    };
    if neg { format!("-{body}") } else { body }
}

fn format_float(out: &mut String, v: &Value, f: f64, spec: &Spec) {
    let verb = match spec.verb {
        'v' => 'g',
        c @ ('e' | 'E' | 'f' | 'F' | 'g' | 'G') => c,
        _ => return bad_verb(out, v, spec.verb),
    };
    let mut s = format_float_go(f, verb, spec.prec);
    if spec.sharp && !s.contains('.') && !s.contains("Inf") && !s.contains("NaN") {
        // '#' forces a decimal point.
        match s.find(['e', 'E']) {
            Some(i) => s.insert(i, '.'),
            None => s.push('.'),
        }
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        if spec.plus {
            s.insert(0, '+');
        } else if spec.space {
            s.insert(0, ' ');
        }
    }
    let spec2 = if s.contains("Inf") || s.contains("NaN") {
        Spec {
            zero: false,
            ..spec.clone()
        }
    } else {
        spec.clone()
    };
    pad(out, &s, &spec2);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_precisions_print_the_zeros_go_prints_without_panicking() {
        let one = [Value::Float(1.0)];
        let f = sprintf("%.65536f", &one);
        assert_eq!(f.len(), 2 + 65536);
        assert!(f.starts_with("1.000") && f.bytes().skip(2).all(|b| b == b'0'));
        let e = sprintf("%.70000e", &one);
        assert!(
            e.starts_with("1.000") && e.ends_with("e+00"),
            "{}",
            &e[..10]
        );
        assert_eq!(e.len(), 2 + 70000 + 4);
        assert_eq!(sprintf("%.70000g", &one), "1");
        // Exact digits far past the point still come from the float, not from padding.
        let tiny = sprintf("%.1100f", &[Value::Float(5e-324)]);
        assert!(tiny.starts_with("0.000"), "{}", &tiny[..10]);
        assert!(tiny.ends_with(&format!("3447265625{}", "0".repeat(26))));
        let star = sprintf("%.*f", &[Value::Int(1 << 30), Value::Float(0.5)]);
        assert_eq!(
            star.len(),
            2 + (1 << 20),
            "precision capped as the width is"
        );
    }

    #[test]
    fn floats_print_like_go() {
        assert_eq!(display(&Value::Float(1e6)), "1e+06");
        assert_eq!(display(&Value::Float(123456.0)), "123456");
        assert_eq!(display(&Value::Float(0.0001)), "0.0001");
        assert_eq!(display(&Value::Float(0.00001)), "1e-05");
        assert_eq!(display(&Value::Float(3.5)), "3.5");
        assert_eq!(
            sprintf("%f|%.2f|%e|%g|%.3g", &vec![Value::Float(3.24159); 5]),
            "3.241590|3.24|3.241590e+00|3.24159|3.24"
        );
        assert_eq!(
            sprintf(
                "%6.2f|%-6.1f|%06.2f",
                &[Value::Float(2.5), Value::Float(2.5), Value::Float(-2.5)]
            ),
            "  2.50|2.5   |-02.50"
        );
    }

    #[test]
    fn bad_verbs_and_extras() {
        assert_eq!(sprintf("%d", &[Value::str("hi")]), "%!d(string=hi)");
        assert_eq!(sprintf("%d %d", &[Value::Int(1)]), "1 %!d(MISSING)");
        assert_eq!(
            sprintf("%d", &[Value::Int(1), Value::str("x")]),
            "1%!(EXTRA string=x)"
        );
        assert_eq!(
            sprintf(
                "%04x|%X|%#o|%+d|%q|%c",
                &[
                    Value::Int(127),
                    Value::Int(255),
                    Value::Int(8),
                    Value::Int(5),
                    Value::str("a\"b"),
                    Value::Int(65)
                ]
            ),
            "007f|FF|010|+5|\"a\\\"b\"|A"
        );
    }

    #[test]
    fn self_containing_map_prints_without_recursing_forever() {
        let m = Value::map(Map::new());
        if let Value::Map(inner) = &m {
            inner.borrow_mut().insert("self".into(), m.clone());
        }
        assert!(display(&m).contains("..."));
        if let Value::Map(inner) = &m {
            inner.borrow_mut().clear(); // break the cycle
        }
    }

    #[test]
    fn argument_indexes_and_go_syntax() {
        let args = [Value::Int(1), Value::str("b")];
        assert_eq!(sprintf("%[2]s %[1]d %[2]q", &args), "b 1 \"b\"");
        assert_eq!(sprintf("%[3]d", &args), "%!d(BADINDEX)");
        assert_eq!(sprintf("%+v|%+d", &[Value::Int(5), Value::Int(5)]), "5|+5");
        let mut m = Map::new();
        m.insert(
            "a".into(),
            Value::list(vec![Value::Int(1), Value::Float(2.0), Value::Nil]),
        );
        assert_eq!(
            sprintf("%#v", &[Value::map(m)]),
            "map[string]interface {}{\"a\":[]interface {}{1, 2.0, interface {}(nil)}}"
        );
        assert_eq!(
            sprintf("%#v|%#v", &[Value::str("x"), Value::Nil]),
            "\"x\"|<nil>"
        );
    }

    #[test]
    fn containers() {
        let mut m = Map::new();
        m.insert("b".into(), Value::Int(2));
        m.insert("a".into(), Value::list(vec![Value::str("x"), Value::Nil]));
        assert_eq!(display(&Value::map(m)), "map[a:[x <nil>] b:2]");
        assert_eq!(
            sprint(&[Value::Int(1), Value::Int(2), Value::str("a"), Value::Int(3)]),
            "1 2a3"
        );
    }
}
