//! getHostByName (Helm disables DNS: always ""), urlParse, urlJoin (Go's net/url subset).

use super::super::value::{Map, Value};
use super::FuncEnv;
use super::args::{self, arity};

type R = Result<Value, String>;

pub fn get_host_by_name(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("getHostByName", a, 1)?;
    args::string(&a[0])?;
    Ok(Value::from(""))
}

fn unhex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Percent-decoding; `plus_space` for query-style decoding (unused by urlParse).
fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(unhex),
                b.get(i + 2).copied().and_then(unhex),
            ) else {
                // Bytes, not a str slice: the escape may end inside a multi-byte character.
                let end = (i + 3).min(b.len());
                let bad = String::from_utf8_lossy(&b[i..end]);
                return Err(format!("invalid URL escape {bad:?}"));
            };
            out.push(h * 16 + l);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Go's url.PathEscape-like escaping used by URL.String for paths.
fn escape_path(s: &str) -> String {
    let mut out = String::new();
    for &c in s.as_bytes() {
        if c.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@!*'()".contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    out
}

fn escape_fragment(s: &str) -> String {
    let mut out = String::new();
    for &c in s.as_bytes() {
        if c.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@!*'()?".contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    out
}

#[derive(Default)]
struct Url {
    scheme: String,
    opaque: String,
    user: Option<String>,
    host: String,
    path: String,
    raw_query: String,
    fragment: String,
}

fn parse_url(raw: &str) -> Result<Url, String> {
    let mut u = Url::default();
    let (rest, frag) = match raw.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (raw, None),
    };
    if let Some(f) = frag {
        u.fragment = unescape(f).map_err(|e| format!("parse {:?}: {e}", raw))?;
    }
    let mut rest = rest.to_string();
    // scheme
    if let Some(i) = rest.find(':') {
        let cand = &rest[..i];
        let valid = !cand.is_empty()
            && cand.as_bytes()[0].is_ascii_alphabetic()
            && cand
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c));
        if valid {
            u.scheme = cand.to_ascii_lowercase();
            rest = rest[i + 1..].to_string();
        } else if i == 0 {
            return Err(format!("parse {:?}: missing protocol scheme", raw));
        }
    }
    if let Some((r, q)) = rest.split_once('?') {
        u.raw_query = q.to_string();
        rest = r.to_string();
    }
    if !rest.starts_with('/') && !u.scheme.is_empty() {
        u.opaque = rest;
        return Ok(u);
    }
    if let Some(after) = rest
        .strip_prefix("//")
        .filter(|_| !u.scheme.is_empty() || rest.starts_with("//"))
    {
        let (auth, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        let host = match auth.rfind('@') {
            Some(i) => {
                u.user = Some(auth[..i].to_string());
                &auth[i + 1..]
            }
            None => auth,
        };
        u.host = unescape(host).map_err(|e| format!("parse {:?}: {e}", raw))?;
        rest = path.to_string();
    }
    u.path = unescape(&rest).map_err(|e| format!("parse {:?}: {e}", raw))?;
    Ok(u)
}

fn hostname(host: &str) -> String {
    if let Some(h) = host.strip_prefix('[') {
        return h.split(']').next().unwrap_or("").to_string();
    }
    match host.rfind(':') {
        Some(i) if host[i + 1..].bytes().all(|c| c.is_ascii_digit()) => host[..i].to_string(),
        _ => host.to_string(),
    }
}

pub fn url_parse(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("urlParse", a, 1)?;
    let s = args::string(&a[0])?;
    let u = parse_url(&s).map_err(|e| format!("unable to parse url: {e}"))?;
    let mut m = Map::new();
    m.insert("scheme".into(), Value::from(u.scheme.as_str()));
    m.insert("host".into(), Value::from(u.host.as_str()));
    m.insert("hostname".into(), Value::from(hostname(&u.host)));
    m.insert("path".into(), Value::from(u.path.as_str()));
    m.insert("query".into(), Value::from(u.raw_query.as_str()));
    m.insert("opaque".into(), Value::from(u.opaque.as_str()));
    m.insert("fragment".into(), Value::from(u.fragment.as_str()));
    m.insert("userinfo".into(), Value::from(u.user.unwrap_or_default()));
    Ok(Value::map(m))
}

pub fn url_join(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("urlJoin", a, 1)?;
    let m = args::map(&a[0])?.unwrap_or_default();
    let m = m.borrow();
    let get = |k: &str| -> Result<String, String> {
        match m.get(k) {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.to_string()),
            Some(other) => Err(format!(
                "unable to parse {k} key, must be of type string, but {} found",
                other.type_name()
            )),
        }
    };
    let (scheme, host, path) = (get("scheme")?, get("host")?, get("path")?);
    let (query, opaque, fragment, user) = (
        get("query")?,
        get("opaque")?,
        get("fragment")?,
        get("userinfo")?,
    );
    let mut out = String::new();
    if !scheme.is_empty() {
        out.push_str(&scheme);
        out.push(':');
    }
    if !opaque.is_empty() {
        out.push_str(&opaque);
    } else {
        if !scheme.is_empty() || !host.is_empty() || !user.is_empty() {
            if !host.is_empty() || !path.is_empty() || !user.is_empty() {
                out.push_str("//");
            }
            if !user.is_empty() {
                out.push_str(&user);
                out.push('@');
            }
            out.push_str(&host);
        }
        if !path.is_empty() && !path.starts_with('/') && !host.is_empty() {
            out.push('/');
        }
        out.push_str(&escape_path(&path));
    }
    if !query.is_empty() {
        out.push('?');
        out.push_str(&query);
    }
    if !fragment.is_empty() {
        out.push('#');
        out.push_str(&escape_fragment(&fragment));
    }
    Ok(Value::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::funcs::gofmt::format_v;

    #[test]
    fn parse_and_join() {
        let mut e = FuncEnv::default();
        let u = url_parse(
            &mut e,
            &[Value::from("https://user:pw@host:8080/p%20a?q=1#frag")],
        )
        .unwrap_or_default();
        assert_eq!(
            format_v(&u),
            "map[fragment:frag host:host:8080 hostname:host opaque: path:/p a query:q=1 scheme:https userinfo:user:pw]"
        );
        let j = url_join(&mut e, &[u]).unwrap_or_default();
        assert_eq!(j.as_str(), Some("https://user:pw@host:8080/p%20a?q=1#frag"));
        let u = url_parse(&mut e, &[Value::from("mailto:a@b.c")]).unwrap_or_default();
        assert!(format_v(&u).contains("opaque:a@b.c"));
    }

    #[test]
    fn bad_escape_before_multibyte_char_is_an_error() {
        // Found by the gotmpl fuzzer: the error text sliced the input inside a character.
        assert!(unescape("a%\u{2019}b").is_err_and(|e| e.starts_with("invalid URL escape")));
        assert!(unescape("%9\u{e9}").is_err());
    }
}
