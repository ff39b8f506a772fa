//! Kustomize generators that hide config drift (`disableNameSuffixHash`) or,
//! hashed, leave old objects behind in apps that do not prune (permanent OutOfSync).
//! Kustomization files are render inputs, not objects: the model gives them as written
//! (`Model::kustomization_files`).

use super::util::ForApp;
use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::{App, Model};
use crate::source::{Origin, Span, normalize_relative};
use crate::yaml::Node;
use crate::hash::FastMap;
use std::cell::OnceCell;

pub const ID: &str = "kustomize-generator-hygiene";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Info,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "a generator keeps its hash suffix and an app that syncs the directory (Argo CD automated sync, or a Flux Kustomization) does not prune, so each change leaves the old object behind",
        },
    ],
    summary: "disableNameSuffixHash hides config drift; hashed generators without prune stay OutOfSync",
    doc: include_str!("../../rules/kustomize-generator-hygiene.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

const GENERATORS: &[&str] = &["configMapGenerator", "secretGenerator"];

/// An app that builds a kustomization directory, whether it prunes, and the span that says so.
type Owner<'m> = (&'m App, bool, Option<Span>);

/// The directories each app builds, with the apps in model order (an Argo app before the
/// Flux side of the same app).
fn owners_by_dir(model: &Model) -> FastMap<String, Vec<Owner<'_>>> {
    let mut by_dir: FastMap<String, Vec<Owner<'_>>> = FastMap::default();
    for app in &model.apps {
        if let Some(argo) = &app.argo
            && argo.sync.automated
        {
            let mut dirs: Vec<String> = argo
                .sources
                .iter()
                .filter(|s| s.chart.is_none())
                .filter_map(|s| s.path.as_deref().and_then(normalize_relative))
                .collect();
            dirs.sort();
            dirs.dedup();
            for dir in dirs {
                by_dir
                    .entry(dir)
                    .or_default()
                    .push((app, argo.sync.prune, argo.sync.span));
            }
        }
        if let Some(flux) = &app.flux
            && flux.kind == crate::gitops::model::flux::FluxKind::Kustomization
            && let Some(dir) = flux
                .decl
                .root
                .get_path(&["spec", "path"])
                .and_then(Node::scalar_text)
                .as_deref()
                .and_then(normalize_relative)
        {
            let span = flux
                .decl
                .root
                .get_path(&["spec", "prune"])
                .map(|n| n.span)
                .or(app.span);
            by_dir.entry(dir).or_default().push((app, flux.prune, span));
        }
    }
    by_dir
}

/// What judging the generators needs from the whole model, worked out once per lint when a
/// generator first asks (per generator, scanning every file and every app was quadratic in
/// a monorepo).
struct Context<'m> {
    model: &'m Model,
    /// The repo files that make workloads roll on config changes anyway (Reloader,
    /// checksum annotations).
    reloading_files: OnceCell<Vec<String>>,
    owners: OnceCell<FastMap<String, Vec<Owner<'m>>>>,
}

impl<'m> Context<'m> {
    /// Apps that build the kustomization directory `dir`.
    fn owners(&self, dir: &str) -> &[Owner<'m>] {
        let by_dir = self.owners.get_or_init(|| owners_by_dir(self.model));
        by_dir.get(dir).map(Vec::as_slice).unwrap_or_default()
    }

    /// Do the workloads under `dir` roll on config changes anyway?
    fn reloads(&self, dir: &str) -> bool {
        let files = self.reloading_files.get_or_init(|| {
            let map = &self.model.map;
            map.ids()
                .into_iter()
                .map(|id| map.get(id))
                .filter(|f| {
                    f.origin == Origin::Repo
                        && (f.text.contains("reloader.stakater.com") || f.text.contains("checksum/"))
                })
                .map(|f| f.path.clone())
                .collect()
        });
        let prefix = format!("{dir}/");
        files
            .iter()
            .any(|path| dir.is_empty() || path.starts_with(&prefix))
    }
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let context = Context {
        model,
        reloading_files: OnceCell::new(),
        owners: OnceCell::new(),
    };
    for file in model.kustomization_files() {
        check_file(&context, &file.dir, &file.root, out);
    }
}

fn hash_disabled(options: Option<&Node>) -> Option<&crate::yaml::Entry> {
    options?
        .entry("disableNameSuffixHash")
        .filter(|e| e.value.as_bool() == Some(true))
}

fn check_file(
    context: &Context<'_>,
    dir: &str,
    root: &Node,
    out: &mut Vec<Finding>,
) {
    let global = root.get("generatorOptions");
    let global_off = hash_disabled(global);
    let ignore_extraneous = global
        .and_then(|g| g.get("annotations"))
        .and_then(|a| a.get_str("argocd.argoproj.io/compare-options"))
        .is_some_and(|v| v.contains("IgnoreExtraneous"));
    for gen_key in GENERATORS {
        let Some(entry) = root.entry(gen_key) else {
            continue;
        };
        for item in entry.value.as_seq().unwrap_or_default() {
            let name = item
                .get("name")
                .and_then(Node::scalar_text)
                .unwrap_or_default();
            let off = hash_disabled(item.get("options")).or(global_off);
            if let Some(off) = off {
                // (a) stable name: changed config never rolls the pods.
                if !context.reloads(dir) {
                    out.push(
                        Finding::new(
                            ID,
                            Severity::Info,
                            format!(
                                "{gen_key} `{name}` keeps a stable name (disableNameSuffixHash): \
                                 config changes do not roll the pods that use it, so running \
                                 pods and Git diverge silently"
                            ),
                            off.key.span.cover(off.value.span),
                        )
                        .label("hash suffix disabled")
                        .help("Keep hash suffixes, or roll workloads on change (a checksum annotation, Reloader)."),
                    );
                }
                continue;
            }
            // (b) hashed names + no prune: every change leaves the old object behind.
            if ignore_extraneous {
                continue;
            }
            for &(app, prune, span) in context.owners(dir) {
                if prune {
                    continue;
                }
                let at = item.get("name").map(|n| n.span).unwrap_or(item.span);
                let mut f = Finding::new(
                    ID,
                    Severity::Warning,
                    format!(
                        "{gen_key} `{name}` gets a new hashed name on every change, and app {} \
                         does not prune: the old object stays{} after every config change",
                        app.name,
                        if app.flux.is_some() {
                            " in the cluster"
                        } else {
                            " and the app is OutOfSync (\"requires pruning\")"
                        }
                    ),
                    at,
                )
                .label("hashed generator")
                .help(if app.flux.is_some() {
                    "Enable prune (spec.prune: true on the Flux Kustomization), so that \
                     kustomize-controller deletes the old generated object."
                } else {
                    "Enable prune (syncPolicy.automated.prune: true), or attach \
                     argocd.argoproj.io/compare-options: IgnoreExtraneous through \
                     generatorOptions.annotations (with Prune=false if old objects must stay)."
                })
                .for_app(app);
                if let Some(span) = span {
                    f = f.secondary(span, format!("app {} syncs without prune", app.name));
                }
                out.push(f);
            }
        }
    }
}
