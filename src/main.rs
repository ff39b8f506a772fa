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
    /// Print rendered manifests: a kustomization or chart directory (as `kubectl kustomize`
    /// / `helm template` print them), or with `--app NAME` what an app of PATH deploys.
    Render(RenderArgs),
    /// `helm template` with helm's own arguments, rendered natively (`helm template NAME CHART -f … --set …`).
    #[command(disable_help_flag = true)]
    Helm {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// List the apps found in a repository: name, kind, what it renders, object count.
    Apps {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct RenderArgs {
    /// A kustomization or chart directory; with --app, the repository.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Render what this app deploys (see `gitops-lint apps`).
    #[arg(long)]
    app: Option<String>,
    /// Files are read only inside this directory (default: the enclosing git checkout, else
    /// the filesystem root, as kustomize itself has no repository boundary).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Helm release name.
    #[arg(long, default_value = "release-name")]
    release_name: String,
    /// Helm release namespace.
    #[arg(long, short = 'n', default_value = "default")]
    namespace: String,
    /// Helm values files.
    #[arg(long = "values", short = 'f')]
    values: Vec<String>,
    /// Helm --set values.
    #[arg(long)]
    set: Vec<String>,
    #[arg(long)]
    config: Option<PathBuf>,
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
        Some(Command::Render(args)) => render(args),
        Some(Command::Helm { args }) => helm(args),
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

/// The enclosing git checkout of `dir`, else the filesystem root.
fn default_root(dir: &std::path::Path) -> PathBuf {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d.join(".git").exists() {
            return d.to_path_buf();
        }
        cur = d.parent();
    }
    PathBuf::from("/")
}

fn render(args: RenderArgs) -> ExitCode {
    use gitops_lint::render::kustomize;
    use gitops_lint::source::{DiskFs, RepoFs, SourceMap, relative_path};
    if let Some(name) = &args.app {
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
        let Some(app) = result.model.apps.iter().find(|a| &a.name == name) else {
            eprintln!(
                "error: no app `{name}` in {} (see `gitops-lint apps`)",
                args.path.display()
            );
            return ExitCode::from(2);
        };
        for issue in &app.issues {
            let lc = result.map.line_col(issue.span);
            eprintln!(
                "{}:{}:{}: {}",
                result.map.path(issue.span.file),
                lc.line,
                lc.column,
                issue.message
            );
        }
        let roots = result.model.objects_of(app).map(|o| &o.object.root);
        print(&gitops_lint::yaml::emit::to_yaml_stream(roots));
        return if app.issues.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    }
    let dir = match std::fs::canonicalize(&args.path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {}: {e}", args.path.display());
            return ExitCode::from(2);
        }
    };
    if dir.join("Chart.yaml").is_file() {
        let mut helm_args = vec![
            "template".into(),
            args.release_name.clone(),
            args.path.display().to_string(),
            "--namespace".into(),
            args.namespace.clone(),
        ];
        for f in &args.values {
            helm_args.push("-f".into());
            helm_args.push(f.clone());
        }
        for s in &args.set {
            helm_args.push("--set".into());
            helm_args.push(s.clone());
        }
        return helm(helm_args);
    }
    let root = match args.root.as_ref().map(std::fs::canonicalize) {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            eprintln!("error: --root: {e}");
            return ExitCode::from(2);
        }
        None => default_root(&dir),
    };
    let Some(rel) = relative_path(&root, &dir) else {
        eprintln!("error: {} is not inside {}", dir.display(), root.display());
        return ExitCode::from(2);
    };
    let fs = DiskFs::new(root, std::sync::Arc::new(SourceMap::new()), 64 << 20);
    let out = kustomize::build(&fs, &rel, &kustomize::BuildOptions::default());
    if !out.issues.is_empty() {
        let map = fs.source_map();
        for issue in &out.issues {
            let lc = map.line_col(issue.span);
            eprintln!(
                "Error: {}:{}:{}: {}",
                map.path(issue.span.file),
                lc.line,
                lc.column,
                issue.message
            );
        }
        return ExitCode::from(1);
    }
    print(&kustomize::to_yaml_stream(&out.objects))
}

/// `helm template ARGS…` natively, printing what helm prints (stdout, stderr, exit code).
fn helm(args: Vec<String>) -> ExitCode {
    use gitops_lint::render::helm as nhelm;
    let args: Vec<String> = match args.split_first() {
        Some((first, rest)) if first == "template" => rest.to_vec(),
        _ => {
            eprintln!("Error: only `gitops-lint helm template ARGS...` is supported");
            return ExitCode::from(1);
        }
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let fs = match nhelm::cli_fs(&cwd) {
        Ok(fs) => fs,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::from(1);
        }
    };
    let (chart, mut opts) = match nhelm::parse_helm_template_args(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::from(1);
        }
    };
    opts.abs_root = Some(fs.root().display().to_string());
    let run = nhelm::run(&fs, &chart, &opts, false);
    print(&run.stdout);
    eprint!("{}", run.stderr());
    ExitCode::from(run.exit_code() as u8)
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
