//! Flux post-build variable substitution (`spec.postBuild`,
//! https://fluxcd.io/flux/components/kustomize/kustomizations/) on rendered object trees: `${var}`,
//! the four default forms, `$${escape}`, and the string operators of fluxcd/pkg envsubst. Problems
//! are returned, located, for `flux-substitution-undefined`.

use crate::source::Span;
use crate::yaml::resolve::resolve_plain;
use crate::yaml::{Node, Style, Value};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub enum SubstProblemKind {
    /// `${var}` with no default and no value.
    Undefined,
    /// `${var+x}`, `${var:?x}`, `${var:+x}`: not supported by Flux.
    Unsupported,
    /// A name that is not `^[_[:alpha:]][_[:alpha:][:digit:]]*$`.
    InvalidName,
}

#[derive(Clone, Debug)]
pub struct SubstProblem {
    pub kind: SubstProblemKind,
    pub var: String,
    pub span: Span,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Does this text reference any `${…}` (not counting `$${…}` escapes)?
pub fn has_reference(text: &str) -> bool {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(1))
        .any(|i| b[i] == b'$' && b[i + 1] == b'{' && (i == 0 || b[i - 1] != b'$'))
}

/// Evaluate one `${…}` body. `Err` carries the problem kind.
fn eval(body: &str, vars: &BTreeMap<String, String>) -> Result<String, (SubstProblemKind, String)> {
    if let Some(name) = body.strip_prefix('#') {
        return lookup(name, vars).map(|v| v.chars().count().to_string());
    }
    let name_end = body
        .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
        .unwrap_or(body.len());
    let (name, op) = body.split_at(name_end);
    if !valid_name(name) {
        return Err((SubstProblemKind::InvalidName, body.to_string()));
    }
    let value = vars.get(name);
    for (prefix, only_if_empty) in [(":=", true), (":-", true), ("=", false), ("-", false)] {
        if let Some(default) = op.strip_prefix(prefix) {
            return Ok(match value {
                Some(v) if !(only_if_empty && v.is_empty()) => v.clone(),
                _ => default.to_string(),
            });
        }
    }
    if op.starts_with('+') || op.starts_with(":?") || op.starts_with(":+") {
        return Err((SubstProblemKind::Unsupported, name.to_string()));
    }
    let v = lookup(name, vars)?;
    Ok(match op {
        "" => v,
        "^" => capitalize_first(&v, true),
        "^^" => v.to_uppercase(),
        "," => capitalize_first(&v, false),
        ",," => v.to_lowercase(),
        _ => apply_operator(&v, op),
    })
}

fn lookup(
    name: &str,
    vars: &BTreeMap<String, String>,
) -> Result<String, (SubstProblemKind, String)> {
    if !valid_name(name) {
        return Err((SubstProblemKind::InvalidName, name.to_string()));
    }
    vars.get(name)
        .cloned()
        .ok_or((SubstProblemKind::Undefined, name.to_string()))
}

fn capitalize_first(s: &str, upper: bool) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if upper => f.to_uppercase().chain(c).collect(),
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Substring and literal-pattern operators (`:pos[:len]`, `#p`, `##p`, `%p`, `%%p`, `/p/r`).
fn apply_operator(v: &str, op: &str) -> String {
    if let Some(rest) = op.strip_prefix(':') {
        let mut parts = rest.splitn(2, ':');
        let pos: i64 = parts
            .next()
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or(0);
        let chars: Vec<char> = v.chars().collect();
        let start = if pos < 0 {
            chars.len().saturating_sub(pos.unsigned_abs() as usize)
        } else {
            (pos as usize).min(chars.len())
        };
        let len = parts
            .next()
            .and_then(|l| l.trim().parse::<usize>().ok())
            .unwrap_or(chars.len());
        return chars[start..(start + len).min(chars.len())]
            .iter()
            .collect();
    }
    if let Some(p) = op.strip_prefix("##").or_else(|| op.strip_prefix('#')) {
        return v.strip_prefix(p).unwrap_or(v).to_string();
    }
    if let Some(p) = op.strip_prefix("%%").or_else(|| op.strip_prefix('%')) {
        return v.strip_suffix(p).unwrap_or(v).to_string();
    }
    if let Some(rest) = op.strip_prefix("//") {
        let (p, r) = rest.split_once('/').unwrap_or((rest, ""));
        return if p.is_empty() {
            v.to_string()
        } else {
            v.replace(p, r)
        };
    }
    if let Some(rest) = op.strip_prefix('/') {
        let (p, r) = rest.split_once('/').unwrap_or((rest, ""));
        if let Some(pp) = p.strip_prefix('#') {
            return match v.strip_prefix(pp) {
                Some(t) => format!("{r}{t}"),
                None => v.to_string(),
            };
        }
        if let Some(pp) = p.strip_prefix('%') {
            return match v.strip_suffix(pp) {
                Some(t) => format!("{t}{r}"),
                None => v.to_string(),
            };
        }
        return if p.is_empty() {
            v.to_string()
        } else {
            v.replacen(p, r, 1)
        };
    }
    v.to_string()
}

/// Substitute in one string; problems are collected with `span`.
pub fn substitute_str(
    text: &str,
    vars: &BTreeMap<String, String>,
    span: Span,
    problems: &mut Vec<SubstProblem>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        if let Some(tail) = after.strip_prefix("$${") {
            out.push_str("${");
            rest = tail;
            continue;
        }
        if let Some(tail) = after.strip_prefix("${")
            && let Some(end) = tail.find('}')
        {
            let body = &tail[..end];
            match eval(body, vars) {
                Ok(v) => out.push_str(&v),
                Err((kind, var)) => {
                    problems.push(SubstProblem { kind, var, span });
                    // Non-strict controllers render undefined variables as "".
                }
            }
            rest = &tail[end + 1..];
            continue;
        }
        out.push('$');
        rest = &after[1..];
    }
    out.push_str(rest);
    out
}

/// Substitute through a whole object. Plain scalars are re-read after substitution, as
/// Flux substitutes the YAML text (`replicas: ${N}` becomes an integer).
pub fn substitute_node(
    node: &mut Node,
    vars: &BTreeMap<String, String>,
    problems: &mut Vec<SubstProblem>,
) {
    let mut stack: Vec<&mut Node> = vec![node];
    while let Some(n) = stack.pop() {
        if let Value::String(s) = &n.value
            && (has_reference(s) || s.contains("$${"))
        {
            let new = substitute_str(s, vars, n.span, problems);
            n.value = if n.style == Style::Plain {
                resolve_plain(&new)
            } else {
                Value::String(new)
            };
            continue;
        }
        match &mut n.value {
            Value::Seq(items) => stack.extend(items.iter_mut()),
            Value::Map(entries) => {
                for e in entries.iter_mut() {
                    if let Value::String(k) = &e.key.value
                        && has_reference(k)
                    {
                        let new = substitute_str(k, vars, e.key.span, problems);
                        e.key.value = Value::String(new);
                    }
                    stack.push(&mut e.value);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn sub(text: &str, vars: &[(&str, &str)]) -> (String, Vec<SubstProblemKind>) {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut p = Vec::new();
        let s = substitute_str(text, &vars, Span::new(FileId(0), 0, 0), &mut p);
        (s, p.into_iter().map(|p| p.kind).collect())
    }

    #[test]
    fn forms() {
        assert_eq!(sub("${a}-x", &[("a", "1")]).0, "1-x");
        assert_eq!(sub("${b:=dflt}", &[]).0, "dflt");
        assert_eq!(sub("${b:-dflt}", &[("b", "")]).0, "dflt");
        assert_eq!(sub("${b-dflt}", &[("b", "")]).0, "");
        assert_eq!(sub("$${a}", &[("a", "1")]).0, "${a}");
        assert_eq!(sub("$a ${a^^}", &[("a", "xy")]).0, "$a XY");
        assert_eq!(sub("${#a}", &[("a", "abc")]).0, "3");
        assert_eq!(sub("${a:1:2}", &[("a", "abcd")]).0, "bc");
        assert_eq!(sub("${missing}", &[]).1, vec![SubstProblemKind::Undefined]);
        assert_eq!(
            sub("${a:+x}", &[("a", "1")]).1,
            vec![SubstProblemKind::Unsupported]
        );
        assert_eq!(sub("${1a}", &[]).1, vec![SubstProblemKind::InvalidName]);
    }
}
