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

/// Compiles with Go's error text shape (`error parsing regexp: ...`).
fn compile(pat: &str) -> Result<Regex, String> {
    if let Some(r) = CACHE.with(|c| c.borrow().get(pat).cloned()) {
        return Ok(r);
    }
    let r = regex::RegexBuilder::new(pat)
        .size_limit(10 << 20)
        .build()
        .map_err(|e| {
            let detail = e.to_string();
            let last = detail
                .lines()
                .last()
                .unwrap_or("")
                .trim()
                .trim_start_matches("error: ");
            format!("error parsing regexp: {last}: `{pat}`")
        })?;
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 512 {
            c.clear();
        }
        c.insert(pat.to_string(), r.clone());
    });
    Ok(r)
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
    let r = compile(&p)?;
    if n == 0 {
        return Ok(Value::list(Vec::new()));
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
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
    let r = compile(&p)?;
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
    let r = compile(&p)?;
    let out = if literal {
        r.replace_all(&s, regex::NoExpand(&repl)).into_owned()
    } else {
        r.replace_all(&s, &*repl).into_owned()
    };
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
    let r = compile(&p)?;
    if n == 0 {
        return Ok(Value::list(Vec::new()));
    }
    if !p.is_empty() && s.is_empty() {
        return Ok(strs(vec![String::new()]));
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
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
