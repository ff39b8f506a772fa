//! Go's `path` package (base, dir, clean, ext, isAbs); `filepath` is the same on Linux.

use super::super::value::Value;
use super::FuncEnv;
use super::args::{self, arity};

type R = Result<Value, String>;

/// path.Clean: lexical shortest equivalent path.
pub fn clean_path(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

pub fn base_path(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

pub fn dir_path(p: &str) -> String {
    let cut = p.rfind('/').map(|i| i + 1).unwrap_or(0);
    clean_path(&p[..cut])
}

pub fn ext_path(p: &str) -> String {
    for (i, c) in p.char_indices().rev() {
        if c == '/' {
            break;
        }
        if c == '.' {
            return p[i..].to_string();
        }
    }
    String::new()
}

pub fn base(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("base", a, 1)?;
    Ok(Value::from(base_path(&args::string(&a[0])?)))
}

pub fn dir(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("dir", a, 1)?;
    Ok(Value::from(dir_path(&args::string(&a[0])?)))
}

pub fn clean(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("clean", a, 1)?;
    Ok(Value::from(clean_path(&args::string(&a[0])?)))
}

pub fn ext(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("ext", a, 1)?;
    Ok(Value::from(ext_path(&args::string(&a[0])?)))
}

pub fn is_abs(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("isAbs", a, 1)?;
    Ok(Value::Bool(args::string(&a[0])?.starts_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_go() {
        assert_eq!(clean_path("a/../../b/./c//"), "../b/c");
        assert_eq!(clean_path("/../a"), "/a");
        assert_eq!(base_path("/a/b/"), "b");
        assert_eq!(base_path("///"), "/");
        assert_eq!(dir_path("a/b/c"), "a/b");
        assert_eq!(dir_path("abc"), ".");
        assert_eq!(ext_path("a/b.tar.gz"), ".gz");
        assert_eq!(ext_path("a.b/c"), "");
    }
}
