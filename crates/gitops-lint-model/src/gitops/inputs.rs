//! What an app's render reads (the files and directories that feed it): the pull-request
//! workflow maps changed files to apps with it, and the pipeline decides with it which files
//! an app deploys.

use super::{App, Model};
use crate::source::FileId;
use crate::yaml::{Node, Value};
use std::collections::BTreeSet;

/// What an app's render reads: its Application, every file a node of its objects or a
/// render issue comes from (patches, bases, values files, templates), and for a source in
/// this repo its whole directory (a new file there is a new object).
pub fn app_inputs(model: &Model, app: &App) -> BTreeSet<String> {
    let mut files: BTreeSet<FileId> = BTreeSet::new();
    if let Some(s) = app.span {
        files.insert(s.file);
    }
    let mut dirs = BTreeSet::new();
    if let Some(argo) = &app.argo {
        files.insert(argo.decl.root.span.file);
        for src in &argo.sources {
            if let Some(p) = src
                .path
                .as_deref()
                .and_then(crate::source::normalize_relative)
                && src.chart.is_none()
            {
                dirs.insert(format!("{p}/"));
            }
        }
    }
    if let Some(flux) = &app.flux {
        files.insert(flux.decl.root.span.file);
        if let Some(p) = flux
            .decl
            .root
            .get_path(&["spec", "path"])
            .and_then(Node::as_str)
            .and_then(crate::source::normalize_relative)
        {
            dirs.insert(format!("{p}/"));
        }
    }
    for issue in &app.issues {
        files.insert(issue.span.file);
    }
    for mo in model.objects_of(app) {
        collect_files(&mo.object.root, &mut files);
    }
    let mut out: BTreeSet<String> = files
        .into_iter()
        .map(|f| model.map.path(f))
        .filter(|p| !p.is_empty())
        .collect();
    out.extend(dirs);
    out
}

fn collect_files(root: &Node, files: &mut BTreeSet<FileId>) {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        files.insert(n.span.file);
        if let Some(rel) = &n.related {
            files.extend(rel.iter().map(|r| r.span.file));
        }
        match &n.value {
            Value::Seq(items) => stack.extend(items.iter()),
            Value::Map(entries) => {
                for e in entries {
                    files.insert(e.key.span.file);
                    stack.push(&e.value);
                }
            }
            _ => {}
        }
    }
}
