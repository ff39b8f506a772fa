//! gobwas/glob as Argo CD uses it for group and kind patterns (`*` any run, `?` one
//! character), shared by the ignore model, field-path patterns and the ownership rules.
//! A leaf: it reads nothing else in the crate.

/// Whether `text` matches `pattern`. Linear backtracking over the last `*` (no recursion),
/// so a hostile pattern such as `*a*a*a…` costs O(len(pattern) × len(text)), never more.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    // Where the last `*` was seen, and the text position it currently absorbs up to.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some('?') => {
                pi += 1;
                ti += 1;
            }
            Some(c) if *c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                // Let the last `*` absorb one more character and retry after it.
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn matches_as_gobwas_does_for_kinds_and_groups() {
        assert!(glob_match("*", ""));
        assert!(glob_match("*", "Deployment"));
        assert!(glob_match("Deploy*", "Deployment"));
        assert!(glob_match("*.k8s.io", "rbac.authorization.k8s.io"));
        assert!(glob_match("D?ployment", "Deployment"));
        assert!(glob_match("*a*b*", "xxaxxbxx"));
        assert!(!glob_match("*a*b*", "xxbxxaxx"));
        assert!(!glob_match("Deploy", "Deployment"));
        assert!(!glob_match("?", ""));
        assert!(glob_match("", ""));
        assert!(!glob_match("", "a"));
    }

    #[test]
    fn hostile_patterns_stay_linear() {
        // Exponential under naive recursion; here a few thousand steps.
        let pattern = "*a".repeat(200) + "b";
        let text = "a".repeat(400);
        assert!(!glob_match(&pattern, &text));
    }
}
