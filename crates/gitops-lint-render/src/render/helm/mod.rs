//! Native `helm template` (Helm 3.18 semantics), offline and without running chart code:
//! load the chart ([`chart`]), merge user values ([`strvals`], [`values`]), process
//! dependencies ([`deps`]) and coalesce ([`coalesce`]), validate `values.schema.json`
//! ([`schema`]), render every template through the Go template engine ([`render`]) with
//! Helm's built-in objects ([`builtins`]), order and frame the output as helm prints it
//! ([`manifest`]), and map every output node back to its template line and values line
//! ([`provenance`]).
//!
//! Entry points: [`template`] (objects + issues for the linter), [`template_to_string`]
//! (exactly helm's stdout), [`parse_helm_template_args`] and [`cli_fs`] for
//! `gitops-lint helm template ARGS...`:
//!
//! ```no_run
//! # use gitops_lint_render::render::helm::*;
//! # fn main() -> Result<(), String> {
//! let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
//! let fs = cli_fs(&cwd)?;
//! let args: Vec<String> = std::env::args().skip(3).collect(); // after `gitops-lint helm template`
//! let (chart, mut opts) = parse_helm_template_args(&args).map_err(|e| format!("Error: {e}"))?;
//! opts.abs_root = Some(cwd.display().to_string()); // helm prints absolute paths in a few errors
//! let run = run(&fs, &chart, &opts, false);
//! print!("{}", run.stdout);
//! eprint!("{}", run.stderr());
//! std::process::exit(run.exit_code());
//! # }
//! ```
//!
//! Values-file numbers are `json.Number` objects ([`values::JsonNumber`]) as in Helm 3.18.0:
//! `0` is true in `if`, `kindIs "string"` holds and `1000000` prints as written; the
//! function bridge (`yamlout`) converts them for Sprig's numeric functions and serialisers.

pub mod args;
pub mod builtins;
pub mod chart;
pub mod coalesce;
pub mod deps;
pub mod glob;
pub mod ignore;
pub mod layers;
pub mod manifest;
mod parse_cache;
pub mod provenance;
pub mod render;
pub mod schema;
pub mod semver;
pub mod strvals;
pub mod values;
mod yamlout;

pub use args::{HelmCli, TEMPLATE_HELP, parse_helm_cli, parse_helm_template_args, set_file_pairs};

use crate::hash::FastMap as HashMap;
use crate::object::Object;
use crate::render::gotmpl::value::{Map, Value};
use crate::render::gotmpl::{ExecOptions, Templates};
use crate::render::{IssueKind, RenderIssue, RenderOutput};
use crate::source::{DiskFs, FileId, Origin, RepoFs, SourceFile, SourceMap, Span};
use crate::yaml::{Limits, parse_str};
use builtins::{Capabilities, KubeVersion, release};
use chart::Chart;
use manifest::Manifest;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use values::{ValueOrigins, parse_values_text};

/// What `helm template` takes besides the chart.
#[derive(Clone, Debug)]
pub struct TemplateOptions {
    pub release_name: String,
    pub namespace: String,
    /// `-f` files, repo-relative (CLI mode: relative to the [`cli_fs`] root), merged in order.
    pub value_files: Vec<String>,
    pub set: Vec<String>,
    pub set_string: Vec<String>,
    pub set_json: Vec<String>,
    pub set_literal: Vec<String>,
    /// Where each `--set`/`--set-string` path was written (Argo CD `helm.parameters`), as
    /// (name, span, label): provenance only.
    pub set_origins: Vec<(String, Span, String)>,
    /// Values given inline (Argo CD `helm.values` / `valuesObject`), applied after the files.
    pub values_yaml_inline: Vec<String>,
    /// Values a controller layers after those, in its order (Flux `valuesFrom`, `values`).
    pub values_layers: Vec<layers::ValuesLayer>,
    pub kube_version: Option<String>,
    pub api_versions: Vec<String>,
    pub include_crds: bool,
    pub skip_crds: bool,
    pub skip_tests: bool,
    pub skip_schema_validation: bool,
    pub no_hooks: bool,
    pub is_upgrade: bool,
    pub show_only: Vec<String>,
    /// `--name-template`: the release name is this template's output.
    pub name_template: Option<String>,
    /// Absolute directory of the filesystem root, for the few messages where helm prints
    /// absolute paths (CLI mode sets it to the cwd; `None` prints repo-relative paths).
    pub abs_root: Option<String>,
    /// `--debug`: when the rendered YAML does not parse, print the raw rendered files too.
    pub debug: bool,
    /// Seed, clock and zone for random and time functions (the render-twice check).
    pub clock: Option<render::RenderClock>,
    /// Resource limits of this render (`limits:` in `.gitops-lint.yaml`).
    pub budget: crate::render::RenderBudget,
    /// Fetched charts: remote dependencies resolve from here as `helm dependency build`
    /// would put them in `charts/`.
    pub remotes: crate::render::RemoteInputs,
    /// Render what is vendored when dependencies are missing (lint): each missing one is an
    /// issue naming it, and the parent chart's own templates still render. `helm template`
    /// fails instead (the CLI's parity mode leaves this off).
    pub partial_dependencies: bool,
}

impl Default for TemplateOptions {
    fn default() -> Self {
        TemplateOptions {
            release_name: "release-name".into(),
            namespace: "default".into(),
            value_files: Vec::new(),
            set: Vec::new(),
            set_string: Vec::new(),
            set_json: Vec::new(),
            set_literal: Vec::new(),
            set_origins: Vec::new(),
            values_yaml_inline: Vec::new(),
            values_layers: Vec::new(),
            kube_version: None,
            api_versions: Vec::new(),
            include_crds: false,
            skip_crds: false,
            skip_tests: false,
            skip_schema_validation: false,
            no_hooks: false,
            is_upgrade: false,
            show_only: Vec::new(),
            name_template: None,
            abs_root: None,
            debug: false,
            clock: None,
            budget: crate::render::RenderBudget::default(),
            remotes: crate::render::RemoteInputs::default(),
            partial_dependencies: false,
        }
    }
}

/// A failed `helm template`: helm's message, and where a person fixes it.
#[derive(Clone, Debug)]
pub struct Failure {
    pub message: String,
    /// helm appends "Use --debug flag to render out invalid YAML" (failures after rendering began).
    pub debug_hint: bool,
    pub span: Option<Span>,
    pub kind: IssueKind,
    /// The missing remote input an unrenderable failure is about ([`RenderIssue::input`]).
    pub input: Option<crate::render::MissingInput>,
}

impl Failure {
    fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            debug_hint: false,
            span: None,
            kind: IssueKind::Failed,
            input: None,
        }
    }
    fn at(mut self, span: Option<Span>) -> Failure {
        self.span = span;
        self
    }
}

/// Everything one run produced: helm's stdout and stderr texts plus the parsed objects.
pub struct Run {
    pub stdout: String,
    pub warnings: Vec<String>,
    pub failure: Option<Failure>,
    pub objects: Vec<Object>,
    /// Remote dependencies the chart names (`helm dependency build` would download them).
    pub remotes: Vec<crate::render::RemoteUse>,
    /// The templates read the seed, the clock or the zone ([`render::Rendered::clock_read`]).
    pub clock_read: bool,
    /// Dependencies left out of a partial render ([`TemplateOptions::partial_dependencies`]),
    /// one issue each: the render went on without them.
    pub left_out: Vec<RenderIssue>,
}

impl Run {
    /// helm's stderr: warnings, then `Error: ...` (with the `--debug` hint where helm adds it).
    pub fn stderr(&self) -> String {
        let mut s = String::new();
        for w in &self.warnings {
            s.push_str(&format!("WARNING: {w}\n"));
        }
        if let Some(f) = &self.failure {
            s.push_str(&format!("Error: {}\n", f.message));
            if f.debug_hint {
                s.push_str("\nUse --debug flag to render out invalid YAML\n");
            }
        }
        s
    }
    pub fn exit_code(&self) -> i32 {
        if self.failure.is_some() { 1 } else { 0 }
    }
}

/// Render a chart for the linter: objects (spans in templates and values files) and issues.
pub fn template(fs: &dyn RepoFs, chart_dir: &str, opts: &TemplateOptions) -> RenderOutput {
    template_with_text(fs, chart_dir, opts).output
}

/// A lint render with what a second render needs to be compared with it.
pub struct TextRender {
    pub output: RenderOutput,
    /// What `helm template` prints for it (empty on failure): a second render printing the
    /// same text renders the same objects.
    pub text: String,
    /// The templates read the seed, the clock or the zone: only then can a render with
    /// another [`render::RenderClock`] print anything else.
    pub clock_read: bool,
}

/// [`template`], with its text and whether it read the clock ([`TextRender`]).
pub fn template_with_text(fs: &dyn RepoFs, chart_dir: &str, opts: &TemplateOptions) -> TextRender {
    let mut run = run(fs, chart_dir, opts, true);
    let text = if run.failure.is_none() {
        std::mem::take(&mut run.stdout)
    } else {
        String::new()
    };
    let mut out = RenderOutput {
        objects: run.objects,
        issues: run.left_out,
        remotes: run.remotes,
        kustomize_dirs: Vec::new(),
    };
    if let Some(f) = run.failure {
        let span = f.span.unwrap_or_else(|| chart_span(fs, chart_dir));
        out.issues.push(RenderIssue {
            kind: f.kind,
            input: f.input,
            span,
            message: f.message,
        });
    }
    TextRender {
        output: out,
        text,
        clock_read: run.clock_read,
    }
}

/// Exactly what `helm template` prints on stdout, or its stderr text on failure.
pub fn template_to_string(
    fs: &dyn RepoFs,
    chart_dir: &str,
    opts: &TemplateOptions,
) -> Result<String, String> {
    let run = run(fs, chart_dir, opts, false);
    if run.failure.is_some() {
        return Err(run.stderr());
    }
    Ok(run.stdout)
}

/// A filesystem for CLI mode (`gitops-lint helm template ...`): rooted at the current
/// directory, so chart and `-f` paths relative to the cwd work as they do for helm.
/// Paths above the cwd are refused by [`RepoFs`].
pub fn cli_fs(cwd: &Path) -> Result<DiskFs, String> {
    let root = std::fs::canonicalize(cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
    Ok(DiskFs::new(root, Arc::new(SourceMap::new()), 64 << 20))
}

fn chart_span(fs: &dyn RepoFs, chart_dir: &str) -> Span {
    let p = format!("{}/Chart.yaml", chart_dir.trim_end_matches('/'));
    match fs.read(p.trim_start_matches('/')) {
        Ok(id) => Span::new(id, 0, 0),
        Err(_) => Span::default(),
    }
}

/// Helm's release-name rule (`chartutil.ValidateReleaseName`).
fn validate_release_name(name: &str) -> Result<(), String> {
    // Compiled once per process: a render per chart case would otherwise compile it again.
    static RELEASE_NAME: std::sync::OnceLock<Result<regex::Regex, String>> =
        std::sync::OnceLock::new();
    let re = RELEASE_NAME
        .get_or_init(|| {
            regex::Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)?;
    if name.is_empty() {
        return Err("no name provided".into());
    }
    if name.len() > 53 || !re.is_match(name) {
        return Err(format!(
            "release name {name:?}: invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53"
        ));
    }
    Ok(())
}

/// `--name-template`: executed with no data, like Helm's `TemplateName`.
fn name_from_template(text: &str) -> Result<String, String> {
    let mut set = Templates::new(Rc::new(yamlout::lookup_func));
    set.parse("name-template", text).map_err(|e| e.message)?;
    let mut env = yamlout::func_env();
    let opts = ExecOptions {
        record_segments: false,
        ..ExecOptions::default()
    };
    set.execute("name-template", Value::Nil, &opts, &mut env)
        .map(|o| o.text)
        .map_err(|e| e.message)
}

/// The user-supplied values (`MergeValues`): files, then --set-json, --set, --set-string.
/// An absolute path the person typed, as the root-relative path the filesystem reads
/// (`abs_root` is where the CLI's filesystem is rooted); messages keep what was typed.
fn under_root(opts: &TemplateOptions, path: &str) -> String {
    let Some(root) = opts.abs_root.as_deref().filter(|_| path.starts_with('/')) else {
        return path.to_string();
    };
    let root = root.trim_end_matches('/');
    match path.strip_prefix(root) {
        Some("") => ".".to_string(),
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/').to_string(),
        _ => path.to_string(),
    }
}

fn user_values(
    fs: &dyn RepoFs,
    opts: &TemplateOptions,
    origins: &mut ValueOrigins,
) -> Result<Map, Failure> {
    let mut base = Map::new();
    let mut docs: Vec<(String, Option<FileId>, String)> = Vec::new();
    for path in &opts.value_files {
        match fs.read(&under_root(opts, path)) {
            Ok(id) => {
                let text = fs.source_map().get(id).text.to_string();
                docs.push((path.clone(), Some(id), text));
            }
            Err(e) => {
                let msg = match e {
                    crate::source::FsError::NotFound(_) => {
                        format!("open {path}: no such file or directory")
                    }
                    other => other.to_string(),
                };
                return Err(Failure {
                    kind: IssueKind::Unrenderable,
                    ..Failure::new(msg)
                });
            }
        }
    }
    for (i, text) in opts.values_yaml_inline.iter().enumerate() {
        let id = fs.source_map().add(SourceFile::new(
            format!("<inline values {}>", i + 1),
            text.clone(),
            Origin::Virtual,
        ));
        docs.push((format!("inline values {}", i + 1), Some(id), text.clone()));
    }
    for (path, id, text) in docs {
        let doc = parse_values_text(&text, id).map_err(|e| {
            Failure::new(format!("failed to parse {path}: {e}")).at(id.map(|f| Span::new(f, 0, 0)))
        })?;
        for root in doc.roots.iter() {
            origins.add(&[], root, &format!("value from {path}"));
        }
        base = values::merge_maps(&base, &doc.map);
    }
    for layer in &opts.values_layers {
        base = layers::apply(base, layer, origins).map_err(Failure::new)?;
    }
    let dest = Value::map(base);
    for v in &opts.set_json {
        strvals::parse_json(v, &dest)
            .map_err(|_| Failure::new(format!("failed parsing --set-json data {v}")))?;
    }
    for v in &opts.set {
        strvals::parse_into(v, &dest)
            .map_err(|e| Failure::new(format!("failed parsing --set data: {e}")))?;
    }
    for v in &opts.set_string {
        strvals::parse_into_string(v, &dest)
            .map_err(|e| Failure::new(format!("failed parsing --set-string data: {e}")))?;
    }
    for (name, span, label) in &opts.set_origins {
        origins.set_path(&layers::origins_key(name), *span, label);
    }
    for v in &opts.set_literal {
        if let Some((k, val)) = v.split_once('=') {
            let path: Vec<&str> = k.split('.').collect();
            let mut cur = dest.clone();
            for (i, p) in path.iter().enumerate() {
                if i + 1 == path.len() {
                    values::set(&cur, p, Value::str(val));
                } else {
                    let next = match values::get(&cur, p) {
                        Some(m @ Value::Map(_)) => m,
                        _ => {
                            let m = Value::map(Map::new());
                            values::set(&cur, p, m.clone());
                            m
                        }
                    };
                    cur = next;
                }
            }
        }
    }
    Ok(match dest {
        Value::Map(m) => m.borrow().clone(),
        _ => Map::new(),
    })
}

/// Provenance of chart defaults: deepest subcharts first (lowest precedence), then parents.
fn chart_origins(
    chart: &Chart,
    scope: &[String],
    path: &str,
    map: &SourceMap,
    out: &mut Vec<(Vec<String>, crate::yaml::Node, String)>,
) {
    for dep in &chart.dependencies {
        let mut s = scope.to_vec();
        s.push(dep.name().to_string());
        chart_origins(dep, &s, &format!("{path}/charts/{}", dep.name()), map, out);
    }
    let label = match chart.values.file {
        Some(id) => format!("value from {}", map.path(id)),
        None => format!("value from {path}/values.yaml"),
    };
    for root in chart.values.roots.iter() {
        out.push((scope.to_vec(), root.clone(), label.clone()));
    }
}

fn find_span_of_template(
    fs: &dyn RepoFs,
    entries: &[render::TemplateEntry],
    at: &Option<(String, usize)>,
) -> Option<Span> {
    let (name, offset) = at.as_ref()?;
    let e = entries.iter().find(|e| &e.name == name)?;
    let file = e.file?;
    let text = fs.source_map().get(file);
    let start = (*offset).min(text.text.len());
    let line = text.line_of(start);
    let range = text.line_range(line);
    Some(Span::new(file, start, range.end.max(start)))
}

/// The whole `helm template` pipeline.
pub fn run(fs: &dyn RepoFs, chart_dir: &str, opts: &TemplateOptions, want_objects: bool) -> Run {
    chart::with_lint_total(&opts.budget.archives, || {
        run_counted(fs, chart_dir, opts, want_objects)
    })
}

fn run_counted(
    fs: &dyn RepoFs,
    chart_dir: &str,
    opts: &TemplateOptions,
    want_objects: bool,
) -> Run {
    let mut run = Run {
        stdout: String::new(),
        warnings: Vec::new(),
        failure: None,
        objects: Vec::new(),
        remotes: Vec::new(),
        clock_read: false,
        left_out: Vec::new(),
    };
    if let Err(mut f) = run_inner(fs, chart_dir, opts, want_objects, &mut run) {
        // With dependencies left out, a template that fails may only miss what they define
        // (a named template, a value an import brings): it fails offline, not online.
        if f.kind == IssueKind::Failed
            && let Some(first) = run.left_out.first()
        {
            f.kind = IssueKind::NotApplied;
            f.input = first.input.clone();
            f.message = format!(
                "{} (the chart is rendered without its missing dependencies, which may define what fails)",
                f.message
            );
        }
        run.failure = Some(f);
        if !opts.debug {
            run.stdout.clear();
        }
    }
    run
}

fn run_inner(
    fs: &dyn RepoFs,
    chart_dir: &str,
    opts: &TemplateOptions,
    want_objects: bool,
    run: &mut Run,
) -> Result<(), Failure> {
    let typed = chart_dir.trim_end_matches('/');
    let chart_dir = under_root(opts, chart_dir);
    let chart_dir = chart_dir.trim_end_matches('/');
    // NameAndChart
    let release_name = match &opts.name_template {
        Some(t) => name_from_template(t).map_err(Failure::new)?,
        None => opts.release_name.clone(),
    };
    // LocateChart
    if !fs.is_dir(chart_dir) && !fs.is_file(chart_dir) {
        return Err(Failure {
            kind: IssueKind::Unrenderable,
            ..Failure::new(format!("path \"{typed}\" not found"))
        });
    }
    let mut origins = ValueOrigins::default();
    let mut user_origins = ValueOrigins::default();
    let user = user_values(fs, opts, &mut user_origins)?;
    let display = match &opts.abs_root {
        Some(root) => format!("{}/{chart_dir}", root.trim_end_matches('/')),
        None => chart_dir.to_string(),
    };
    let mut chart = chart::load(fs, chart_dir, &display)
        .map_err(|e| Failure::new(e).at(Some(chart_span(fs, chart_dir))))?;
    let chart_yaml_span = chart.chart_yaml.map(|id| Span::new(id, 0, 0));
    match chart.metadata.chart_type.as_str() {
        "" | "application" => {}
        other => {
            return Err(
                Failure::new(format!("{other} charts are not installable")).at(chart_yaml_span)
            );
        }
    }
    if chart.metadata.deprecated {
        run.warnings.push("This chart is deprecated".into());
    }
    deps::fetched_dependencies(fs, &mut chart, opts, &mut run.remotes, &mut run.left_out)?;
    if opts.partial_dependencies {
        deps::local_file_dependencies(fs, &mut chart, chart_dir);
    }
    if let Err(missing) = deps::check_dependencies(&chart) {
        if opts.partial_dependencies {
            run.left_out.extend(deps::leave_out_missing(
                &mut chart,
                &missing,
                chart_yaml_span,
            ));
        } else {
            let span = chart
                .metadata
                .dependencies
                .iter()
                .find(|d| missing.contains(&d.name))
                .map(|d| d.span)
                .or(chart_yaml_span);
            return Err(Failure {
                kind: IssueKind::Unrenderable,
                ..Failure::new(format!(
                    "An error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: {}",
                    missing.join(", ")
                ))
                .at(span)
            });
        }
    }
    validate_release_name(&release_name).map_err(Failure::new)?;
    deps::process_dependencies(&mut chart, &user)
        .map_err(|e| Failure::new(e).at(chart_yaml_span))?;
    // Capabilities
    let kube = match &opts.kube_version {
        Some(v) => KubeVersion::parse(v)
            .map_err(|e| Failure::new(format!("invalid kube version '{v}': {e}")))?,
        None => KubeVersion::default_version(),
    };
    let caps = Rc::new(Capabilities::new(kube.clone(), &opts.api_versions));
    // ToRenderValues
    let vals = coalesce::coalesce_values(&chart, &user)
        .map_err(|e| Failure::new(e).at(chart_yaml_span))?;
    if !opts.skip_schema_validation
        && let Err(e) = schema::validate_chart(&chart, &vals)
    {
        let span = chart
            .schema
            .as_ref()
            .and_then(|s| s.file)
            .map(|f| Span::new(f, 0, 0))
            .or(chart_yaml_span);
        return Err(Failure::new(format!(
            "values don't meet the specifications of the schema(s) in the following chart(s):\n{e}"
        ))
        .at(span));
    }
    let mut top = Map::new();
    top.insert("Release".into(), {
        let r = release(&release_name, &opts.namespace);
        if opts.is_upgrade {
            values::set(&r, "IsUpgrade", Value::Bool(true));
            values::set(&r, "IsInstall", Value::Bool(false));
        }
        r
    });
    top.insert("Values".into(), vals);
    let top = Value::map(top);
    // From here on helm has a release, and failures carry the --debug hint.
    let hint = |f: Failure| Failure {
        debug_hint: true,
        ..f
    };
    if !chart.metadata.kube_version.is_empty()
        && !semver::is_compatible_range(&chart.metadata.kube_version, &kube.version)
    {
        return Err(hint(
            Failure::new(format!(
                "chart requires kubeVersion: {} which is incompatible with Kubernetes {}",
                chart.metadata.kube_version, kube.version
            ))
            .at(chart_yaml_span),
        ));
    }
    let mut entries = Vec::new();
    render::all_templates(&chart, &top, &caps, &mut entries);
    render::sort_templates(&mut entries);
    let rendered = render::render_templates(
        &entries,
        &render::RenderLimits {
            clock: opts.clock,
            ..render::RenderLimits::from_budget(&opts.budget)
        },
        want_objects,
    )
    .map_err(|f| {
        let span = find_span_of_template(fs, &entries, &f.at).or(chart_yaml_span);
        hint(Failure::new(f.message).at(span))
    })?;
    run.clock_read = rendered.clock_read;
    let rendered = rendered.outputs;
    // A chart file read through `range .Files` or printed that could not be read: Helm
    // would have failed loading it.
    if let Some((name, why)) = chart.unreadable_file() {
        return Err(
            Failure::new(format!("cannot load chart file {name}: {why}")).at(chart_yaml_span),
        );
    }
    // Everything rendered, keyed by template name; NOTES.txt is not a manifest.
    let mut by_name: Vec<(usize, &crate::render::gotmpl::Output)> = rendered
        .iter()
        .filter(|(i, _)| !entries[*i].name.ends_with("NOTES.txt"))
        .map(|(i, o)| (*i, o))
        .collect();
    by_name.sort_by(|a, b| entries[a.0].name.cmp(&entries[b.0].name));
    let mut manifests: Vec<Placed> = Vec::new();
    for (i, out) in &by_name {
        let e = &entries[*i];
        if render::is_partial(&e.name) || out.text.trim().is_empty() {
            continue;
        }
        let parsed = manifest::file_manifests(&e.name, &out.text);
        if parsed.is_err() && opts.debug {
            // helm returns every rendered file as one blob to help debugging.
            let mut blob = String::new();
            for (j, o) in &by_name {
                if !o.text.trim().is_empty() && !render::is_partial(&entries[*j].name) {
                    blob.push_str(&format!(
                        "---\n# Source: {}\n{}\n",
                        entries[*j].name, o.text
                    ));
                }
            }
            run.stdout = format!("{}\n", blob.trim());
        }
        let list =
            parsed.map_err(|m| hint(Failure::new(m).at(e.file.map(|f| Span::new(f, 0, 0)))))?;
        manifests.extend(list.into_iter().map(|m| (m, *i)));
    }
    let (mut hooks, mut generic): (Vec<Placed>, Vec<Placed>) = manifests
        .into_iter()
        .partition(|(m, _)| !m.hooks.is_empty());
    sort_pairs(&mut generic);
    sort_pairs(&mut hooks);
    // The release manifest, then hooks, as cmd/helm/template.go prints them.
    let generic_count = generic.len();
    let printed: Vec<Placed> = generic
        .into_iter()
        .chain(
            hooks
                .into_iter()
                .filter(|(m, _)| !(opts.no_hooks || (opts.skip_tests && m.is_test_hook()))),
        )
        .collect();
    let mut body = String::new();
    let mut crd_texts: Vec<(String, String)> = Vec::new();
    if opts.include_crds {
        collect_crds(&chart, chart.name(), &mut crd_texts)
            .map_err(|e| Failure::new(e).at(chart_yaml_span))?;
    }
    for (name, text) in &crd_texts {
        push_document(&mut body, name, text);
    }
    for (m, _) in &printed[..generic_count] {
        push_document(&mut body, &m.source, &m.content);
    }
    // `body` starts with `---` or is empty: trimming it is cutting its trailing space.
    body.truncate(body.trim_end().len());
    body.push('\n');
    let mut stdout = body;
    for (m, _) in &printed[generic_count..] {
        push_document(&mut stdout, &m.source, &m.content);
    }
    let mut shown: Option<Vec<String>> = None;
    if !opts.show_only.is_empty() {
        let docs: Vec<String> = manifest::split_manifests(&stdout)
            .into_iter()
            .map(|r| stdout[r].to_string())
            .collect();
        let mut out = String::new();
        let mut names = Vec::new();
        for pattern in &opts.show_only {
            let pattern = pattern.replace('\\', "/");
            let mut missing = true;
            for d in &docs {
                let Some(rest) = d.strip_prefix("# Source: ") else {
                    continue;
                };
                let first = rest.lines().next().unwrap_or("");
                let Some((_, path)) = first.split_once('/') else {
                    continue;
                };
                if !glob::go_match(&pattern, path) {
                    continue;
                }
                out.push_str(&format!("---\n{d}\n"));
                names.push(first.to_string());
                missing = false;
            }
            if missing {
                return Err(hint(Failure::new(format!(
                    "could not find template {pattern} in chart"
                ))));
            }
        }
        stdout = out;
        shown = Some(names);
    }
    run.stdout = stdout;
    if want_objects {
        build_objects(
            fs,
            &chart,
            &entries,
            &rendered,
            printed,
            &crd_texts,
            &user_origins,
            &mut origins,
            shown.as_deref(),
            run,
        );
    }
    Ok(())
}

/// A manifest and the index of the template entry that rendered it.
type Placed = (Manifest, usize);

/// Helm's stable sort by kind (install order, unknown kinds last by name).
fn sort_pairs(items: &mut [Placed]) {
    items.sort_by(|a, b| manifest::kind_cmp(&a.0.kind, &b.0.kind));
}

/// `---`, the `# Source:` line and the document, as `helm template` frames each one;
/// appended in pieces (a `format!` per document copied every manifest twice).
fn push_document(out: &mut String, source: &str, text: &str) {
    for piece in ["---\n# Source: ", source, "\n", text, "\n"] {
        out.push_str(piece);
    }
}

fn collect_crds(
    chart: &Chart,
    full_path: &str,
    out: &mut Vec<(String, String)>,
) -> Result<(), String> {
    for f in chart.crd_files() {
        let name = format!("{full_path}/{}", f.name);
        let text = f
            .text()
            .map_err(|e| format!("cannot load chart file {name}: {e}"))?;
        out.push((name, text.into_owned()));
    }
    for dep in &chart.dependencies {
        collect_crds(dep, &format!("{full_path}/charts/{}", dep.name()), out)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn build_objects(
    fs: &dyn RepoFs,
    chart: &Chart,
    entries: &[render::TemplateEntry],
    rendered: &[(usize, crate::render::gotmpl::Output)],
    printed: Vec<Placed>,
    crds: &[(String, String)],
    user_origins: &ValueOrigins,
    origins: &mut ValueOrigins,
    shown: Option<&[String]>,
    run: &mut Run,
) {
    let map = fs.source_map();
    let mut chart_roots = Vec::new();
    chart_origins(chart, &[], chart.name(), map, &mut chart_roots);
    for (scope, root, label) in &chart_roots {
        origins.add(scope, root, label);
    }
    origins.extend(user_origins);
    let index = provenance::TemplateIndex {
        files: entries
            .iter()
            .map(|e| (e.name.clone(), (e.file, e.scope.clone())))
            .collect::<crate::hash::FastMap<_, _>>(),
        map,
        origins,
    };
    let outputs: HashMap<usize, &crate::render::gotmpl::Output> =
        rendered.iter().map(|(i, o)| (*i, o)).collect();
    let visible = |source: &str| match shown {
        None => true,
        Some(names) => names.iter().any(|n| n == source),
    };
    if chart_crds_visible(shown) {
        for (name, text) in crds {
            let id = map.add(SourceFile::new(name.clone(), text.clone(), Origin::Virtual));
            let docs = parse_str(text, id, &Limits::default()).docs;
            push_docs(id, docs.into_iter().map(|d| d.root), None, run);
        }
    }
    for (m, i) in printed {
        if !visible(&m.source) {
            continue;
        }
        let id = map.add(SourceFile::new(
            format!("{} (rendered)", m.source),
            m.content,
            Origin::Virtual,
        ));
        let mapping = outputs.get(&i).map(|o| (&index, *o, m.range.start));
        push_docs(id, m.docs, mapping, run);
    }
}

fn chart_crds_visible(shown: Option<&[String]>) -> bool {
    shown.is_none()
}

/// A document's objects, in the file `id` (its rendered text) and, given the template's
/// output, traced back to the template and values lines that printed them.
fn push_docs(
    id: FileId,
    roots: impl IntoIterator<Item = crate::yaml::Node>,
    mapping: Option<(
        &provenance::TemplateIndex<'_>,
        &crate::render::gotmpl::Output,
        usize,
    )>,
    run: &mut Run,
) {
    for mut root in roots {
        root.set_file(id);
        if let Some((index, output, start)) = mapping {
            index.map_node(output, start, &mut root);
        }
        if let Some(obj) = Object::from_node(root) {
            run.objects.push(obj);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn release_names_follow_helms_rule() {
        for ok in ["a", "my-app", "app.v1", "0x"] {
            assert_eq!(super::validate_release_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "App", "-a", "a-", "a..b", &"a".repeat(54)] {
            assert!(super::validate_release_name(bad).is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod path_tests {
    use super::{TemplateOptions, under_root};

    #[test]
    fn absolute_paths_under_the_root_are_read_relative_to_it() {
        let opts = TemplateOptions {
            abs_root: Some("/srv/ci".into()),
            ..TemplateOptions::default()
        };
        assert_eq!(under_root(&opts, "/srv/ci/chart"), "chart");
        assert_eq!(under_root(&opts, "/srv/ci"), ".");
        assert_eq!(
            under_root(&opts, "/srv/ciphers/x.yaml"),
            "/srv/ciphers/x.yaml"
        );
        assert_eq!(under_root(&opts, "values.yaml"), "values.yaml");
        let at_root = TemplateOptions {
            abs_root: Some("/".into()),
            ..TemplateOptions::default()
        };
        assert_eq!(
            under_root(&at_root, "/tmp/x/values.yaml"),
            "tmp/x/values.yaml"
        );
    }
}
