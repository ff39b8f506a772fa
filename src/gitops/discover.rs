//! From parsed files to the app model: find the Argo CD apps and settings, decide which
//! objects each app deploys, and gather the rest into standalone apps per directory.

use super::argo::{self, ArgoSource};
use super::remotes::{git_remotes, normalize_url};
use super::{App, AppKind, Model, ModelObject};
use crate::object::Object;
use crate::render::{IssueKind, RenderIssue};
use crate::source::{FileId, RepoFs, SourceMap, normalize_relative};
use crate::yaml::Document;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// A parsed repo file.
pub struct LoadedFile {
    pub id: FileId,
    /// Repo-relative, `/`-separated.
    pub path: String,
    pub docs: Vec<Document>,
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_kustomization_file(path: &str) -> bool {
    matches!(
        file_name(path),
        "kustomization.yaml" | "kustomization.yml" | "Kustomization"
    )
}

/// Is `path` inside `dir` (or equal to it)? `""` is the repo root.
fn under(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || path.starts_with(&format!("{dir}/"))
}

/// Directories that hold render inputs rather than plain manifests.
struct Layout {
    charts: BTreeSet<String>,
    kustomizations: BTreeSet<String>,
}

impl Layout {
    fn of(files: &[LoadedFile]) -> Layout {
        let mut charts = BTreeSet::new();
        let mut kustomizations = BTreeSet::new();
        for f in files {
            if file_name(&f.path) == "Chart.yaml" {
                charts.insert(dir_of(&f.path).to_string());
            } else if is_kustomization_file(&f.path) {
                kustomizations.insert(dir_of(&f.path).to_string());
            }
        }
        Layout {
            charts,
            kustomizations,
        }
    }

    /// A file the Helm or kustomize renderer reads (templates, values, patches, bases), not
    /// a manifest applied as it is.
    fn is_render_input(&self, path: &str) -> bool {
        self.charts.iter().any(|d| under(path, d))
            || self.kustomizations.iter().any(|d| under(path, d))
    }
}

/// How the repo names itself: git remotes and configured URLs.
struct RepoIdentity {
    urls: Vec<String>,
}

impl RepoIdentity {
    /// Catalog A1.9: by URL when the repo knows its URLs, else by whether the path exists.
    fn is_this_repo(&self, src: &ArgoSource, fs: &dyn RepoFs) -> bool {
        if let Some(url) = &src.repo_url
            && !self.urls.is_empty()
        {
            let url = normalize_url(url);
            return self.urls.contains(&url);
        }
        src.chart.is_none()
            && src
                .path
                .as_deref()
                .and_then(normalize_relative)
                .is_some_and(|p| fs.is_dir(&p))
    }
}

pub fn build_model(
    files: &[LoadedFile],
    fs: &dyn RepoFs,
    map: Arc<SourceMap>,
    root: &Path,
    repo_urls: &[String],
) -> Model {
    let layout = Layout::of(files);
    let identity = RepoIdentity {
        urls: git_remotes(root)
            .iter()
            .chain(repo_urls)
            .map(|u| normalize_url(u))
            .collect(),
    };

    // Plain objects, with the file they came from.
    let mut plain: Vec<(Object, &str)> = Vec::new();
    for f in files {
        if layout.is_render_input(&f.path) {
            continue;
        }
        for doc in &f.docs {
            if let Some(obj) = Object::from_node(doc.root.clone()) {
                plain.push((obj, &f.path));
            }
        }
    }

    let mut model = Model {
        map,
        apps: Vec::new(),
        objects: Vec::new(),
        argo: Default::default(),
    };
    for (obj, _) in &plain {
        if argo::is_argocd_cm(obj) {
            model.argo = argo::read_argocd_cm(obj, &model.map);
        }
    }

    let mut owned = vec![false; plain.len()];
    for (obj, _) in &plain {
        let (spec, from_appset) = if argo::is_argo_app(obj) {
            (obj.root.get("spec"), false)
        } else if argo::is_argo_appset(obj) {
            (obj.root.get_path(&["spec", "template", "spec"]), true)
        } else {
            continue;
        };
        let Some(spec) = spec else { continue };
        let argo_app = argo::read_app_spec(obj, spec, from_appset);
        let name = if from_appset {
            obj.root
                .get_path(&["spec", "template", "metadata", "name"])
                .and_then(|n| n.scalar_text())
                .unwrap_or_else(|| obj.name.clone())
        } else {
            obj.name.clone()
        };
        let mut app = App {
            name,
            kind: if from_appset {
                AppKind::ArgoAppSet
            } else {
                AppKind::Argo
            },
            destination_namespace: spec
                .get_path(&["destination", "namespace"])
                .and_then(|n| n.scalar_text())
                .filter(|s| !s.is_empty()),
            argo: None,
            objects: Vec::new(),
            issues: Vec::new(),
            span: obj
                .metadata()
                .and_then(|m| m.get("name"))
                .map(|n| n.span)
                .or(Some(obj.span())),
        };
        let app_index = model.apps.len();
        for src in &argo_app.sources {
            if !identity.is_this_repo(src, fs) {
                continue;
            }
            let Some(raw_path) = src.path.as_deref() else {
                continue;
            };
            let at = src.path_span.unwrap_or(obj.span());
            let Some(path) = normalize_relative(raw_path) else {
                app.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    span: at,
                    message: format!("source path `{raw_path}` leaves the repository"),
                });
                continue;
            };
            if !fs.is_dir(&path) {
                app.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    span: at,
                    message: format!("app path does not exist: `{raw_path}`"),
                });
                continue;
            }
            if layout.kustomizations.contains(&path) || layout.charts.contains(&path) {
                // Rendered by the kustomize / Helm renderers.
                continue;
            }
            let include = src.include.as_deref().and_then(glob);
            let exclude = src.exclude.as_deref().and_then(glob);
            for (i, (pobj, file)) in plain.iter().enumerate() {
                let dir = dir_of(file);
                let in_dir = if src.recurse {
                    under(dir, &path)
                } else {
                    dir == path
                };
                if !in_dir {
                    continue;
                }
                let rel = file
                    .strip_prefix(&format!("{path}/"))
                    .unwrap_or(file)
                    .to_string();
                if include.as_ref().is_some_and(|g| !g.is_match(&rel))
                    || exclude.as_ref().is_some_and(|g| g.is_match(&rel))
                {
                    continue;
                }
                owned[i] = true;
                app.objects.push(model.objects.len());
                model.objects.push(ModelObject {
                    object: pobj.clone(),
                    app: app_index,
                    namespace: String::new(),
                });
            }
        }
        app.argo = Some(argo_app);
        model.apps.push(app);
    }

    // Everything no app deploys: one standalone app per directory.
    let mut by_dir: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (_, file)) in plain.iter().enumerate() {
        if !owned[i] {
            by_dir.entry(dir_of(file)).or_default().push(i);
        }
    }
    for (dir, indices) in by_dir {
        let app_index = model.apps.len();
        let mut app = App {
            name: if dir.is_empty() {
                ".".into()
            } else {
                dir.to_string()
            },
            kind: AppKind::Standalone,
            argo: None,
            destination_namespace: None,
            objects: Vec::new(),
            issues: Vec::new(),
            span: None,
        };
        for i in indices {
            app.objects.push(model.objects.len());
            model.objects.push(ModelObject {
                object: plain[i].0.clone(),
                app: app_index,
                namespace: String::new(),
            });
        }
        model.apps.push(app);
    }

    for mo in &mut model.objects {
        mo.namespace = mo
            .object
            .namespace
            .clone()
            .or_else(|| model.apps[mo.app].destination_namespace.clone())
            .unwrap_or_else(|| "default".into());
    }
    model
}

/// Argo's directory include/exclude: a glob, or `{a,b}` alternatives.
fn glob(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}
