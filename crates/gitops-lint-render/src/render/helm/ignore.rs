//! `.helmignore` rules as Helm's `pkg/ignore` applies them (not full gitignore: no `**`, a
//! pattern without `/` matches the base name, a leading `/` anchors at the chart root, and a
//! negated rule ignores everything it does *not* match).

use super::glob::{go_match_chars, valid_pattern};

struct Pattern {
    /// The rule's chars, split once: every file of the chart is matched against it.
    rule: Vec<char>,
    negate: bool,
    must_dir: bool,
    kind: Anchor,
}

enum Anchor {
    Root,
    Path,
    Base,
}

#[derive(Default)]
pub struct IgnoreRules {
    patterns: Vec<Pattern>,
}

impl IgnoreRules {
    /// Parse a `.helmignore` text plus Helm's default (dotfiles in `templates/`).
    pub fn parse(text: &str) -> Result<IgnoreRules, String> {
        let mut rules = IgnoreRules::default();
        for line in text.lines() {
            rules.add(line)?;
        }
        rules.add("templates/.?*")?;
        Ok(rules)
    }

    pub fn defaults() -> IgnoreRules {
        let mut rules = IgnoreRules::default();
        let _ = rules.add("templates/.?*");
        rules
    }

    fn add(&mut self, line: &str) -> Result<(), String> {
        let mut rule = line.trim();
        if rule.is_empty() || rule.starts_with('#') {
            return Ok(());
        }
        if rule.contains("**") {
            return Err("double-star (**) syntax is not supported".into());
        }
        if !valid_pattern(rule) {
            return Err("syntax error in pattern".into());
        }
        let negate = rule.starts_with('!');
        if negate {
            rule = &rule[1..];
        }
        let must_dir = rule.ends_with('/');
        if must_dir {
            rule = &rule[..rule.len() - 1];
        }
        let kind = if let Some(r) = rule.strip_prefix('/') {
            rule = r;
            Anchor::Root
        } else if rule.contains('/') {
            Anchor::Path
        } else {
            Anchor::Base
        };
        self.patterns.push(Pattern {
            rule: rule.chars().collect(),
            negate,
            must_dir,
            kind,
        });
        Ok(())
    }

    /// Is the chart-relative `path` ignored?
    pub fn ignored(&self, path: &str, is_dir: bool) -> bool {
        if path.is_empty() || path == "." || path == "./" {
            return false;
        }
        let chars: Vec<char> = path.chars().collect();
        let base_start = chars.iter().rposition(|c| *c == '/').map_or(0, |i| i + 1);
        for p in &self.patterns {
            let target = match p.kind {
                Anchor::Root | Anchor::Path => &chars[..],
                Anchor::Base => &chars[base_start..],
            };
            let hit = go_match_chars(&p.rule, target);
            if p.negate {
                if p.must_dir && !is_dir {
                    return true;
                }
                if !hit {
                    return true;
                }
                continue;
            }
            if p.must_dir && !is_dir {
                continue;
            }
            if hit {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::IgnoreRules;

    #[test]
    fn base_name_root_and_dir_rules() {
        let r = IgnoreRules::parse("# c\n*.bak\n/ci/\nsecret/x.yaml\n").unwrap_or_default();
        assert!(r.ignored("templates/a.bak", false));
        assert!(r.ignored("ci", true));
        assert!(!r.ignored("ci", false));
        assert!(r.ignored("secret/x.yaml", false));
        assert!(r.ignored("templates/.hidden", false));
        assert!(!r.ignored("templates/a.yaml", false));
        assert!(IgnoreRules::parse("a/**/b").is_err());
    }
}
