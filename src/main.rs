//! `gitops-lint`: the command line. Exit codes: 0 nothing at or above `--fail-on`,
//! 1 findings, 2 usage, configuration or internal error.

use clap::{Parser, Subcommand, ValueEnum};
use gitops_lint::lint::{LintOptions, lint};
use gitops_lint::report::{Severity, human, json};
use gitops_lint::rules;
use std::io::{IsTerminal, Write};
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    fail_on: FailOn,
    /// Configuration file (default: .gitops-lint.yaml in the linted directory).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Do not colour the output.
    #[arg(long)]
    no_color: bool,
}

#[derive(Subcommand)]
enum Command {
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

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Human,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum FailOn {
    Error,
    Warning,
    Info,
}

impl FailOn {
    fn threshold(self) -> Severity {
        match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
            FailOn::Info => Severity::Info,
        }
    }
}

fn print(text: &str) -> ExitCode {
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

fn check(args: CheckArgs) -> ExitCode {
    let result = match lint(&LintOptions {
        root: args.path.clone(),
        config: args.config.clone(),
    }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let text = match args.format {
        Format::Json => json::render(&result.findings, &[], &result.map),
        Format::Human => {
            let color = !args.no_color
                && std::env::var_os("NO_COLOR").is_none()
                && std::io::stdout().is_terminal();
            human::render(&result.findings, &result.map, color)
        }
    };
    print(&text);
    let threshold = args.fail_on.threshold();
    if result.findings.iter().any(|f| f.severity >= threshold) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
