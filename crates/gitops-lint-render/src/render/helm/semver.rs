//! Masterminds/semver as Helm uses it (chart versions, `kubeVersion` ranges, dependency
//! ranges): one implementation, shared with Sprig's `semver`/`semverCompare` functions.

pub use crate::render::gotmpl::funcs::semver::Version;

/// Helm's `IsCompatibleRange`: false when either side does not parse.
pub fn is_compatible_range(constraint: &str, version: &str) -> bool {
    // Masterminds rejects an empty constraint ("improper constraint").
    !constraint.trim().is_empty()
        && crate::render::gotmpl::funcs::semver::semver_check(constraint, version).unwrap_or(false)
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
        assert!(Version::parse("1.0").is_ok());
        assert!(Version::parse("1.0.0-01").is_err());
    }
}
