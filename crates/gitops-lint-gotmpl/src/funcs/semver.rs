//! `semver` and `semverCompare` with Masterminds/semver v3 rules (not Cargo's): optional
//! leading `v`, partial versions (`1.21`), x-ranges, `~ ^ != >= =<`, hyphen ranges,
//! `||`, comma/space-separated AND, and "a prerelease only matches a constraint that has
//! one" (the reason charts write `>=1.21-0`).

use std::cmp::Ordering;
use std::rc::Rc;

use super::super::value::{GoObject, Value};
use super::FuncEnv;
use super::args::{self, arity};

type R = Result<Value, String>;

const INVALID: &str = "Invalid Semantic Version";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: String,
    pub metadata: String,
    original: String,
}

fn ident_ok(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'))
}

fn parse_num(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        format!(
            "Error parsing version segment: strconv.ParseUint: parsing {s:?}: value out of range"
        )
    })
}

impl Version {
    /// semver.NewVersion (non-strict).
    pub fn parse(v: &str) -> Result<Version, String> {
        let body = v.strip_prefix('v').unwrap_or(v);
        let (body, metadata) = match body.split_once('+') {
            Some((b, m)) => {
                if !ident_ok(m) {
                    return Err(INVALID.into());
                }
                (b, m.to_string())
            }
            None => (body, String::new()),
        };
        let (core, pre) = match body.split_once('-') {
            Some((c, p)) => {
                if !ident_ok(p) {
                    return Err(INVALID.into());
                }
                (c, p.to_string())
            }
            None => (body, String::new()),
        };
        let parts: Vec<&str> = core.split('.').collect();
        if parts.is_empty()
            || parts.len() > 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit()))
        {
            return Err(INVALID.into());
        }
        for seg in pre.split('.').filter(|_| !pre.is_empty()) {
            if seg.len() > 1 && seg.starts_with('0') && seg.bytes().all(|c| c.is_ascii_digit()) {
                return Err("Version segment starts with 0".into());
            }
        }
        Ok(Version {
            major: parse_num(parts[0])?,
            minor: parts.get(1).map(|p| parse_num(p)).transpose()?.unwrap_or(0),
            patch: parts.get(2).map(|p| parse_num(p)).transpose()?.unwrap_or(0),
            pre,
            metadata,
            original: v.to_string(),
        })
    }

    fn string(&self) -> String {
        let mut s = format!("{}.{}.{}", self.major, self.minor, self.patch);
        if !self.pre.is_empty() {
            s.push('-');
            s.push_str(&self.pre);
        }
        if !self.metadata.is_empty() {
            s.push('+');
            s.push_str(&self.metadata);
        }
        s
    }

    pub fn compare(&self, o: &Version) -> Ordering {
        self.major
            .cmp(&o.major)
            .then(self.minor.cmp(&o.minor))
            .then(self.patch.cmp(&o.patch))
            .then_with(|| compare_pre(&self.pre, &o.pre))
    }
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..pa.len().max(pb.len()) {
        let (x, y) = (pa.get(i), pb.get(i));
        let ord = match (x, y) {
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => match (x.parse::<u64>(), y.parse::<u64>()) {
                (Ok(m), Ok(n)) => m.cmp(&n),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => x.cmp(y),
            },
            (None, None) => Ordering::Equal,
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

impl GoObject for Version {
    fn type_name(&self) -> &str {
        "*semver.Version"
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(match name {
            "Major" => Value::Uint(self.major),
            "Minor" => Value::Uint(self.minor),
            "Patch" => Value::Uint(self.patch),
            "Prerelease" => Value::from(self.pre.as_str()),
            "Metadata" => Value::from(self.metadata.as_str()),
            "Original" => Value::from(self.original.as_str()),
            "String" => Value::from(self.string()),
            _ => return None,
        })
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        let other = || -> Result<Version, String> {
            match args {
                [Value::Object(o)] => {
                    o.as_any()
                        .downcast_ref::<Version>()
                        .cloned()
                        .ok_or_else(|| {
                            format!(
                                "wrong type for value; expected *semver.Version; got {}",
                                o.type_name()
                            )
                        })
                }
                [v] => Err(format!(
                    "wrong type for value; expected *semver.Version; got {}",
                    v.type_name()
                )),
                _ => Err(format!(
                    "wrong number of args for {name}: want 1 got {}",
                    args.len()
                )),
            }
        };
        let r = match name {
            "Compare" => other().map(|o| {
                Value::Int(match self.compare(&o) {
                    Ordering::Less => -1,
                    Ordering::Equal => 0,
                    Ordering::Greater => 1,
                })
            }),
            "LessThan" => other().map(|o| Value::Bool(self.compare(&o) == Ordering::Less)),
            "GreaterThan" => other().map(|o| Value::Bool(self.compare(&o) == Ordering::Greater)),
            "Equal" => other().map(|o| Value::Bool(self.compare(&o) == Ordering::Equal)),
            _ if args.is_empty() => return self.field(name).map(Ok),
            _ => return None,
        };
        Some(r)
    }
    fn format(&self) -> String {
        self.string()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    TildeOrEqual,
    NotEqual,
    Gt,
    Lt,
    Ge,
    Le,
    Tilde,
    Caret,
}

struct Constraint {
    op: Op,
    con: Version,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

const OPS: &[(&str, Op)] = &[
    ("!=", Op::NotEqual),
    (">=", Op::Ge),
    ("=>", Op::Ge),
    ("<=", Op::Le),
    ("=<", Op::Le),
    ("~>", Op::Tilde),
    (">", Op::Gt),
    ("<", Op::Lt),
    ("~", Op::Tilde),
    ("^", Op::Caret),
    ("=", Op::TildeOrEqual),
];

fn parse_constraint(c: &str) -> Result<Constraint, String> {
    let improper = || format!("improper constraint: {c}");
    let t = c.trim();
    let (op, rest) = OPS
        .iter()
        .find_map(|(s, op)| t.strip_prefix(s).map(|r| (*op, r)))
        .unwrap_or((Op::TildeOrEqual, t));
    let ver = rest.trim();
    if ver.is_empty() {
        return Err(improper());
    }
    let v = ver.strip_prefix('v').unwrap_or(ver);
    let (v, _meta) = v.split_once('+').unwrap_or((v, ""));
    let (core, pre) = match v.split_once('-') {
        Some((c, p)) => (c, format!("-{p}")),
        None => (v, String::new()),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !(is_x(p) || p.bytes().all(|b| b.is_ascii_digit())))
    {
        return Err(improper());
    }
    let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
    let text = if is_x(parts[0]) {
        dirty = true;
        format!("0.0.0{pre}")
    } else if parts.get(1).is_none_or(|p| is_x(p)) {
        minor_dirty = true;
        dirty = true;
        format!("{}.0.0{pre}", parts[0])
    } else if parts.get(2).is_none_or(|p| is_x(p)) {
        dirty = true;
        patch_dirty = true;
        format!("{}.{}.0{pre}", parts[0], parts[1])
    } else {
        format!("{core}{pre}")
    };
    let con = Version::parse(&text).map_err(|_| "constraint Parser Error".to_string())?;
    Ok(Constraint {
        op,
        con,
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

impl Constraint {
    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        let pre_blocked = !v.pre.is_empty() && c.pre.is_empty();
        match self.op {
            Op::TildeOrEqual => {
                if pre_blocked {
                    return false;
                }
                if self.dirty {
                    return self.tilde(v);
                }
                v.compare(c) == Ordering::Equal
            }
            Op::NotEqual => {
                if self.dirty {
                    if pre_blocked {
                        return false;
                    }
                    if c.major != v.major {
                        return true;
                    }
                    if c.minor != v.minor && !self.minor_dirty {
                        return true;
                    } else if self.minor_dirty {
                        return false;
                    } else if c.patch != v.patch && !self.patch_dirty {
                        return true;
                    } else if self.patch_dirty {
                        if !v.pre.is_empty() || !c.pre.is_empty() {
                            return compare_pre(&v.pre, &c.pre) != Ordering::Equal;
                        }
                        return false;
                    }
                }
                v.compare(c) != Ordering::Equal
            }
            Op::Gt => {
                if pre_blocked {
                    return false;
                }
                if !self.dirty {
                    return v.compare(c) == Ordering::Greater;
                }
                if v.major != c.major {
                    return v.major > c.major;
                }
                if self.minor_dirty {
                    return false;
                }
                if self.patch_dirty {
                    return v.minor > c.minor;
                }
                v.compare(c) == Ordering::Greater
            }
            Op::Lt => !pre_blocked && v.compare(c) == Ordering::Less,
            Op::Ge => !pre_blocked && v.compare(c) != Ordering::Less,
            Op::Le => {
                if pre_blocked {
                    return false;
                }
                if !self.dirty {
                    return v.compare(c) != Ordering::Greater;
                }
                if v.major > c.major {
                    return false;
                }
                !(v.major == c.major && v.minor > c.minor && !self.minor_dirty)
            }
            Op::Tilde => !pre_blocked && self.tilde(v),
            Op::Caret => {
                if pre_blocked || v.compare(c) == Ordering::Less {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    return v.major == c.major;
                }
                if v.major > 0 {
                    return false;
                }
                if c.minor > 0 || self.patch_dirty {
                    return v.minor == c.minor;
                }
                if v.minor > 0 {
                    return false;
                }
                c.patch == v.patch
            }
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        if v.major != c.major {
            return false;
        }
        v.minor == c.minor || self.minor_dirty
    }
}

/// Rewrites hyphen ranges `A - B` into `>= A, <= B`.
fn rewrite_ranges(group: &str) -> String {
    let toks: Vec<&str> = group.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if i + 2 < toks.len() && toks[i + 1] == "-" {
            out.push(format!(">= {},", toks[i]));
            out.push(format!("<= {}", toks[i + 2]));
            i += 3;
        } else {
            out.push(toks[i].to_string());
            i += 1;
        }
    }
    out.join(" ")
}

/// One AND group: `>=1.2 <2`, `>=1.2, <2`, `> 1.2`.
fn parse_group(g: &str) -> Result<Vec<Constraint>, String> {
    let g = rewrite_ranges(g);
    let mut items: Vec<String> = Vec::new();
    let mut pending_op = String::new();
    for tok in g.split([',', ' ', '\t']).filter(|t| !t.is_empty()) {
        if OPS.iter().any(|(s, _)| *s == tok) {
            pending_op = tok.to_string();
            continue;
        }
        items.push(format!("{pending_op}{tok}"));
        pending_op.clear();
    }
    if !pending_op.is_empty() {
        return Err(format!("improper constraint: {g}"));
    }
    if items.is_empty() {
        // "" is `*`: any release.
        return Ok(vec![Constraint {
            op: Op::TildeOrEqual,
            con: Version::parse("0.0.0")?,
            minor_dirty: false,
            patch_dirty: false,
            dirty: true,
        }]);
    }
    items.iter().map(|s| parse_constraint(s)).collect()
}

pub fn semver_check(constraint: &str, version: &str) -> Result<bool, String> {
    let groups: Vec<Vec<Constraint>> = constraint
        .split("||")
        .map(parse_group)
        .collect::<Result<_, _>>()?;
    let v = Version::parse(version)?;
    Ok(groups.iter().any(|g| g.iter().all(|c| c.check(&v))))
}

pub fn semver_fn(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("semver", a, 1)?;
    let v = Version::parse(&args::string(&a[0])?)?;
    Ok(Value::Object(Rc::new(v)))
}

pub fn semver_compare(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("semverCompare", a, 2)?;
    let c = args::string(&a[0])?;
    let v = args::string(&a[1])?;
    Ok(Value::Bool(semver_check(&c, &v)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_idioms() {
        let ok = |c: &str, v: &str| semver_check(c, v).unwrap_or(false);
        assert!(ok(">=1.21-0", "v1.33.0"));
        assert!(ok(">=1.21-0", "v1.29.3-gke.1"));
        assert!(!ok(">=1.21", "v1.29.3-gke.1"));
        assert!(ok("<1.25.0-0", "1.24.9"));
        assert!(ok("^1.2.0", "1.2.3"));
        assert!(!ok("^1.2.0", "2.2.3"));
        assert!(ok("~1.2", "1.2.9"));
        assert!(!ok("~1.2", "1.3.0"));
        assert!(ok(">= 1.19-0, < 1.30-0", "1.25.0"));
        assert!(ok("1.2 - 1.4.5", "1.3.0"));
        assert!(ok("<1.0 || >=2.0", "2.1.0"));
        assert!(ok("*", "3.0.0"));
        assert!(ok("1.2.x", "1.2.7"));
        assert!(!ok("!=1.2.3", "1.2.3"));
        assert!(semver_check(">=1.2", "not-a-version").is_err());
    }

    #[test]
    fn masterminds_table() {
        let cases: &[(&str, &str, bool)] = &[
            (">=0.0", "0.0.1-alpha", false),
            (">=0", "0.0.0-alpha", false),
            (">=0.0.0-0", "0.0.0-alpha", true),
            (">=0.0.0-0", "1.2.3", true),
            (">=0.0.0-0", "3.4.5-beta.1", true),
            (">=0", "0.0.0", true),
            ("*", "1.0.0", true),
            ("*", "4.5.6", true),
            ("*", "1.2.3-alpha.1", false),
            ("2.*", "1.0.0", false),
            ("2.*", "3.4.5", false),
            ("2.*", "2.1.1", true),
            ("2.1.*", "2.1.1", true),
            ("2.1.*", "2.2.1", false),
            ("", "1.0.0", true),
            (" ", "1.0.0", true),
            ("", "1.2.3-alpha.1", false),
            ("~1.2.3", "1.2.4", true),
            ("~1.2.3", "1.3.4", false),
            ("~1.2", "1.2.4", true),
            ("~1.2", "1.3.4", false),
            ("~1", "1.2.4", true),
            ("~1", "2.3.4", false),
            ("~0.2.3", "0.2.5", true),
            ("~0.2.3", "0.3.5", false),
            ("~1.2.3-beta.2", "1.2.3-beta.4", true),
            ("^1.2.3", "1.8.9", true),
            ("^1.2.3", "2.8.9", false),
            ("^1.2.3", "1.2.1", false),
            ("^1.1.0", "2.1.0", false),
            ("^1.2.0", "2.2.1", false),
            ("^1.2.0", "1.2.1-alpha.1", false),
            ("^1.2.0-alpha.2", "1.2.0-alpha.1", false),
            ("^1.2", "1.8.9", true),
            ("^1.2", "2.8.9", false),
            ("^1", "1.8.9", true),
            ("^1", "2.8.9", false),
            ("^0.2.3", "0.2.5", true),
            ("^0.2.3", "0.5.6", false),
            ("^0.2", "0.2.5", true),
            ("^0.2", "0.5.6", false),
            ("^0.0.3", "0.0.3", true),
            ("^0.0.3", "0.0.4", false),
            ("^0.0", "0.0.3", true),
            ("^0.0", "0.1.4", false),
            ("^0.0", "1.0.4", false),
            ("^0", "0.2.3", true),
            ("^0", "1.1.4", false),
            ("^0.2.3-beta.2", "0.2.3-beta.4", true),
            ("^1.2.0-alpha.0", "1.2.1-alpha.1", true),
            ("^1.2.0-alpha.0", "1.2.1-alpha.0", true),
            (">11", "11.1.0", false),
            (">11.1", "11.1.0", false),
            (">11.1", "11.1.1", false),
            (">11.1", "11.2.1", true),
            (">=11", "11.1.2", true),
            (">=11.1", "11.0.2", false),
            ("=0", "1.0.0", false),
        ];
        for (c, v, want) in cases {
            assert_eq!(semver_check(c, v).unwrap_or(!want), *want, "{c} {v}");
        }
    }
}
