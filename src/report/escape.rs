//! Text from a repository or a server (file names, messages a chart's `fail` writes, API
//! errors) reaches terminals and CI logs through every output format, so each format makes it
//! inert in its own syntax: a raw ESC could recolour, hide or rewrite log lines, a carriage
//! return overwrite the line it ends, a C1 control act as ESC on some terminals, the Unicode
//! bidirectional controls reorder what a reviewer reads (Trojan Source), and a line of
//! output starting with `::` is a command to the GitHub Actions runner (`::add-mask::`,
//! `::stop-commands::`), whatever the format around it.

/// Characters no output carries raw: the C0 and C1 controls and DEL (but newline and tab),
/// and the bidirectional formatting characters (embeddings, overrides, isolates, marks).
pub fn is_inert_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// The Unicode bidirectional formatting characters (UAX #9, "explicit formatting" and the
/// implicit marks).
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// For text shown as text (human report, annotation data, log warnings): unsafe characters
/// as `\u{…}`, visible and inert, and a line inside the text that would start a workflow
/// command (`::` after optional blanks: the runner trims them) gets its first `:` as
/// `\u{3a}`. Newlines and tabs stay.
pub fn escape_controls(text: &str) -> String {
    if !text.chars().any(is_inert_unsafe) && !has_command_line(text) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut line_start = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if is_inert_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
            continue;
        }
        if line_start && c == ':' && chars.peek() == Some(&':') {
            out.push_str("\\u{3a}");
            line_start = false;
            continue;
        }
        if c == '\n' {
            line_start = true;
        } else if !matches!(c, ' ' | '\t') {
            line_start = false;
        }
        out.push(c);
    }
    out
}

/// A whole report (the human one, which wraps long lines wherever a space falls): every
/// line that would start a workflow command gets its first `:` as `\u{3a}`. None of the
/// report's own lines starts with `::`.
pub fn break_command_lines(text: &str) -> String {
    if !text
        .split('\n')
        .any(|l| l.trim_start_matches([' ', '\t']).starts_with("::"))
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let body = line.trim_start_matches([' ', '\t']);
        if body.starts_with("::") {
            out.push_str(&line[..line.len() - body.len()]);
            out.push_str("\\u{3a}");
            out.push_str(&body[1..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Whether a line after the first starts (after blanks) with `::`.
fn has_command_line(text: &str) -> bool {
    text.split('\n')
        .skip(1)
        .any(|l| l.trim_start_matches([' ', '\t']).starts_with("::"))
}

/// Serialized JSON (JSON, SARIF) with every unsafe character inside its strings written as
/// a `\uXXXX` escape: the same document to a parser, nothing raw in a log. serde_json already
/// escapes C0 controls; DEL, C1 and the bidirectional controls it writes as they are. (All
/// of them are in the Basic Multilingual Plane, so one escape each.)
pub fn inert_json(text: String) -> String {
    if !text.chars().any(is_inert_unsafe) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_inert_unsafe(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
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
        // C1 (CSI, NEL) and the bidirectional override.
        assert_eq!(
            escape_controls("a\u{9b}31m\u{85}b\u{202e}c"),
            "a\\u{9b}31m\\u{85}b\\u{202e}c"
        );
    }

    #[test]
    fn a_workflow_command_inside_the_text_is_broken() {
        assert_eq!(
            escape_controls("failed\n::add-mask::x\n  ::stop-commands::y"),
            "failed\n\\u{3a}:add-mask::x\n  \\u{3a}:stop-commands::y"
        );
        // Not at a line start: as written.
        assert_eq!(escape_controls("a ::b"), "a ::b");
        assert_eq!(escape_controls("::first"), "::first");
        assert_eq!(
            break_command_lines("a\n  ::add-mask::x\n::b"),
            "a\n  \\u{3a}:add-mask::x\n\\u{3a}:b"
        );
    }

    #[test]
    fn json_keeps_its_meaning() {
        let original = "x\u{85}y\u{202e}z\u{7f}\r\n";
        let text = inert_json(serde_json::to_string(original).unwrap_or_default());
        assert!(text.is_ascii(), "{text}");
        assert_eq!(
            serde_json::from_str::<String>(&text).ok().as_deref(),
            Some(original)
        );
    }
}
