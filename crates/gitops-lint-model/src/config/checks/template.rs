//! The `message` of a check: text with `{{ path }}` placeholders, where a path is a variable
//! the check reads and field steps on it (`{{ object.metadata.name }}`,
//! `{{ object.spec.containers[0].image }}`, `{{ object.metadata.labels['app.kubernetes.io/name'] }}`).
//! Nothing else runs in a message: no functions, no conditions.

use serde_json::Value as Json;

/// Roots a message may read (`objects` is a list of whole objects: not for messages).
pub const ROOTS: &[&str] = &["object", "app", "namespace"];

/// Longest text one placeholder puts in a message.
const MAX_VALUE_CHARS: usize = 200;

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Text(String),
    Path(Vec<Step>),
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
}

impl Template {
    /// Parse `text`; an error names what is wrong and the 1-based character column.
    pub fn parse(text: &str) -> Result<Template, (usize, String)> {
        let mut parts = Vec::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 2..];
            let column = text[..offset + open].chars().count() + 1;
            let Some(close) = after.find("}}") else {
                return Err((column, "`{{` without a closing `}}`".into()));
            };
            let steps = parse_path(after[..close].trim()).map_err(|m| (column, m))?;
            parts.push(Part::Path(steps));
            offset += open + 2 + close + 2;
            rest = &after[close + 2..];
        }
        if let Some(close) = rest.find("}}") {
            let column = text[..offset + close].chars().count() + 1;
            return Err((column, "`}}` without an opening `{{`".into()));
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_string()));
        }
        Ok(Template { parts })
    }

    /// The message with each path's value: strings as they are, other scalars and
    /// collections as JSON, a path that leads nowhere as `<none>`. `vars` maps each root to
    /// its value.
    pub fn render(&self, vars: &[(&str, &Json)]) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Path(steps) => out.push_str(&lookup(steps, vars)),
            }
        }
        out
    }
}

fn lookup(steps: &[Step], vars: &[(&str, &Json)]) -> String {
    let mut steps = steps.iter();
    let Some(Step::Key(root)) = steps.next() else {
        return "<none>".into();
    };
    let Some(mut value) = vars.iter().find(|(n, _)| n == root).map(|(_, v)| *v) else {
        return "<none>".into();
    };
    for step in steps {
        let next = match step {
            Step::Key(k) => value.get(k.as_str()),
            Step::Index(i) => value.get(*i),
        };
        match next {
            Some(v) => value = v,
            None => return "<none>".into(),
        }
    }
    let text = match value {
        Json::String(s) => s.clone(),
        Json::Null => "null".into(),
        other => other.to_string(),
    };
    if text.chars().count() > MAX_VALUE_CHARS {
        let cut: String = text.chars().take(MAX_VALUE_CHARS).collect();
        return format!("{cut}…");
    }
    text
}

/// `root(.key|[N]|['key']|["key"])*`.
fn parse_path(text: &str) -> Result<Vec<Step>, String> {
    let ident_end = |s: &str| {
        s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(s.len())
    };
    let end = ident_end(text);
    let root = &text[..end];
    if !ROOTS.contains(&root) {
        return Err(format!(
            "a placeholder starts with one of {} (`{{{{ object.metadata.name }}}}`)",
            ROOTS.join(", ")
        ));
    }
    let mut steps = vec![Step::Key(root.to_string())];
    let mut rest = &text[end..];
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = ident_end(r);
            if end == 0 {
                return Err("a field name must follow `.`".into());
            }
            steps.push(Step::Key(r[..end].to_string()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']').ok_or("`[` without `]`")?;
            let inner = r[..close].trim();
            let quoted = inner
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
            steps.push(match (quoted, inner.parse::<usize>()) {
                (Some(key), _) => Step::Key(key.to_string()),
                (None, Ok(i)) => Step::Index(i),
                (None, Err(_)) => {
                    return Err(
                        "`[...]` holds an index (`[0]`) or a quoted key (`['app.kubernetes.io/name']`)"
                            .into(),
                    );
                }
            });
            rest = &r[close + 1..];
        } else {
            return Err(
                "a placeholder is a path: field names after `.`, indexes and quoted keys in `[...]`"
                    .into(),
            );
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_paths_into_the_variables() {
        let t = Template::parse(
            "{{ object.kind }} {{object.metadata.name}} pins {{ object.spec.replicas }} (app {{ app.name }}, {{ object.metadata.labels['app.kubernetes.io/name'] }}, {{ object.spec.ports[1].port }}, {{ object.nope }})",
        );
        let t = t.unwrap_or_else(|e| panic!("{e:?}"));
        let object = serde_json::json!({
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "shop"}},
            "spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}]}
        });
        let app = serde_json::json!({"name": "payments"});
        assert_eq!(
            t.render(&[("object", &object), ("app", &app)]),
            "Deployment web pins 3 (app payments, shop, 443, <none>)"
        );
    }

    #[test]
    fn bad_placeholders_are_refused_with_a_column() {
        let err = |t: &str| Template::parse(t).err();
        assert_eq!(err("a {{ objects[0] }}").map(|e| e.0), Some(3));
        assert!(err("é {{ object.metadata.name").is_some_and(|e| e.0 == 3));
        assert!(err("{{ object.spec | upper }}").is_some());
        assert!(err("{{ object[x] }}").is_some());
        assert!(err("done }}").is_some());
        assert!(err("no placeholders").is_none());
    }
}
