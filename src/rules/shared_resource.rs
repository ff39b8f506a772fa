//! Catalog §9: the same object rendered by two GitOps owners.

use super::RuleMeta;
use super::util::object_id;
use crate::gitops::{AppKind, Model, ModelObject};
use crate::report::{Finding, Severity};
use std::collections::BTreeMap;

pub const ID: &str = "shared-resource";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    summary: "the same object is rendered by two GitOps owners",
    doc: include_str!("../../rules/shared-resource.md"),
};

pub fn check(model: &Model, out: &mut Vec<Finding>) {
    let mut owners: BTreeMap<(String, String, String, String, String), Vec<&ModelObject>> =
        BTreeMap::new();
    for mo in &model.objects {
        let app = model.app_of(mo);
        if app.kind == AppKind::Standalone {
            continue; // nothing says who applies standalone objects
        }
        // The same object in two clusters is two objects. A destination the repo cannot
        // resolve (a generator placeholder) is compared with nothing.
        let cluster = match crate::ownership::cluster_of(model, mo) {
            Some(c) if c.contains("{{") || c.contains("${") => format!("unknown:{}", mo.app),
            Some(c) => c,
            None => "in-cluster".to_string(),
        };
        let key = (
            cluster,
            mo.object.group().to_string(),
            mo.object.kind.clone(),
            mo.namespace.clone(),
            mo.object.name.clone(),
        );
        owners.entry(key).or_default().push(mo);
    }
    for objs in owners.values() {
        let mut apps: Vec<usize> = objs.iter().map(|m| m.app).collect();
        apps.sort();
        apps.dedup();
        if apps.len() < 2 {
            continue;
        }
        let mut names: Vec<String> = apps.iter().map(|&a| model.apps[a].name.clone()).collect();
        names.dedup();
        let first = objs[0];
        let severity = if first.object.kind == "Namespace" {
            Severity::Warning
        } else {
            Severity::Error
        };
        for mo in objs {
            let mut others: Vec<&str> = names
                .iter()
                .filter(|n| **n != model.app_of(mo).name)
                .map(String::as_str)
                .collect();
            others.sort();
            others.dedup();
            if others.is_empty() {
                continue;
            }
            let span = mo
                .object
                .metadata()
                .and_then(|m| m.get("name"))
                .map(|n| n.span)
                .unwrap_or(mo.object.span());
            out.push(
                super::util::about(
                    Finding::new(ID, severity, format!("{} is also deployed by {}: each owner reverts the other's version and pruning by one deletes the other's object", object_id(mo), others.join(", ")), span)
                        .label("rendered by more than one app")
                        .help(format!("Move {} to a single owner (e.g. a platform app) and add `FailOnSharedResource=true` to the Applications' syncOptions.", object_id(mo))),
                    model.app_of(mo),
                    mo,
                ),
            );
        }
    }
}
