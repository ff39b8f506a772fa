//! `gitops-lint`: the command line. Exit codes: 0 nothing at or above `--fail-on`,
//! 1 findings, 2 usage, configuration or internal error.

#![forbid(unsafe_code)]

mod cli_output;
mod helm_cli;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use cli_output::{Output, Reported};
use gitops_lint::baseline::{Baseline, unmatched};
use gitops_lint::diff::{self, DiffOptions};
use gitops_lint::fix;
use gitops_lint::lint::{LintOptions, LintResult, lint};
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
    lint: LintArgs,
    /// Apply the safe fixes in place (then report what remains).
    #[arg(long, conflicts_with = "changed")]
    fix: bool,
    /// With --fix: print the patch instead of writing files.
    #[arg(long, requires = "fix")]
    dry_run: bool,
    /// With --fix: also apply the fixes left to a person (e.g. removing
    /// `replicas` under an autoscaler, which scales down once unless the scoped ignore is live).
    #[arg(long, requires = "fix")]
    unsafe_fixes: bool,
    /// Record today's findings in FILE (then exit 0) to adopt the tool on a legacy repo.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["fix", "changed"])]
    write_baseline: Option<PathBuf>,
}

/// The flags of a lint run, shared by `gitops-lint [PATH]` (and `lint`) and `diff`: one
/// group, so a flag the lint accepts cannot be refused by the pull-request mode.
#[derive(clap::Args, Clone)]
struct LintArgs {
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    walk: WalkArgs,
    #[command(flatten)]
    platform: PlatformArgs,
    /// Report only findings of the apps these files (relative to the working directory) are
    /// inputs of, and findings located in them (the pre-commit hook passes the staged files;
    /// none: nothing to report). The whole repository is still read: an app's render needs
    /// all of its inputs. With `diff`: of the new findings, those. Takes every following
    /// argument, so give PATH before it.
    #[arg(long, value_name = "FILE", num_args = 0..)]
    changed: Option<Vec<PathBuf>>,
}

/// The releases to judge the apps with, when the repository does not say or says otherwise.
#[derive(clap::Args, Clone, Default)]
struct PlatformArgs {
    /// The Argo CD release that runs the apps (`2.14`, `v3.1.2`): overrides
    /// `profile.argo-version` and what the repository installs. Default: what the repository
    /// installs, else the latest release.
    #[arg(long, value_name = "VERSION", value_parser = parse_release)]
    argo_version: Option<gitops_lint::config::Release>,
    /// The Flux release (`2.8`, `v2.9.4`), as `--argo-version` for Argo CD.
    #[arg(long, value_name = "VERSION", value_parser = parse_release)]
    flux_version: Option<gitops_lint::config::Release>,
}

fn parse_release(text: &str) -> Result<gitops_lint::config::Release, String> {
    gitops_lint::config::Release::from_flag(text)
        .ok_or_else(|| format!("`{text}` is not a release such as `2.14` or `v3.1.2`"))
}

/// What the model reads besides the repository, for every command that builds it (lint,
/// diff, apps, render --app, fetch): one group, so no command drops a setting.
#[derive(clap::Args, Clone, Default)]
struct ModelArgs {
    /// Read files that .gitignore or .ignore files exclude, too.
    #[arg(long)]
    no_ignore: bool,
    /// Set a limit (`max-render-seconds=30`), also above its default, up to a hard ceiling;
    /// `.gitops-lint.yaml` can only lower limits, since a pull request can change it.
    #[arg(long = "limit", value_name = "KEY=VALUE", value_parser = gitops_lint::config::parse_cli_limit)]
    limits: Vec<(String, u64)>,
}

impl ModelArgs {
    /// The lint options of `root`: the one place the command line becomes [`LintOptions`].
    fn lint_options(
        &self,
        root: PathBuf,
        config: Option<PathBuf>,
        platform: &PlatformArgs,
        cache: Option<PathBuf>,
    ) -> LintOptions {
        LintOptions {
            root,
            config,
            argo_version: platform.argo_version.clone(),
            flux_version: platform.flux_version.clone(),
            limits: self.limits.clone(),
            no_ignore: self.no_ignore,
            cache,
        }
    }
}

#[derive(clap::Args, Clone)]
struct WalkArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Where `gitops-lint fetch` stored remote charts and bases (default: $GITOPS_LINT_CACHE,
    /// else .gitops-lint/cache in the linted directory). Only what .gitops-lint.lock names is read.
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
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
    /// Print findings only: no counts line, no progress or summary notes on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Inline comments in one pull-request review, errors first; the sticky summary comment
    /// counts the rest.
    #[arg(long, value_name = "N", default_value_t = gitops_lint::github::review::DEFAULT_MAX_COMMENTS)]
    pub max_review_comments: usize,
    /// `--format github`: annotations of each level (error, warning, notice) at most, errors
    /// first (GitHub shows 10 per level in a step); one notice counts the rest.
    #[arg(long, value_name = "N", default_value_t = gitops_lint::report::github::DEFAULT_MAX_PER_LEVEL)]
    pub max_annotations: usize,
    /// `--format junit`: what a finding below --fail-on becomes, a skipped test case (shown,
    /// not failed) or a failed one.
    #[arg(long, value_enum, default_value_t = JunitBelow::Skipped)]
    pub junit_below_fail_on: JunitBelow,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum JunitBelow {
    Skipped,
    Failure,
}

impl From<JunitBelow> for gitops_lint::report::junit::Below {
    fn from(b: JunitBelow) -> Self {
        match b {
            JunitBelow::Skipped => gitops_lint::report::junit::Below::Skipped,
            JunitBelow::Failure => gitops_lint::report::junit::Below::Failure,
        }
    }
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
        lint: LintArgs,
    },
    /// Lint a repository: the same as `gitops-lint [PATH]` (for the habit of linters whose
    /// first argument is the command).
    Lint(CheckArgs),
    /// List the rules: id, default severity, one line; then the checks the configuration
    /// declares (`checks:`).
    Rules {
        /// Directory whose `.gitops-lint.yaml` declares checks.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Configuration file (default: .gitops-lint.yaml in PATH, when present).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Print the JSON Schema of `.gitops-lint.yaml` (for editors: the repository publishes it
    /// as schema/gitops-lint.schema.json).
    Schema,
    /// Print a rule's documentation and its severities (the default, and when it gives
    /// another), a check's as the configuration declares it, or with `writers` the knowledge
    /// base of operators and which of them apply to PATH.
    Explain {
        id: String,
        /// Directory whose `.gitops-lint.yaml` declares checks.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Configuration file (default: .gitops-lint.yaml in PATH, when present).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Print rendered manifests: a kustomization or chart directory (as `kubectl kustomize`
    /// / `helm template` print them), or with `--app NAME` what an app of PATH deploys.
    Render(RenderArgs),
    /// `helm template` with helm's own arguments, rendered natively (`helm template NAME CHART -f … --set …`).
    #[command(disable_help_flag = true)]
    Helm {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// List the apps found in a repository: name, kind, parent, object count, render status
    /// (rendered, partial, not-rendered) and what it renders.
    Apps {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        config: Option<PathBuf>,
        /// `human` (a table) or `json` (every app with controller, source, parent, status,
        /// reason and object count).
        #[arg(long, value_enum, default_value_t = AppsFormat::Human)]
        format: AppsFormat,
        #[command(flatten)]
        walk: WalkArgs,
        #[command(flatten)]
        platform: PlatformArgs,
    },
    #[cfg(feature = "fetch")]
    /// Download the remote charts, bases and files the repository's apps name (Helm
    /// repositories, OCI registries, git, HTTPS URLs), verify them, store them in the cache and record each resolution
    /// in `.gitops-lint.lock` (commit it). The only command that uses the network; `lint`
    /// then renders them from the cache. Exit 1 when any input failed (each located on the
    /// line that names it).
    Fetch {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Cache directory (default: .gitops-lint/cache in the repository).
        #[arg(long, value_name = "DIR", env = "GITOPS_LINT_CACHE")]
        cache: Option<PathBuf>,
        #[arg(long)]
        config: Option<PathBuf>,
        /// No progress lines or notes on stderr (the summary line and failures stay).
        #[arg(long, short = 'q')]
        quiet: bool,
        /// Also clone `file://` git remotes (a local mirror). Off by default: a repository
        /// could name any path on this machine.
        #[arg(long)]
        allow_file_remotes: bool,
        /// As for lint: fetch plans from the model that lint builds with the same flags.
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Print a shell completion script on stdout (e.g. `gitops-lint completions bash >
    /// /etc/bash_completion.d/gitops-lint`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout (`gitops-lint man > gitops-lint.1`).
    Man,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum AppsFormat {
    Human,
    Json,
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
    /// With --app: the releases the app is judged with.
    #[command(flatten)]
    platform: PlatformArgs,
    /// With --app: what the model reads (as for lint).
    #[command(flatten)]
    walk: WalkArgs,
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
    gitops_lint::alloc::keep_freed_pages();
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Rules { path, config }) => {
            let (config, map) = match gitops_lint::lint::read_config(&path, config.as_deref()) {
                Ok(c) => c,
                Err(e) => return fail(e.to_string()),
            };
            let mut text = String::new();
            for r in rules::registry() {
                text.push_str(&format!(
                    "{:<40} {:<8} {:<6} {} (kinds: {})\n",
                    r.meta.id,
                    r.meta.severity.as_str(),
                    r.meta.fix.as_str(),
                    r.meta.summary,
                    r.meta.kinds.describe()
                ));
            }
            for c in &config.checks {
                text.push_str(&format!(
                    "{:<40} {:<8} {:<6} {} (kinds: {}; check in {}:{})\n",
                    c.id,
                    c.severity.as_str(),
                    "none",
                    c.summary(),
                    c.matcher.describe_kinds(),
                    map.path(c.span.file),
                    map.line_col(c.span).line
                ));
            }
            print(&text)
        }
        Some(Command::Explain { id, path, config }) => {
            if let Some(r) = rules::find(&id) {
                // The document, then the severities as the code declares them.
                return print(&format!("{}{}", r.meta.doc, r.meta.severity_section()));
            }
            if id == "writers" {
                let opts = gitops_lint::lint::LintOptions {
                    root: path,
                    config,
                    ..Default::default()
                };
                return match gitops_lint::lint::lint(&opts) {
                    Ok(r) => print(&gitops_lint::ownership::operators::explain(
                        &r.model, &r.map,
                    )),
                    Err(e) => fail(e.to_string()),
                };
            }
            let (config, map) = match gitops_lint::lint::read_config(&path, config.as_deref()) {
                Ok(c) => c,
                Err(e) => return fail(e.to_string()),
            };
            if let Some(c) = config.checks.iter().find(|c| c.id == id) {
                let at = format!("{}:{}", map.path(c.span.file), map.line_col(c.span).line);
                return print(&c.document(&at));
            }
            let ids: Vec<&str> = rules::registry()
                .iter()
                .map(|r| r.meta.id)
                .chain(config.checks.iter().map(|c| c.id))
                .collect();
            eprintln!(
                "error: unknown rule `{id}`{}",
                gitops_lint::config::did_you_mean(&id, &ids)
            );
            ExitCode::from(2)
        }
        Some(Command::Schema) => print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&gitops_lint::config::schema::json_schema())
                .unwrap_or_default()
        )),
        Some(Command::Diff { base, path, lint }) => run_diff(base, path, lint),
        Some(Command::Apps {
            path,
            config,
            format,
            walk,
            platform,
        }) => apps(path, config, format, walk, platform),
        Some(Command::Render(args)) => render(args),
        #[cfg(feature = "fetch")]
        Some(Command::Fetch {
            path,
            cache,
            config,
            quiet,
            allow_file_remotes,
            model,
        }) => fetch(path, cache, config, quiet, allow_file_remotes, model),
        Some(Command::Helm { args }) => helm_cli::run(args),
        Some(Command::Completions { shell }) => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "gitops-lint", &mut out);
            print(&String::from_utf8_lossy(&out))
        }
        Some(Command::Man) => {
            let mut out = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut out) {
                Ok(()) => print(&String::from_utf8_lossy(&out)),
                Err(e) => fail(format!("man page: {e}")),
            }
        }
        Some(Command::Lint(args)) => check(args),
        None => check(cli.check),
    }
}

#[cfg(feature = "fetch")]
fn fetch(
    path: PathBuf,
    cache: Option<PathBuf>,
    config: Option<PathBuf>,
    quiet: bool,
    allow_file_remotes: bool,
    model: ModelArgs,
) -> ExitCode {
    use gitops_lint::fetch::{self, FetchOptions, RunOptions, auth};
    let root = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    let (credentials, auth_notes) = auth::Credentials::load(&auth::Sources::from_env());
    let opts = RunOptions {
        // An empty GITOPS_LINT_CACHE means "the default", not the working directory.
        cache: fetch::cache_dir(
            &root,
            cache.as_deref().filter(|p| !p.as_os_str().is_empty()),
            None,
        ),
        lint: model.lint_options(path, config, &PlatformArgs::default(), None),
        fetch: FetchOptions {
            credentials,
            progress: !quiet && fetch::stderr_is_tty(),
            allow_local_git: allow_file_remotes,
            ..FetchOptions::default()
        },
    };
    let report = match fetch::run(opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if !quiet {
        for note in auth_notes.iter().chain(&report.notes) {
            eprintln!("note: {note}");
        }
    }
    for failure in &report.failures {
        eprintln!("{failure}");
    }
    // In GitHub Actions: each input, what became of it, and what the lint still goes without.
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty())
        && let Err(e) = cli_output::append(&path, &fetch::summary::markdown(&report))
    {
        eprintln!("warning: could not write the job summary: {e}");
    }
    let failed = report.failures.len();
    eprintln!(
        "fetched {}, cached {}, failed {failed}{}",
        report.fetched,
        report.cached,
        if report.lock_written {
            format!(" ({} written)", gitops_lint::remote::LOCK_FILE)
        } else {
            String::new()
        }
    );
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn apps(
    path: PathBuf,
    config: Option<PathBuf>,
    format: AppsFormat,
    walk: WalkArgs,
    platform: PlatformArgs,
) -> ExitCode {
    let opts = walk
        .model
        .lint_options(path, config, &platform, walk.cache.clone());
    let result = match lint(&opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    use gitops_lint::gitops::listing;
    match format {
        AppsFormat::Human => print(&listing::apps_table(&result.model)),
        AppsFormat::Json => {
            let json = listing::apps_json(&result.model);
            print(&format!(
                "{}\n",
                serde_json::to_string_pretty(&json).unwrap_or_default()
            ))
        }
    }
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
        // What the lint pipeline renders is printed here: real randomness and keys.
        gitops_lint::render::gotmpl::funcs::renders_are_printed();
        let opts = args.walk.model.lint_options(
            args.path.clone(),
            args.config.clone(),
            &args.platform,
            args.walk.cache.clone(),
        );
        let result = match lint(&opts) {
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
        return helm_cli::run(helm_args);
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
    // Rooted at `/` (no repository around the directory), paths are absolute ones.
    let abs = if root == std::path::Path::new("/") {
        "/"
    } else {
        ""
    };
    let fs = DiskFs::new(root, std::sync::Arc::new(SourceMap::new()), 64 << 20);
    let out = kustomize::build(&fs, &rel, &kustomize::BuildOptions::default());
    if !out.issues.is_empty() {
        let map = fs.source_map();
        for issue in &out.issues {
            let lc = map.line_col(issue.span);
            let message = if abs.is_empty() {
                issue.message.clone()
            } else {
                absolute_quoted_paths(&issue.message)
            };
            eprintln!(
                "Error: {abs}{}:{}:{}: {}",
                map.path(issue.span.file),
                lc.line,
                lc.column,
                message
            );
        }
        return ExitCode::from(1);
    }
    print(&kustomize::to_yaml_stream(&out.objects))
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
    let started = std::time::Instant::now();
    let lint = &args.lint;
    let opts = lint.walk.model.lint_options(
        args.path.clone(),
        lint.out.config.clone(),
        &lint.platform,
        lint.walk.cache.clone(),
    );
    let quiet = lint.out.quiet;
    let mut result = match gitops_lint::lint::lint(&opts) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if args.fix {
        let plan = fix::plan(&result.findings, &result.map, args.unsafe_fixes);
        for (path, reason) in &plan.refused {
            eprintln!("gitops-lint: not fixing {path}: {reason}; the file is left as it is");
        }
        if args.dry_run {
            if lint.out.format == Format::Json {
                print(&dry_run_json(&plan));
            } else {
                print(&fix::unified_diff(&plan));
            }
            if quiet {
                return ExitCode::SUCCESS;
            }
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
        if !quiet {
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
        }
        // The lint that decides the report and the exit code runs with the user's limits too.
        result = match gitops_lint::lint::lint(&opts) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
    }
    if let Some(path) = &args.write_baseline {
        let b = Baseline::of(&result.findings, &result.map);
        if let Err(e) = std::fs::write(path, b.to_json()) {
            return fail(format!("{}: {e}", path.display()));
        }
        if !quiet {
            eprintln!(
                "gitops-lint: wrote {} finding(s) to {}; lint with --baseline {} to see only new ones",
                result.findings.len(),
                path.display(),
                path.display()
            );
        }
        return ExitCode::SUCCESS;
    }
    let baseline = match load_baseline(&lint.out) {
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
    let findings = match &lint.changed {
        None => findings,
        Some(files) => only_changed(findings, &result, files, quiet),
    };
    let prefix = cli_output::repo_prefix(&result.root);
    let code = Output {
        args: &lint.out,
        findings: &findings,
        tree: &findings,
        map: &result.map,
        checks: &result.config.checks,
        prefix: &prefix,
        baselined,
        diff: None,
        coverage: Some(gitops_lint::gitops::listing::coverage_line(&result.model)),
        started,
    }
    .emit();
    // The process ends here and the kernel takes its memory back at once: freeing the model
    // node by node first cost ~3% of a 6,000-object lint.
    std::mem::forget(result);
    code
}

/// `--fix --dry-run --format json`: the plan as data, one unified diff per file (version 1).
fn dry_run_json(plan: &fix::FixPlan) -> String {
    let patches: Vec<serde_json::Value> = plan
        .patches
        .iter()
        .map(|p| {
            serde_json::json!({
                "file": p.path,
                "diff": fix::diff_text(&p.before, &p.after, &format!("a/{}", p.path), &format!("b/{}", p.path)),
            })
        })
        .collect();
    let refused: Vec<serde_json::Value> = plan
        .refused
        .iter()
        .map(|(file, reason)| serde_json::json!({"file": file, "reason": reason}))
        .collect();
    let v = serde_json::json!({
        "version": 1,
        "fixed": plan.fixed,
        "skipped": plan.skipped,
        "patches": patches,
        "refused": refused,
    });
    let text = serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
    gitops_lint::report::escape::inert_json(text)
}

/// `--changed FILE…`: the findings of the apps whose inputs include a changed file (see
/// `diff::affected_apps`, the same mapping `diff` uses), and findings located in those files.
fn only_changed(
    findings: Vec<gitops_lint::report::Finding>,
    result: &LintResult,
    changed: &[PathBuf],
    quiet: bool,
) -> Vec<gitops_lint::report::Finding> {
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_default();
    let rel: Vec<String> = changed
        .iter()
        .filter_map(|f| {
            let abs = cwd.join(f);
            let abs = std::fs::canonicalize(&abs).unwrap_or(abs);
            gitops_lint::source::relative_path(&result.root, &abs)
        })
        .collect();
    let set: std::collections::BTreeSet<&str> = rel.iter().map(String::as_str).collect();
    let apps = diff::affected_apps(&result.model, &set);
    let kept: Vec<_> = findings
        .into_iter()
        .filter(|f| {
            f.app.as_ref().is_some_and(|a| apps.contains(a))
                || set.contains(result.map.path(f.primary.span.file).as_str())
        })
        .collect();
    if !quiet {
        eprintln!(
            "gitops-lint: {} changed file(s) are inputs of {} of {} app(s); reporting their findings",
            set.len(),
            apps.len(),
            result.model.apps.len()
        );
    }
    kept
}

fn run_diff(base: String, path: PathBuf, lint: LintArgs) -> ExitCode {
    let started = std::time::Instant::now();
    let out = &lint.out;
    let opts = DiffOptions {
        lint: lint.walk.model.lint_options(
            path,
            out.config.clone(),
            &lint.platform,
            lint.walk.cache.clone(),
        ),
        base,
    };
    let result = match diff::run(&opts) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if !out.quiet {
        eprintln!(
            "gitops-lint diff: {} changed file(s); rendered {} of {} apps; lint of base and head {:.2}s, render {:.3}s, compare {:.3}s",
            result.changed.len(),
            result.apps_rendered(),
            result.apps_total,
            result.lint_time.as_secs_f64(),
            result.render_time.as_secs_f64(),
            result.compare_time.as_secs_f64()
        );
    }
    let baseline = match load_baseline(out) {
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
    let findings = match &lint.changed {
        None => findings,
        Some(files) => only_changed(findings, &result.head, files, out.quiet),
    };
    // Code scanning gets the whole tree, as `lint` with these flags reports it.
    let tree = match &baseline {
        Some(b) => unmatched(&result.head.findings, &result.head.map, &b.counts())
            .into_iter()
            .map(|i| result.head.findings[i].clone())
            .collect(),
        None => result.head.findings.clone(),
    };
    let tree = match &lint.changed {
        None => tree,
        Some(files) => only_changed(tree, &result.head, files, true),
    };
    Output {
        args: out,
        findings: &findings,
        tree: &tree,
        map: &result.head.map,
        checks: &result.head.config.checks,
        prefix: &result.prefix,
        baselined,
        diff: Some(Reported { result: &result }),
        coverage: Some(gitops_lint::gitops::listing::coverage_line(
            &result.head.model,
        )),
        started,
    }
    .emit()
}

/// Rooted at `/`, the renderer names paths relative to it (`'tmp/x/app'`); kustomize prints
/// them absolute. A quoted path that exists under `/` gets its leading `/` back; relative
/// references (`'../base'`, `'cm.yaml'` that are not there) stay as written.
fn absolute_quoted_paths(message: &str) -> String {
    let mut out = String::with_capacity(message.len() + 8);
    let mut parts = message.split('\'');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (i, part) in parts.enumerate() {
        out.push('\'');
        // Odd pieces are inside quotes.
        let inside = i % 2 == 0;
        let looks_rooted = inside
            && !part.is_empty()
            && !part.starts_with('/')
            && !part.starts_with('.')
            && part.contains('/')
            && std::path::Path::new("/").join(part).exists();
        if looks_rooted {
            out.push('/');
        }
        out.push_str(part);
    }
    out
}
