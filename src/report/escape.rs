//! Control characters in text that reaches a terminal or a CI log (file names, messages,
//! server text) are escaped: a raw ESC could recolour, hide or rewrite log lines, a carriage
//! return could overwrite the line it ends.

/// Control characters (other than newline and tab) as `\u{…}`, visible and inert.
pub fn escape_controls(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            escape_controls("apps/\u{1b}[31mred\r.yaml"),
            "apps/\\u{1b}[31mred\\u{d}.yaml"
        );
        assert_eq!(escape_controls("plain\ttext\n"), "plain\ttext\n");
    }
}
