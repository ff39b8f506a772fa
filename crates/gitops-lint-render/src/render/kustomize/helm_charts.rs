//! `helmCharts:` (kustomize's HelmChartInflationGenerator) for charts vendored in the
//! repository, rendered with the crate's own `helm template` instead of a helm binary.
//!
//! kustomize v5.5 looks for the chart in `<chartHome>/<name>`, or in
//! `<chartHome>/<name>-<version>/<name>` when both `version` and `repo` are set, with
//! `chartHome` (`helmGlobals.chartHome`, default `charts`) relative to the kustomization. A
//! chart that is not there would be pulled: that is an unrenderable input offline.
//!
//! Values reach helm as kustomize passes them: one values file (`valuesFile`, default the
//! chart's `values.yaml`) combined with `valuesInline` by `valuesMerge` (`override`: inline
//! wins, `merge`: the file wins, `replace`: inline only), then `additionalValuesFiles`.
//! Each of them is given to the renderer as a values file in that order, so a value keeps
//! the line it was written on as its provenance.

use super::acc::{Acc, Builder, Fail, failed, unrenderable};
use super::generators;
use super::kustomization::{Item, Kustomization, display_dir, join};
use super::resource::{Resource, SourceInfo};
use super::tree;
use crate::remote::RemoteRef;
use crate::render::helm::{self, TemplateOptions};
use crate::render::{Fetched, RemoteUse};
use crate::source::{FileId, FsError, Origin, RepoFs, SourceFile, SourceMap, Span};
use crate::yaml::Node;

const DEFAULT_CHART_HOME: &str = "charts";
const MERGE_OPTIONS: [&str; 3] = ["merge", "override", "replace"];

pub fn run(b: &mut Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    let charts = k.seq("helmCharts");
    if charts.is_empty() {
        return Ok(());
    }
    let chart_home = chart_home(b, k)?;
    for entry in charts {
        for r in render_entry(b, k, entry, &chart_home)? {
            generators::add(b, acc, r)?;
        }
    }
    Ok(())
}

/// `helmGlobals.chartHome` as a repo path (it must stay inside the repository, and under the
/// kustomization unless load restrictions are off).
fn chart_home(b: &Builder, k: &Kustomization) -> Result<(String, Span), Fail> {
    let node = k
        .get("helmGlobals")
        .and_then(|g| g.get("chartHome"))
        .filter(|n| tree::text(n).is_some_and(|t| !t.is_empty()));
    let (text, span) = match node {
        Some(n) => (tree::text(n).unwrap_or_default(), n.span),
        None => (DEFAULT_CHART_HOME.to_string(), k.span_of("helmCharts")),
    };
    let item = Item { text, span };
    let path = b.resolve(k, &item)?;
    b.check_file_restriction(k, &path, &item)?;
    Ok((path, span))
}

fn text_of(entry: &Node, key: &str) -> String {
    entry.get(key).and_then(tree::text).unwrap_or_default()
}

fn render_entry(
    b: &Builder,
    k: &Kustomization,
    entry: &Node,
    (chart_home, home_span): &(String, Span),
) -> Result<Vec<Resource>, Fail> {
    let name = text_of(entry, "name");
    if name.is_empty() {
        return Err(failed(
            entry.span,
            "helmCharts entry: chart name cannot be empty",
        ));
    }
    let (version, repo) = (text_of(entry, "version"), text_of(entry, "repo"));
    let home = if !version.is_empty() && !repo.is_empty() {
        format!("{chart_home}/{name}-{version}")
    } else {
        chart_home.clone()
    };
    let mut chart_dir = join(&home, &name).unwrap_or_default();
    if !b.fs.is_dir(&chart_dir) {
        if repo.is_empty() {
            return Err(failed(
                entry.span,
                format!(
                    "helmCharts entry '{name}': no repo specified for pull, no chart found at '{chart_dir}'"
                ),
            ));
        }
        let reference = if repo.starts_with("oci://") {
            RemoteRef::oci(&repo, &name, &version)
        } else {
            RemoteRef::helm(&repo, &name, &version)
        };
        b.remotes.borrow_mut().push(RemoteUse {
            reference: reference.clone(),
            span: entry.get("name").map(|n| n.span).unwrap_or(entry.span),
            // `helm pull` without `--version`: the newest chart, whichever that is today.
            floats: version.is_empty(),
        });
        let why = match b.opts.remotes.chart(&reference) {
            Fetched::Ready { root } => {
                chart_dir = root;
                None
            }
            Fetched::Missing(why) => Some(why),
            Fetched::Broken(why) => {
                return Err(failed(
                    entry.span,
                    format!("helmCharts entry '{name}': {why}"),
                ));
            }
        };
        match why {
            None => {}
            Some(why) => {
                let message = format!(
                    "helmCharts entry '{name}' is not vendored at '{chart_dir}' (chartHome '{}'); kustomize would pull it from '{repo}': {why}",
                    display_dir(chart_home)
                );
                // The rest of the build goes on without it. (Without `version` the chart
                // also floats: `unpinned-source` reports that from the remote use.)
                let issue = unrenderable(entry.span, message);
                let mut issue = *issue;
                issue.input = crate::render::MissingInput::fetchable(reference.to_string());
                b.skipped.borrow_mut().push(issue);
                return Ok(Vec::new());
            }
        }
    }
    let merge = match entry.get("valuesMerge") {
        None => "override".to_string(),
        Some(n) => {
            let m = tree::text(n).unwrap_or_default();
            if m.is_empty() {
                "override".to_string()
            } else if MERGE_OPTIONS.contains(&m.as_str()) {
                m
            } else {
                return Err(failed(
                    n.span,
                    format!("valuesMerge must be one of [merge override replace], not '{m}'"),
                ));
            }
        }
    };
    let values_file = match entry.get("valuesFile").filter(|n| tree::text(n).is_some()) {
        Some(n) => {
            let item = Item {
                text: tree::text(n).unwrap_or_default(),
                span: n.span,
            };
            let path = b.resolve(k, &item)?;
            b.check_file_restriction(k, &path, &item)?;
            readable(b, &path, &item)?;
            path
        }
        None => {
            let path = format!("{chart_dir}/values.yaml");
            let item = Item {
                text: path.clone(),
                span: *home_span,
            };
            readable(b, &path, &item)?;
            path
        }
    };
    let mut additional = Vec::new();
    for n in entry
        .get("additionalValuesFiles")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
    {
        let item = Item {
            text: tree::text(n).unwrap_or_default(),
            span: n.span,
        };
        let path = b.resolve(k, &item)?;
        b.check_file_restriction(k, &path, &item)?;
        readable(b, &path, &item).map_err(|e| {
            failed(
                e.span,
                format!("could not load additionalValuesFile: {}", e.message),
            )
        })?;
        additional.push(path);
    }
    let inline = entry
        .get("valuesInline")
        .filter(|n| n.as_map().is_some_and(|m| !m.is_empty()));
    let inline_path = format!("{chart_dir}/<valuesInline of helmCharts entry '{name}'>");
    let mut value_files = match (inline, merge.as_str()) {
        (None, _) => vec![values_file],
        (Some(_), "replace") => vec![inline_path.clone()],
        (Some(_), "merge") => vec![inline_path.clone(), values_file],
        (Some(_), _) => vec![values_file, inline_path.clone()],
    };
    value_files.extend(additional);
    let fs = InlineValuesFs {
        inner: b.fs,
        path: inline_path,
        file: inline.map(|n| {
            // JSON is YAML: the inline map is given as a values file of its JSON text.
            b.fs.source_map().add(SourceFile::new(
                format!("{} (valuesInline)", b.fs.source_map().path(k.file)),
                n.to_json().to_string(),
                Origin::Virtual,
            ))
        }),
    };
    let release = text_of(entry, "releaseName");
    let namespace = text_of(entry, "namespace");
    let opts = TemplateOptions {
        // kustomize asks helm to --generate-name without a releaseName; a generated name is
        // different on every run, so the chart is rendered with helm's placeholder name.
        release_name: if release.is_empty() {
            TemplateOptions::default().release_name
        } else {
            release
        },
        namespace: if namespace.is_empty() {
            "default".into()
        } else {
            namespace
        },
        name_template: Some(text_of(entry, "nameTemplate")).filter(|t| !t.is_empty()),
        value_files,
        include_crds: entry
            .get("includeCRDs")
            .and_then(Node::as_bool)
            .unwrap_or(false),
        skip_tests: entry
            .get("skipTests")
            .and_then(Node::as_bool)
            .unwrap_or(false),
        no_hooks: entry
            .get("skipHooks")
            .and_then(Node::as_bool)
            .unwrap_or(false),
        kube_version: Some(text_of(entry, "kubeVersion")).filter(|t| !t.is_empty()),
        api_versions: entry
            .get("apiVersions")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
            .iter()
            .filter_map(tree::text)
            .collect(),
        remotes: b.opts.remotes.clone(),
        ..Default::default()
    };
    let out = helm::template(&fs, &chart_dir, &opts);
    b.remotes.borrow_mut().extend(out.remotes);
    if let Some(issue) = out.issues.into_iter().next() {
        let mut issue = Box::new(issue);
        issue.message = format!("helmCharts entry '{name}': {}", issue.message);
        return Err(issue);
    }
    let configured_in = b.fs.source_map().path(k.file);
    let mut resources = Vec::new();
    for o in out.objects {
        for mut r in super::acc::resources_from_doc(o.root, entry.span)? {
            r.source = Some(SourceInfo::Generator {
                configured_in: configured_in.clone(),
                kind: "HelmChartInflationGenerator".into(),
                name: Some(name.clone()),
            });
            resources.push(r);
        }
    }
    Ok(resources)
}

/// A values file kustomize reads must exist.
fn readable(b: &Builder, path: &str, item: &Item) -> Result<(), Fail> {
    b.fs.read(path)
        .map(|_| ())
        .map_err(|e| super::acc::fs_error(item, e))
}

/// The repository plus one virtual file: a chart entry's `valuesInline`, placed among the
/// values files where kustomize's merge puts it.
struct InlineValuesFs<'a> {
    inner: &'a dyn RepoFs,
    path: String,
    file: Option<FileId>,
}

impl RepoFs for InlineValuesFs<'_> {
    fn read(&self, path: &str) -> Result<FileId, FsError> {
        match self.file {
            Some(f) if path == self.path => Ok(f),
            _ => self.inner.read(path),
        }
    }
    fn is_file(&self, path: &str) -> bool {
        (self.file.is_some() && path == self.path) || self.inner.is_file(path)
    }
    fn is_dir(&self, path: &str) -> bool {
        self.inner.is_dir(path)
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, FsError> {
        self.inner.list_dir(path)
    }
    // Listings do not show the inline values file (as `list_dir` does not).
    fn list_entries(&self, path: &str) -> Result<Vec<crate::source::DirEntry>, FsError> {
        self.inner.list_entries(path)
    }
    fn source_map(&self) -> &SourceMap {
        self.inner.source_map()
    }
    fn read_bytes(&self, path: &str) -> Result<Vec<u8>, FsError> {
        self.inner.read_bytes(path)
    }
}
