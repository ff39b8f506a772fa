//! Where results go: the chosen format on stdout, a SARIF file, the GitHub job summary and
//! step output, and the pull-request review. Everything GitHub-specific is best effort.

use crate::{Comment, Format, OutputArgs, print};
use gitops_lint::diff::DiffResult;
use gitops_lint::github::event::{self, NoPr};
use gitops_lint::github::review;
use gitops_lint::report::github::Annotations;
use gitops_lint::report::human::Human;
use gitops_lint::report::json::Json;
use gitops_lint::report::junit::Junit;
use gitops_lint::report::sarif::Sarif;
use gitops_lint::report::summary::{MAX_COMMENT_CHARS, Markdown};
use gitops_lint::report::{Comparison, Finding, Renderer, Report};
use gitops_lint::source::SourceMap;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

pub struct Reported<'a> {
    pub result: &'a DiffResult,
}

pub struct Output<'a> {
    pub args: &'a OutputArgs,
    pub findings: &'a [Finding],
    /// What code scanning gets (`--format sarif`, `--sarif-file`): every finding of the tree
    /// as `lint` reports it, also in diff mode, where `findings` are only the new ones. Code
    /// scanning compares a pull request's analysis with the base branch's itself; an upload
    /// of the new findings alone would close every alert the change did not touch.
    pub tree: &'a [Finding],
    pub map: &'a SourceMap,
    /// The repository's own checks (`checks:`): SARIF lists them as rules.
    pub checks: &'a [gitops_lint::config::checks::Check],
    /// The linted root relative to the repository root.
    pub prefix: &'a str,
    pub baselined: usize,
    pub diff: Option<Reported<'a>>,
    /// The model's coverage line (apps found, rendered, partly, not rendered by reason).
    pub coverage: Option<String>,
    /// When the run started (JUnit's `time`).
    pub started: std::time::Instant,
}

/// The linted root relative to the enclosing repository (the nearest ancestor with `.git`),
/// found without running git; `""` when not in a repository.
pub fn repo_prefix(root: &Path) -> String {
    root.ancestors()
        .find(|d| d.join(".git").exists())
        .and_then(|top| gitops_lint::source::relative_path(top, root))
        .unwrap_or_default()
}

pub(crate) fn append(path: &std::ffi::OsStr, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

/// A warning on stderr, and as a workflow annotation when running in GitHub Actions.
fn warn(message: &str) {
    eprintln!("warning: {message}");
    if std::env::var_os("GITHUB_ACTIONS").is_some() {
        print(&format!(
            "::warning title=gitops-lint::{}\n",
            message.replace('%', "%25").replace('\n', "%0A")
        ));
    }
}

impl Output<'_> {
    /// The one value every format renders.
    fn report(&self) -> Report<'_> {
        Report {
            findings: self.findings,
            tree: self.tree,
            map: self.map,
            prefix: self.prefix,
            checks: self.checks,
            baselined: self.baselined,
            coverage: self.coverage.as_deref(),
            elapsed: self.started.elapsed(),
            comparison: self.diff.as_ref().map(|d| {
                let r = d.result;
                Comparison {
                    base_rev: &r.base_rev,
                    base_commit: &r.base_commit,
                    fixed: &r.fixed,
                    base_map: &r.base.map,
                    apps: &r.diffs,
                    apps_total: r.apps_total,
                    affected: &r.affected,
                    changed_lines: &r.changed_lines,
                }
            }),
        }
    }

    fn renderer(&self) -> Box<dyn Renderer> {
        match self.args.format {
            Format::Human => Box::new(Human {
                color: !self.args.no_color
                    && std::env::var_os("NO_COLOR").is_none()
                    && std::io::stdout().is_terminal(),
                quiet: self.args.quiet,
            }),
            Format::Json => Box::new(Json),
            Format::Sarif => Box::new(Sarif),
            Format::Junit => Box::new(Junit {
                fail_on: self.args.fail_on.threshold(),
                below: self.args.junit_below_fail_on.into(),
            }),
            Format::Github => Box::new(Annotations {
                max_per_level: self.args.max_annotations,
            }),
        }
    }

    pub fn emit(self) -> ExitCode {
        let threshold = self.args.fail_on.threshold();
        let report = self.report();
        let text = self.renderer().render(&report);
        print(&text);
        if let Some(path) = &self.args.sarif_file
            && let Err(e) = std::fs::write(path, Sarif.render(&report))
        {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(2);
        }
        let summary = Markdown {
            max_chars: MAX_COMMENT_CHARS,
        }
        .render(&report);
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty())
            && let Err(e) = append(&path, &summary)
        {
            warn(&format!("could not write the job summary: {e}"));
        }
        if let Some(path) = std::env::var_os("GITHUB_OUTPUT").filter(|p| !p.is_empty())
            && let Err(e) = append(&path, &format!("findings={}\n", self.findings.len()))
        {
            warn(&format!("could not write the step output: {e}"));
        }
        if self.args.comment == Comment::Auto {
            self.comment(&summary);
        }
        if self.findings.iter().any(|f| f.severity >= threshold) {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }

    /// The review and sticky comment, when a pull-request event and a token are present.
    fn comment(&self, summary: &str) {
        let ctx = match event::from_env(|k| std::env::var(k).ok()) {
            Ok(ctx) => ctx,
            Err(NoPr::NotAPullRequest) => return,
            Err(NoPr::NoToken) => {
                warn(
                    "pull request without GITHUB_TOKEN: no review posted (annotations and the job summary still report)",
                );
                return;
            }
            Err(NoPr::Invalid(why)) => {
                warn(&format!("cannot read the pull-request event: {why}"));
                return;
            }
        };
        if ctx.from_fork {
            if !self.args.quiet {
                eprintln!(
                    "gitops-lint: a pull request from a fork gets a read-only token; no review or comment is written (annotations and the job summary carry the findings)"
                );
            }
            return;
        }
        let review = self.diff.as_ref().and_then(|d| {
            review::build(
                self.findings,
                self.map,
                self.prefix,
                &d.result.changed_lines,
                &d.result.inserted_lines,
                &ctx.head_sha,
            )
        });
        let worth_a_comment = !self.findings.is_empty()
            || self
                .diff
                .as_ref()
                .is_some_and(|d| !d.result.fixed.is_empty() || !d.result.diffs.is_empty());
        post(&ctx, review.as_ref(), summary, worth_a_comment, self.args);
    }
}

#[cfg(feature = "github")]
fn post(
    ctx: &event::PrContext,
    review: Option<&review::ReviewRequest>,
    summary: &str,
    create_summary: bool,
    args: &OutputArgs,
) {
    use gitops_lint::github::client::{PublishOptions, publish_blocking};
    let options = PublishOptions {
        max_comments: args.max_review_comments,
        ..PublishOptions::default()
    };
    let quiet = args.quiet;
    let outcome = publish_blocking(ctx, review, summary, create_summary, &options);
    for w in &outcome.warnings {
        warn(w);
    }
    if !quiet && (outcome.review_comments > 0 || outcome.summary_updated.is_some()) {
        eprintln!(
            "gitops-lint: review with {} inline comment(s); summary comment {}",
            outcome.review_comments,
            match outcome.summary_updated {
                Some(true) => "updated",
                Some(false) => "created",
                None => "not posted",
            }
        );
    }
}

#[cfg(not(feature = "github"))]
fn post(_: &event::PrContext, _: Option<&review::ReviewRequest>, _: &str, _: bool, _: &OutputArgs) {
    warn("built without the `github` feature: no review posted");
}
