//! `.gitops-lint.yaml`: rule severities, excludes, per-object ignores, repo URLs, limits.
//! Strict: an unknown key or rule id is an error (exit 2), never silently ignored.

use crate::report::Severity;
use crate::source::{FileId, SourceMap, Span};
use crate::yaml::{Limits, Node, parse_str};

#[derive(Clone, Debug, PartialEq)]
pub enum RuleSetting {
    Off,
    Severity(Severity),
}

#[derive(Clone, Debug)]
pub struct ObjectIgnore {
    pub rule: String,
    /// `Kind/namespace/name` or `Kind/name` (cluster-scoped); `*` matches any part.
    pub object: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    pub rules: Vec<(String, RuleSetting)>,
    pub exclude: Vec<String>,
    pub ignore: Vec<ObjectIgnore>,
    pub repo_urls: Vec<String>,
    pub max_file_bytes: Option<u64>,
    pub max_files: Option<usize>,
    pub yaml_limits: Limits,
}

#[derive(Debug)]
pub struct ConfigError {
    pub file: FileId,
    pub span: Option<Span>,
    pub message: String,
}

const TOP_KEYS: &[&str] = &["rules", "exclude", "ignore", "repo-urls", "limits"];
const LIMIT_KEYS: &[&str] = &[
    "max-file-bytes",
    "max-depth",
    "max-alias-nodes",
    "max-documents",
];

impl Config {
    pub fn setting(&self, rule: &str) -> Option<&RuleSetting> {
        self.rules
            .iter()
            .rev()
            .find(|(r, _)| r == rule)
            .map(|(_, s)| s)
    }

    pub fn exclude_set(&self) -> Result<globset::GlobSet, String> {
        let mut b = globset::GlobSetBuilder::new();
        for pat in &self.exclude {
            let g = globset::GlobBuilder::new(pat)
                .literal_separator(false)
                .build()
                .map_err(|e| format!("exclude pattern `{pat}`: {e}"))?;
            b.add(g);
            // `dir/` or `dir` also excludes everything below it.
            if let Ok(g) = globset::Glob::new(&format!("{}/**", pat.trim_end_matches('/'))) {
                b.add(g);
            }
        }
        b.build().map_err(|e| e.to_string())
    }

    /// Parse a config file already registered in the source map.
    pub fn parse(
        map: &SourceMap,
        file: FileId,
        known_rules: &[&str],
    ) -> Result<Config, ConfigError> {
        let src = map.get(file);
        let err = |span: Option<Span>, message: String| ConfigError {
            file,
            span,
            message,
        };
        let parsed = parse_str(&src.text, file, &Limits::default());
        if let Some(e) = parsed.error {
            return Err(err(Some(e.span), format!("does not parse: {}", e.message)));
        }
        let mut cfg = Config::default();
        let Some(root) = parsed.docs.into_iter().next().map(|d| d.root) else {
            return Ok(cfg);
        };
        let Some(entries) = root.as_map() else {
            return Err(err(Some(root.span), "must be a mapping".into()));
        };
        for e in entries {
            let key = e.key.key_str();
            match key.as_ref() {
                "rules" => {
                    for r in e.value.as_map().unwrap_or_default() {
                        let id = r.key.key_str().into_owned();
                        if !known_rules.contains(&id.as_str()) {
                            return Err(err(
                                Some(r.key.span),
                                format!("unknown rule `{id}` (see `gitops-lint rules`)"),
                            ));
                        }
                        let v = r.value.scalar_text().unwrap_or_default();
                        let setting = match v.as_str() {
                            "off" | "false" => RuleSetting::Off,
                            s => RuleSetting::Severity(Severity::parse(s).ok_or_else(|| {
                                err(
                                    Some(r.value.span),
                                    format!(
                                        "rule `{id}`: `{s}` is not one of error, warning, info, off"
                                    ),
                                )
                            })?),
                        };
                        cfg.rules.push((id, setting));
                    }
                }
                "exclude" => {
                    cfg.exclude = strings(&e.value).map_err(|m| err(Some(e.value.span), m))?
                }
                "repo-urls" => {
                    cfg.repo_urls = strings(&e.value).map_err(|m| err(Some(e.value.span), m))?
                }
                "ignore" => {
                    for item in e.value.as_seq().unwrap_or_default() {
                        for k in item.as_map().unwrap_or_default() {
                            let name = k.key.key_str();
                            if !["rule", "object", "reason"].contains(&name.as_ref()) {
                                return Err(err(
                                    Some(k.key.span),
                                    format!(
                                        "unknown key `{name}` in an ignore entry (rule, object, reason)"
                                    ),
                                ));
                            }
                        }
                        let get =
                            |k: &str| item.get(k).and_then(Node::scalar_text).unwrap_or_default();
                        let rule = get("rule");
                        if !known_rules.contains(&rule.as_str()) {
                            return Err(err(
                                Some(item.span),
                                format!("ignore entry: unknown rule `{rule}`"),
                            ));
                        }
                        let reason = get("reason");
                        if reason.trim().is_empty() {
                            return Err(err(
                                Some(item.span),
                                "ignore entry needs a `reason`".into(),
                            ));
                        }
                        cfg.ignore.push(ObjectIgnore {
                            rule,
                            object: get("object"),
                            reason,
                        });
                    }
                }
                "limits" => {
                    for l in e.value.as_map().unwrap_or_default() {
                        let name = l.key.key_str();
                        let n = l.value.as_i64().filter(|n| *n > 0).ok_or_else(|| {
                            err(
                                Some(l.value.span),
                                format!("`limits.{name}` must be a positive integer"),
                            )
                        })?;
                        match name.as_ref() {
                            "max-file-bytes" => cfg.max_file_bytes = Some(n as u64),
                            "max-files" => cfg.max_files = Some(n as usize),
                            "max-depth" => cfg.yaml_limits.max_depth = n as usize,
                            "max-alias-nodes" => cfg.yaml_limits.max_alias_nodes = n as usize,
                            "max-documents" => cfg.yaml_limits.max_documents = n as usize,
                            _ => {
                                return Err(err(
                                    Some(l.key.span),
                                    format!("unknown limit `{name}` ({})", LIMIT_KEYS.join(", ")),
                                ));
                            }
                        }
                    }
                }
                other => {
                    return Err(err(
                        Some(e.key.span),
                        format!(
                            "unknown key `{other}` (expected one of {})",
                            TOP_KEYS.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(cfg)
    }
}

fn strings(node: &Node) -> Result<Vec<String>, String> {
    node.as_seq()
        .ok_or_else(|| "expected a list of strings".to_string())?
        .iter()
        .map(|n| {
            n.scalar_text()
                .ok_or_else(|| "expected a string".to_string())
        })
        .collect()
}

/// Does `pattern` (`Kind/ns/name`, `Kind/name`, `*` parts) name this object?
pub fn object_matches(pattern: &str, object_id: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let o: Vec<&str> = object_id.split('/').collect();
    let o: Vec<&str> = if p.len() == 2 && o.len() == 3 {
        vec![o[0], o[2]]
    } else {
        o
    };
    p.len() == o.len() && p.iter().zip(&o).all(|(a, b)| *a == "*" || a == b)
}
