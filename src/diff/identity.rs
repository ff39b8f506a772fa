//! An object's identity across two revisions: (cluster, group, kind, namespace, name), what
//! the API server and the controller know it by. The namespace is the one the object lands in
//! (none for cluster-scoped kinds); the version is not part of it (`apps/v1` and
//! `apps/v1beta2` of one Deployment are one object).

use crate::gitops::{App, Model, ModelObject};
use std::collections::{BTreeSet, HashMap};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identity<'m> {
    /// The cluster's name (`unknown` when the repo does not say).
    pub cluster: &'m str,
    pub group: &'m str,
    pub kind: &'m str,
    pub namespace: &'m str,
    pub name: &'m str,
}

impl Identity<'_> {
    /// `Kind/namespace/name` (or `Kind/name`), as findings name objects.
    pub fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{}/{}", self.kind, self.name)
        } else {
            format!("{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }
}

pub fn identity<'m>(model: &'m Model, mo: &'m ModelObject) -> Identity<'m> {
    Identity {
        cluster: model.app_of(mo).cluster.name(),
        group: mo.object.group(),
        kind: &mo.object.kind,
        namespace: if mo.object.is_cluster_scoped() {
            ""
        } else {
            &mo.namespace
        },
        name: &mo.object.name,
    }
}

/// One revision's objects of the apps a change touches, by identity. Only what the
/// controller applies on sync (no Helm test hooks); several apps may render one identity.
pub struct Side<'m> {
    pub model: &'m Model,
    pub objects: HashMap<Identity<'m>, Vec<&'m ModelObject>>,
}

impl<'m> Side<'m> {
    pub fn of(model: &'m Model, affected: &BTreeSet<String>) -> Side<'m> {
        let mut objects: HashMap<Identity<'m>, Vec<&'m ModelObject>> = HashMap::new();
        for app in model.apps.iter().filter(|a| affected.contains(&a.name)) {
            for mo in model.objects_of(app) {
                if model.applied_on_sync(mo) {
                    objects.entry(identity(model, mo)).or_default().push(mo);
                }
            }
        }
        Side { model, objects }
    }

    pub fn app(&self, mo: &ModelObject) -> &'m App {
        self.model.app_of(mo)
    }

    /// The object `app_name` renders under `id` on this side.
    pub fn rendered_by(&self, id: &Identity<'_>, app_name: &str) -> Option<&'m ModelObject> {
        self.objects
            .get(id)?
            .iter()
            .copied()
            .find(|mo| self.model.app_of(mo).name == app_name)
    }

    /// The apps of this name on this side (one name may be several apps, one per cluster).
    pub fn apps_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'m App> + 'a {
        self.model.apps.iter().filter(move |a| a.name == name)
    }
}
