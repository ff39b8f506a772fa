//! Output: the finding model and its renderers (human via miette, JSON, SARIF, JUnit, GitHub
//! annotations, the markdown summary).

pub mod escape;
pub mod github;
pub mod human;
pub mod json;
pub mod junit;
pub mod sarif;
pub mod summary;

pub use crate::finding::{Edit, Finding, Fix, Label, Severity};

/// A linted-root-relative path as the repository names it (GitHub-facing formats resolve
/// paths against the checkout root, while the linted directory may be a subdirectory).
pub fn repo_path(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_string()
    } else if path.is_empty() {
        prefix.to_string()
    } else {
        format!("{prefix}/{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{SourceMap, Span};

    /// What a chart's `fail` or a file name can carry: a workflow command on a new line
    /// (after CR LF and after blanks), ESC and C1 sequences, NEL, DEL, a bidirectional override
    /// and isolate.
    const PAYLOAD: &str = "boom, a long message that a renderer may wrap just before ::add-mask::wrapped\n::add-mask::s3cret\r\n  ::stop-commands::t0k\u{1b}[2J\u{9b}31m\u{85}\u{7f}x\u{202e}gpj.exe\u{2066}";

    fn hostile(c: char) -> bool {
        c == '\u{1b}'
            || c == '\r'
            || c == '\u{7f}'
            || ('\u{80}'..='\u{9f}').contains(&c)
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }

    fn outputs() -> Vec<(&'static str, String)> {
        let map = SourceMap::new();
        let file = map.add_text(
            format!("apps/web\u{1b}[31m{}.yaml", '\u{202e}'),
            "spec:\n  replicas: 3 # \u{1b}]0;title\u{7}\u{202e}\n",
        );
        let f = Finding::new(
            "render-failed",
            Severity::Error,
            PAYLOAD,
            Span::new(file, 8, 19),
        )
        .label(PAYLOAD)
        .secondary(Span::new(file, 0, 4), PAYLOAD)
        .help(PAYLOAD)
        .app(PAYLOAD)
        .object(format!("Deployment/prod/{PAYLOAD}"))
        .field(PAYLOAD);
        let findings = [f];
        vec![
            ("human", human::render(&findings, &map, false)),
            ("human (colour)", human::render(&findings, &map, true)),
            (
                "json",
                json::render(&findings, &[PAYLOAD.to_string()], &map),
            ),
            ("sarif", sarif::render(&findings, &map, "")),
            (
                "junit",
                junit::render(&findings, &map, "", &junit_options(Severity::Error)),
            ),
            (
                "github",
                github::render(&findings, &map, "", &github::Options::default()),
            ),
        ]
    }

    /// The finding's help and message also reach `<skipped message=…>` through the same
    /// escape; `<failure>` carries both.
    fn junit_options(fail_on: Severity) -> junit::Options {
        junit::Options {
            fail_on,
            below: junit::Below::Skipped,
            time: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn no_format_lets_hostile_text_through() {
        for (format, text) in outputs() {
            // Colour is ours: the only ESC allowed is an SGR sequence the renderer wrote.
            let plain = if format == "human (colour)" {
                strip_sgr(&text)
            } else {
                text.clone()
            };
            let raw: Vec<char> = plain.chars().filter(|c| hostile(*c)).collect();
            assert!(raw.is_empty(), "{format}: raw {raw:?} in\n{text}");
            // The only workflow commands are the annotation lines `--format github` writes.
            let commands: Vec<&str> = text
                .lines()
                .filter(|l| l.trim_start().starts_with("::"))
                .collect();
            let expected = usize::from(format == "github");
            assert_eq!(commands.len(), expected, "{format}: {commands:#?}");
            if format == "github" {
                assert!(commands[0].starts_with("::error file="), "{}", commands[0]);
            }
        }
    }

    #[test]
    fn json_formats_keep_the_exact_text() {
        for (format, text) in outputs() {
            let v: serde_json::Value = match format {
                "json" | "sarif" => serde_json::from_str(&text).expect(format),
                _ => continue,
            };
            let message = if format == "json" {
                &v["findings"][0]["message"]
            } else {
                &v["runs"][0]["results"][0]["properties"]["field"]
            };
            assert_eq!(message.as_str(), Some(PAYLOAD), "{format}");
        }
    }

    /// SGR sequences (ESC `[` digits and `;` `m`: what a colour theme writes) removed; any
    /// other ESC stays.
    fn strip_sgr(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("\u{1b}[") {
            out.push_str(&rest[..at]);
            let tail = &rest[at + 2..];
            let params = tail
                .find(|c: char| !c.is_ascii_digit() && c != ';')
                .unwrap_or(tail.len());
            if tail[params..].starts_with('m') {
                rest = &tail[params + 1..];
            } else {
                out.push('\u{1b}');
                rest = &rest[at + 1..];
            }
        }
        out.push_str(rest);
        out
    }
}
