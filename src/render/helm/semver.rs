//! Semantic versions and constraints as Masterminds/semver v3 reads them (Helm uses it for
//! chart versions, dependency version ranges and `kubeVersion`).

use std::cmp::Ordering;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: String,
    pub meta: String,
    pub original: String,
}

impl Version {
    /// Lenient parse (`v1`, `1.2`, `1.2.3-rc.1+b`), as `semver.NewVersion`.
    pub fn parse(text: &str) -> Option<Version> {
        let s = text.strip_prefix('v').unwrap_or(text);
        let (rest, meta) = match s.split_once('+') {
            Some((r, m)) => (r, m.to_string()),
            None => (s, String::new()),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((c, p)) => (c, p.to_string()),
            None => (rest, String::new()),
        };
        let ident_ok = |x: &str| {
            x.split('.').all(|part| {
                !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            })
        };
        if (!pre.is_empty() || rest.contains('-')) && !ident_ok(&pre) {
            return None;
        }
        if (!meta.is_empty() || s.contains('+')) && !ident_ok(&meta) {
            return None;
        }
        // Numeric prerelease identifiers must not have leading zeros.
        if pre
            .split('.')
            .any(|p| p.len() > 1 && p.starts_with('0') && p.chars().all(|c| c.is_ascii_digit()))
        {
            return None;
        }
        let parts: Vec<&str> = core.split('.').collect();
        if parts.is_empty() || parts.len() > 3 {
            return None;
        }
        let mut nums = [0u64; 3];
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            nums[i] = p.parse().ok()?;
        }
        Some(Version {
            major: nums[0],
            minor: nums[1],
            patch: nums[2],
            pre,
            meta,
            original: text.to_string(),
        })
    }

    pub fn compare(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| compare_pre(&self.pre, &other.pre))
    }
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (xa, xb): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for (x, y) in xa.iter().zip(xb.iter()) {
        let ord = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(i), Ok(j)) => i.cmp(&j),
            (Ok(_), Err(_)) => Ordering::Less,
            (Err(_), Ok(_)) => Ordering::Greater,
            _ => x.cmp(y),
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    xa.len().cmp(&xb.len())
}

#[derive(Clone, Debug)]
struct Constraint {
    op: String,
    con: Version,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

/// `||`-separated groups of comma/space-separated constraints.
#[derive(Clone, Debug)]
pub struct Constraints {
    groups: Vec<Vec<Constraint>>,
}

const OPS: [&str; 11] = ["!=", ">=", "=>", "<=", "=<", "~>", "~", "^", ">", "<", "="];

impl Constraints {
    pub fn parse(text: &str) -> Option<Constraints> {
        let mut groups = Vec::new();
        for group in text.split("||") {
            let group = expand_hyphen_ranges(group.trim());
            let mut cs = Vec::new();
            let mut tokens: Vec<String> = Vec::new();
            // Split on commas and spaces, gluing an operator to the version after it.
            for raw in group.split([',', ' ']).filter(|t| !t.trim().is_empty()) {
                let t = raw.trim();
                if let Some(last) = tokens.last_mut()
                    && OPS.contains(&last.as_str())
                {
                    last.push_str(t);
                    continue;
                }
                tokens.push(t.to_string());
            }
            if tokens.is_empty() {
                return None;
            }
            for t in tokens {
                cs.push(parse_one(&t)?);
            }
            groups.push(cs);
        }
        Some(Constraints { groups })
    }

    pub fn check(&self, v: &Version) -> bool {
        self.groups.iter().any(|g| g.iter().all(|c| c.check(v)))
    }
}

fn expand_hyphen_ranges(group: &str) -> String {
    // `1.2 - 1.4.5` → `>= 1.2, <= 1.4.5`
    let parts: Vec<&str> = group.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        if i + 2 < parts.len() && parts[i + 1] == "-" {
            out.push(format!(">={},", parts[i]));
            out.push(format!("<={}", parts[i + 2]));
            i += 3;
        } else {
            out.push(parts[i].to_string());
            i += 1;
        }
    }
    out.join(" ")
}

fn parse_one(t: &str) -> Option<Constraint> {
    let op = OPS
        .iter()
        .find(|o| t.starts_with(**o))
        .copied()
        .unwrap_or("");
    let ver = t[op.len()..].trim();
    let wild = |p: &str| matches!(p, "x" | "X" | "*");
    let body = ver.strip_prefix('v').unwrap_or(ver);
    let (core, tail) = match body.find(['-', '+']) {
        Some(i) => (&body[..i], &body[i..]),
        None => (body, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    let mut minor_dirty = false;
    let mut patch_dirty = false;
    let mut dirty = false;
    let mut nums: Vec<String> = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        if wild(p) {
            if i == 0 {
                // `*`: Masterminds marks only `dirty`, which `~0.0.0` accepts everything.
            } else if i == 1 {
                minor_dirty = true;
                patch_dirty = true;
            } else {
                patch_dirty = true;
            }
            dirty = true;
            nums.push("0".into());
        } else {
            nums.push((*p).to_string());
        }
    }
    if wild(parts[0]) {
        dirty = true;
    } else if parts.len() < 2 {
        minor_dirty = true;
        patch_dirty = true;
        dirty = true;
    } else if parts.len() < 3 {
        patch_dirty = true;
        dirty = true;
    }
    while nums.len() < 3 {
        nums.push("0".into());
    }
    let con = Version::parse(&format!("{}{}", nums.join("."), tail))?;
    Some(Constraint {
        op: op.to_string(),
        con,
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

impl Constraint {
    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        if v.major != c.major {
            return false;
        }
        self.minor_dirty || v.minor == c.minor
    }

    fn check(&self, v: &Version) -> bool {
        if !v.pre.is_empty() && self.con.pre.is_empty() {
            return false;
        }
        let c = &self.con;
        match self.op.as_str() {
            "" | "=" if self.dirty => self.tilde(v),
            "" | "=" => v.compare(c) == Ordering::Equal,
            "!=" => {
                if self.dirty {
                    if v.major != c.major {
                        return true;
                    }
                    if !self.minor_dirty && v.minor != c.minor {
                        return true;
                    }
                    return !self.patch_dirty && v.patch != c.patch;
                }
                v.compare(c) != Ordering::Equal
            }
            ">" => {
                if !self.dirty {
                    return v.compare(c) == Ordering::Greater;
                }
                if v.major != c.major {
                    return v.major > c.major;
                }
                if self.minor_dirty {
                    return false;
                }
                v.minor > c.minor
            }
            "<" => v.compare(c) == Ordering::Less,
            ">=" | "=>" => v.compare(c) != Ordering::Less,
            "<=" | "=<" => {
                if !self.dirty {
                    return v.compare(c) != Ordering::Greater;
                }
                if v.major > c.major {
                    return false;
                }
                !(v.major == c.major && v.minor > c.minor && !self.minor_dirty)
            }
            "~" | "~>" => self.tilde(v),
            "^" => {
                if v.compare(c) == Ordering::Less {
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
                v.patch == c.patch
            }
            _ => false,
        }
    }
}

/// Helm's `IsCompatibleRange`: false when either side does not parse.
pub fn is_compatible_range(constraint: &str, version: &str) -> bool {
    match (Constraints::parse(constraint), Version::parse(version)) {
        (Some(c), Some(v)) => c.check(&v),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_as_masterminds() {
        assert!(is_compatible_range(">=1.19.0-0", "v1.33.0"));
        assert!(is_compatible_range("^1.2.0", "1.9.3"));
        assert!(!is_compatible_range("^1.2.0", "2.0.0"));
        assert!(is_compatible_range("~1.2.0", "1.2.9"));
        assert!(!is_compatible_range("~1.2.0", "1.3.0"));
        assert!(is_compatible_range("2.x.x", "2.31.4"));
        assert!(is_compatible_range("*", "1.0.0"));
        assert!(!is_compatible_range("*", "1.0.0-alpha"));
        assert!(is_compatible_range(">= 1.2, < 3.0.0 || >= 4.2.3", "4.3.0"));
        assert!(is_compatible_range("1.2 - 1.4.5", "1.3.0"));
        assert!(!is_compatible_range("", "1.0.0"));
        assert!(is_compatible_range("0.1.0", "0.1.0"));
        assert!(Version::parse("1.0").is_some());
        assert!(Version::parse("1.0.0-01").is_none());
    }
}
