//! Go's `unicode` package as the string functions use it: one-to-one case mapping and
//! `IsSpace`.

/// Go's unicode.ToUpper (simple, one-to-one mapping: 'ß' stays 'ß').
pub fn go_to_upper(c: char) -> char {
    let mut it = c.to_uppercase();
    match (it.next(), it.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// Go's unicode.ToLower (simple mapping).
pub fn go_to_lower(c: char) -> char {
    let mut it = c.to_lowercase();
    match (it.next(), it.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// Go's unicode.IsSpace.
pub fn go_is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\x0b' | '\x0c' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    ) || (c as u32 > 0xff && c.is_whitespace())
}
