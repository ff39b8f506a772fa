//! `gitops-lint`: the command line. Exit codes: 0 nothing at or above `--fail-on`,
//! 1 findings, 2 usage, configuration or internal error.

mod cli_output;

use clap::{Parser, Subcommand, ValueEnum};
use cli_output::{Output, Reported};
use gitops_lint::baseline::{Baseline, unmatched};
use gitops_lint::diff::{self, DiffOptions};
use gitops_lint::fix;
use gitops_lint::lint::{LintOptions, lint};
use gitops_lint::report::Severity;
use gitops_lint::rules;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gitops-lint",
    version,
    about = "Lint GitOps repositories (Argo CD, Flux) for drift loops before they merge",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    check: CheckArgs,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Repository (or directory) to lint.
    #[arg(default_value = ".")]
    path: PathBuf,
    #[command(flatten)]
    out: OutputArgs,
    /// Apply the safe fixes in place (then report what remains).
    #[arg(long)]
    fix: bool,
    /// With --fix: print the patch instead of writing files.
    #[arg(long, requires = "fix")]
    dry_run: bool,
    /// With --fix: also apply the fixes the catalog leaves to a person (e.g. removing
    /// `replicas` under an autoscaler, which scales down once unless the scoped ignore is live).
    #[arg(long, requires = "fix")]
    unsafe_fixes: bool,
    /// Record today's findings in FILE (then exit 0) to adopt the tool on a legacy repo.
    #[arg(long, value_name = "FILE", conflicts_with = "fix")]
    write_baseline: Option<PathBuf>,
}

/// Options shared by the lint and diff modes.
#[derive(clap::Args, Clone)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// Configuration file (default: .gitops-lint.yaml in the linted directory).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Do not colour the output.
    #[arg(long)]
    pub no_color: bool,
    /// Report only findings not recorded in this baseline file.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Also write SARIF 2.1.0 to FILE (for code scanning upload), whatever --format says.
    #[arg(long, value_name = "FILE")]
    pub sarif_file: Option<PathBuf>,
    /// Pull-request comments: `auto` posts a review and a sticky summary when GITHUB_TOKEN
    /// and a pull_request event are present; `off` never does.
    #[arg(long, value_enum, default_value_t = Comment::Auto)]
    pub comment: Comment,
}

#[derive(Subcommand)]
enum Command {
    /// Lint the base revision and the working tree; report findings the change adds and
    /// fixes, and the rendered manifest diff of the apps it affects.
    Diff {
        /// Base revision (branch, tag or commit), read from git without a checkout.
        #[arg(long)]
        base: String,
        /// Directory inside a git work tree.
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        out: OutputArgs,
    },
    /// List the rules: id, default severity, one line.
    Rules,
    /// Print a rule's documentation.
    Explain { id: String },
    /// List the apps found in a repository: name, kind, what it renders, object count.
    Apps {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Junit,
    Github,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Info,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Comment {
    Auto,
    Off,
}

impl FailOn {
    pub fn threshold(self) -> Severity {
        match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
            FailOn::Info => Severity::Info,
        }
    }
}

pub fn print(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Rules) => {
            let mut text = String::new();
            for r in rules::registry() {
                text.push_str(&format!(
                    "{:<40} {:<8} {}\n",
                    r.meta.id,
                    r.meta.severity.as_str(),
                    r.meta.summary
                ));
            }
            print(&text)
        }
        Some(Command::Explain { id }) => match rules::find(&id) {
            Some(r) => print(r.meta.doc),
            None => {
                eprintln!("error: unknown rule `{id}`; `gitops-lint rules` lists them");
                ExitCode::from(2)
            }
        },
        Some(Command::Diff { base, path, out }) => run_diff(base, path, out),
        Some(Command::Apps { path, config }) => apps(path, config),
        None => check(cli.check),
    }
}

fn apps(path: PathBuf, config: Option<PathBuf>) -> ExitCode {
    let result = match lint(&LintOptions { root: path, config }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut text = format!(
        "{:<32} {:<20} {:>7}  {}\n",
        "APP", "KIND", "OBJECTS", "SOURCE"
    );
    for app in &result.model.apps {
        text.push_str(&format!(
            "{:<32} {:<20} {:>7}  {}\n",
            app.name,
            app.kind.as_str(),
            app.objects.len(),
            app.sources.join(", ")
        ));
    }
    print(&text)
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

fn load_baseline(args: &OutputArgs) -> Result<Option<Baseline>, ExitCode> {
    match &args.baseline {
        None => Ok(None),
        Some(p) => Baseline::read(p).map(Some).map_err(fail),
    }
}

fn check(args: CheckArgs) -> ExitCode {
    let opts = LintOptions {
        root: args.path.clone(),
        config: args.out.config.clone(),
    };
    let mut result = match lint(&opts) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if args.fix {
        let plan = fix::plan(&result.findings, &result.map, args.unsafe_fixes);
        if args.dry_run {
            print(&fix::unified_diff(&plan));
            eprintln!(
                "gitops-lint: fixes for {} finding(s) in {} file(s) (dry run, nothing written)",
                plan.fixed,
                plan.patches.len()
            );
            return ExitCode::SUCCESS;
        }
        if let Err(e) = fix::apply(&plan, &result.root) {
            return fail(format!("writing fixes: {e}"));
        }
        eprintln!(
            "gitops-lint: applied fixes for {} finding(s) in {} file(s){}",
            plan.fixed,
            plan.patches.len(),
            if plan.skipped > 0 {
                format!(
                    "; {} overlapping edit(s) left for a second run",
                    plan.skipped
                )
            } else {
                String::new()
            }
        );
        result = match lint(&opts) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
    }
    if let Some(path) = &args.write_baseline {
        let b = Baseline::of(&result.findings, &result.map);
        if let Err(e) = std::fs::write(path, b.to_json()) {
            return fail(format!("{}: {e}", path.display()));
        }
        eprintln!(
            "gitops-lint: wrote {} finding(s) to {}; lint with --baseline {} to see only new ones",
            result.findings.len(),
            path.display(),
            path.display()
        );
        return ExitCode::SUCCESS;
    }
    let baseline = match load_baseline(&args.out) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let (findings, baselined) = match &baseline {
        Some(b) => {
            let keep = unmatched(&result.findings, &result.map, &b.counts());
            let hidden = result.findings.len() - keep.len();
            (
                keep.into_iter()
                    .map(|i| result.findings[i].clone())
                    .collect(),
                hidden,
            )
        }
        None => (result.findings.clone(), 0),
    };
    let prefix = cli_output::repo_prefix(&result.root);
    Output {
        args: &args.out,
        findings: &findings,
        map: &result.map,
        prefix: &prefix,
        baselined,
        diff: None,
    }
    .emit()
}

fn run_diff(base: String, path: PathBuf, out: OutputArgs) -> ExitCode {
    let opts = DiffOptions {
        lint: LintOptions {
            root: path,
            config: out.config.clone(),
        },
        base,
    };
    let result = match diff::run(&opts) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    eprintln!(
        "gitops-lint diff: {} changed file(s); rendered {} of {} apps; lint of base and head {:.2}s, render {:.3}s",
        result.changed.len(),
        result.apps_rendered(),
        result.apps_total,
        result.lint_time.as_secs_f64(),
        result.render_time.as_secs_f64()
    );
    let baseline = match load_baseline(&out) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let (findings, baselined) = match &baseline {
        Some(b) => {
            let keep = unmatched(&result.new, &result.head.map, &b.counts());
            let hidden = result.new.len() - keep.len();
            (
                keep.into_iter().map(|i| result.new[i].clone()).collect(),
                hidden,
            )
        }
        None => (result.new.clone(), 0),
    };
    Output {
        args: &out,
        findings: &findings,
        map: &result.head.map,
        prefix: &result.prefix,
        baselined,
        diff: Some(Reported { result: &result }),
    }
    .emit()
}
