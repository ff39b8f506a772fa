//! `checks:` — a team's own rules in `.gitops-lint.yaml`: which objects (`match`), what must
//! hold of each (`expr`, CEL over the rendered object, its app and the app's other objects),
//! what to say (`message`) and where (`field`). Everything is checked when the file is read:
//! a bad expression, template or path is a configuration error on its line (exit 2).
//! `rules::checks` runs them.

pub mod cel;
pub mod field;
pub mod template;

use super::{Node, Severity, Span, strings, unknown_keys};
use std::sync::Arc;

/// Most checks one configuration declares.
pub const MAX_CHECKS: usize = 200;
/// Longest check id.
pub const MAX_ID_CHARS: usize = 64;

/// One `checks:` entry.
#[derive(Clone, Debug)]
pub struct Check {
    /// The rule id findings carry (interned: a finding's rule is a `&'static str`).
    pub id: &'static str,
    pub severity: Severity,
    /// What `explain` prints and SARIF's rule description.
    pub description: Option<String>,
    pub help: Option<String>,
    pub matcher: Match,
    pub expr: String,
    pub program: Arc<cel::Program>,
    pub message: template::Template,
    /// The message as written.
    pub message_text: String,
    /// `field`: the line a finding points at (the object's first line without it).
    pub field: Option<field::FieldPath>,
    /// The entry, its `id` and its `expr` value in the configuration file.
    pub span: Span,
    pub expr_span: Span,
}

impl Check {
    /// The first line of the description, else the message as written: for `rules`.
    pub fn summary(&self) -> String {
        self.description
            .as_deref()
            .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
            .map(str::to_string)
            .unwrap_or_else(|| self.message_text.clone())
    }
}

impl Check {
    /// What `gitops-lint explain ID` prints (and SARIF's help): the check as the
    /// configuration declares it. `location` is `file:line` of the entry.
    pub fn document(&self, location: &str) -> String {
        let mut doc = format!(
            "# {}\n\n**Severity:** {} (a check of this repository, declared in {location})\n\n{}\n\n## What it checks\n\n",
            self.id,
            self.severity.as_str(),
            self.description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .unwrap_or("No description (`description:` in the entry)."),
        );
        doc.push_str(&format!("- Objects: {}\n", self.matcher.describe()));
        doc.push_str(&format!(
            "- Must hold (CEL, a finding where it is false):\n\n  ```cel\n  {}\n  ```\n",
            self.expr.trim().replace('\n', "\n  ")
        ));
        doc.push_str(&format!("- Message: {}\n", self.message_text));
        doc.push_str(&match &self.field {
            Some(f) => format!(
                "- Points at: `{}` (the object's first line when it is absent)\n",
                f.text
            ),
            None => "- Points at: the object's first line\n".to_string(),
        });
        doc.push_str("\n## How to fix\n\n");
        doc.push_str(self.help.as_deref().unwrap_or(
            "Make the object satisfy the expression, or change the check in the configuration.",
        ));
        doc.push('\n');
        doc
    }
}

/// The app's controller as `match.controllers` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControllerKind {
    Argo,
    Flux,
    /// Nothing in the repository deploys the object (a standalone directory).
    None,
}

/// Which objects a check runs on: every list given must match (an empty list: any).
#[derive(Clone, Debug, Default)]
pub struct Match {
    /// `group/Kind` (a bare `Kind` is the core group); `*` globs in either part.
    pub kinds: Vec<(String, String)>,
    /// Globs on the namespace the object lands in (empty for cluster-scoped objects).
    pub namespaces: Vec<String>,
    pub names: Vec<String>,
    /// `metadata.labels` the object must carry (equal values).
    pub labels: Vec<(String, String)>,
    /// Labels the object's namespace must carry, as the repository and `profile.namespaces`
    /// know them: an undescribed namespace matches no label.
    pub namespace_labels: Vec<(String, String)>,
    pub controllers: Vec<ControllerKind>,
    /// Globs on the app's cluster name.
    pub clusters: Vec<String>,
    /// Globs on the path of the file the object is written in (`prod/**`).
    pub paths: Vec<String>,
    pub path_set: Option<globset::GlobSet>,
}

impl Match {
    /// `kinds` for `rules` and SARIF: `apps/Deployment,argoproj.io/Application`, or `all`.
    pub fn describe_kinds(&self) -> String {
        if self.kinds.is_empty() {
            return "all".into();
        }
        self.kinds
            .iter()
            .map(|(g, k)| {
                if g.is_empty() {
                    k.clone()
                } else {
                    format!("{g}/{k}")
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every condition, for `explain`.
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("kinds {}", self.describe_kinds())];
        let list = |name: &str, items: &[String]| {
            (!items.is_empty()).then(|| format!("{name} {}", items.join(", ")))
        };
        let pairs = |name: &str, items: &[(String, String)]| {
            (!items.is_empty()).then(|| {
                let l: Vec<String> = items.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{name} {}", l.join(", "))
            })
        };
        let controllers: Vec<String> = self
            .controllers
            .iter()
            .map(|c| match c {
                ControllerKind::Argo => "argo".to_string(),
                ControllerKind::Flux => "flux".to_string(),
                ControllerKind::None => "none".to_string(),
            })
            .collect();
        parts.extend(
            [
                list("namespaces", &self.namespaces),
                list("names", &self.names),
                pairs("labels", &self.labels),
                pairs("namespace labels", &self.namespace_labels),
                list("controllers", &controllers),
                list("clusters", &self.clusters),
                list("paths", &self.paths),
            ]
            .into_iter()
            .flatten(),
        );
        parts.join("; ")
    }
}

/// Per-evaluation and per-lint cost limits (`limits.max-check-cost`, `max-checks-cost`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckLimits {
    pub per_evaluation: u64,
    pub per_lint: u64,
}

impl Default for CheckLimits {
    fn default() -> Self {
        CheckLimits {
            per_evaluation: 1_000_000,
            per_lint: 100_000_000,
        }
    }
}

/// Interned ids: each distinct id is leaked once per process, and a configuration holds at
/// most [`MAX_CHECKS`] ids of at most [`MAX_ID_CHARS`] characters.
fn intern(id: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static IDS: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut ids = IDS.lock().unwrap_or_else(|p| p.into_inner());
    let set = ids.get_or_insert_with(HashSet::new);
    if let Some(known) = set.get(id) {
        return known;
    }
    let leaked: &'static str = Box::leak(id.to_string().into_boxed_str());
    set.insert(leaked);
    leaked
}

fn valid_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && id.chars().count() <= MAX_ID_CHARS
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first().is_some_and(|b| *b != b'-')
        && bytes.last().is_some_and(|b| *b != b'-')
}

/// `checks:` — `builtin` are the registry's rule ids, which a check may not take.
pub fn parse(node: &Node, builtin: &[&str]) -> Result<Vec<Check>, (Span, String)> {
    let Some(items) = node.as_seq() else {
        return Err((node.span, "`checks` must be a list".into()));
    };
    if items.len() > MAX_CHECKS {
        return Err((
            node.span,
            format!("`checks` holds more than {MAX_CHECKS} entries"),
        ));
    }
    let mut out: Vec<Check> = Vec::with_capacity(items.len());
    for item in items {
        let check = parse_one(item, builtin)?;
        if out.iter().any(|c| c.id == check.id) {
            return Err((
                item.get("id").map(|n| n.span).unwrap_or(item.span),
                format!("two checks have the id `{}`", check.id),
            ));
        }
        out.push(check);
    }
    Ok(out)
}

fn parse_one(item: &Node, builtin: &[&str]) -> Result<Check, (Span, String)> {
    const WHAT: &str = "a `checks` entry";
    unknown_keys(item, &super::schema::names(super::schema::CHECK), WHAT)?;
    let text = |k: &str| -> Result<Option<(String, Span)>, (Span, String)> {
        match item.get(k) {
            None => Ok(None),
            Some(n) => match n.scalar_text() {
                Some(t) if !n.is_null() && n.as_seq().is_none() => Ok(Some((t, n.span))),
                _ => Err((n.span, format!("`{k}` of a check must be a string"))),
            },
        }
    };
    let Some((id, id_span)) = text("id")? else {
        return Err((item.span, format!("{WHAT} needs an `id`")));
    };
    if !valid_id(&id) {
        return Err((
            id_span,
            format!(
                "a check id is lowercase letters, digits and `-` (at most {MAX_ID_CHARS} characters), such as `prod-respect-ignore`"
            ),
        ));
    }
    if builtin.contains(&id.as_str()) {
        return Err((
            id_span,
            format!("the check id `{id}` is the id of a built-in rule; choose another"),
        ));
    }
    let severity = match text("severity")? {
        None => Severity::Warning,
        Some((s, span)) => Severity::parse(&s).ok_or((
            span,
            format!("check `{id}`: `severity` is error, warning or info"),
        ))?,
    };
    let Some((expr, expr_span)) = text("expr")? else {
        return Err((item.span, format!("check `{id}` needs an `expr` (CEL)")));
    };
    let program = cel::Program::compile(&expr).map_err(|e| {
        (
            expr_span,
            format!("check `{id}`: `expr` {}{}", e.message, e.position()),
        )
    })?;
    let Some((message_text, message_span)) = text("message")? else {
        return Err((item.span, format!("check `{id}` needs a `message`")));
    };
    let message = template::Template::parse(&message_text).map_err(|(column, m)| {
        (
            message_span,
            format!("check `{id}`: `message`: {m} (column {column})"),
        )
    })?;
    let field = match text("field")? {
        None => None,
        Some((f, span)) => Some(
            field::FieldPath::parse(&f)
                .map_err(|m| (span, format!("check `{id}`: `field` `{f}` {m}")))?,
        ),
    };
    let matcher = match item.get("match") {
        Some(m) => parse_match(m, &id)?,
        None => Match::default(),
    };
    Ok(Check {
        id: intern(&id),
        severity,
        description: text("description")?.map(|(t, _)| t),
        help: text("help")?.map(|(t, _)| t),
        matcher,
        expr,
        program: Arc::new(program),
        message,
        message_text,
        field,
        span: item.span,
        expr_span,
    })
}

fn parse_match(node: &Node, id: &str) -> Result<Match, (Span, String)> {
    let what = format!("`match` of check `{id}`");
    unknown_keys(
        node,
        &super::schema::names(super::schema::CHECK_MATCH),
        &what,
    )?;
    let list = |k: &str| match node.get(k) {
        Some(n) => strings(n).map_err(|m| (n.span, format!("{what}: `{k}`: {m}"))),
        None => Ok(Vec::new()),
    };
    let labels = |k: &str| -> Result<Vec<(String, String)>, (Span, String)> {
        let Some(n) = node.get(k) else {
            return Ok(Vec::new());
        };
        let entries = n
            .as_map()
            .ok_or((n.span, format!("{what}: `{k}` maps label keys to values")))?;
        entries
            .iter()
            .map(|e| {
                let value = e
                    .value
                    .text_as_written()
                    .filter(|_| e.value.as_seq().is_none() && e.value.as_map().is_none())
                    .ok_or((e.value.span, format!("{what}: `{k}` values are strings")))?;
                Ok((e.key.key_str().into_owned(), value))
            })
            .collect()
    };
    let mut kinds = Vec::new();
    for k in list("kinds")? {
        let (group, kind) = k.rsplit_once('/').unwrap_or(("", k.as_str()));
        if kind.is_empty() {
            return Err((
                node.get("kinds").map(|n| n.span).unwrap_or(node.span),
                format!("{what}: `kinds` entries are `Kind` or `group/Kind` (`apps/Deployment`)"),
            ));
        }
        kinds.push((group.to_string(), kind.to_string()));
    }
    let mut controllers = Vec::new();
    for c in list("controllers")? {
        controllers.push(match c.as_str() {
            "argo" | "argocd" => ControllerKind::Argo,
            "flux" => ControllerKind::Flux,
            "none" => ControllerKind::None,
            _ => {
                return Err((
                    node.get("controllers").map(|n| n.span).unwrap_or(node.span),
                    format!("{what}: `controllers` are argo, flux or none"),
                ));
            }
        });
    }
    let paths = list("paths")?;
    let path_set = if paths.is_empty() {
        None
    } else {
        let mut b = globset::GlobSetBuilder::new();
        for p in &paths {
            let glob = globset::GlobBuilder::new(p.trim_start_matches("./"))
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    (
                        node.get("paths").map(|n| n.span).unwrap_or(node.span),
                        format!("{what}: `paths`: {}", e.kind()),
                    )
                })?;
            b.add(glob);
        }
        Some(b.build().map_err(|e| {
            (
                node.get("paths").map(|n| n.span).unwrap_or(node.span),
                format!("{what}: `paths`: {e}"),
            )
        })?)
    };
    Ok(Match {
        kinds,
        namespaces: list("namespaces")?,
        names: list("names")?,
        labels: labels("labels")?,
        namespace_labels: labels("namespace-labels")?,
        controllers,
        clusters: list("clusters")?,
        paths,
        path_set,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, RuleSetting};
    use crate::source::SourceMap;

    const BUILTIN: &[&str] = &["hpa-replicas-conflict", "shared-resource"];

    fn parse(text: &str) -> Result<Config, (usize, String)> {
        let map = SourceMap::new();
        let id = map.add_text(".gitops-lint.yaml", text);
        Config::parse(&map, id, BUILTIN)
            .map_err(|e| (e.span.map(|s| map.line_col(s).line).unwrap_or(0), e.message))
    }

    const EXAMPLE: &str = r#"checks:
  - id: prod-respect-ignore
    severity: error
    match: {kinds: [argoproj.io/Application], paths: ["prod/**"]}
    expr: "has(object.spec.syncPolicy.syncOptions) && 'RespectIgnoreDifferences=true' in object.spec.syncPolicy.syncOptions"
    message: "Applications in prod/ must set RespectIgnoreDifferences=true"
    field: "$.spec.syncPolicy"      # the finding points at this line; the object's first line without it
"#;

    #[test]
    fn the_issue_example_parses_and_rules_and_ignores_may_name_checks() {
        let text = format!(
            "rules:\n  prod-respect-ignore: warning\nignore:\n  - rule: prod-respect-ignore\n    object: Application/argocd/legacy\n    reason: retired next quarter\n{EXAMPLE}"
        );
        let cfg = parse(&text).unwrap_or_else(|e| panic!("{e:?}"));
        let c = &cfg.checks[0];
        assert_eq!(c.id, "prod-respect-ignore");
        assert_eq!(c.matcher.describe_kinds(), "argoproj.io/Application");
        assert_eq!(
            c.field.as_ref().map(|f| f.text.as_str()),
            Some("$.spec.syncPolicy")
        );
        assert!(
            c.matcher.path_set.as_ref().is_some_and(
                |p| p.is_match("prod/apps/web.yaml") && !p.is_match("staging/web.yaml")
            )
        );
        assert_eq!(
            cfg.setting("prod-respect-ignore"),
            Some(&RuleSetting::Severity(crate::finding::Severity::Warning))
        );
        assert_eq!(cfg.ignore[0].rule, "prod-respect-ignore");
    }

    #[test]
    fn bad_checks_are_configuration_errors_on_their_line() {
        let entry = |body: &str| format!("checks:\n  - id: c\n    message: m\n{body}");
        let cases: Vec<(String, usize, &str)> = vec![
            (
                entry("    expr: \"object.spec && request.user == 'x'\"\n"),
                4,
                "unknown variable `request` (a check reads object, objects, app, namespace) (column 16 of the expression)",
            ),
            (
                entry("    expr: \"object.metadata.(\"\n"),
                4,
                "`expr` does not parse as CEL",
            ),
            (
                entry("    expr: |\n      object.kind == 'Deployment' &&\n        object.metadata.name.lenght() > 3\n"),
                5,
                "unknown function `lenght`",
            ),
            (
                entry("    expr: 'true'\n    match: {kind: [Deployment]}\n"),
                5,
                "unknown key `kind` in `match` of check `c`",
            ),
            (
                entry("    expr: 'true'\n    match:\n      paths: ['prod/[']\n"),
                6,
                "`paths`",
            ),
            (
                entry("    expr: 'true'\n    match: {controllers: [jenkins]}\n"),
                5,
                "`controllers` are argo, flux or none",
            ),
            (
                entry("    expr: 'true'\n    severity: fatal\n"),
                5,
                "`severity` is error, warning or info",
            ),
            (
                "checks:\n  - id: c\n    expr: 'true'\n    message: 'see {{ object.metadata.name'\n"
                    .to_string(),
                4,
                "`message`: `{{` without a closing `}}`",
            ),
            (
                "checks:\n  - id: hpa-replicas-conflict\n    expr: 'true'\n    message: m\n"
                    .to_string(),
                2,
                "is the id of a built-in rule",
            ),
            (
                "checks:\n  - id: Prod_Check\n    expr: 'true'\n    message: m\n".to_string(),
                2,
                "a check id is lowercase letters",
            ),
            (
                "checks:\n  - {id: c, expr: 'true', message: m}\n  - id: c\n    expr: 'true'\n    message: m\n"
                    .to_string(),
                3,
                "two checks have the id `c`",
            ),
            (
                "checks:\n  - id: c\n    message: m\n".to_string(),
                2,
                "needs an `expr`",
            ),
            (
                "checks:\n  - id: c\n    expr: 'true'\n    messages: m\n".to_string(),
                4,
                "unknown key `messages` in a `checks` entry",
            ),
            (
                "rules:\n  no-such-check: error\nchecks:\n  - {id: c, expr: 'true', message: m}\n"
                    .to_string(),
                2,
                "unknown rule `no-such-check`",
            ),
        ];
        for (text, line, message) in cases {
            let got = parse(&text).err();
            assert!(
                got.as_ref()
                    .is_some_and(|(l, m)| *l == line && m.contains(message)),
                "{text}\n{got:?}"
            );
        }
    }
}
