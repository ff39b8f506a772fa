//! The app model: which GitOps app deploys which objects, with which sync policy and ignore
//! rules (catalog Part A). Rules read only this model.

pub mod argo;
mod discover;
pub mod ignore;
mod remotes;

pub use argo::{ArgoApp, ArgoSettings, SyncPolicy};
pub use discover::{LoadedFile, build_model};

use crate::object::Object;
use crate::render::RenderIssue;
use crate::source::{SourceMap, Span};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppKind {
    /// An Argo CD Application.
    Argo,
    /// An ApplicationSet's template (not expanded yet: one app per ApplicationSet).
    ArgoAppSet,
    /// Objects that no app in the repo deploys, grouped by directory, so a repo without
    /// Argo or Flux still gets linted.
    Standalone,
}

#[derive(Clone, Debug)]
pub struct App {
    pub name: String,
    pub kind: AppKind,
    /// Argo details (sources, sync policy, ignores) for Argo apps.
    pub argo: Option<ArgoApp>,
    pub destination_namespace: Option<String>,
    /// Indices into [`Model::objects`].
    pub objects: Vec<usize>,
    /// Render problems of this app (become `render-failed` / `offline-unrenderable-input`).
    pub issues: Vec<RenderIssue>,
    /// Where the app is declared (the Application's name, or the directory's first object).
    pub span: Option<Span>,
}

impl App {
    /// Does a GitOps controller keep re-applying Git's state for this app (catalog A3.6)?
    pub fn enforces(&self) -> bool {
        match &self.argo {
            Some(a) => a.sync.automated,
            // Nothing in the repo says how standalone objects are applied; assume they are
            // re-applied (CI, a controller outside the repo), which is the common case.
            None => true,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ModelObject {
    pub object: Object,
    pub app: usize,
    /// Namespace the object lands in: its own, else the app's destination, else `default`.
    pub namespace: String,
}

pub struct Model {
    pub map: Arc<SourceMap>,
    pub apps: Vec<App>,
    pub objects: Vec<ModelObject>,
    pub argo: ArgoSettings,
}

impl Model {
    pub fn app_of(&self, obj: &ModelObject) -> &App {
        &self.apps[obj.app]
    }

    pub fn objects_of<'a>(&'a self, app: &'a App) -> impl Iterator<Item = &'a ModelObject> + 'a {
        app.objects.iter().filter_map(|&i| self.objects.get(i))
    }

    /// All Argo apps (Applications and ApplicationSet templates).
    pub fn argo_apps(&self) -> impl Iterator<Item = (&App, &ArgoApp)> {
        self.apps
            .iter()
            .filter_map(|a| a.argo.as_ref().map(|argo| (a, argo)))
    }
}
