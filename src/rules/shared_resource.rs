//! The same object rendered by two GitOps owners.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::util::object_id;
use crate::finding::{Finding, Severity};
use crate::gitops::{App, Model, ModelObject, Placement};
use std::collections::{BTreeMap, BTreeSet};

pub const ID: &str = "shared-resource";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "the object is a Namespace, or the repository does not show that the owners deploy to one cluster (a destination it cannot place, or Argo CD apps applied from different roots, which may be different Argo CD instances)",
        },
    ],
    summary: "the same object is rendered by two GitOps owners",
    doc: include_str!("../../rules/shared-resource.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// Who owns an object in the cluster: the Application, Kustomization or HelmRelease by its
/// identity, in the cluster it lives in. Two files declaring the same owner (the same
/// Application name in the same namespace) are one owner: only one of them can exist at a
/// time.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Owner {
    home: crate::gitops::Cluster,
    kind: String,
    namespace: String,
    name: String,
}

/// The top of the Argo CD app tree `app` is deployed through (app-of-apps parents, the
/// ApplicationSet that generated it), as the directory declaring it: apps declared side by
/// side (`argocd/*.yaml`, one bootstrap kustomization) are applied together; apps whose
/// trees start in different directories are separate entry points, and nothing in the repo
/// says they reach one Argo CD (so the same `in-cluster`).
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
    let decl = current.argo.as_ref().map(|argo| &argo.decl)?;
    let path = model.map.path(decl.span().file);
    Some(
        path.rsplit_once('/')
            .map(|(dir, _)| dir.to_string())
            .unwrap_or_default(),
    )
}

/// The owner of an app's objects: `None` for standalone directories (nothing says who
/// applies them).
fn owner_of(app: &App) -> Option<Owner> {
    let (kind, namespace, name) = if let Some(argo) = &app.argo {
        let namespace = argo
            .decl
            .namespace
            .clone()
            .unwrap_or_else(|| "argocd".into());
        ("Application".to_string(), namespace, app.name.clone())
    } else {
        let flux = app.flux.as_ref()?;
        (
            flux.decl.kind.clone(),
            flux.decl.namespace.clone().unwrap_or_default(),
            flux.decl.name.clone(),
        )
    };
    Some(Owner {
        home: app.home.clone(),
        kind,
        namespace,
        name,
    })
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
    type Copy<'a> = (&'a ModelObject, &'a Owner, Option<&'a str>);
    let mut copies: BTreeMap<ObjectKey, Vec<Copy>> = BTreeMap::new();
    let roots: Vec<Option<String>> = model.apps.iter().map(|a| root_of(model, a)).collect();
    let owners: Vec<Option<Owner>> = model.apps.iter().map(owner_of).collect();
    for mo in model.in_scope() {
        let Some(Some(owner)) = owners.get(mo.app) else {
            continue;
        };
        let root = roots.get(mo.app).and_then(Option::as_deref);
        let key = (
            mo.object.group(),
            mo.object.kind.as_str(),
            mo.namespace.as_str(),
            mo.object.name.as_str(),
        );
        copies.entry(key).or_default().push((mo, owner, root));
    }
    for objs in copies.values() {
        // One finding per place the object is written (a base rendered by many overlays is
        // one line to edit), naming the owners that reach the same cluster.
        let mut reported: BTreeSet<(crate::source::FileId, u32)> = BTreeSet::new();
        for (mo, owner, root) in objs {
            let span = mo
                .object
                .metadata()
                .and_then(|m| m.get("name"))
                .map(|n| n.span)
                .unwrap_or(mo.object.span());
            // Other owners that deploy to the same cluster: certain when the model places
            // both in one cluster (for Argo CD, also applied from one root: separate roots
            // may be separate Argo CD instances, each with its own `in-cluster`); otherwise
            // the finding says what is unknown.
            let mut certain = false;
            let mut unknown_cluster = false;
            let mut others: BTreeSet<&str> = BTreeSet::new();
            for (other_mo, other, other_root) in objs {
                if other == owner {
                    continue;
                }
                match model.placement(mo, other_mo) {
                    Placement::Different => continue,
                    Placement::Same => {
                        let argo = model.app_of(mo).argo.is_some();
                        certain |= !argo || (root.is_some() && root == other_root);
                    }
                    Placement::Unknown => unknown_cluster = true,
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
