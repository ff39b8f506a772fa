//! Text from outside (GitHub API messages, file names, finding messages) made safe to
//! print in a log: the token and any credential after `Authorization:`, `Bearer` or
//! `token` masked; control characters escaped so they cannot forge or hide log lines (ANSI
//! escapes, carriage returns, workflow commands).

const MASK: &str = "***";

/// `text` with `token` (when non-empty) and credential-looking values masked and control
/// characters escaped.
pub fn scrub(text: &str, token: &str) -> String {
    let masked = if token.is_empty() {
        text.to_string()
    } else {
        text.replace(token, MASK)
    };
    crate::report::escape::escape_controls(&mask_credentials(&masked))
}

/// `Authorization: …` to the end of its line, and the word after `Bearer`/`token`/`Basic`.
fn mask_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let lower = line.to_ascii_lowercase();
        if let Some(at) = lower.find("authorization:") {
            out.push_str(&line[..at + "authorization:".len()]);
            out.push(' ');
            out.push_str(MASK);
            continue;
        }
        let mut words = line.split(' ').peekable();
        let mut first = true;
        while let Some(w) = words.next() {
            if !first {
                out.push(' ');
            }
            first = false;
            out.push_str(w);
            let scheme = w.trim_start_matches(['"', '\'', '(']).to_ascii_lowercase();
            if matches!(scheme.as_str(), "bearer" | "token" | "basic")
                && let Some(next) = words.peek()
                && looks_like_credential(next)
            {
                words.next();
                out.push(' ');
                out.push_str(MASK);
            }
        }
    }
    out
}

/// A credential is one long word of token characters (GitHub's are 40+; any 16+ counts).
fn looks_like_credential(w: &str) -> bool {
    let w = w.trim_end_matches(['"', '\'', ')', ',', '.', ';']);
    w.len() >= 16
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '=' | '/' | '+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_and_credentials_never_reach_the_log() {
        let token = "ghs_abcdefghijklmnopqrstuvwxyz0123456789";
        let server = format!("HTTP 401: Bearer {token}");
        assert_eq!(scrub(&server, token), "HTTP 401: Bearer ***");
        // Another credential than ours is masked too, by its shape.
        assert_eq!(
            scrub("Bad credentials: bearer AAAABBBBCCCCDDDDEEEE.", ""),
            "Bad credentials: bearer ***"
        );
        assert_eq!(
            scrub("echo: Authorization: token xyz\nnext", ""),
            "echo: Authorization: ***\nnext"
        );
        assert_eq!(scrub("a token is required", ""), "a token is required");
    }

    #[test]
    fn server_text_cannot_send_escapes_to_the_log() {
        assert_eq!(
            scrub("HTTP 500: \u{1b}[2Jgone", ""),
            "HTTP 500: \\u{1b}[2Jgone"
        );
    }
}
