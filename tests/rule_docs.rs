//! Every rule's document (rules/<id>.md, embedded in the binary and printed by
//! `gitops-lint explain`) agrees with the code and stands on its own: its title and default
//! severity are the rule's, it has the sections users look for, its References are links,
//! and it cites nothing outside this repository (no internal catalog or background reports,
//! no paths into other repositories, no bare issue numbers).
//!
//! All problems of all documents are collected and reported together, so one run shows the
//! whole list.

use std::path::Path;

use gitops_lint::rules::registry;
use regex::Regex;

const SECTIONS: &[&str] = &[
    "## Why it matters",
    "## Bad",
    "## Good",
    "## How to fix",
    "## When it does not apply",
    "## References",
];

/// A citation a reader of the document cannot follow, with why.
struct Forbidden {
    pattern: Regex,
    why: &'static str,
    /// Also looked for inside inline code (`AR:docs/faq.md` is usually quoted as code);
    /// a bare `#123` inside code is an example value, not a citation.
    in_code: bool,
}

fn forbidden() -> Vec<Forbidden> {
    let rule = |pattern: &str, why: &'static str| Forbidden {
        pattern: Regex::new(pattern).unwrap_or_else(|e| panic!("bad pattern {pattern}: {e}")),
        why,
        in_code: true,
    };
    vec![
        rule(
            r"(?i)(^|[^\w-])catalog([^\w-]|$)|rules-catalog",
            "cites the rules catalog",
        ),
        rule("§", "cites a section of a document outside the repository"),
        rule(r"\bAR:", "cites a path in the argo-cd repository"),
        rule(
            r"\bS[0-4]\b|(?i)\bbackground (report|document)s?\b",
            "cites a background report (S0–S4)",
        ),
        rule(r"\.\./shared", "cites a file outside the repository"),
        Forbidden {
            in_code: false,
            ..rule(
                r"[A-Za-z0-9_./-]*#[0-9]+\b",
                "cites an issue by number without its URL",
            )
        },
    ]
}

/// The line without its URLs (an anchor in a URL is not a bare issue number), and without
/// its inline code spans too unless `with_code`.
fn without_urls(line: &str, with_code: bool) -> String {
    let urls = Regex::new(r"https?://[^\s)>\]]+").expect("url pattern");
    let code = Regex::new(r"`[^`]*`").expect("code pattern");
    let text = urls.replace_all(line, "");
    if with_code {
        text.into_owned()
    } else {
        code.replace_all(&text, "").into_owned()
    }
}

/// The lines of the document outside fenced code blocks, with their 1-based numbers.
fn prose_lines(doc: &str) -> Vec<(usize, &str)> {
    let mut in_fence = false;
    let mut out = Vec::new();
    for (i, line) in doc.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            out.push((i + 1, line));
        }
    }
    out
}

/// The lines of the `## References` section, up to the next heading.
fn references(doc: &str) -> Vec<(usize, &str)> {
    prose_lines(doc)
        .into_iter()
        .skip_while(|(_, l)| l.trim_end() != "## References")
        .skip(1)
        .take_while(|(_, l)| !l.starts_with("## "))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect()
}

/// rules/<id>.md exists and is the text the binary embeds.
fn file_problems(id: &str, embedded: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("rules/{id}.md"));
    match std::fs::read_to_string(&path) {
        Ok(on_disk) if on_disk == embedded => vec![],
        Ok(_) => vec!["is not the document embedded in the binary".to_string()],
        Err(e) => vec![format!("cannot be read: {e}")],
    }
}

fn content_problems(id: &str, severity: &str, doc: &str, forbidden: &[Forbidden]) -> Vec<String> {
    let mut problems = Vec::new();

    let title = format!("# {id}");
    if doc.lines().next() != Some(title.as_str()) {
        problems.push(format!("first line is not `{title}`"));
    }

    match doc.lines().find_map(|l| l.strip_prefix("**Severity:**")) {
        None => problems.push("has no `**Severity:**` line".to_string()),
        Some(line) => {
            let rest = line.trim_start();
            let starts = rest.starts_with(severity)
                && !rest[severity.len()..].starts_with(|c: char| c.is_alphanumeric());
            if !starts {
                problems.push(format!(
                    "severity line `{}` does not start with the code's default `{severity}`",
                    rest
                ));
            }
        }
    }

    let headings: Vec<&str> = prose_lines(doc)
        .into_iter()
        .map(|(_, l)| l.trim_end())
        .collect();
    for section in SECTIONS {
        if !headings.contains(section) {
            problems.push(format!("has no `{section}` section"));
        }
    }

    let reference_line = Regex::new(r"^- \S.*[^\s:]: https?://\S+$").expect("reference pattern");
    for (n, line) in references(doc) {
        if !reference_line.is_match(line.trim_end()) {
            problems.push(format!(
                "line {n}: a reference is not a `- Title: URL` line: {line}"
            ));
        }
    }

    for (i, line) in doc.lines().enumerate() {
        for f in forbidden {
            let text = without_urls(line, f.in_code);
            let found: Vec<&str> = f.pattern.find_iter(&text).map(|m| m.as_str()).collect();
            if !found.is_empty() {
                problems.push(format!(
                    "line {}: {} (`{}`)",
                    i + 1,
                    f.why,
                    found.join("`, `")
                ));
            }
        }
    }
    problems
}

#[test]
fn every_rule_document_matches_its_rule_and_stands_on_its_own() {
    let forbidden = forbidden();
    let mut report = Vec::new();
    for rule in registry() {
        let meta = rule.meta;
        let mut problems = file_problems(meta.id, meta.doc);
        problems.extend(content_problems(
            meta.id,
            meta.severity.as_str(),
            meta.doc,
            &forbidden,
        ));
        if !problems.is_empty() {
            report.push(format!(
                "rules/{}.md:\n  {}",
                meta.id,
                problems.join("\n  ")
            ));
        }
    }
    assert!(
        report.is_empty(),
        "{} rule document(s) need work:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn every_rule_document_belongs_to_a_rule() {
    let ids: Vec<&str> = registry().iter().map(|r| r.meta.id).collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut orphans = Vec::new();
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(id) = name.strip_suffix(".md")
            && !ids.contains(&id)
        {
            orphans.push(name);
        }
    }
    assert!(orphans.is_empty(), "documents without a rule: {orphans:?}");
}

#[test]
fn the_checks_catch_what_they_name() {
    let forbidden = forbidden();
    let doc = "# demo\n\n**Severity:** warning\n\nSee Catalog §4, background S1, `AR:docs/faq.md` \
               and argo-cd#5105; also kubernetes/kubernetes#25238 and #136.\n\n## Why it matters\n\
               ## Bad\n## Good\n## How to fix\n## When it does not apply\n## References\n\
               Argo CD docs: Diffing.\n- Issue: https://github.com/argoproj/argo-cd/issues/5105\n";
    let mut problems = file_problems("no-such-rule", doc);
    problems.extend(content_problems("demo", "error", doc, &forbidden));
    let all = problems.join("\n");
    for expected in [
        "cannot be read",
        "does not start with the code's default `error`",
        "rules catalog",
        "section of a document",
        "argo-cd repository",
        "background report",
        "`argo-cd#5105`, `kubernetes/kubernetes#25238`, `#136`",
        "not a `- Title: URL` line: Argo CD docs: Diffing.",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
    }
    assert!(
        !all.contains("issues/5105"),
        "a URL is not a bare number:\n{all}"
    );
    let clean = content_problems(
        "demo",
        "warning",
        "# demo\n\n**Severity:** warning (error when it loops)\n\nSee `#136` in code.\n\
         ## Why it matters\n## Bad\n## Good\n## How to fix\n## When it does not apply\n\
         ## References\n- Argo CD issue 5105: https://github.com/argoproj/argo-cd/issues/5105#issue-1\n",
        &forbidden,
    );
    assert!(clean.is_empty(), "a clean document is flagged: {clean:?}");
    let wrong_title = content_problems("other", "warning", "# demo\n", &forbidden);
    assert!(
        wrong_title
            .iter()
            .any(|p| p.contains("first line is not `# other`"))
    );
    let prefix_only = content_problems(
        "demo",
        "warn",
        "# demo\n**Severity:** warning\n",
        &forbidden,
    );
    assert!(
        prefix_only
            .iter()
            .any(|p| p.contains("does not start with"))
    );
}
