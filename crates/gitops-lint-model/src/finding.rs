//! The one diagnostic model every rule produces and every output format renders, and its
//! identity across revisions (`FindingKey`). A leaf: rules, report, baseline and github
//! all read it, and it reads nothing above `source`.

use crate::source::{SourceMap, Span};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub text: String,
}

/// A source edit: replace `span` with `replacement` (empty to delete).
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// A fix attached to a finding; `safe` fixes may be applied without review.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    pub title: String,
    pub safe: bool,
    pub edits: Vec<Edit>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    pub message: String,
    /// The line a person edits.
    pub primary: Label,
    /// Other parties (the HPA that scales it, the base value a patch overrode).
    pub secondary: Vec<Label>,
    pub help: Option<String>,
    /// The app that deploys the object (`None` for repo-level findings like YAML syntax).
    pub app: Option<String>,
    /// The cluster the app deploys to, where the repo deploys to more than one (the same app
    /// name in two clusters is two apps).
    pub cluster: Option<String>,
    /// Where the app is declared: tells apps of one name apart inside the pipeline (an
    /// archived copy of a live app); never shown.
    pub app_decl: Option<Span>,
    /// `Kind/namespace/name` of the object concerned.
    pub object: Option<String>,
    /// Field path within the object, for matching findings across revisions.
    pub field: Option<String>,
    pub fix: Option<Fix>,
}

/// Longest message a finding carries. A template that recurses 1000 times produces Go's
/// nested error chain of the same depth; the start says what failed and the end why.
pub const MAX_MESSAGE_CHARS: usize = 2000;

fn bounded_message(message: String) -> String {
    let count = message.chars().count();
    if count <= MAX_MESSAGE_CHARS {
        return message;
    }
    let keep = MAX_MESSAGE_CHARS / 2;
    let head: String = message.chars().take(keep).collect();
    let tail: String = message.chars().skip(count - keep).collect();
    format!(
        "{head} … [{} characters omitted] … {tail}",
        count - 2 * keep
    )
}

impl Finding {
    pub fn new(
        rule: &'static str,
        severity: Severity,
        message: impl Into<String>,
        at: Span,
    ) -> Finding {
        Finding {
            rule,
            severity,
            message: bounded_message(message.into()),
            primary: Label {
                span: at,
                text: String::new(),
            },
            secondary: Vec::new(),
            help: None,
            app: None,
            cluster: None,
            app_decl: None,
            object: None,
            field: None,
            fix: None,
        }
    }
    pub fn label(mut self, text: impl Into<String>) -> Finding {
        self.primary.text = text.into();
        self
    }
    pub fn secondary(mut self, span: Span, text: impl Into<String>) -> Finding {
        self.secondary.push(Label {
            span,
            text: text.into(),
        });
        self
    }
    pub fn help(mut self, help: impl Into<String>) -> Finding {
        self.help = Some(help.into());
        self
    }
    pub fn app(mut self, app: impl Into<String>) -> Finding {
        self.app = Some(app.into());
        self
    }
    pub fn cluster(mut self, cluster: impl Into<String>) -> Finding {
        self.cluster = Some(cluster.into());
        self
    }
    pub fn object(mut self, object: impl Into<String>) -> Finding {
        self.object = Some(object.into());
        self
    }
    pub fn field(mut self, field: impl Into<String>) -> Finding {
        self.field = Some(field.into());
        self
    }
    pub fn with_fix(mut self, fix: Fix) -> Finding {
        self.fix = Some(fix);
        self
    }
}

/// What stays the same about a finding when lines move.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FindingKey {
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Only for findings about no object (YAML syntax, unreadable files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl FindingKey {
    pub fn of(f: &Finding, map: &SourceMap) -> FindingKey {
        FindingKey {
            rule: f.rule.to_string(),
            app: f.app.clone(),
            cluster: f.cluster.clone(),
            object: f.object.clone(),
            field: f.field.clone(),
            file: match f.object {
                Some(_) => None,
                None => Some(map.path(f.primary.span.file)),
            },
        }
    }

    /// A short stable hash of the key.
    pub fn fingerprint(&self) -> String {
        short_hash(&serde_json::to_string(self).unwrap_or_default())
    }
}

fn short_hash(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Longest written text of a finding's primary span that goes into its problem key.
const MAX_KEY_TEXT: usize = 512;

/// One problem's identity for code scanning (SARIF `partialFingerprints`) and for the
/// review's "already commented" marker: the [`FindingKey`] (rule, app, cluster, object,
/// field), the file the problem is written in, and, when the finding names no field, what
/// tells it apart from its neighbours: the text at its primary span with runs of blanks as
/// one space (the entry or key it is about: three problems in one `ignoreDifferences` list)
/// and its message with runs of digits as `0` (two generators flagged on one
/// `generatorOptions` line). Line numbers, indentation and counts are not part of it, so it
/// stays the same when lines move. A field already says which problem; the value written
/// there is left out, so an edited value is the same alert.
pub fn problem_fingerprint(f: &Finding, map: &SourceMap) -> String {
    let key = FindingKey::of(f, map);
    let file = map.path(f.primary.span.file);
    let (written, message) = match f.field {
        Some(_) => (String::new(), String::new()),
        None => (
            written_words(f.primary.span, map),
            without_numbers(&f.message),
        ),
    };
    let text = serde_json::to_string(&(&key, &file, &written, &message)).unwrap_or_default();
    short_hash(&text)
}

/// `text` with every run of ASCII digits as one `0`.
fn without_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('0');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// The text at `span`, blanks collapsed, at most [`MAX_KEY_TEXT`] characters.
fn written_words(span: Span, map: &SourceMap) -> String {
    let file = map.get(span.file);
    let text: &str = &file.text;
    let (start, end) = (span.start as usize, span.end as usize);
    let Some(slice) = text.get(start..end.min(text.len())) else {
        return String::new();
    };
    slice
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_KEY_TEXT)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_fingerprints_tell_entries_apart_and_survive_moves() {
        let map = SourceMap::new();
        let text = "ignoreDifferences:\n  - kind: A\n    jsonPathReplicas: x\n  - kind: B\n";
        let moved = format!("# moved\n\n{}", text.replace("  - kind", "    - kind"));
        let a = map.add_text("app.yaml", text);
        let b = map.add_text("app.yaml", moved.clone());
        let at = |file, text: &str, needle: &str| {
            let s = text.find(needle).unwrap_or(0);
            Finding::new(
                "ignore-differences-invalid",
                Severity::Error,
                "m",
                Span::new(file, s, s + needle.len()),
            )
            .app("web")
        };
        let first = problem_fingerprint(&at(a, text, "kind: A"), &map);
        // Another message on the same span (two generators on one options line).
        let other = Finding {
            message: "another".into(),
            ..at(a, text, "kind: A")
        };
        assert_ne!(problem_fingerprint(&other, &map), first);
        let second = problem_fingerprint(&at(a, text, "kind: B"), &map);
        assert_ne!(first, second);
        // Same entry after lines moved: same identity.
        assert_eq!(problem_fingerprint(&at(b, &moved, "kind: A"), &map), first);
        // With a field, the value is not part of it.
        let with_field = |needle| {
            at(a, text, needle)
                .object("Deployment/prod/web")
                .field("spec.replicas")
        };
        assert_eq!(
            problem_fingerprint(&with_field("kind: A"), &map),
            problem_fingerprint(&with_field("kind: B"), &map)
        );
    }

    #[test]
    fn long_messages_keep_their_start_and_end() {
        let long = format!("start {} end", "é".repeat(5000));
        let m = bounded_message(long);
        assert!(m.starts_with("start "));
        assert!(m.ends_with(" end"));
        assert!(m.contains("[3010 characters omitted]"), "{m}");
        assert_eq!(bounded_message("short".into()), "short");
    }
}
