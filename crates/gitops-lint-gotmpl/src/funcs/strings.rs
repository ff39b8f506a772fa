//! String functions (Sprig strings.go, goutils, xstrings).

use super::super::value::{Map, Value};
use super::FuncEnv;
use super::args::{self, arity, check_alloc};
use super::conv::{strslice, strval};
use super::gofmt::{format_v, go_quote};
use super::unicode::{go_is_space, go_to_lower, go_to_upper};

type R = Result<Value, String>;

fn s(v: impl Into<String>) -> R {
    Ok(Value::from(v.into()))
}

/// Go byte-indexed slicing errors, as the runtime panics read.
fn slice_err(lo: Option<i64>, hi: Option<i64>, len: usize) -> String {
    match (lo, hi) {
        (None, Some(h)) => {
            format!("runtime error: slice bounds out of range [:{h}] with length {len}")
        }
        (Some(l), None) => format!("runtime error: slice bounds out of range [{l}:{len}]"),
        (Some(_), Some(h)) if h > len as i64 || h < 0 => {
            format!("runtime error: slice bounds out of range [:{h}] with length {len}")
        }
        (Some(l), Some(h)) => format!("runtime error: slice bounds out of range [{l}:{h}]"),
        (None, None) => "runtime error: slice bounds out of range".into(),
    }
}

fn byte_str(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn hello(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("hello", a, 0)?;
    s("Hello!")
}

/// goutils.AbbreviateFull (byte-indexed, as in Go).
fn abbreviate_full(st: &str, offset: i64, max_width: i64) -> String {
    let b = st.as_bytes();
    let len = b.len() as i64;
    if st.is_empty() || max_width < 4 {
        return if st.is_empty() {
            String::new()
        } else {
            st.to_string()
        };
    }
    if len <= max_width {
        return st.to_string();
    }
    let mut offset = offset.min(len);
    if len - offset < max_width - 3 {
        offset = len - (max_width - 3);
    }
    if offset <= 4 {
        return format!("{}...", byte_str(&b[..(max_width - 3) as usize]));
    }
    if max_width < 7 {
        return String::new();
    }
    if offset + max_width - 3 < len {
        let rest = byte_str(&b[offset as usize..]);
        return format!("...{}", abbreviate_full(&rest, 0, max_width - 3));
    }
    format!("...{}", byte_str(&b[(len - (max_width - 3)) as usize..]))
}

pub fn abbrev(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("abbrev", a, 2)?;
    let w = args::int(&a[0])?;
    let st = args::string(&a[1])?;
    if w < 4 {
        return Ok(Value::String(st));
    }
    s(abbreviate_full(&st, 0, w))
}

pub fn abbrevboth(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("abbrevboth", a, 3)?;
    let left = args::int(&a[0])?;
    let right = args::int(&a[1])?;
    let st = args::string(&a[2])?;
    if right < 4 || left > 0 && right < 7 {
        return Ok(Value::String(st));
    }
    s(abbreviate_full(&st, left, right))
}

pub fn trunc(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("trunc", a, 2)?;
    let c = args::int(&a[0])?;
    let st = args::string(&a[1])?;
    let b = st.as_bytes();
    let len = b.len() as i64;
    if c < 0 && len + c > 0 {
        return s(byte_str(&b[(len + c) as usize..]));
    }
    if c >= 0 && len > c {
        return s(byte_str(&b[..c as usize]));
    }
    Ok(Value::String(st))
}

pub fn trim(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("trim", a, 1)?;
    s(args::string(&a[0])?.trim_matches(go_is_space))
}

pub fn upper(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("upper", a, 1)?;
    s(args::string(&a[0])?
        .chars()
        .map(go_to_upper)
        .collect::<String>())
}

pub fn lower(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("lower", a, 1)?;
    s(args::string(&a[0])?
        .chars()
        .map(go_to_lower)
        .collect::<String>())
}

/// strings.Title: upper-case the first letter of every word.
pub fn title(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("title", a, 1)?;
    let st = args::string(&a[0])?;
    let is_sep = |r: char| {
        if r.is_ascii() {
            return !(r.is_ascii_alphanumeric() || r == '_');
        }
        if r.is_alphabetic() || r.is_numeric() {
            return false;
        }
        go_is_space(r)
    };
    let mut prev = ' ';
    let out: String = st
        .chars()
        .map(|r| {
            let o = if is_sep(prev) { go_to_upper(r) } else { r };
            prev = r;
            o
        })
        .collect();
    s(out)
}

/// goutils.Uncapitalize: lower-case the first letter of every whitespace-separated word.
pub fn untitle(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("untitle", a, 1)?;
    let st = args::string(&a[0])?;
    let mut next = true;
    let out: String = st
        .chars()
        .map(|c| {
            if go_is_space(c) {
                next = true;
                c
            } else if next {
                next = false;
                go_to_lower(c)
            } else {
                c
            }
        })
        .collect();
    s(out)
}

pub fn substr(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("substr", a, 3)?;
    let start = args::int(&a[0])?;
    let end = args::int(&a[1])?;
    let st = args::string(&a[2])?;
    let b = st.as_bytes();
    let len = b.len() as i64;
    if start < 0 {
        if end < 0 || end > len {
            return Err(slice_err(None, Some(end), b.len()));
        }
        return s(byte_str(&b[..end as usize]));
    }
    if end < 0 || end > len {
        if start > len {
            return Err(slice_err(Some(start), None, b.len()));
        }
        return s(byte_str(&b[start as usize..]));
    }
    if start > end {
        return Err(slice_err(Some(start), Some(end), b.len()));
    }
    s(byte_str(&b[start as usize..end as usize]))
}

pub fn repeat(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("repeat", a, 2)?;
    let n = args::int(&a[0])?;
    let st = args::string(&a[1])?;
    if n < 0 {
        return Err("strings: negative Repeat count".into());
    }
    check_alloc("repeat", (n as usize).saturating_mul(st.len()))?;
    s(st.repeat(n as usize))
}

pub fn trim_all(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("trimAll", a, 2)?;
    let cut = args::string(&a[0])?;
    let st = args::string(&a[1])?;
    s(st.trim_matches(|c| cut.contains(c)))
}

pub fn trim_suffix(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("trimSuffix", a, 2)?;
    let suf = args::string(&a[0])?;
    let st = args::string(&a[1])?;
    s(st.strip_suffix(&*suf).unwrap_or(&st))
}

pub fn trim_prefix(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("trimPrefix", a, 2)?;
    let pre = args::string(&a[0])?;
    let st = args::string(&a[1])?;
    s(st.strip_prefix(&*pre).unwrap_or(&st))
}

pub fn nospace(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("nospace", a, 1)?;
    s(args::string(&a[0])?
        .chars()
        .filter(|c| !go_is_space(*c))
        .collect::<String>())
}

/// goutils.Initials: first byte of every whitespace-separated word (byte-wise, as Go's code).
pub fn initials(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("initials", a, 1)?;
    let st = args::string(&a[0])?;
    let mut gap = true;
    let mut out = String::new();
    for &b in st.as_bytes() {
        let ch = b as char;
        if go_is_space(ch) {
            gap = true;
        } else if gap {
            out.push(ch);
            gap = false;
        }
    }
    s(out)
}

pub fn swapcase(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("swapcase", a, 1)?;
    let st = args::string(&a[0])?;
    let out: String = st
        .chars()
        .map(|c| {
            if c.is_uppercase() {
                go_to_lower(c)
            } else if c.is_lowercase() {
                go_to_upper(c)
            } else {
                c
            }
        })
        .collect();
    s(out)
}

pub fn snakecase(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("snakecase", a, 1)?;
    s(super::strings_case::camel_to_lower(
        &args::string(&a[0])?,
        '_',
    ))
}

pub fn kebabcase(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("kebabcase", a, 1)?;
    s(super::strings_case::camel_to_lower(
        &args::string(&a[0])?,
        '-',
    ))
}

pub fn camelcase(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("camelcase", a, 1)?;
    s(super::strings_case::to_pascal(&args::string(&a[0])?))
}

/// goutils.WrapCustom (byte-indexed).
fn wrap_custom(st: &str, len: i64, nl: &str, long_words: bool) -> String {
    if st.is_empty() {
        return String::new();
    }
    let nl = if nl.is_empty() { "\n" } else { nl };
    let wl = len.max(1) as usize;
    let b = st.as_bytes();
    let n = b.len();
    let mut off = 0usize;
    let mut out: Vec<u8> = Vec::new();
    while n - off > wl {
        if b[off] == b' ' {
            off += 1;
            continue;
        }
        let end = (wl + off + 1).min(n);
        let space = b[off..end].iter().rposition(|&c| c == b' ');
        match space {
            Some(p) => {
                let at = off + p;
                out.extend_from_slice(&b[off..at]);
                out.extend_from_slice(nl.as_bytes());
                off = at + 1;
            }
            None if long_words => {
                out.extend_from_slice(&b[off..off + wl]);
                out.extend_from_slice(nl.as_bytes());
                off += wl;
            }
            None => {
                let end = wl + off;
                match b[end..].iter().position(|&c| c == b' ') {
                    None => {
                        out.extend_from_slice(&b[off..]);
                        off = n;
                    }
                    Some(i) => {
                        let at = i + end;
                        out.extend_from_slice(&b[off..at]);
                        out.extend_from_slice(nl.as_bytes());
                        off = at + 1;
                    }
                }
            }
        }
    }
    out.extend_from_slice(&b[off.min(n)..]);
    byte_str(&out)
}

pub fn wrap(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("wrap", a, 2)?;
    let l = args::int(&a[0])?;
    s(wrap_custom(&args::string(&a[1])?, l, "", false))
}

pub fn wrap_with(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("wrapWith", a, 3)?;
    let l = args::int(&a[0])?;
    let sep = args::string(&a[1])?;
    let st = args::string(&a[2])?;
    // At most one separator per `l` characters (one per character when `l` < 1).
    let breaks = st.len() / usize::try_from(l).unwrap_or(1).max(1) + 1;
    check_alloc(
        "wrapWith",
        st.len().saturating_add(breaks.saturating_mul(sep.len())),
    )?;
    s(wrap_custom(&st, l, &sep, true))
}

pub fn contains(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("contains", a, 2)?;
    let sub = args::string(&a[0])?;
    Ok(Value::Bool(args::string(&a[1])?.contains(&*sub)))
}

pub fn has_prefix(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("hasPrefix", a, 2)?;
    let sub = args::string(&a[0])?;
    Ok(Value::Bool(args::string(&a[1])?.starts_with(&*sub)))
}

pub fn has_suffix(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("hasSuffix", a, 2)?;
    let sub = args::string(&a[0])?;
    Ok(Value::Bool(args::string(&a[1])?.ends_with(&*sub)))
}

/// Formats each argument and joins them with spaces, taking each part's bytes from the
/// call's room as it goes: every part fits alone, but the same large value given many times
/// must not (`cat $m $m $m ...` of a map printed in full each time).
fn joined_parts(name: &str, a: &[Value], part: impl Fn(&Value) -> String) -> R {
    let mut parts: Vec<String> = Vec::new();
    for v in a.iter().filter(|v| !matches!(v, Value::Nil)) {
        let p = part(v);
        super::memory::spend(p.len() + 1).map_err(|e| format!("{name}: {e}"))?;
        parts.push(p);
    }
    s(parts.join(" "))
}

pub fn quote(_: &mut FuncEnv, a: &[Value]) -> R {
    joined_parts("quote", a, |v| go_quote(&strval(v)))
}

pub fn squote(_: &mut FuncEnv, a: &[Value]) -> R {
    joined_parts("squote", a, |v| format!("'{}'", format_v(v)))
}

pub fn cat(_: &mut FuncEnv, a: &[Value]) -> R {
    joined_parts("cat", a, format_v)
}

fn indent_str(name: &str, n: i64, st: &str) -> Result<String, String> {
    if n < 0 {
        return Err("strings: negative Repeat count".into());
    }
    let lines = st.matches('\n').count() + 1;
    check_alloc(
        name,
        (n as usize).saturating_mul(lines).saturating_add(st.len()),
    )?;
    let pad = " ".repeat(n as usize);
    Ok(format!("{pad}{}", st.replace('\n', &format!("\n{pad}"))))
}

pub fn indent(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("indent", a, 2)?;
    let n = args::int(&a[0])?;
    s(indent_str("indent", n, &args::string(&a[1])?)?)
}

pub fn nindent(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("nindent", a, 2)?;
    let n = args::int(&a[0])?;
    s(format!(
        "\n{}",
        indent_str("nindent", n, &args::string(&a[1])?)?
    ))
}

/// strings.Replace(src, old, new, -1), including Go's rule for an empty `old` (insert
/// `new` before every rune and at the end).
pub fn go_replace_all(src: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        let mut out = String::new();
        for c in src.chars() {
            out.push_str(new);
            out.push(c);
        }
        out.push_str(new);
        return out;
    }
    src.replace(old, new)
}

pub fn replace(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("replace", a, 3)?;
    let old = args::string(&a[0])?;
    let new = args::string(&a[1])?;
    let src = args::string(&a[2])?;
    // The result's size is known before it is built: each match grows it by the
    // replacement's excess (a large replacement of a frequent `old` multiplies).
    let result_len = if old.is_empty() {
        (src.len() + 1).saturating_mul(new.len() + 4)
    } else if new.len() > old.len() {
        let matches = src.matches(&*old).count();
        src.len()
            .saturating_add(matches.saturating_mul(new.len() - old.len()))
    } else {
        0
    };
    check_alloc("replace", result_len)?;
    s(go_replace_all(&src, &old, &new))
}

pub fn plural(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("plural", a, 3)?;
    let one = args::string(&a[0])?;
    let many = args::string(&a[1])?;
    let n = args::int(&a[2])?;
    Ok(Value::String(if n == 1 { one } else { many }))
}

/// strings.SplitN semantics (n < 0: all; n == 0: none; empty sep: split into runes).
pub fn go_split_n(st: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<char> = st.chars().collect();
        let limit = if n < 0 {
            chars.len()
        } else {
            (n as usize).min(chars.len())
        };
        let mut out: Vec<String> = Vec::new();
        for (i, c) in chars.iter().enumerate() {
            if limit > 0 && i + 1 == limit && i + 1 < chars.len() {
                out.push(chars[i..].iter().collect());
                return out;
            }
            out.push(c.to_string());
        }
        return out;
    }
    if n < 0 {
        return st.split(sep).map(str::to_string).collect();
    }
    st.splitn(n as usize, sep).map(str::to_string).collect()
}

fn indexed_map(parts: Vec<String>) -> Value {
    let mut m = Map::new();
    for (i, p) in parts.into_iter().enumerate() {
        m.insert(format!("_{i}"), Value::from(p));
    }
    Value::map(m)
}

/// How many parts `go_split_n` makes, counted without building them.
fn split_count(st: &str, sep: &str, n: i64) -> usize {
    let all = if sep.is_empty() {
        st.chars().count()
    } else {
        st.matches(sep).count() + 1
    };
    match n {
        0 => 0,
        n if n < 0 => all,
        n => all.min(n as usize),
    }
}

/// `go_split_n` once the parts are known to fit the call's room.
fn split_checked(name: &str, st: &str, sep: &str, n: i64) -> Result<Vec<String>, String> {
    super::args::pieces_fit(name, split_count(st, sep, n), st.len())?;
    Ok(go_split_n(st, sep, n))
}

pub fn split(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("split", a, 2)?;
    let sep = args::string(&a[0])?;
    let st = args::string(&a[1])?;
    Ok(indexed_map(split_checked("split", &st, &sep, -1)?))
}

pub fn splitn(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("splitn", a, 3)?;
    let sep = args::string(&a[0])?;
    let n = args::int(&a[1])?;
    let st = args::string(&a[2])?;
    Ok(indexed_map(split_checked("splitn", &st, &sep, n)?))
}

pub fn split_list(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("splitList", a, 2)?;
    let sep = args::string(&a[0])?;
    let st = args::string(&a[1])?;
    Ok(Value::list(
        split_checked("splitList", &st, &sep, -1)?
            .into_iter()
            .map(Value::from)
            .collect(),
    ))
}

pub fn join(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("join", a, 2)?;
    let sep = args::string(&a[0])?;
    // The parts were taken from the room as they were made; a long separator between many
    // (even empty) elements multiplies on top of them.
    let parts = strslice(&a[1]);
    check_alloc(
        "join",
        sep.len().saturating_mul(parts.len().saturating_sub(1)),
    )?;
    s(parts.join(&sep))
}

pub fn sort_alpha(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("sortAlpha", a, 1)?;
    let mut v = match &a[0] {
        Value::List(_) | Value::Bytes(_) => strslice(&a[0]),
        other => vec![strval(other)],
    };
    v.sort();
    Ok(Value::list(v.into_iter().map(Value::from).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: fn(&mut FuncEnv, &[Value]) -> R, a: &[Value]) -> String {
        match f(&mut FuncEnv::default(), a) {
            Ok(Value::String(s)) => s.to_string(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn go_string_semantics() {
        let v = Value::from;
        assert_eq!(run(trunc, &[Value::Int(-3), v("abcdef")]), "def");
        assert_eq!(run(trunc, &[Value::Int(10), v("abc")]), "abc");
        assert_eq!(
            run(substr, &[Value::Int(1), Value::Int(3), v("abcdef")]),
            "bc"
        );
        assert_eq!(
            run(substr, &[Value::Int(-1), Value::Int(3), v("abcdef")]),
            "abc"
        );
        assert_eq!(
            run(substr, &[Value::Int(2), Value::Int(-1), v("abcdef")]),
            "cdef"
        );
        assert_eq!(
            run(title, &[v("hello wORLD-foo_bar")]),
            "Hello WORLD-Foo_bar"
        );
        assert_eq!(run(upper, &[v("straße")]), "STRAßE");
        assert_eq!(run(trim_all, &[v("$"), v("$$5.00$")]), "5.00");
        assert_eq!(run(replace, &[v(""), v("-"), v("ab")]), "-a-b-");
        assert_eq!(run(indent, &[Value::Int(2), v("a\n\nb")]), "  a\n  \n  b");
        assert_eq!(
            run(squote, &[Value::Float(1.5), Value::Bool(true)]),
            "'1.5' 'true'"
        );
        assert_eq!(run(cat, &[v("a"), Value::Nil, Value::Int(2)]), "a 2");
        assert_eq!(run(initials, &[v("  alpha beta")]), "ab");
        assert_eq!(run(swapcase, &[v("Hello World")]), "hELLO wORLD");
        assert_eq!(
            run(wrap, &[Value::Int(5), v("verylongword and more")]),
            "verylongword\nand\nmore"
        );
        assert_eq!(
            run(
                abbrevboth,
                &[Value::Int(5), Value::Int(10), v("1234 5678 9123")]
            ),
            "...5678..."
        );
        let parts = split(&mut FuncEnv::default(), &[v("$"), v("a$b")]).unwrap_or_default();
        assert_eq!(super::super::gofmt::format_v(&parts), "map[_0:a _1:b]");
        assert!(repeat(&mut FuncEnv::default(), &[Value::Int(-1), v("x")]).is_err());
    }
}
