//! Cross-family tests: the lookup table is complete and consistent.

use super::*;

#[test]
fn every_name_resolves() {
    for n in ALL_NAMES {
        assert!(lookup(n).is_some(), "{n}");
    }
    for n in ["env", "expandenv", "include", "tpl", "printf", "len"] {
        assert!(lookup(n).is_none(), "{n}");
    }
    assert!(is_nondeterministic("randAlphaNum"));
    assert!(!is_nondeterministic("sha256sum"));
}
