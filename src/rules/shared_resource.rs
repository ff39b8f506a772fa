//! The same object rendered by two GitOps owners.

use super::{FixAvailability, Kinds, RuleMeta, Scope};
use super::util::object_id;
use crate::finding::{Finding, Severity};
use crate::gitops::{App, Model, ModelObject};
use std::collections::{BTreeMap, BTreeSet};

pub const ID: &str = "shared-resource";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    summary: "the same object is rendered by two GitOps owners",
    doc: include_str!("../../rules/shared-resource.md"),
    fix: FixAvailability::None,
    removal: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// Who owns an object in the cluster: the Application, Kustomization or HelmRelease by its
/// identity. Two files declaring the same owner (the same Application name in the same
/// namespace) are one owner: only one of them can exist at a time.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Owner {
    kind: String,
    namespace: String,
    name: String,
}

/// The top of the app tree `app` is deployed through (app-of-apps parents, the
/// ApplicationSet that generated it), as the directory declaring it: apps declared side by
/// side (`argocd/*.yaml`, one bootstrap kustomization) are applied together; apps whose
/// trees start in different directories are separate entry points, and nothing in the repo
/// says they meet in one cluster.
fn root_of(model: &Model, app: &App) -> Option<String> {
    let mut current = app;
    for _ in 0..model.apps.len() {
        let Some(parent) = current.parent.as_deref() else {
            break;
        };
        match model
            .apps
            .iter()
            .find(|a| a.name == parent && a.argo.is_some())
        {
            Some(p) => current = p,
            None => break,
        }
    }
    let decl = match (&current.argo, &current.flux) {
        (Some(argo), _) => &argo.decl,
        (_, Some(flux)) => &flux.decl,
        _ => return None,
    };
    let path = model.map.path(decl.span().file);
    Some(
        path.rsplit_once('/')
            .map(|(dir, _)| dir.to_string())
            .unwrap_or_default(),
    )
}

/// Where an owner deploys: `None` when the repo does not say (a templated destination).
fn owner_of(app: &App) -> Option<(Owner, Option<String>)> {
    if let Some(argo) = &app.argo {
        let namespace = argo
            .decl
            .namespace
            .clone()
            .unwrap_or_else(|| "argocd".into());
        let owner = Owner {
            kind: "Application".into(),
            namespace,
            name: app.name.clone(),
        };
        return Some((owner, argo.destination_cluster.clone()));
    }
    if let Some(flux) = &app.flux {
        let owner = Owner {
            kind: flux.decl.kind.clone(),
            namespace: flux.decl.namespace.clone().unwrap_or_default(),
            name: flux.decl.name.clone(),
        };
        // `spec.kubeConfig` deploys to another cluster; otherwise the one Flux runs in.
        let cluster = match flux
            .decl
            .root
            .get_path(&["spec", "kubeConfig", "secretRef", "name"])
            .and_then(crate::yaml::Node::scalar_text)
        {
            Some(secret) => format!("kubeconfig:{secret}"),
            None => "in-cluster".to_string(),
        };
        return Some((owner, Some(cluster)));
    }
    None // standalone: nothing says who applies these objects
}

/// The fix in the owning controller's terms.
fn owner_help(app: &App, object: &str) -> String {
    if app.flux.is_some() {
        format!("Move {object} to a single Kustomization or HelmRelease (e.g. a platform one); Flux applies with server-side apply and force-takes fields another manager set, so two owners overwrite each other on every reconcile.")
    } else {
        format!("Move {object} to a single owner (e.g. a platform app) and add `FailOnSharedResource=true` to the Applications' syncOptions.")
    }
}

/// `a, b, c and 4 more`.
fn name_list(names: &[&str]) -> String {
    const SHOWN: usize = 3;
    if names.len() <= SHOWN {
        return names.join(", ");
    }
    format!(
        "{} and {} more",
        names[..SHOWN].join(", "),
        names.len() - SHOWN
    )
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    // Keyed and grouped by reference: owners and roots are worked out once per app, and
    // nothing is copied per object (every object of the model passes through here).
    type ObjectKey<'a> = (&'a str, &'a str, &'a str, &'a str);
    type Copy<'a> = (&'a ModelObject, &'a Owner, Option<&'a str>, Option<&'a str>);
    let mut copies: BTreeMap<ObjectKey, Vec<Copy>> = BTreeMap::new();
    let roots: Vec<Option<String>> = model.apps.iter().map(|a| root_of(model, a)).collect();
    let owners: Vec<Option<(Owner, Option<String>)>> = model.apps.iter().map(owner_of).collect();
    for mo in model.in_scope() {
        let Some(Some((owner, cluster))) = owners.get(mo.app) else {
            continue;
        };
        let root = roots.get(mo.app).and_then(Option::as_deref);
        let key = (
            mo.object.group(),
            mo.object.kind.as_str(),
            mo.namespace.as_str(),
            mo.object.name.as_str(),
        );
        copies
            .entry(key)
            .or_default()
            .push((mo, owner, cluster.as_deref(), root));
    }
    for objs in copies.values() {
        // One finding per place the object is written (a base rendered by many overlays is
        // one line to edit), naming the owners that reach the same cluster.
        let mut reported: BTreeSet<(crate::source::FileId, u32)> = BTreeSet::new();
        for (mo, owner, cluster, root) in objs {
            let span = mo
                .object
                .metadata()
                .and_then(|m| m.get("name"))
                .map(|n| n.span)
                .unwrap_or(mo.object.span());
            // Other owners that may deploy to the same cluster: certain when both name it
            // and one root deploys both; otherwise the finding says what is unknown.
            let mut certain = false;
            let mut unknown_cluster = false;
            let mut others: BTreeSet<&str> = BTreeSet::new();
            for (_, other, other_cluster, other_root) in objs {
                if other == owner {
                    continue;
                }
                match (cluster, other_cluster) {
                    (Some(a), Some(b)) if a != b => continue,
                    (Some(_), Some(_)) => certain |= root.is_some() && root == other_root,
                    _ => unknown_cluster = true,
                }
                others.insert(other.name.as_str());
            }
            if others.is_empty() || !reported.insert((span.file, span.start)) {
                continue;
            }
            let others: Vec<&str> = others.into_iter().collect();
            let severity = if mo.object.kind == "Namespace" || !certain {
                Severity::Warning
            } else {
                Severity::Error
            };
            let where_ = if certain {
                ""
            } else if unknown_cluster {
                " (if they deploy to the same cluster: the repo does not say where one of them goes)"
            } else {
                " (if both are applied to one cluster: no app in the repo deploys both)"
            };
            out.push(
                super::util::about(
                    Finding::new(
                        ID,
                        severity,
                        format!(
                            "{} is also deployed by {}{where_}: each owner reverts the other's version and pruning by one deletes the other's object",
                            object_id(mo),
                            name_list(&others)
                        ),
                        span,
                    )
                    .label("rendered by more than one app")
                    .help(owner_help(model.app_of(mo), &object_id(mo))),
                    model.app_of(mo),
                    mo,
                ),
            );
        }
    }
}
