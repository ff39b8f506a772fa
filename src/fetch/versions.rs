//! Which version a request picks, as Helm picks it: an exact match first, else the newest
//! version the Masterminds semver constraint accepts (`*` or empty: the newest release, never
//! a prerelease; `>=1.2 <2`, `^1.2`, `~1.2.3`, `1.2.x`, `||`, commas as AND). The constraint
//! language is the crate's one Masterminds implementation, which chart rendering also uses.

use crate::render::gotmpl::funcs::semver::{Version, semver_check};

/// Is `requested` one exact version rather than a range (so a registry tag can be asked for
/// directly)?
pub fn is_exact(requested: &str) -> bool {
    let r = requested.trim();
    !r.is_empty()
        && !r.contains(['*', '^', '~', '<', '>', '=', '|', ',', ' ', 'x', 'X'])
        && Version::parse(r).is_ok()
}

/// The version of `candidates` that `requested` selects, or why none does.
pub fn pick<'a>(requested: &str, candidates: &'a [String]) -> Result<&'a str, String> {
    let requested = requested.trim();
    if !requested.is_empty()
        && let Some(exact) = candidates.iter().find(|c| c.as_str() == requested)
    {
        return Ok(exact);
    }
    let constraint = if requested.is_empty() { "*" } else { requested };
    // A constraint that does not parse is the request's fault, whatever the candidates.
    semver_check(constraint, "0.0.0")
        .map_err(|e| format!("`{requested}` is not a version or range: {e}"))?;
    let mut best: Option<(Version, &str)> = None;
    for c in candidates {
        let Ok(v) = Version::parse(c) else { continue };
        if !semver_check(constraint, c).unwrap_or(false) {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(b, _)| v.compare(b) == std::cmp::Ordering::Greater)
        {
            best = Some((v, c));
        }
    }
    best.map(|(_, c)| c).ok_or_else(|| {
        let shown = if requested.is_empty() {
            "any release"
        } else {
            requested
        };
        format!(
            "no version matches {shown} (of {} listed)",
            candidates.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(vs: &[&str]) -> Vec<String> {
        vs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ranges_pick_the_newest_match_as_helm_does() {
        let vs = list(&[
            "1.2.0",
            "1.2.3",
            "1.2.10",
            "1.3.0",
            "1.10.0",
            "2.0.0-rc.1",
            "2.0.0",
            "2.1.0",
            "3.0.0-beta.1",
        ]);
        assert_eq!(pick("", &vs).unwrap(), "2.1.0");
        assert_eq!(pick("*", &vs).unwrap(), "2.1.0");
        assert_eq!(pick(">=1.2 <2", &vs).unwrap(), "1.10.0");
        assert_eq!(pick(">=1.2, <2", &vs).unwrap(), "1.10.0");
        assert_eq!(pick("^1.2", &vs).unwrap(), "1.10.0");
        assert_eq!(pick("~1.2.3", &vs).unwrap(), "1.2.10");
        assert_eq!(pick("1.2.x", &vs).unwrap(), "1.2.10");
        assert_eq!(pick("1.3.0", &vs).unwrap(), "1.3.0");
        assert_eq!(pick("~1.2.0 || ^2.0.0", &vs).unwrap(), "2.1.0");
        assert_eq!(pick("<2.0.0 || >=9", &vs).unwrap(), "1.10.0");
        // A prerelease is chosen only by a constraint that names one.
        assert_eq!(pick(">=3.0.0-0", &vs).unwrap(), "3.0.0-beta.1");
        assert_eq!(pick("2.0.0-rc.1", &vs).unwrap(), "2.0.0-rc.1");
        assert!(
            pick("^4", &vs)
                .unwrap_err()
                .contains("no version matches ^4")
        );
        assert!(
            pick(">= nonsense", &vs)
                .unwrap_err()
                .contains("not a version or range")
        );
    }

    #[test]
    fn an_exact_string_wins_before_semver_and_junk_is_skipped() {
        let vs = list(&["v1.0.0", "latest", "1.0.0+build.2", "0.9.0"]);
        assert_eq!(pick("latest", &vs).unwrap(), "latest");
        assert_eq!(pick("v1.0.0", &vs).unwrap(), "v1.0.0");
        assert_eq!(pick("", &list(&["latest", "0.9.0"])).unwrap(), "0.9.0");
        assert!(is_exact("1.2.3"));
        assert!(is_exact("1.2.3+build.1"));
        assert!(is_exact("v1.2.3-rc.1"));
        assert!(!is_exact("1.2.x"));
        assert!(!is_exact("^1.2"));
        assert!(!is_exact(""));
    }
}
