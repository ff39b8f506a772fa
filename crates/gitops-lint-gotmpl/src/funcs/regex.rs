//! Regular expressions (Sprig regex.go). Rust's `regex` implements RE2 syntax like Go's
//! `regexp`; `$1`/`${name}` expansion follows the same longest-name rule.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::Regex;

use super::super::value::Value;
use super::FuncEnv;
use super::args::{self, arity};

type R = Result<Value, String>;

thread_local! {
    /// Charts call the same patterns in loops; compiling once per render thread is enough.
    static CACHE: RefCell<HashMap<String, Regex>> = RefCell::new(HashMap::new());
}

/// Compiles with Go's error texts (`error parsing regexp: CODE: `EXPR``).
fn compile(pat: &str) -> Result<Regex, String> {
    if let Some(r) = CACHE.with(|c| c.borrow().get(pat).cloned()) {
        return Ok(r);
    }
    // Go's syntax accepts octal escapes (`\123`) but rejects a lone `\1`..`\7`
    // (a backreference); Rust needs the octal option for the former.
    if lone_backreference(pat) {
        return Err(format!(
            "error parsing regexp: invalid escape sequence: `{}`",
            lone_backreference_text(pat)
        ));
    }
    if let Some(ops) = stacked_repetition(pat) {
        return Err(format!(
            "error parsing regexp: invalid nested repetition operator: `{ops}`"
        ));
    }
    let r = regex::RegexBuilder::new(&ascii_perl_classes(pat))
        .octal(true)
        .size_limit(10 << 20)
        .build()
        .map_err(|e| go_regexp_error(pat, &e))?;
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 512 {
            c.clear();
        }
        c.insert(pat.to_string(), r.clone());
    });
    Ok(r)
}

/// Go's regexp/syntax error for the common mistakes, from regex-syntax's error kind.
fn go_regexp_error(pat: &str, e: &regex::Error) -> String {
    use regex_syntax::ast::ErrorKind as K;
    let parsed = regex_syntax::ast::parse::ParserBuilder::new()
        .octal(true)
        .build()
        .parse(pat);
    let (code, expr) = match &parsed {
        Err(err) => {
            let span = err.span();
            let from = |s: usize| pat.get(s..).unwrap_or(pat).to_string();
            let piece = pat
                .get(span.start.offset..span.end.offset)
                .unwrap_or(pat)
                .to_string();
            match err.kind() {
                K::GroupUnclosed => ("missing closing )", pat.to_string()),
                K::GroupUnopened => ("unexpected )", pat.to_string()),
                K::ClassUnclosed => ("missing closing ]", from(span.start.offset)),
                K::RepetitionMissing => ("missing argument to repetition operator", piece),
                K::RepetitionCountInvalid | K::RepetitionCountDecimalEmpty => {
                    ("invalid repeat count", piece)
                }
                K::EscapeUnrecognized | K::EscapeUnexpectedEof => {
                    ("invalid escape sequence", piece)
                }
                K::ClassRangeInvalid => ("invalid character class range", piece),
                K::GroupNameInvalid | K::GroupNameEmpty | K::GroupNameUnexpectedEof => {
                    ("invalid named capture", piece)
                }
                K::GroupNameDuplicate { .. } => ("duplicate capture group name", piece),
                K::FlagUnrecognized | K::FlagDanglingNegation | K::FlagRepeatedNegation { .. } => {
                    ("invalid or unsupported Perl syntax", piece)
                }
                _ => ("invalid or unsupported Perl syntax", piece),
            }
        }
        Ok(_) => {
            let detail = e.to_string();
            let last = detail
                .lines()
                .last()
                .unwrap_or("")
                .trim()
                .trim_start_matches("error: ")
                .to_string();
            return format!("error parsing regexp: {last}: `{pat}`");
        }
    };
    format!("error parsing regexp: {code}: `{expr}`")
}

/// How Sprig's non-`must` regex functions fail: regexp.MustCompile panics.
fn must_compile(pat: &str) -> Result<Regex, String> {
    compile(pat).map_err(|e| format!("regexp: Compile({}): {e}", super::gofmt::go_quote(pat)))
}

/// Position of a `\1`..`\7` not followed by another octal digit (outside classes too,
/// as Go checks it everywhere).
fn lone_backreference_at(pat: &str) -> Option<usize> {
    let b = pat.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            let d = b[i + 1];
            if (b'1'..=b'7').contains(&d)
                && !b.get(i + 2).is_some_and(|c| (b'0'..=b'7').contains(c))
            {
                return Some(i);
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    None
}

/// Go (Perl syntax) rejects stacked repetition operators (`a**`, `a+*`, `a{2}*`), which
/// Rust accepts: the text of both operators, as Go reports it.
fn stacked_repetition(pat: &str) -> Option<String> {
    let b = pat.as_bytes();
    // Length of a repetition operator at `i` (with its optional non-greedy `?`).
    let op_len = |i: usize| -> Option<usize> {
        let mut n = match b.get(i)? {
            b'*' | b'+' | b'?' => 1,
            b'{' => {
                let close = b[i..].iter().position(|&c| c == b'}')?;
                let inner = &pat[i + 1..i + close];
                let ok = !inner.is_empty()
                    && inner.bytes().all(|c| c.is_ascii_digit() || c == b',')
                    && inner.as_bytes()[0].is_ascii_digit()
                    && inner.matches(',').count() <= 1;
                if !ok {
                    return None;
                }
                close + 1
            }
            _ => return None,
        };
        if b.get(i + n) == Some(&b'?') {
            n += 1;
        }
        Some(n)
    };
    let mut i = 0;
    let mut in_class = false;
    let mut last: Option<usize> = None;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 2;
                last = None;
                continue;
            }
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            _ if in_class => {}
            _ => {
                if let Some(n) = op_len(i) {
                    if let Some(start) = last {
                        return pat.get(start..i + n).map(str::to_string);
                    }
                    last = Some(i);
                    i += n;
                    continue;
                }
            }
        }
        last = None;
        i += 1;
    }
    None
}

/// Go's `\d \w \s \b` (and negations) are ASCII-only, Rust's are Unicode: rewrite them
/// to their ASCII forms, `(?-u:\d)` outside brackets and explicit ranges inside.
fn ascii_perl_classes(pat: &str) -> String {
    let mut out = String::with_capacity(pat.len() + 16);
    let mut chars = pat.chars().peekable();
    let mut in_class = false;
    let mut class_start = false;
    while let Some(c) = chars.next() {
        if c == '\\' {
            let Some(n) = chars.next() else {
                out.push(c);
                break;
            };
            match (in_class, n) {
                (false, 'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'b' | 'B') => {
                    out.push_str("(?-u:\\");
                    out.push(n);
                    out.push(')');
                }
                (true, 'd') => out.push_str("0-9"),
                (true, 'w') => out.push_str("0-9A-Za-z_"),
                (true, 's') => out.push_str("\\t\\n\\f\\r "),
                _ => {
                    out.push(c);
                    out.push(n);
                }
            }
            class_start = false;
            continue;
        }
        if in_class {
            // `[:alpha:]` inside a class: copy through its closing `:]`.
            if c == '[' && chars.peek() == Some(&':') {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
                class_start = false;
                continue;
            }
            // `]` right after `[` or `[^` is a literal.
            if c == ']' && !class_start {
                in_class = false;
            }
            class_start = false;
            out.push(c);
            continue;
        }
        if c == '[' {
            in_class = true;
            class_start = true;
            out.push(c);
            if chars.peek() == Some(&'^') {
                out.push('^');
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn lone_backreference(pat: &str) -> bool {
    lone_backreference_at(pat).is_some()
}

fn lone_backreference_text(pat: &str) -> &str {
    match lone_backreference_at(pat) {
        Some(i) => pat.get(i..i + 2).unwrap_or(pat),
        None => pat,
    }
}

/// `must*` functions return Go's error; the others panic inside regexp.MustCompile.
fn compile_for(name: &str, pat: &str) -> Result<Regex, String> {
    if name.starts_with("must") {
        compile(pat)
    } else {
        must_compile(pat)
    }
}

fn strs(v: Vec<String>) -> Value {
    Value::list(v.into_iter().map(Value::from).collect())
}

pub fn regex_match(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("regexMatch", a, 2)?;
    let (p, s) = (args::string(&a[0])?, args::string(&a[1])?);
    Ok(Value::Bool(
        compile(&p).map(|r| r.is_match(&s)).unwrap_or(false),
    ))
}

pub fn must_regex_match(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustRegexMatch", a, 2)?;
    let (p, s) = (args::string(&a[0])?, args::string(&a[1])?);
    Ok(Value::Bool(compile(&p)?.is_match(&s)))
}

fn find_all(name: &str, a: &[Value]) -> R {
    arity(name, a, 3)?;
    let (p, s, n) = (
        args::string(&a[0])?,
        args::string(&a[1])?,
        args::int(&a[2])?,
    );
    let r = compile_for(name, &p)?;
    if n == 0 {
        return Ok(Value::list(Vec::new()));
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    // Counted first (each match is a new string): `.` over a 32 MB string is 32 million.
    let (count, bytes) = r
        .find_iter(&s)
        .take(limit)
        .fold((0usize, 0usize), |(c, b), m| (c + 1, b + m.len()));
    super::args::pieces_fit(name, count, bytes)?;
    Ok(strs(
        r.find_iter(&s)
            .take(limit)
            .map(|m| m.as_str().to_string())
            .collect(),
    ))
}

pub fn regex_find_all(_: &mut FuncEnv, a: &[Value]) -> R {
    find_all("regexFindAll", a)
}

pub fn must_regex_find_all(_: &mut FuncEnv, a: &[Value]) -> R {
    find_all("mustRegexFindAll", a)
}

fn find(name: &str, a: &[Value]) -> R {
    arity(name, a, 2)?;
    let (p, s) = (args::string(&a[0])?, args::string(&a[1])?);
    let r = compile_for(name, &p)?;
    Ok(Value::from(r.find(&s).map(|m| m.as_str()).unwrap_or("")))
}

pub fn regex_find(_: &mut FuncEnv, a: &[Value]) -> R {
    find("regexFind", a)
}

pub fn must_regex_find(_: &mut FuncEnv, a: &[Value]) -> R {
    find("mustRegexFind", a)
}

fn replace(name: &str, a: &[Value], literal: bool) -> R {
    arity(name, a, 3)?;
    let (p, s, repl) = (
        args::string(&a[0])?,
        args::string(&a[1])?,
        args::string(&a[2])?,
    );
    let r = compile_for(name, &p)?;
    // Built match by match, each checked against the render's memory budget before it is
    // written: a replacement of many `$0` copies the match that many times, per match.
    // A group is part of its match, so one expansion is at most the replacement's length
    // plus the match's length per `$`.
    let dollars = if literal {
        0
    } else {
        repl.matches('$').count()
    };
    let mut out = String::new();
    let mut last = 0;
    for caps in r.captures_iter(&s) {
        let Some(m) = caps.get(0) else { continue };
        let bound = (m.start() - last)
            .saturating_add(repl.len())
            .saturating_add(dollars.saturating_mul(m.len()));
        if !super::memory::fits(out.len().saturating_add(bound)) {
            return Err(format!(
                "{name}: result exceeds the render's memory budget (limits.max-render-memory-bytes)"
            ));
        }
        out.push_str(&s[last..m.start()]);
        if literal {
            out.push_str(&repl);
        } else {
            caps.expand(&repl, &mut out);
        }
        last = m.end();
    }
    out.push_str(&s[last..]);
    Ok(Value::from(out))
}

pub fn regex_replace_all(_: &mut FuncEnv, a: &[Value]) -> R {
    replace("regexReplaceAll", a, false)
}

pub fn must_regex_replace_all(_: &mut FuncEnv, a: &[Value]) -> R {
    replace("mustRegexReplaceAll", a, false)
}

pub fn regex_replace_all_literal(_: &mut FuncEnv, a: &[Value]) -> R {
    replace("regexReplaceAllLiteral", a, true)
}

pub fn must_regex_replace_all_literal(_: &mut FuncEnv, a: &[Value]) -> R {
    replace("mustRegexReplaceAllLiteral", a, true)
}

/// regexp.Regexp.Split.
fn split(name: &str, a: &[Value]) -> R {
    arity(name, a, 3)?;
    let (p, s, n) = (
        args::string(&a[0])?,
        args::string(&a[1])?,
        args::int(&a[2])?,
    );
    let r = compile_for(name, &p)?;
    if n == 0 {
        return Ok(Value::list(Vec::new()));
    }
    if !p.is_empty() && s.is_empty() {
        return Ok(strs(vec![String::new()]));
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    // At most one part per match and one more, holding at most the whole text.
    let parts = r.find_iter(&s).take(limit).count().saturating_add(1);
    super::args::pieces_fit(name, parts, s.len())?;
    let mut out = Vec::new();
    let (mut beg, mut end) = (0usize, 0usize);
    for m in r.find_iter(&s).take(limit) {
        if n > 0 && out.len() == limit - 1 {
            break;
        }
        end = m.start();
        if m.end() != 0 {
            out.push(s[beg..end].to_string());
        }
        beg = m.end();
    }
    if end != s.len() {
        out.push(s[beg..].to_string());
    }
    Ok(strs(out))
}

pub fn regex_split(_: &mut FuncEnv, a: &[Value]) -> R {
    split("regexSplit", a)
}

pub fn must_regex_split(_: &mut FuncEnv, a: &[Value]) -> R {
    split("mustRegexSplit", a)
}

/// regexp.QuoteMeta escapes exactly `\.+*?()|[]{}^$`.
pub fn regex_quote_meta(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("regexQuoteMeta", a, 1)?;
    let s = args::string(&a[0])?;
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    Ok(Value::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_escapes() {
        assert!(compile("a\\101").is_ok_and(|r| r.is_match("aA")));
        assert_eq!(
            compile("(a)\\1").err().as_deref(),
            Some("error parsing regexp: invalid escape sequence: `\\1`")
        );
        assert_eq!(
            compile("(a").err().as_deref(),
            Some("error parsing regexp: missing closing ): `(a`")
        );
        assert_eq!(
            compile("a**").err().as_deref(),
            Some("error parsing regexp: invalid nested repetition operator: `**`")
        );
        let mut e0 = FuncEnv::default();
        let v = regex_find(&mut e0, &[Value::from("[a"), Value::from("x")]);
        assert_eq!(
            v.err().as_deref(),
            Some("regexp: Compile(\"[a\"): error parsing regexp: missing closing ]: `[a`")
        );
        let mut e = FuncEnv::default();
        let v = regex_replace_all(
            &mut e,
            &[
                Value::from("a(x*)b"),
                Value::from("-ab-axxb-"),
                Value::from("${1}W"),
            ],
        );
        assert_eq!(
            v.ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .as_deref(),
            Some("-W-xxW-")
        );
        let v = regex_replace_all(
            &mut e,
            &[
                Value::from("a(x*)b"),
                Value::from("-ab-axxb-"),
                Value::from("$1W"),
            ],
        );
        assert_eq!(
            v.ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .as_deref(),
            Some("---")
        );
        assert!(compile("^\\w+$").is_ok_and(|r| r.is_match("ab_1") && !r.is_match("é")));
        assert!(compile("^[\\w.]+$").is_ok_and(|r| r.is_match("a.b") && !r.is_match("é")));
        assert!(compile("^[]a]+$").is_ok_and(|r| r.is_match("]a")));
        assert!(compile("^[[:alpha:]\\d]+$").is_ok_and(|r| r.is_match("a1") && !r.is_match("a-")));
        let v = regex_split(
            &mut e,
            &[
                Value::from("a*"),
                Value::from("abaabaccadaaae"),
                Value::Int(5),
            ],
        )
        .unwrap_or_default();
        assert_eq!(crate::funcs::gofmt::format_v(&v), "[ b b c cadaaae]");
    }
}
