//! The lint pipeline: walk → parse → model → rules → config and inline suppressions.
//! One broken file or app never stops the others: each problem becomes a finding.

use crate::config::{Config, RuleSetting, object_matches};
use crate::gitops::{LoadedFile, Model, ModelSettings, build_model};
use crate::manifest_files::{Deployed, is_foreign_template, is_helm_template};
use crate::report::{Finding, Severity};
use crate::rules::{self, suppression_unknown_rule, suppression_without_reason, yaml_syntax};
use crate::source::{
    DiskFs, FileId, MemFs, MemTree, Origin, RepoFs, SourceFile, SourceMap, Span, WalkOptions,
    WalkedRepo, walk_repo, walk_tree,
};
use crate::yaml::{Limits, parse_str};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything a lint reads besides the repository: the one way in for every command that
/// builds the model (lint, diff, apps, render --app, fetch), so none of them can drop a
/// setting the others honour.
#[derive(Clone, Debug, Default)]
pub struct LintOptions {
    pub root: PathBuf,
    /// `--config FILE`; default `.gitops-lint.yaml` in the root when present.
    pub config: Option<PathBuf>,
    /// `--argo-version` / `--flux-version`: override `profile.argo-version` /
    /// `profile.flux-version` on every cluster.
    pub argo_version: Option<crate::config::Release>,
    pub flux_version: Option<crate::config::Release>,
    /// `--limit KEY=VALUE`: limits set on the command line (up to their hard ceilings).
    pub limits: Vec<(String, u64)>,
    /// `--no-ignore`: also read files `.gitignore` / `.ignore` files exclude.
    pub no_ignore: bool,
    /// `--cache DIR`: where `fetch` stored remote inputs (see [`cache_dir`]).
    pub cache: Option<PathBuf>,
}

pub struct LintResult {
    pub map: Arc<SourceMap>,
    pub root: PathBuf,
    pub findings: Vec<Finding>,
    pub model: Model,
    /// Findings silenced by inline comments or config ignores (for reports that count them).
    pub suppressed: usize,
    /// The settings the lint ran with (`diff` applies them to what it adds).
    pub config: Config,
}

impl LintResult {
    /// Findings made over this lint's model outside the rule runner (`diff`'s comparisons of
    /// two revisions) get what the rules' findings got: the deployment policy, severities,
    /// `off`, object ignores and inline suppressions, the order, one finding per cause (a
    /// base line many overlays render), and redaction.
    pub fn settle(&self, findings: Vec<Finding>) -> Vec<Finding> {
        let findings = apply_deployment_policy(findings, &self.model);
        let (mut findings, _) = apply_settings(findings, &self.config, &self.map);
        sort_findings(&mut findings, &self.map);
        let mut findings = crate::same_cause::merge_same_cause(findings);
        scrub_secrets(&mut findings, &self.model);
        findings
    }
}

fn sort_findings(findings: &mut Vec<Finding>, map: &SourceMap) {
    findings.sort_by(|a, b| {
        let pa = map.path(a.primary.span.file);
        let pb = map.path(b.primary.span.file);
        (pa, a.primary.span.start, a.rule).cmp(&(pb, b.primary.span.start, b.rule))
    });
    findings.dedup();
}

/// Both word lists walk every object: worth it only when there is something to scrub.
fn scrub_secrets(findings: &mut [Finding], model: &Model) {
    if findings.is_empty() {
        return;
    }
    let secrets = crate::redact::secret_values(model);
    if !secrets.is_empty() {
        let public = crate::redact::public_words(model);
        crate::redact::scrub_findings(findings, &secrets, &public);
    }
}

/// Usage or configuration problems: exit code 2.
#[derive(Debug)]
pub struct LintError {
    pub message: String,
}

impl std::fmt::Display for LintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// `--limit KEY=VALUE` values (checked by `config::parse_cli_limit`).
pub type CliLimits = [(String, u64)];

fn load_config(
    root: &Path,
    opts: &LintOptions,
    map: &SourceMap,
    cli: &CliLimits,
) -> Result<Config, LintError> {
    let mut config = load_config_file(root, opts.config.as_deref(), map)?;
    config.apply_cli_limits(cli);
    // A flag is the user's word for every cluster: it replaces per-cluster entries too.
    if let Some(v) = &opts.argo_version {
        config.profile.argo_version = Some(v.clone());
        config
            .profile
            .clusters
            .iter_mut()
            .for_each(|c| c.argo_version = None);
    }
    if let Some(v) = &opts.flux_version {
        config.profile.flux_version = Some(v.clone());
        config
            .profile
            .clusters
            .iter_mut()
            .for_each(|c| c.flux_version = None);
    }
    Ok(config)
}

fn load_config_file(
    root: &Path,
    explicit: Option<&Path>,
    map: &SourceMap,
) -> Result<Config, LintError> {
    // A path inside the root is pull-request content (the default file, or a `--config`
    // naming one in the tree): read under the root's containment, as every repo file is, so
    // a symlink out of the repo is refused. A `--config` outside the root is the workflow's.
    let absolute = explicit.map(|p| {
        std::path::absolute(p)
            .map(|a| normalized(&a))
            .unwrap_or_else(|_| p.to_path_buf())
    });
    let in_repo = match &absolute {
        None => Some(CONFIG_FILE.to_string()),
        Some(a) => crate::source::relative_path(root, a),
    };
    if let Some(rel) = in_repo {
        let path = root.join(&rel);
        if explicit.is_none() && std::fs::symlink_metadata(&path).is_err() {
            return Ok(Config::default());
        }
        let fs = DiskFs::new(
            root.to_path_buf(),
            Arc::new(SourceMap::new()),
            CONFIG_MAX_BYTES,
        );
        let text = fs
            .read(&rel)
            .map(|id| fs.source_map().get(id).text.to_string())
            .map_err(|e| LintError {
                message: format!("configuration: {e}"),
            })?;
        return config_from_text(rel, text, map);
    }
    let path = explicit.map(Path::to_path_buf).unwrap_or_default();
    let text = crate::source::read_text(&path, CONFIG_MAX_BYTES).map_err(|e| LintError {
        message: format!("{}: {e}", path.display()),
    })?;
    config_from_text(path.display().to_string(), text, map)
}

/// The configuration of `root` (`explicit`, else `.gitops-lint.yaml` in it when present) and
/// the source map it was read into: `rules` and `explain` list its checks.
pub fn read_config(
    root: &Path,
    explicit: Option<&Path>,
) -> Result<(Config, Arc<SourceMap>), LintError> {
    let root = canonical_root(root)?;
    let map = Arc::new(SourceMap::new());
    let config = load_config_file(&root, explicit, &map)?;
    Ok((config, map))
}

const CONFIG_FILE: &str = ".gitops-lint.yaml";
const CONFIG_MAX_BYTES: u64 = 1 << 20;

/// `a/./b/../c` → `a/c`, without touching the disk (the root is canonical, a relative
/// `--config` is joined onto the working directory).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn config_from_text(name: String, text: String, map: &SourceMap) -> Result<Config, LintError> {
    let file = map.add(SourceFile::new(name.clone(), text, Origin::Virtual));
    let ids: Vec<&str> = rules::registry().iter().map(|r| r.meta.id).collect();
    Config::parse(map, file, &ids).map_err(|e| {
        let at = e
            .span
            .map(|s| {
                let lc = map.line_col(s);
                format!(":{}:{}", lc.line, lc.column)
            })
            .unwrap_or_default();
        LintError {
            message: format!("{name}{at}: {}", e.message),
        }
    })
}

/// The linted root, canonical, and checked to be a directory.
fn canonical_root(path: &Path) -> Result<PathBuf, LintError> {
    let root = std::fs::canonicalize(path).map_err(|e| LintError {
        message: format!("{}: {e}", path.display()),
    })?;
    if !root.is_dir() {
        return Err(LintError {
            message: format!("{} is not a directory", path.display()),
        });
    }
    Ok(root)
}

fn walk_options(config: &Config) -> Result<WalkOptions, LintError> {
    let exclude = config.exclude_set().map_err(|m| LintError { message: m })?;
    Ok(WalkOptions {
        exclude,
        max_files: config.max_files.unwrap_or(WalkOptions::default().max_files),
        max_file_bytes: config
            .max_file_bytes
            .unwrap_or(WalkOptions::default().max_file_bytes),
        ignore_files: true,
    })
}

/// The fetch cache: `--cache DIR`, else `GITOPS_LINT_CACHE`, else `.gitops-lint/cache` in
/// the root. Only blobs the lock file names are read from it.
pub fn cache_dir(root: &Path, explicit: Option<&Path>) -> PathBuf {
    match explicit {
        Some(dir) => dir.to_path_buf(),
        None => match std::env::var_os("GITOPS_LINT_CACHE").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => root.join(crate::remote::DEFAULT_CACHE_DIR),
        },
    }
}

/// Lint the working tree under `opts.root` (files that `.gitignore` / `.ignore` exclude are
/// not read unless `opts.no_ignore`), rendering fetched remote inputs from the cache.
pub fn lint(opts: &LintOptions) -> Result<LintResult, LintError> {
    let root = canonical_root(&opts.root)?;
    let map = Arc::new(SourceMap::new());
    let config = load_config(&root, opts, &map, &opts.limits)?;
    let walk_opts = WalkOptions {
        ignore_files: !opts.no_ignore,
        ..walk_options(&config)?
    };
    let walked = walk_repo(&root, &walk_opts, &map).map_err(|e| LintError {
        message: format!("{}: {e}", root.display()),
    })?;
    excludes_not_everything(&walked)?;
    let fs = DiskFs::new(root.clone(), map.clone(), walk_opts.max_file_bytes);
    let cache = crate::remote::Cache::new(cache_dir(&root, opts.cache.as_deref()));
    Ok(lint_walked(root, map, &config, &walked, &fs, Some(cache)))
}

/// An `exclude` that keeps out every file would pass any check with nothing linted (one
/// line in a pull request): a configuration error, as a linter given only ignored files
/// reports (ESLint's "all files matched are ignored").
fn excludes_not_everything(walked: &WalkedRepo) -> Result<(), LintError> {
    if walked.files.is_empty() && walked.issues.is_empty() && walked.excluded > 0 {
        return Err(LintError {
            message: format!(
                "`exclude` in the configuration keeps out all {} files the linter would read; nothing would be linted (narrow `exclude`)",
                walked.excluded
            ),
        });
    }
    Ok(())
}

/// Lint a tree held in memory (a git revision of `opts.root`) as if it were checked out
/// there. The configuration is the working tree's, so both sides of a diff are judged by
/// the same settings and a finding is "new" only because the content changed.
pub fn lint_tree(opts: &LintOptions, tree: Arc<MemTree>) -> Result<LintResult, LintError> {
    let root = canonical_root(&opts.root)?;
    let map = Arc::new(SourceMap::new());
    let config = load_config(&root, opts, &map, &opts.limits)?;
    let walk_opts = walk_options(&config)?;
    let walked = walk_tree(&tree, root.clone(), &walk_opts, &map);
    let fs = MemFs::new(tree, map.clone(), walk_opts.max_file_bytes);
    let cache = crate::remote::Cache::new(cache_dir(&root, opts.cache.as_deref()));
    Ok(lint_walked(root, map, &config, &walked, &fs, Some(cache)))
}

/// Lint a tree held in memory with the configuration given as text (`None`: defaults),
/// reading nothing from disk under `root`: the `lint_repo` fuzz target runs the whole
/// pipeline through it.
pub fn lint_memory(
    root: PathBuf,
    tree: Arc<MemTree>,
    config_text: Option<&str>,
) -> Result<LintResult, LintError> {
    let map = Arc::new(SourceMap::new());
    let config = match config_text {
        Some(text) => config_from_text(".gitops-lint.yaml".to_string(), text.to_string(), &map)?,
        None => Config::default(),
    };
    let walk_opts = walk_options(&config)?;
    let walked = walk_tree(&tree, root.clone(), &walk_opts, &map);
    let fs = MemFs::new(tree, map.clone(), walk_opts.max_file_bytes);
    Ok(lint_walked(root, map, &config, &walked, &fs, None))
}

fn lint_walked(
    root: PathBuf,
    map: Arc<SourceMap>,
    config: &Config,
    walked: &WalkedRepo,
    fs: &dyn RepoFs,
    cache: Option<crate::remote::Cache>,
) -> LintResult {
    let mut findings = Vec::new();
    let remotes = crate::render::RemoteInputs::new(crate::remote::RemoteStore::open(fs, cache));
    findings.extend(crate::gitops::remote_render::lock_findings(
        &remotes,
        fs,
        yaml_syntax::ID,
    ));
    for w in &config.warnings {
        findings.push(
            Finding::new(yaml_syntax::ID, Severity::Warning, w.message.clone(), w.span)
                .label("ignored")
                .help("A pull request can change .gitops-lint.yaml, so it may only tighten limits; the workflow raises them with `--limit`."),
        );
    }
    for issue in &walked.issues {
        let file = map.add(SourceFile::new(issue.path.clone(), "", Origin::Virtual));
        findings.push(
            Finding::new(yaml_syntax::ID, Severity::Error, format!("{}: {}", issue.path, issue.message), Span::new(file, 0, 0))
                .label("not parsed")
                .help("Fix or exclude the file (`exclude:` in .gitops-lint.yaml); nothing in it is linted."),
        );
    }

    let chart_dirs: Vec<String> = walked
        .files
        .iter()
        .map(|&id| map.get(id).path.clone())
        .filter(|p| p == "Chart.yaml" || p.ends_with("/Chart.yaml"))
        .map(|p| {
            p.rsplit_once('/')
                .map(|(d, _)| d.to_string())
                .unwrap_or_default()
        })
        .collect();
    let yaml_files: Vec<FileId> = walked
        .files
        .iter()
        .copied()
        .filter(|&id| {
            let path = &map.get(id).path;
            // Scripts are read for `second-writer`, not parsed as YAML; templates of
            // Helm and of other tools are no manifests.
            !is_helm_template(path, &chart_dirs)
                && !is_foreign_template(path)
                && !crate::source::is_script(path)
        })
        .collect();
    let limits: &Limits = &config.yaml_limits;
    let parsed: Vec<(FileId, crate::yaml::Parsed)> = yaml_files
        .par_iter()
        .map(|&id| {
            let src = map.get(id);
            (id, parse_str(&src.text, id, limits))
        })
        .collect();
    let mut loaded = Vec::with_capacity(parsed.len());
    let mut yaml_errors = Vec::new();
    for (id, p) in parsed {
        let path = map.get(id).path.clone();
        if let Some(err) = p.error {
            yaml_errors.push((path.clone(), err));
        }
        loaded.push(LoadedFile {
            id,
            path,
            docs: p.docs,
        });
    }

    let budget = crate::render::RenderBudget {
        render_twice: config.setting("render-nondeterministic")
            != Some(&crate::config::RuleSetting::Off),
        // One count per lint, never shared with another lint of the same settings.
        archives: Default::default(),
        ..config.render_budget.clone()
    };
    let settings = ModelSettings {
        repo_urls: &config.repo_urls,
        budget: &budget,
        profile: &config.profile,
        remotes: &remotes,
    };
    let mut model = build_model(&loaded, fs, map.clone(), &root, &settings);
    model.platform = config.platform.clone();
    crate::gitops::sops::strip_decrypted(&mut model);
    // What the apps deploy (every file their objects come from) matters only to YAML errors.
    if !yaml_errors.is_empty() {
        let deployed = Deployed::of(&model);
        for (path, err) in yaml_errors {
            findings.push(yaml_error_finding(&path, err, deployed.contains(&path)));
        }
    }
    // The pipeline's own findings so far (`yaml-syntax`) are held to their declaration as
    // the checked rules are in `run_all`.
    let undeclared = rules::undeclared_severities(&findings, &map);
    findings.extend(undeclared);
    let mut checked = rules::run_all(&model);
    checked.extend(rules::checks::run(
        &model,
        &config.checks,
        config.check_limits,
    ));
    crate::gitops::remote_render::relocate(&mut checked, &model, &remotes);
    findings.extend(apply_deployment_policy(checked, &model));

    let (mut findings, suppressed) = apply_settings(findings, config, &map);
    findings.extend(unknown_rule_suppressions(&walked.files, config, &map));
    sort_findings(&mut findings, &map);
    let mut findings = crate::same_cause::merge_same_cause(findings);
    crate::same_cause::drop_render_failures_of_yaml_errors(&mut findings);
    scrub_secrets(&mut findings, &model);
    LintResult {
        map,
        root,
        findings,
        model,
        suppressed,
        config: config.clone(),
    }
}

/// A YAML error is an error where an app deploys the file (the controller fails on it);
/// elsewhere nothing is known to apply the file, so it is `info`.
fn yaml_error_finding(path: &str, err: crate::yaml::YamlError, deployed: bool) -> Finding {
    if deployed {
        return Finding::new(
            yaml_syntax::ID,
            Severity::Error,
            format!("{path}: {}", err.message),
            err.span,
        )
        .label("YAML error here")
        .help(
            "Kubernetes tools, Argo CD and Flux fail on this file; fix the YAML at this position.",
        );
    }
    Finding::new(
        yaml_syntax::ID,
        Severity::Info,
        format!("{path}: {} (no app in this repository deploys this file)", err.message),
        err.span,
    )
    .label("YAML error here")
    .help("Fix the YAML if a tool outside this repository applies the file; if it is another tool's template, exclude it (`exclude:` in .gitops-lint.yaml).")
}

/// The deployment policy, one for every rule: a finding about an app nothing in the
/// cluster applies (a standalone directory in a repo whose Argo CD or Flux apps do not reach
/// it — one-off Pods under `tools/`, CI fixtures, an archive of retired apps — or a Flux
/// object outside every source artifact) breaks no deployment, so it is reported at `info`,
/// saying why. In a repo without any Argo CD or Flux app, standalone objects are taken as
/// applied by something outside it (CI, a controller elsewhere) and keep their severity.
///
/// Also: a finding names its app's cluster only where the repo deploys to more than one, so
/// single-cluster keys (baselines, fingerprints) stay as they were.
fn apply_deployment_policy(mut findings: Vec<Finding>, model: &Model) -> Vec<Finding> {
    use crate::gitops::Controller;
    if model.clusters().len() <= 1 {
        for f in &mut findings {
            f.cluster = None;
        }
    }
    let deployed = model
        .apps
        .iter()
        .any(|a| a.controller() != Controller::None);
    if !deployed {
        return findings;
    }
    for f in &mut findings {
        if f.severity <= Severity::Info {
            continue;
        }
        let Some(name) = f.app.as_deref() else {
            continue;
        };
        let mut apps = model
            .apps
            .iter()
            .filter(|a| a.name == name)
            .filter(|a| f.app_decl.is_none() || a.span == f.app_decl)
            .filter(|a| f.cluster.is_none() || f.cluster.as_deref() == Some(a.cluster.name()))
            .peekable();
        if apps.peek().is_some() && apps.all(|a| model.applied_by_nothing(a)) {
            f.severity = Severity::Info;
            f.message
                .push_str(" (nothing in this repository deploys it, so it breaks no deployment)");
        }
    }
    findings
}

/// A parsed `# gitops-lint: ignore[a, b] reason` comment.
struct Suppression {
    rules: Vec<String>,
    reason: String,
}

fn suppression_in(comment: &str) -> Option<Suppression> {
    let rest = comment.trim().strip_prefix("gitops-lint:")?.trim();
    let rest = rest.strip_prefix("ignore[")?;
    let (ids, reason) = rest.split_once(']')?;
    Some(Suppression {
        rules: ids
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        reason: reason.trim().to_string(),
    })
}

/// Severities and `off` from config, config object ignores, inline suppressions.
fn apply_settings(
    findings: Vec<Finding>,
    config: &Config,
    map: &SourceMap,
) -> (Vec<Finding>, usize) {
    let mut out = Vec::with_capacity(findings.len());
    let mut suppressed = 0;
    let mut reasonless: Vec<Span> = Vec::new();
    for mut f in findings {
        match config.setting(f.rule) {
            Some(RuleSetting::Off) => continue,
            Some(RuleSetting::Severity(s)) => f.severity = *s,
            None => {}
        }
        if let Some(obj) = &f.object
            && config
                .ignore
                .iter()
                .any(|i| i.rule == f.rule && object_matches(&i.object, obj))
        {
            suppressed += 1;
            continue;
        }
        let file = map.get(f.primary.span.file);
        let line = file.line_of(f.primary.span.start as usize);
        let mut hit = false;
        for l in [line, line.saturating_sub(1)] {
            if l == 0 {
                continue;
            }
            let Some(s) = file.comment_on_line(l).and_then(suppression_in) else {
                continue;
            };
            if s.rules.iter().any(|r| r == f.rule || r == "*") {
                hit = true;
                if s.reason.is_empty() {
                    let r = file.line_range(l);
                    let text = &file.text[r.clone()];
                    let at = text
                        .find("gitops-lint:")
                        .map(|i| i.saturating_sub(2))
                        .unwrap_or(0);
                    reasonless.push(Span::new(f.primary.span.file, r.start + at, r.end));
                }
                break;
            }
        }
        if hit {
            suppressed += 1;
        } else {
            out.push(f);
        }
    }
    reasonless.sort();
    reasonless.dedup();
    let reasonless_setting = config.setting(suppression_without_reason::ID);
    for span in reasonless {
        if reasonless_setting == Some(&RuleSetting::Off) {
            break;
        }
        let severity = match reasonless_setting {
            Some(RuleSetting::Severity(s)) => *s,
            _ => suppression_without_reason::META.severity,
        };
        out.push(
            Finding::new(suppression_without_reason::ID, severity, "suppression comment gives no reason", span)
                .label("add a reason after the closing `]`")
                .help("Write why the finding does not apply: `# gitops-lint: ignore[rule-id] the HPA is disabled in this cluster`."),
        );
    }
    (out, suppressed)
}

/// Suppression comments that name a rule id the registry does not know: each is reported on
/// the id, with the closest known id as a suggestion (a typo silences nothing, so the finding
/// it meant to hide is still reported, and this says why).
fn unknown_rule_suppressions(files: &[FileId], config: &Config, map: &SourceMap) -> Vec<Finding> {
    let severity = match config.setting(suppression_unknown_rule::ID) {
        Some(RuleSetting::Off) => return Vec::new(),
        Some(RuleSetting::Severity(s)) => *s,
        None => suppression_unknown_rule::META.severity,
    };
    let known: Vec<&str> = rules::registry()
        .iter()
        .map(|r| r.meta.id)
        .chain(config.checks.iter().map(|c| c.id))
        .collect();
    let mut out = Vec::new();
    for &id in files {
        let file = map.get(id);
        let mut last_line = 0;
        for (pos, _) in file.text.match_indices("gitops-lint:") {
            let line = file.line_of(pos);
            if line == last_line {
                continue;
            }
            last_line = line;
            let Some(s) = file.comment_on_line(line).and_then(suppression_in) else {
                continue;
            };
            let range = file.line_range(line);
            let line_text = &file.text[range.clone()];
            let ids_at = line_text.find("ignore[").map(|i| i + "ignore[".len());
            for rule in s
                .rules
                .iter()
                .filter(|r| *r != "*" && !known.contains(&r.as_str()))
            {
                let start = ids_at
                    .and_then(|from| line_text[from..].find(rule.as_str()).map(|i| from + i))
                    .map(|i| range.start + i)
                    .unwrap_or(range.start);
                let span = Span::new(id, start, start + rule.len());
                let (label, help) = match crate::config::closest_id(rule, &known) {
                    Some(near) => (
                        format!("did you mean `{near}`?"),
                        format!("Write `ignore[{near}]`; `gitops-lint rules` lists the rule ids."),
                    ),
                    None => (
                        "no rule has this id".to_string(),
                        "`gitops-lint rules` lists the rule ids; fix the id or remove the comment."
                            .to_string(),
                    ),
                };
                out.push(
                    Finding::new(
                        suppression_unknown_rule::ID,
                        severity,
                        format!("suppression names unknown rule `{rule}`; it silences nothing"),
                        span,
                    )
                    .label(label)
                    .help(help),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::comment_in;

    fn lint_files(files: &[(&str, &str)], config: Option<&str>) -> LintResult {
        let mut tree = MemTree::new();
        for (path, text) in files {
            tree.insert(path, text.as_bytes().to_vec());
        }
        match lint_memory(PathBuf::from("repo"), Arc::new(tree), config) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// The findings the pipeline reports itself (`yaml-syntax`, the suppression rules) carry
    /// severities their rules declare, so none brings an `internal-error`.
    #[test]
    fn the_pipeline_rules_emit_declared_severities() {
        let files = [
            ("broken.yaml", "a: [1\n"),
            (
                "cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x # gitops-lint: ignore[no-such-rule]\n",
            ),
            (
                "job.yaml",
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  uid: abc # gitops-lint: ignore[committed-live-state]\n",
            ),
        ];
        let result = lint_files(&files, Some("limits:\n  max-file-bytes: 999999999999\n"));
        let seen: Vec<(&str, Severity)> = result
            .findings
            .iter()
            .map(|f| (f.rule, f.severity))
            .collect();
        for rule in [
            yaml_syntax::ID,
            suppression_without_reason::ID,
            suppression_unknown_rule::ID,
        ] {
            assert!(
                seen.iter().any(|(r, _)| *r == rule),
                "{rule} not reported: {seen:?}"
            );
        }
        assert!(
            seen.contains(&(yaml_syntax::ID, Severity::Warning))
                && seen.contains(&(yaml_syntax::ID, Severity::Info)),
            "the limit warning and the undeployed file's error: {seen:?}"
        );
        for f in &result.findings {
            let meta = rules::find(f.rule).map(|r| r.meta);
            assert!(
                meta.is_some_and(|m| m.allows(f.severity)) && f.rule != rules::internal_error::ID,
                "{} {}: {}",
                f.rule,
                f.severity.as_str(),
                f.message
            );
        }
    }
    #[test]
    fn suppression_comments() {
        let s = suppression_in("gitops-lint: ignore[hpa-replicas-conflict] pinned on purpose");
        assert!(s.as_ref().is_some_and(
            |s| s.rules == ["hpa-replicas-conflict"] && s.reason == "pinned on purpose"
        ));
        let s = suppression_in("gitops-lint: ignore[a, b]");
        assert!(s.is_some_and(|s| s.rules.len() == 2 && s.reason.is_empty()));
        assert!(suppression_in("just a comment").is_none());
        assert_eq!(
            comment_in("replicas: 3 # gitops-lint: ignore[x] y"),
            Some("gitops-lint: ignore[x] y")
        );
    }
}
