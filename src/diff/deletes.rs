//! `pr-deletes-data`: a change after which the controller deletes an object that holds
//! data. An object one app renders in the base and another in the head (same cluster) is
//! pruned by the first and created again by the second, in whichever order the two sync; a
//! PVC, PersistentVolume, Namespace or CRD an app stops rendering is pruned with what it
//! holds (a volume, every object in the namespace, every custom resource of the CRD). A
//! rename (a kustomize `namePrefix`/`nameSuffix`, a Helm release name) is such a delete and a
//! create. ConfigMaps and Secrets that move come back with the content Git gives them, so a
//! move of one is a warning like any other object's.

use super::identity::{Identity, Side};
use super::way_out;
use crate::finding::{Finding, Severity};
use crate::gitops::{App, Controller, ModelObject, Placement};
use crate::rules::pr_deletes_data::ID;
use crate::rules::util::ForApp;

/// Kinds whose deletion loses what only the cluster holds.
const HOLDS_DATA: &[(&str, &str)] = &[
    ("", "PersistentVolumeClaim"),
    ("", "PersistentVolume"),
    ("", "Namespace"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
];

fn what_is_lost(id: &Identity) -> Option<&'static str> {
    if !HOLDS_DATA.contains(&(id.group, id.kind)) {
        return None;
    }
    Some(match id.kind {
        "Namespace" => "every object in the namespace",
        "CustomResourceDefinition" => "every custom resource of this type",
        _ => "the volume's data (with the Delete reclaim policy)",
    })
}

/// Argo CD deletes an Application's resources with it only under the resources finalizer
/// (https://argo-cd.readthedocs.io/en/stable/user-guide/app_deletion/).
const ARGO_CASCADE_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

pub fn check(base: &Side, head: &Side, out: &mut Vec<Finding>) {
    let mut ids: Vec<&Identity> = base.objects.keys().collect();
    ids.sort();
    for id in ids {
        for before in &base.objects[id] {
            let x = base.app(before);
            if id.name.is_empty() || head.rendered_by(id, &x.name).is_some() {
                continue;
            }
            if super::immutable::recreated_each_sync(x, before) {
                continue;
            }
            let head_x = head.apps_named(&x.name).find(|a| a.cluster == x.cluster);
            let deletes = match head_x {
                // Rendered only in part: what is missing may be what failed.
                Some(a) if !a.issues.is_empty() || !a.skipped.is_empty() => false,
                Some(_) => way_out::app_prunes(x),
                None => app_deletion_cascades(x) && parent_rendered(head, x),
            };
            if !deletes || way_out::kept_on_removal(x, before) {
                continue;
            }
            let adopter = head.objects.get(id).and_then(|objs| {
                objs.iter().copied().find(|mo| {
                    let y = head.app(mo);
                    y.name != x.name
                        && crate::gitops::model::cluster::placement(x, y) == Placement::Same
                })
            });
            if let Some(after) = adopter {
                out.push(moved(id, x, head.app(after), after));
            } else if let Some(lost) = what_is_lost(id) {
                out.extend(removed(id, x, head_x, base, head, lost));
            }
        }
    }
}

fn app_deletion_cascades(app: &App) -> bool {
    match app.controller() {
        Controller::Argocd => app.argo.as_ref().is_some_and(|a| {
            a.decl
                .root
                .get_path(&["metadata", "finalizers"])
                .and_then(crate::yaml::Node::as_seq)
                .unwrap_or_default()
                .iter()
                .any(|f| {
                    f.as_str()
                        .is_some_and(|s| s.split('/').next() == Some(ARGO_CASCADE_FINALIZER))
                })
        }),
        // A Flux Kustomization deleted with `prune: true` garbage-collects what it applied;
        // a deleted HelmRelease uninstalls its release.
        Controller::FluxKustomize | Controller::FluxHelm => way_out::app_prunes(app),
        Controller::None => false,
    }
}

/// The app that declared `app` still renders completely in the head (so `app` is gone, not
/// lost to a failed render); an app with no parent is gone when its file is.
fn parent_rendered(head: &Side, app: &App) -> bool {
    match &app.parent {
        None => true,
        Some(p) => head
            .apps_named(p)
            .any(|a| a.issues.is_empty() && a.skipped.is_empty()),
    }
}

fn name_span(mo: &ModelObject) -> crate::source::Span {
    mo.object
        .root
        .get_path(&["metadata", "name"])
        .map_or(mo.object.root.span, |n| n.span)
}

fn moved(id: &Identity, from: &App, to: &App, after: &ModelObject) -> Finding {
    let (severity, lost) = match what_is_lost(id) {
        Some(lost) => (Severity::Error, format!(", losing {lost}")),
        None => (Severity::Warning, String::new()),
    };
    let message = format!(
        "{} moves from app {} to app {}: {} prunes it when it stops rendering it and {} creates it again, in whichever order the two sync{lost}",
        id.display(),
        from.name,
        to.name,
        from.controller().name(),
        to.controller().name(),
    );
    crate::rules::util::about(
        Finding::new(ID, severity, message, name_span(after))
            .label(format!("now rendered by {}", to.name))
            .help(way_out::keep_help(from))
            .field("owner"),
        to,
        after,
    )
}

/// An object of a data-holding kind the app no longer renders: on the head object that
/// replaces it (a rename), else on the app's declaration, else on the declaration of the
/// app that used to declare it.
fn removed(
    id: &Identity,
    x: &App,
    head_x: Option<&App>,
    base: &Side,
    head: &Side,
    lost: &str,
) -> Option<Finding> {
    // The app's one new object of the same kind and namespace: the rename is certain enough
    // to name.
    let renamed = head_x.and_then(|hx| {
        let mut created = head.model.objects_of(hx).filter(|mo| {
            let nid = super::identity::identity(head.model, mo);
            (nid.group, nid.kind, nid.namespace) == (id.group, id.kind, id.namespace)
                && base.rendered_by(&nid, &x.name).is_none()
        });
        let first = created.next()?;
        created.next().is_none().then_some(first)
    });
    let controller = x.controller().name();
    let (message, at, label) = match renamed {
        Some(mo) => (
            format!(
                "{} is renamed to {}: {controller} prunes the old object with {lost}, and creates the new one empty (a rename is a delete and a create)",
                id.display(),
                super::identity::identity(head.model, mo).display()
            ),
            name_span(mo),
            "the new name",
        ),
        None => {
            let span = head_x.and_then(|a| a.span).or_else(|| {
                x.parent
                    .as_deref()
                    .and_then(|p| head.apps_named(p).find_map(|a| a.span))
            })?;
            (
                format!(
                    "{} is no longer rendered by app {}: {controller} prunes it, with {lost}",
                    id.display(),
                    x.name
                ),
                span,
                "prunes on sync",
            )
        }
    };
    let f = Finding::new(ID, Severity::Error, message, at)
        .label(label)
        .help(way_out::keep_help(x))
        .field("deleted")
        .object(id.display());
    Some(match head_x {
        Some(a) => f.for_app(a),
        None => {
            // The app is gone: named as it was, its base declaration means nothing here.
            let mut f = f.for_app(x);
            f.app_decl = None;
            f
        }
    })
}
