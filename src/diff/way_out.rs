//! What each controller offers for a change it cannot apply in place, and for a delete it
//! should not do: the options an object or its app already carries, and the help text naming
//! them.
//!
//! - Argo CD (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/):
//!   `argocd.argoproj.io/sync-options: Force=true,Replace=true` deletes and re-creates the
//!   object; `Replace=true` alone sends a replace (a PUT), which the API server refuses on an
//!   immutable field just as it refuses the patch. `Prune=false` keeps an object the app no
//!   longer renders, `Delete=false` one whose app is deleted; both may be app-wide
//!   `syncOptions`, and the object's annotation overrides the app's.
//! - kustomize-controller (https://fluxcd.io/flux/components/kustomize/kustomizations/#force
//!   and #prune): `kustomize.toolkit.fluxcd.io/force: enabled` on the object, or `spec.force:
//!   true` on the Kustomization, re-creates objects whose immutable fields changed;
//!   `kustomize.toolkit.fluxcd.io/prune: disabled` keeps an object out of garbage collection.
//! - helm-controller upgrades with the Helm SDK, which patches (or with `upgrade.force`,
//!   replaces) and never re-creates; a resource with `helm.sh/resource-policy: keep` is not
//!   deleted when the chart stops rendering it
//!   (https://helm.sh/docs/howto/charts_tips_and_tricks/#tell-helm-not-to-uninstall-a-resource).

use crate::gitops::{App, Controller, ModelObject};
use crate::yaml::Node;

pub const ARGO_SYNC_OPTIONS: &str = "argocd.argoproj.io/sync-options";
pub const FLUX_FORCE: &str = "kustomize.toolkit.fluxcd.io/force";
pub const FLUX_PRUNE: &str = "kustomize.toolkit.fluxcd.io/prune";
pub const HELM_RESOURCE_POLICY: &str = "helm.sh/resource-policy";

/// The `Name=value` items of the object's Argo CD sync-options annotation.
fn argo_object_options(mo: &ModelObject) -> Vec<(String, String)> {
    mo.object
        .annotation(ARGO_SYNC_OPTIONS)
        .unwrap_or_default()
        .split(',')
        .filter_map(|item| {
            let (k, v) = item.split_once('=')?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// An Argo CD sync option's value for this object: its annotation first, then the app's
/// `syncOptions`.
fn argo_option(app: &App, mo: &ModelObject, name: &str) -> Option<String> {
    if let Some((_, v)) = argo_object_options(mo).into_iter().find(|(k, _)| k == name) {
        return Some(v);
    }
    let argo = app.argo.as_ref()?;
    argo.sync.options.iter().find_map(|o| {
        let text = o.as_str()?;
        let (k, v) = text.split_once('=')?;
        (k.trim() == name).then(|| v.trim().to_string())
    })
}

fn flux_spec_flag(app: &App, key: &str) -> bool {
    app.flux
        .as_ref()
        .and_then(|f| f.decl.root.get_path(&["spec", key]))
        .and_then(Node::as_bool)
        == Some(true)
}

/// Does the controller re-create `mo` when one of its immutable fields changes?
pub fn recreates_on_immutable_change(app: &App, mo: &ModelObject) -> bool {
    match app.controller() {
        Controller::Argocd => {
            // Force is read from the object only: Argo CD documents it as an annotation.
            let options = argo_object_options(mo);
            let set = |name: &str| {
                options
                    .iter()
                    .any(|(k, v)| k == name && v.eq_ignore_ascii_case("true"))
            };
            set("Force") && argo_option(app, mo, "Replace").as_deref() == Some("true")
        }
        Controller::FluxKustomize => {
            mo.object.annotation(FLUX_FORCE) == Some("enabled") || flux_spec_flag(app, "force")
        }
        Controller::FluxHelm | Controller::None => false,
    }
}

/// The help for an immutable change: how this controller re-creates the object.
pub fn recreate_help(app: &App) -> String {
    let rename =
        "or give the object a new name (the controller creates the new one and prunes the old)";
    match app.controller() {
        Controller::Argocd => format!(
            "Argo CD re-creates the object with the annotation `{ARGO_SYNC_OPTIONS}: Force=true,Replace=true` (`Replace=true` alone sends a replace, which the API server refuses the same way), {rename}."
        ),
        Controller::FluxKustomize => format!(
            "kustomize-controller re-creates the object with the annotation `{FLUX_FORCE}: enabled` (or `spec.force: true` on the Kustomization), {rename}."
        ),
        Controller::FluxHelm => format!(
            "helm-controller never re-creates an object (Helm patches it, or replaces it with `upgrade.force`, and both are refused): delete the object by hand before the upgrade, {rename}."
        ),
        Controller::None => format!("Delete and re-create the object when applying, {rename}."),
    }
}

/// Does the controller of `app` delete objects it no longer renders? Argo CD with automated
/// `prune`, a Flux Kustomization with `spec.prune: true`, always under Helm (an upgrade
/// deletes what the chart stopped rendering).
pub fn app_prunes(app: &App) -> bool {
    match app.controller() {
        Controller::Argocd => app
            .argo
            .as_ref()
            .is_some_and(|a| a.sync.automated && a.sync.prune),
        Controller::FluxKustomize => app.flux.as_ref().is_some_and(|f| f.prune),
        Controller::FluxHelm => true,
        Controller::None => false,
    }
}

/// Does `app`'s controller keep `mo` when the app stops rendering it (or is deleted)?
pub fn kept_on_removal(app: &App, mo: &ModelObject) -> bool {
    match app.controller() {
        Controller::Argocd => {
            let off = |name: &str| {
                argo_option(app, mo, name)
                    .is_some_and(|v| v.eq_ignore_ascii_case("false") || v == "confirm")
            };
            off("Prune") || off("Delete")
        }
        Controller::FluxKustomize => mo.object.annotation(FLUX_PRUNE) == Some("disabled"),
        Controller::FluxHelm => mo.object.annotation(HELM_RESOURCE_POLICY) == Some("keep"),
        Controller::None => true,
    }
}

/// The help for a delete: how this controller keeps the object.
pub fn keep_help(app: &App) -> String {
    match app.controller() {
        Controller::Argocd => format!(
            "Keep it with the annotation `{ARGO_SYNC_OPTIONS}: Prune=false,Delete=false` in the base before the change merges (or `Prune=confirm`), then move or rename it."
        ),
        Controller::FluxKustomize => format!(
            "Keep it with the annotation `{FLUX_PRUNE}: disabled` in the base before the change merges, then move or rename it."
        ),
        Controller::FluxHelm => format!(
            "Keep it with the annotation `{HELM_RESOURCE_POLICY}: keep` in the chart before the change merges, then move or rename it."
        ),
        Controller::None => "Keep the object when applying the change.".to_string(),
    }
}
