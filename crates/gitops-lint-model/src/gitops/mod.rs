//! From a repository's files to the app model (`model/`): the readers of Argo CD and Flux
//! declarations, the renders they ask for, and where each app's objects land.

mod app_of_apps;
pub mod appset;
pub mod argo;
pub mod argo_chart;
pub mod artifact;
pub mod cluster;
mod context;
pub mod crd_schemas;
mod discover;
pub mod envsubst;
pub mod flux;
pub mod flux_overlay;
pub mod gotemplate;
pub mod ignore;
mod in_place;
pub mod inputs;
pub mod kustomization_files;
pub mod listing;
pub mod model;
mod plain_index;
pub mod producers;
pub mod remote_charts;
pub mod remote_render;
pub mod remotes;
mod render_jobs;
mod rendered;
mod secret_data;
pub mod sops;
pub mod sourceignore;
pub mod twice;
pub mod units;
mod values_from;
pub mod versions;

pub use context::LoadedFile;
pub use discover::{ModelSettings, build_model};
pub use model::{
    App, AppKind, ArgoApp, ArgoSettings, Cluster, Controller, Model, ModelObject, Placement,
    RemoteUse, RenderDifference, RenderStatus, Skip, SyncPolicy, served_json,
};
