//! Go's `path.Match` (what `.helmignore`, `.Files.Glob` and `--show-only` use): `*` and `?`
//! never cross a `/`, `[...]` classes with `^` negation and ranges, `\` escapes.

/// Does `name` match the shell pattern? A malformed pattern matches nothing (Go returns
/// `ErrBadPattern`, which every Helm caller treats as "no match").
pub fn go_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go_match_chars(&p, &n)
}

/// [`go_match`] on patterns and names already split into chars (`.helmignore` rules are
/// matched against every file of a chart).
pub fn go_match_chars(pattern: &[char], name: &[char]) -> bool {
    match_from(pattern, name).unwrap_or(false)
}

/// Is the pattern well-formed (Go's `ErrBadPattern` check)?
pub fn valid_pattern(pattern: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' if i + 1 >= p.len() => return false,
            '\\' => i += 2,
            '[' => match class_end(&p, i) {
                Some(end) => i = end,
                None => return false,
            },
            _ => i += 1,
        }
    }
    true
}

fn class_end(p: &[char], start: usize) -> Option<usize> {
    let mut i = start + 1;
    if p.get(i) == Some(&'^') {
        i += 1;
    }
    let mut first = true;
    loop {
        match p.get(i)? {
            ']' if !first => return Some(i + 1),
            '\\' => i += 2,
            _ => i += 1,
        }
        first = false;
    }
}

/// Iterative backtracking over `*` (the pattern is small; names are paths).
fn match_from(p: &[char], n: &[char]) -> Option<bool> {
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' if ni < n.len() && n[ni] != '/' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' if ni < n.len() => {
                    let end = class_end(p, pi)?;
                    if n[ni] != '/' && class_matches(&p[pi + 1..end - 1], n[ni])? {
                        pi = end;
                        ni += 1;
                        continue;
                    }
                }
                '\\' => {
                    let c = *p.get(pi + 1)?;
                    if ni < n.len() && n[ni] == c {
                        pi += 2;
                        ni += 1;
                        continue;
                    }
                }
                c if c != '?' && c != '[' && ni < n.len() && n[ni] == c => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        } else if ni == n.len() {
            return Some(true);
        }
        // Mismatch: let the last `*` eat one more character (never a separator).
        match star {
            Some((sp, sn)) if sn < n.len() && n[sn] != '/' => {
                star = Some((sp, sn + 1));
                pi = sp + 1;
                ni = sn + 1;
            }
            _ => return Some(false),
        }
    }
}

fn class_matches(class: &[char], c: char) -> Option<bool> {
    let (negate, body) = match class.first() {
        Some('^') => (true, &class[1..]),
        _ => (false, class),
    };
    let mut i = 0;
    let mut hit = false;
    while i < body.len() {
        let mut lo = body[i];
        if lo == '\\' {
            i += 1;
            lo = *body.get(i)?;
        }
        i += 1;
        let mut hi = lo;
        if body.get(i) == Some(&'-') && i + 1 < body.len() {
            i += 1;
            hi = body[i];
            if hi == '\\' {
                i += 1;
                hi = *body.get(i)?;
            }
            i += 1;
        }
        if lo <= c && c <= hi {
            hit = true;
        }
    }
    Some(hit != negate)
}

#[cfg(test)]
mod tests {
    use super::go_match;

    #[test]
    fn star_stays_within_a_segment() {
        assert!(go_match(
            "templates/subdir/role*",
            "templates/subdir/rolebinding.yaml"
        ));
        assert!(!go_match("templates/*", "templates/subdir/role.yaml"));
        assert!(go_match("*.yaml", "a.yaml"));
        assert!(go_match("a?c", "abc"));
        assert!(go_match("[a-c]x", "bx"));
        assert!(!go_match("[^a-c]x", "bx"));
        assert!(go_match("\\*", "*"));
        assert!(go_match("config/*", "config/a.toml"));
    }
}
