//! What a Flux source artifact leaves out: source-controller archives a GitRepository
//! through `.gitignore`-format rules — its defaults (VCS files, CI configs, images and
//! archives), every `.sourceignore` file in the checkout (each relative to its directory),
//! then `spec.ignore` — where the last matching rule wins and `!` re-includes.

use globset::{GlobBuilder, GlobMatcher};

/// source-controller's default exclusions (`sourceignore` VCS, extension and CI patterns).
const DEFAULTS: &str = ".git/\n.gitignore\n.gitmodules\n.gitattributes\n\
*.jpg\n*.jpeg\n*.gif\n*.png\n*.wmv\n*.flv\n*.tar.gz\n*.zip\n\
.github/\n.circleci/\n.travis.yml\n.gitlab-ci.yml\nappveyor.yml\n.drone.yml\n\
cloudbuild.yaml\ncodeship-services.yml\ncodeship-steps.yml\n\
**/.goreleaser.yml\n**/.sops.yaml\n**/.flux.yaml\n";

struct Rule {
    /// The directory the rule is relative to (`""`: the repo root).
    domain: String,
    glob: GlobMatcher,
    negated: bool,
    dir_only: bool,
}

/// An ordered list of ignore rules.
#[derive(Default)]
pub struct IgnoreRules {
    rules: Vec<Rule>,
}

impl IgnoreRules {
    /// The defaults alone.
    pub fn with_defaults() -> IgnoreRules {
        let mut r = IgnoreRules::default();
        r.add(DEFAULTS, "");
        r
    }

    /// Add the rules of one `.gitignore`-format text, relative to `domain`.
    pub fn add(&mut self, text: &str, domain: &str) {
        for line in text.lines() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (negated, pat) = match line.strip_prefix('!') {
                Some(p) => (true, p),
                None => (false, line.strip_prefix('\\').unwrap_or(line)),
            };
            let dir_only = pat.ends_with('/');
            let pat = pat.trim_end_matches('/');
            if pat.is_empty() {
                continue;
            }
            // A pattern with a `/` before its end is anchored to the domain; one without
            // matches at any depth.
            let anchored = pat.contains('/');
            let pat = pat.trim_start_matches('/');
            let full = if anchored {
                pat.to_string()
            } else {
                format!("**/{pat}")
            };
            let Ok(glob) = GlobBuilder::new(&full).literal_separator(true).build() else {
                continue;
            };
            self.rules.push(Rule {
                domain: domain.to_string(),
                glob: glob.compile_matcher(),
                negated,
                dir_only,
            });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Is the file at repo-relative `path` left out? A rule matching one of its parent
    /// directories applies to everything below it, as in go-git's matcher.
    pub fn excludes(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.split('/').collect();
        for rule in self.rules.iter().rev() {
            let Some(rel) = strip_domain(path, &rule.domain) else {
                continue;
            };
            let skip = parts.len() - rel.split('/').count();
            let rel_parts = &parts[skip..];
            let matched = (1..=rel_parts.len()).any(|k| {
                let is_dir = k < rel_parts.len();
                (is_dir || !rule.dir_only) && rule.glob.is_match(rel_parts[..k].join("/"))
            });
            if matched {
                return !rule.negated;
            }
        }
        false
    }
}

fn strip_domain<'a>(path: &'a str, domain: &str) -> Option<&'a str> {
    if domain.is_empty() {
        return Some(path);
    }
    path.strip_prefix(domain)?.strip_prefix('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_rule_wins_and_negation_re_includes() {
        let mut r = IgnoreRules::with_defaults();
        r.add(
            "# exclude all\n/*\n# include gitops dirs\n!/kubernetes\n",
            "",
        );
        assert!(r.excludes("docs/index.yaml"));
        assert!(r.excludes("Taskfile.yaml"));
        assert!(!r.excludes("kubernetes/main/apps/a.yaml"));
        assert!(r.excludes(".github/workflows/ci.yaml"));
        // The later `!/kubernetes` re-includes what a default excluded below it.
        assert!(!r.excludes("kubernetes/.sops.yaml"));
        assert!(r.excludes("docs/.github/x.yaml"));
    }

    #[test]
    fn unanchored_and_directory_rules() {
        let mut r = IgnoreRules::default();
        r.add("*.md\ntmp/\n", "");
        r.add("local.yaml\n", "apps");
        assert!(r.excludes("a/b/README.md"));
        assert!(r.excludes("x/tmp/a.yaml"));
        assert!(!r.excludes("x/tmp"));
        assert!(r.excludes("apps/y/local.yaml"));
        assert!(!r.excludes("other/local.yaml"));
    }
}
