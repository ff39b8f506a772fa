//! Flux objects read from the repo: Kustomizations, HelmReleases and their
//! sources, ignore rules and drift-detection settings.

use super::Skip;
use super::app_of_apps::Pending;
use super::artifact::{ArtifactFs, ArtifactTree};
use super::context::*;
use super::envsubst;
use super::remotes::Judgement;
use super::rendered::Rendered;
use super::units::{HelmUnit, KustomizeUnit, Unit};
use super::{App, AppKind};
use crate::object::Object;
use crate::render::{IssueKind, RenderIssue};
use crate::source::Span;
use crate::source::{RepoFs, normalize_relative};
use crate::yaml::Node;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::model::flux::FluxApp;
use super::model::kinds::{app_kind_of, is_flux_app, is_flux_kustomization, is_git_repository};

/// Variables for `postBuild`: `substituteFrom` ConfigMaps/Secrets found in the repo (in
/// order, later overwrite earlier), then inline `substitute` (wins). A value only the
/// cluster knows (SOPS ciphertext, a Secret an ExternalSecret or SealedSecret makes) stays
/// `ENC[…]`. Missing non-optional references are returned for
/// `offline-unrenderable-input`, and what is known of each source's keys for
/// `flux-substitution-undefined`.
pub fn post_build_vars(spec: &Node, find: impl Fn(&str, &str) -> Option<Object>) -> PostBuildVars {
    let mut vars = BTreeMap::new();
    let mut missing = Vec::new();
    let mut sources = Vec::new();
    let Some(pb) = spec.get("postBuild") else {
        return PostBuildVars {
            vars,
            missing,
            sources,
        };
    };
    for from in pb
        .get("substituteFrom")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let kind = from.get_str("kind").unwrap_or("ConfigMap");
        let name = from.get_str("name").unwrap_or("");
        let found = find(kind, name);
        sources.push(super::model::flux::SubstSource {
            reference: format!("{kind}/{name}"),
            keys: super::producers::source_keys(found.as_ref(), &find),
        });
        match found {
            Some(obj) => {
                let secret = kind == "Secret";
                for key in ["data", "stringData"] {
                    if let Some(entries) = obj.root.get(key).and_then(Node::as_map) {
                        for e in entries {
                            let mut v = e.value.scalar_text().unwrap_or_default();
                            // Ciphertext is not base64 of the value: it stays as written.
                            if secret && key == "data" && !super::sops::is_ciphertext(&e.value) {
                                v = super::secret_data::decode_base64(&v).unwrap_or(v);
                            }
                            vars.insert(e.key.key_str().into_owned(), v);
                        }
                    }
                }
            }
            None if from.get("optional").and_then(Node::as_bool) == Some(true) => {}
            None => missing.push((
                from.full_span(),
                format!("postBuild.substituteFrom {kind}/{name} is not in the repository; its variables are unknown"),
            )),
        }
    }
    if let Some(entries) = pb.get("substitute").and_then(Node::as_map) {
        for e in entries {
            vars.insert(
                e.key.key_str().into_owned(),
                e.value.scalar_text().unwrap_or_default(),
            );
        }
    }
    PostBuildVars {
        vars,
        missing,
        sources,
    }
}

/// What [`post_build_vars`] reads from a Kustomization's `postBuild`.
pub struct PostBuildVars {
    pub vars: BTreeMap<String, String>,
    /// Non-optional `substituteFrom` references not in the repository, where they are named.
    pub missing: Vec<(Span, String)>,
    pub sources: Vec<super::model::flux::SubstSource>,
}

/// With no git remote, the URLs the repo's own Flux bootstrap syncs from: a GitRepository
/// in a `gotk-sync.yaml`, or the GitRepository a root Kustomization uses — one declared
/// under `clusters/`, or one whose `spec.path` holds its own file (it manages itself).
pub fn bootstrap_urls(plain: &[(Object, String)]) -> Vec<String> {
    let url_of = |o: &Object| {
        o.root
            .get_path(&["spec", "url"])
            .and_then(Node::scalar_text)
    };
    let mut urls: Vec<String> = plain
        .iter()
        .filter(|(o, f)| {
            is_git_repository(o) && (f == "gotk-sync.yaml" || f.ends_with("/gotk-sync.yaml"))
        })
        .filter_map(|(o, _)| url_of(o))
        .collect();
    for (o, file) in plain.iter().filter(|(o, _)| is_flux_kustomization(o)) {
        let path = o
            .root
            .get_path(&["spec", "path"])
            .and_then(Node::scalar_text)
            .and_then(|p| crate::source::normalize_relative(&p))
            .unwrap_or_default();
        let self_managed = path.is_empty() || file.starts_with(&format!("{path}/"));
        if !(self_managed || file.starts_with("clusters/")) {
            continue;
        }
        let spec = o.root.get("spec");
        let src = |k: &str| {
            spec.and_then(|s| s.get_path(&["sourceRef", k]))
                .and_then(Node::scalar_text)
        };
        if src("kind").as_deref() != Some("GitRepository") {
            continue;
        }
        let (Some(name), ns) = (
            src("name"),
            src("namespace").or_else(|| o.namespace.clone()),
        ) else {
            continue;
        };
        if let Some(url) = plain
            .iter()
            .find(|(g, _)| {
                is_git_repository(g)
                    && g.name == name
                    && (ns.is_none() || g.namespace.is_none() || g.namespace == ns)
            })
            .and_then(|(g, _)| url_of(g))
        {
            urls.push(url);
        }
    }
    urls
}

/// `spec.dependsOn`: `name`, or `namespace/name` when another namespace is named.
pub fn depends_on(o: &Object) -> Vec<String> {
    o.root
        .get_path(&["spec", "dependsOn"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|d| {
            let name = d.get("name").and_then(Node::scalar_text)?;
            Some(match d.get("namespace").and_then(Node::scalar_text) {
                Some(ns) if Some(&ns) != o.namespace.as_ref() => format!("{ns}/{name}"),
                _ => name,
            })
        })
        .collect()
}

pub(super) type FluxKey = (String, Option<String>, String);

/// The file that declares an object: where its name is written (a parent's patch may have
/// changed the rest, so the object's root can point at the patch).
pub(super) fn declared_in(o: &Object) -> crate::source::FileId {
    o.metadata()
        .and_then(|m| m.get("name"))
        .map_or(o.span().file, |n| n.span.file)
}

pub(super) fn flux_key(o: &Object) -> FluxKey {
    (o.kind.clone(), o.namespace.clone(), o.name.clone())
}

/// The same Flux object: kind and name, and the namespace when both name one.
pub(super) fn same_flux(a: &FluxKey, b: &FluxKey) -> bool {
    a.0 == b.0
        && a.2 == b.2
        && match (&a.1, &b.1) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        }
}

/// Kustomizations deployed by Kustomizations form a tree (the `cluster-apps` layout): each
/// Flux Kustomization or HelmRelease in a Kustomization's build becomes an app of its own,
/// read from the built object (the parent's patches and substitution applied), with the
/// parent recorded. A child also declared as a plain file is read again from the build.
///
/// With `from_builds`, the parents are the standalone kustomize and Helm builds instead (an
/// archive of retired apps, a tree no root reaches): the Flux objects they hold are listed
/// as apps too, under the directory that holds them.
pub(super) fn expand_flux(ctx: &mut Ctx, pending: &mut Vec<Pending>, from_builds: bool) {
    let mut keys: Vec<Option<FluxKey>> = pending
        .iter()
        .map(|(a, _, _)| a.flux.as_ref().map(|f| flux_key(&f.decl)))
        .collect();
    let mut parents: Vec<Option<usize>> = vec![None; pending.len()];
    // With `from_builds`, Kustomizations found in this pass are parents in turn.
    let first_new = pending.len();
    let mut i = 0;
    while i < pending.len() {
        let flux_parent = pending[i].0.kind == AppKind::FluxKustomization;
        let is_parent = if from_builds {
            (flux_parent && i >= first_new)
                || (pending[i].0.kind == AppKind::Standalone
                    && pending[i]
                        .1
                        .sources
                        .iter()
                        .any(|s| s.starts_with("kustomize ") || s.starts_with("helm ")))
        } else {
            flux_parent
        };
        if !is_parent {
            i += 1;
            continue;
        }
        let parent_ns = pending[i]
            .0
            .flux
            .as_ref()
            .and_then(|f| f.decl.namespace.clone());
        let default_ns = pending[i].2.clone().or(parent_ns);
        let mut children: Vec<Object> = pending[i]
            .1
            .objects
            .iter()
            .filter(|o| is_flux_app(o))
            .cloned()
            .collect();
        // Declarations this parent claims first: claiming one moves what it already deployed
        // into this parent's cluster, where the parent's other children then find it.
        let unclaimed = |o: &Object| {
            (0..pending.len()).any(|j| {
                parents[j].is_none()
                    && pending[j].0.parent.is_none()
                    && pending[j].0.flux.as_ref().is_some_and(|f| {
                        declared_in(&f.decl) == declared_in(o)
                            && same_flux(&flux_key(&f.decl), &flux_key(o))
                    })
            })
        };
        children.sort_by_key(|o| !unclaimed(o));
        for mut child in children {
            if child.namespace.is_none() {
                child.namespace = default_ns.clone();
            }
            let key = flux_key(&child);
            let at = child
                .metadata()
                .and_then(|m| m.get("name"))
                .map(|n| n.span)
                .unwrap_or(child.span());
            // The child lives where its parent applies: the parent's cluster. A parent that is
            // a directory nothing deploys places it as a declared file would be.
            let home = if pending[i].0.kind == AppKind::Standalone {
                let file = ctx.fs.source_map().get(child.span().file).path.clone();
                initial_flux_home(ctx, &file)
            } else {
                pending[i].0.cluster.clone()
            };
            let same_app = |j: usize, pending: &[Pending], keys: &[Option<FluxKey>]| {
                keys[j].as_ref().is_some_and(|k| same_flux(k, &key)) && pending[j].0.home == home
            };
            // A Kustomization that applies its own file (a bootstrap root) is not a child.
            if same_app(i, pending, &keys) {
                continue;
            }
            let mut chain = Vec::new();
            let mut cur = parents[i];
            while let Some(p) = cur {
                if chain.contains(&p) {
                    break;
                }
                chain.push(p);
                cur = parents[p];
            }
            if chain.iter().any(|&a| same_app(a, pending, &keys)) {
                let message = format!(
                    "Kustomization cycle: `{}` deploys its own ancestor `{}`",
                    pending[i].0.name, child.name
                );
                pending[i].1.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    input: None,
                    span: at,
                    message,
                });
                continue;
            }
            // The same app in this cluster, else the declaration of this very object that no
            // parent has claimed yet (its file, read as a root before the parent rendered).
            let orphan = |j: usize, pending: &[Pending]| {
                parents[j].is_none()
                    && pending[j].0.parent.is_none()
                    && keys[j].as_ref().is_some_and(|k| same_flux(k, &key))
                    && pending[j]
                        .0
                        .flux
                        .as_ref()
                        .is_some_and(|f| declared_in(&f.decl) == declared_in(&child))
            };
            // A standalone build that holds an object some app already deploys from the same
            // declaration holds that app, in whatever cluster it was placed.
            let same_declaration = |j: usize, pending: &[Pending]| {
                pending[i].0.kind == AppKind::Standalone
                    && keys[j].as_ref().is_some_and(|k| same_flux(k, &key))
                    && pending[j]
                        .0
                        .flux
                        .as_ref()
                        .is_some_and(|f| declared_in(&f.decl) == declared_in(&child))
            };
            let existing = (0..pending.len())
                .find(|&j| j != i && (same_app(j, pending, &keys) || same_declaration(j, pending)))
                .or_else(|| (0..pending.len()).find(|&j| j != i && orphan(j, pending)));
            if let Some(j) = existing {
                if orphan(j, pending) && flux_parent && !chain.contains(&j) {
                    // Declared as a file too: the built object is what the cluster gets.
                    let mut app = create_flux(ctx, &child);
                    place_flux_app(&mut app.0, home);
                    pending[j] = app;
                    parents[j] = Some(i);
                    // What it deployed while it was read as a root moves with it.
                    rehome_descendants(pending, &parents, j);
                }
                continue;
            }
            if chain.len() + 1 >= super::app_of_apps::MAX_DEPTH {
                pending[i].1.issues.push(RenderIssue {
                    kind: IssueKind::Unrenderable,
                    input: None,
                    span: at,
                    message: format!(
                        "Kustomizations nested deeper than {} levels: `{}` is not rendered",
                        super::app_of_apps::MAX_DEPTH,
                        child.name
                    ),
                });
                continue;
            }
            let mut app = create_flux(ctx, &child);
            place_flux_app(&mut app.0, home);
            pending.push(app);
            keys.push(Some(key));
            parents.push(Some(i));
        }
        i += 1;
    }
    for (j, parent) in parents.iter().enumerate() {
        if let Some(p) = parent {
            pending[j].0.parent = Some(pending[*p].0.name.clone());
            pending[j].0.parent_span = pending[*p].0.span;
        }
    }
}

/// Place every app below `root` (by `parents`) in its parent's cluster again, after `root`
/// moved: a declaration read as a root first and claimed by a parent later.
fn rehome_descendants(pending: &mut [Pending], parents: &[Option<usize>], root: usize) {
    let mut queue = vec![root];
    let mut seen = vec![false; pending.len()];
    while let Some(p) = queue.pop() {
        for k in 0..parents.len() {
            if parents[k] == Some(p) && !std::mem::replace(&mut seen[k], true) {
                let home = pending[p].0.cluster.clone();
                place_flux_app(&mut pending[k].0, home);
                queue.push(k);
            }
        }
    }
}

/// The reader of a Flux app a build holds (its children are Flux apps, `is_flux_app`): an
/// exhaustive match, like `discover.rs` `read_declaration`, so a new kind does not build until
/// it is read here too.
pub(super) fn create_flux(ctx: &mut Ctx, obj: &Object) -> Pending {
    match app_kind_of(obj) {
        Some(AppKind::FluxHelmRelease) => helm_release(ctx, obj),
        Some(AppKind::FluxKustomization) => flux_kustomization(ctx, obj),
        // Not a child a build yields (filtered above): read as a Kustomization, as before.
        Some(AppKind::Argo | AppKind::ArgoAppSet | AppKind::Standalone) | None => {
            flux_kustomization(ctx, obj)
        }
    }
}

/// What a Flux consumer reads: this repo as it is, or an artifact built from it (the
/// repo through its GitRepository's ignore rules, an ArtifactGenerator's output).
pub(super) enum FluxView {
    Repo,
    Tree(Arc<ArtifactTree>),
}

pub(super) fn view_has_dir(ctx: &Ctx, view: &FluxView, path: &str) -> bool {
    match view {
        FluxView::Repo => ctx.fs.is_dir(path),
        FluxView::Tree(t) => t.is_dir(path),
    }
}

/// The copy operations that keep the ExternalArtifact a `sourceRef`/`chartRef` names from
/// being built, as `render-failed` issues on their `from:` lines.
pub(super) fn artifact_failures(ctx: &Ctx, r: Option<&Node>, ns: &str) -> Vec<RenderIssue> {
    let Some(r) = r.filter(|r| r.get_str("kind") == Some("ExternalArtifact")) else {
        return Vec::new();
    };
    let name = r
        .get("name")
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let rns = r
        .get("namespace")
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| ns.to_string());
    ctx.artifact_problems
        .get(&(rns, name))
        .map(|ps| {
            ps.iter()
                .map(|(span, m)| RenderIssue {
                    kind: IssueKind::Failed,
                    input: None,
                    span: *span,
                    message: format!("ArtifactGenerator copy fails: {m}"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The source a Flux `sourceRef` names: this repo (by URL, else by the
/// path existing), an artifact built from it, or something the linter does not fetch.
/// A name resolves to the declaration nearest to `near`, the file of the object that names it.
pub(super) fn flux_source(
    ctx: &mut Ctx,
    spec: &Node,
    path: &str,
    ns: &str,
    near: &str,
) -> (Result<FluxView, Skip>, Option<Judgement>) {
    let kind = spec
        .get_path(&["sourceRef", "kind"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let name = spec
        .get_path(&["sourceRef", "name"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let src_ns = spec
        .get_path(&["sourceRef", "namespace"])
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| ns.to_string());
    match kind.as_str() {
        "GitRepository" => {
            let git = ctx.find("GitRepository", &src_ns, &name, near);
            let url = git.as_ref().and_then(|g| {
                g.root
                    .get_path(&["spec", "url"])
                    .and_then(Node::scalar_text)
            });
            let judgement = ctx.identity.judge(url.as_deref(), Some(path), ctx.fs);
            if judgement.local
                && let Some((branch, checkout)) =
                    git.as_ref().and_then(|g| other_branch(ctx, g, path))
            {
                // The same repository at another branch is other content: this checkout is
                // the branch the repo's other GitRepositories follow.
                let skip = Skip {
                    reason: "external-source",
                    message: format!(
                        "GitRepository {src_ns}/{name} follows branch `{branch}` of this repository, whose content is not {checkout}; the linter reads only this checkout"
                    ),
                };
                return (Err(skip), Some(judgement));
            }
            if !judgement.local {
                let skip = Skip {
                    reason: "external-source",
                    message: format!(
                        "GitRepository {src_ns}/{name} ({}) is another repository; the linter does not fetch it",
                        url.as_deref().unwrap_or("no URL")
                    ),
                };
                return (Err(skip), Some(judgement));
            }
            let view = match git.as_ref().and_then(|g| ctx.git_artifact(g)) {
                Some(tree) => FluxView::Tree(tree),
                None => FluxView::Repo,
            };
            (Ok(view), Some(judgement))
        }
        "ExternalArtifact" => match ctx.artifact(&src_ns, &name, near) {
            Some(Ok(tree)) => (Ok(FluxView::Tree(tree)), None),
            Some(Err(why)) => {
                let failed = ctx
                    .artifact_problems
                    .contains_key(&(src_ns.clone(), name.clone()));
                (
                    Err(Skip {
                        reason: if failed {
                            "render-failed"
                        } else {
                            "external-source"
                        },
                        message: format!("ExternalArtifact {src_ns}/{name}: {why}"),
                    }),
                    None,
                )
            }
            None => (
                Err(Skip {
                    reason: "external-source",
                    message: format!(
                        "ExternalArtifact {src_ns}/{name} is produced outside this repository; the linter does not fetch it"
                    ),
                }),
                None,
            ),
        },
        _ => {
            let url = ctx.find(&kind, &src_ns, &name, near).and_then(|o| {
                o.root
                    .get_path(&["spec", "url"])
                    .and_then(Node::scalar_text)
            });
            (
                Err(Skip {
                    reason: "external-source",
                    message: format!(
                        "source {kind}/{name}{} is an artifact the linter does not fetch",
                        url.map(|u| format!(" ({u})")).unwrap_or_default()
                    ),
                }),
                None,
            )
        }
    }
}

pub(super) fn flux_kustomization(ctx: &mut Ctx, obj: &Object) -> (App, Rendered, Option<String>) {
    let mut app = new_app(
        obj.name.clone(),
        AppKind::FluxKustomization,
        obj.metadata().and_then(|m| m.get("name")).map(|n| n.span),
    );
    let mut fx = FluxApp::read(obj);
    app.depends_on = depends_on(obj);
    // References resolve to the declarations nearest to this object's file.
    let near = ctx.fs.source_map().get(obj.span().file).path.clone();
    let mut rendered = Rendered::default();
    let ns = obj
        .namespace
        .clone()
        .unwrap_or_else(|| "flux-system".into());
    let Some(spec) = obj.root.get("spec") else {
        return (app, rendered, None);
    };
    let raw_path = spec
        .get("path")
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| "./".into());
    let at = spec.get("path").map(|n| n.span).unwrap_or(obj.span());
    let target_ns = spec.get("targetNamespace").and_then(Node::scalar_text);
    app.destination_namespace = target_ns.clone();
    match normalize_relative(&raw_path) {
        None => rendered.issues.push(RenderIssue {
            kind: IssueKind::Failed,
            input: None,
            span: at,
            message: format!("spec.path `{raw_path}` leaves the repository"),
        }),
        Some(path) => match flux_source(ctx, spec, &path, &ns, &near) {
            (Err(skip), judgement) => {
                app.repository = judgement;
                if skip.reason == "render-failed" {
                    rendered
                        .sources
                        .push(format!("artifact ({})", skip.message));
                } else {
                    rendered
                        .sources
                        .push(format!("external ({})", skip.message));
                }
                rendered
                    .issues
                    .extend(artifact_failures(ctx, spec.get("sourceRef"), &ns));
                app.skipped.push(skip);
            }
            (Ok(view), judgement) if !view_has_dir(ctx, &view, &path) => {
                app.repository = judgement;
                rendered.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    input: None,
                    span: at,
                    message: format!("kustomization path not found: `{raw_path}`"),
                })
            }
            (Ok(FluxView::Tree(tree)), judgement) => {
                app.repository = judgement;
                ctx.render_flux_tree(&tree, &path, spec, &mut rendered)
            }
            (Ok(FluxView::Repo), judgement) if super::flux_overlay::has_overlay(spec) => {
                app.repository = judgement;
                ctx.render_flux_overlay(&path, spec, &mut rendered)
            }
            (Ok(FluxView::Repo), judgement) => {
                app.repository = judgement;
                let unit = if ctx.layout.kustomizations.contains(&path) {
                    Unit::Kustomize(KustomizeUnit {
                        dir: path,
                        flux: true,
                        argo_options: None,
                    })
                } else {
                    Unit::FluxDirectory { dir: path }
                };
                ctx.render_unit(unit, at, &mut rendered);
            }
        },
    }
    // postBuild substitution on the built objects.
    let PostBuildVars {
        vars,
        missing,
        sources,
    } = post_build_vars(spec, |kind, name| ctx.find(kind, &ns, name, &near));
    fx.substitute_from = sources;
    for (span, message) in missing {
        rendered.issues.push(RenderIssue {
            kind: IssueKind::Unrenderable,
            input: None,
            span,
            message,
        });
    }
    if spec.get("postBuild").is_some() {
        let strategy_always = spec
            .get_path(&["postBuild", "substituteStrategy"])
            .and_then(Node::as_str)
            == Some("Always");
        if vars.is_empty() && !strategy_always {
            fx.substitution_skipped = true;
        }
        for o in rendered.objects.iter_mut() {
            let disabled = o.label("kustomize.toolkit.fluxcd.io/substitute") == Some("disabled")
                || o.annotation("kustomize.toolkit.fluxcd.io/substitute") == Some("disabled");
            if disabled || fx.substitution_skipped {
                continue;
            }
            envsubst::substitute_node(&mut o.root, &vars, &mut fx.subst_problems);
            if let Some(re) = Object::from_node(o.root.clone()) {
                *o = re;
            }
        }
    }
    // Only a Kustomization with commonMetadata changes objects (and so copies shared ones).
    if spec.get("commonMetadata").is_some() {
        for o in rendered.objects.iter_mut() {
            super::flux_overlay::apply_common_metadata(o, spec);
        }
    }
    app.flux = Some(fx);
    (app, rendered, target_ns)
}

pub(super) fn helm_release(ctx: &mut Ctx, obj: &Object) -> (App, Rendered, Option<String>) {
    let mut app = new_app(
        obj.name.clone(),
        AppKind::FluxHelmRelease,
        obj.metadata().and_then(|m| m.get("name")).map(|n| n.span),
    );
    app.flux = Some(FluxApp::read(obj));
    app.depends_on = depends_on(obj);
    // References resolve to the declarations nearest to this object's file.
    let near = ctx.fs.source_map().get(obj.span().file).path.clone();
    let mut rendered = Rendered::default();
    let ns = obj
        .namespace
        .clone()
        .unwrap_or_else(|| "flux-system".into());
    let Some(spec) = obj.root.get("spec") else {
        return (app, rendered, None);
    };
    let target_ns = spec.get("targetNamespace").and_then(Node::scalar_text);
    let release_ns = target_ns.clone().unwrap_or_else(|| ns.clone());
    app.destination_namespace = Some(release_ns.clone());
    // `chart.spec` (a HelmChart template), or `chartRef` to a HelmChart (same fields), an
    // OCIRepository or an ExternalArtifact (https://fluxcd.io/flux/components/helm/helmreleases/).
    let chart_ref = spec.get("chartRef");
    let ref_kind = chart_ref
        .and_then(|r| r.get("kind"))
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let ref_name = chart_ref
        .and_then(|r| r.get("name"))
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let ref_ns = chart_ref
        .and_then(|r| r.get("namespace"))
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| ns.clone());
    let ref_span = chart_ref.map(|n| n.span).unwrap_or(obj.span());
    // `input` names the chart as every app naming it does (one finding per chart).
    let not_fetched = |app: &mut App,
                       rendered: &mut Rendered,
                       span: Span,
                       chart: String,
                       why: String,
                       input: String| {
        rendered.sources.push(format!("chart {chart}"));
        app.skipped.push(Skip {
            reason: "remote-chart",
            message: format!("chart {chart} {why}"),
        });
        rendered.issues.push(RenderIssue {
            kind: IssueKind::Unrenderable,
            // Charts from sources `fetch` does not read (an ExternalArtifact, a HelmChart
            // or repository the repo does not hold) must be vendored.
            input: crate::render::MissingInput::vendor_only(input),
            span,
            message: format!("chart {chart} {why}"),
        });
    };
    let helm_chart = (spec.get_path(&["chart", "spec"]).is_none() && ref_kind == "HelmChart")
        .then(|| ctx.find("HelmChart", &ref_ns, &ref_name, &near))
        .flatten();
    let (chart_spec, chart_source_ns) = match (spec.get_path(&["chart", "spec"]), &helm_chart) {
        (Some(c), _) => (c.clone(), ns.clone()),
        (None, Some(hc)) => match hc.root.get("spec") {
            Some(c) => (c.clone(), ref_ns.clone()),
            None => return (app, rendered, None),
        },
        (None, None) if ref_kind == "ExternalArtifact" => {
            // The artifact is the chart: rendered when this repo builds it.
            let Some(Ok(tree)) = ctx.artifact(&ref_ns, &ref_name, &near) else {
                not_fetched(
                    &mut app,
                    &mut rendered,
                    ref_span,
                    format!("from ExternalArtifact {ref_ns}/{ref_name}"),
                    "is produced outside this repository".into(),
                    format!("ExternalArtifact {ref_ns}/{ref_name}"),
                );
                return (app, rendered, None);
            };
            let unit = flux_helm_unit(obj, spec, &ns, String::new(), vec![], ctx, &mut rendered);
            let afs = ArtifactFs {
                inner: ctx.fs,
                tree: &tree,
            };
            if !afs.is_file("Chart.yaml") {
                rendered.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    input: None,
                    span: ref_span,
                    message: format!(
                        "ExternalArtifact {ref_ns}/{ref_name} holds no Chart.yaml at its root"
                    ),
                });
                return (app, rendered, None);
            }
            mark_tree(ctx, &tree, "");
            ctx.render_unit_in(Unit::Helm(unit), Some(&tree), ref_span, &mut rendered);
            return (app, rendered, None);
        }
        (None, None)
            if ref_kind == "OCIRepository"
                && let Some(reference) = ctx
                    .find("OCIRepository", &ref_ns, &ref_name, &near)
                    .as_ref()
                    .and_then(super::remote_charts::flux_oci_repository_ref) =>
        {
            super::remote_charts::render_remote_chart(
                ctx,
                &mut app,
                &mut rendered,
                reference,
                ref_span,
                |ctx, rendered, root| {
                    Some(flux_helm_unit(obj, spec, &ns, root, vec![], ctx, rendered))
                },
            );
            return (app, rendered, None);
        }
        (None, None) => {
            let mut input = format!("{ref_kind} {ref_ns}/{ref_name}");
            let chart = if ref_kind == "OCIRepository" {
                let oci = ctx.find("OCIRepository", &ref_ns, &ref_name, &near);
                let url = oci
                    .as_ref()
                    .and_then(|o| o.root.get_path(&["spec", "url"]))
                    .and_then(Node::scalar_text)
                    .unwrap_or_else(|| "?".into());
                let r = |k: &str| {
                    oci.as_ref()
                        .and_then(|o| o.root.get_path(&["spec", "ref", k]))
                        .and_then(Node::scalar_text)
                };
                let version = r("digest")
                    .map(|d| format!("@{d}"))
                    .or_else(|| r("tag").map(|t| format!(":{t}")))
                    .or_else(|| r("semver").map(|t| format!(" {t}")))
                    .unwrap_or_default();
                input = format!("chart {url}{version}");
                format!("{url}{version} (OCIRepository {ref_ns}/{ref_name})")
            } else {
                format!("from {ref_kind} {ref_ns}/{ref_name}")
            };
            let why = if ref_kind == "HelmChart" {
                "is a HelmChart that is not in the repository"
            } else {
                "is an OCI artifact"
            };
            not_fetched(&mut app, &mut rendered, ref_span, chart, why.into(), input);
            return (app, rendered, None);
        }
    };
    let at = chart_spec
        .get("chart")
        .map(|n| n.span)
        .unwrap_or(obj.span());
    let Some(chart) = chart_spec.get("chart").and_then(Node::scalar_text) else {
        return (app, rendered, None);
    };
    let src_kind = chart_spec
        .get_path(&["sourceRef", "kind"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let src_name = chart_spec
        .get_path(&["sourceRef", "name"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    if src_kind == "HelmRepository" || normalize_relative(&chart).is_none() {
        let version = chart_spec
            .get("version")
            .and_then(Node::scalar_text)
            .unwrap_or_else(|| "*".into());
        // `sourceRef.namespace` defaults to the namespace of the object that names it.
        let repo_ns = chart_spec
            .get_path(&["sourceRef", "namespace"])
            .and_then(Node::scalar_text)
            .unwrap_or_else(|| chart_source_ns.clone());
        let repository = ctx.find("HelmRepository", &repo_ns, &src_name, &near);
        if src_kind == "HelmRepository"
            && let Some(reference) = repository
                .as_ref()
                .and_then(|r| super::remote_charts::flux_helm_repository_ref(r, &chart, &version))
        {
            let ignore_missing = chart_spec
                .get("ignoreMissingValuesFiles")
                .and_then(Node::as_bool)
                == Some(true);
            let files: Vec<Node> = chart_spec
                .get("valuesFiles")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .to_vec();
            super::remote_charts::render_remote_chart(
                ctx,
                &mut app,
                &mut rendered,
                reference,
                at,
                |ctx, rendered, root| {
                    // valuesFiles of a repository chart are paths inside the chart.
                    let mut value_files = Vec::new();
                    for v in &files {
                        let Some(text) = v.scalar_text() else {
                            continue;
                        };
                        match normalize_relative(&text)
                            .map(|p| format!("{root}/{p}"))
                            .filter(|p| ctx.fs.is_file(p))
                        {
                            Some(p) => value_files.push((p, v.span)),
                            None if ignore_missing => {}
                            None => {
                                rendered.issues.push(RenderIssue {
                                    kind: IssueKind::Failed,
                                    input: None,
                                    span: v.span,
                                    message: format!("values file `{text}` does not exist in the chart (set ignoreMissingValuesFiles to tolerate it)"),
                                });
                                return None;
                            }
                        }
                    }
                    let mut unit = flux_helm_unit(obj, spec, &ns, root, value_files, ctx, rendered);
                    unit.ignore_missing_value_files = ignore_missing;
                    Some(unit)
                },
            );
            return (app, rendered, None);
        }
        let url = repository
            .and_then(|o| {
                o.root
                    .get_path(&["spec", "url"])
                    .and_then(Node::scalar_text)
            })
            .map(|u| format!(" ({u})"))
            .unwrap_or_default();
        let input = match url.trim() {
            "" => format!("chart {chart} {version} from HelmRepository {repo_ns}/{src_name}"),
            u => format!(
                "chart {chart} {version} from {}",
                u.trim_matches(['(', ')'])
            ),
        };
        not_fetched(
            &mut app,
            &mut rendered,
            at,
            format!("`{chart}` {version} from HelmRepository {repo_ns}/{src_name}{url}"),
            "is not vendored in this repository".into(),
            input,
        );
        return (app, rendered, None);
    }
    let chart_path = normalize_relative(&chart).unwrap_or_default();
    let view = match flux_source(ctx, &chart_spec, &chart_path, &chart_source_ns, &near) {
        (Ok(view), judgement) => {
            app.repository = judgement;
            view
        }
        (Err(skip), judgement) => {
            app.repository = judgement;
            rendered.sources.push(format!("chart {chart}"));
            app.skipped.push(skip);
            return (app, rendered, None);
        }
    };
    if !view_has_dir(ctx, &view, &chart_path) {
        rendered.sources.push(format!("chart {chart}"));
        rendered.issues.push(RenderIssue {
            kind: IssueKind::Failed,
            input: None,
            span: at,
            message: format!("chart path `{chart}` does not exist in the source"),
        });
        return (app, rendered, None);
    }
    let base_fs = ctx.fs;
    let tree_fs;
    let fs: &dyn RepoFs = match &view {
        FluxView::Repo => base_fs,
        FluxView::Tree(tree) => {
            tree_fs = ArtifactFs {
                inner: base_fs,
                tree,
            };
            &tree_fs
        }
    };
    // chart.spec.valuesFiles: paths from the source's root, before valuesFrom.
    let ignore_missing = chart_spec
        .get("ignoreMissingValuesFiles")
        .and_then(Node::as_bool)
        == Some(true);
    let mut value_files = Vec::new();
    let mut missing_value_file = false;
    for v in chart_spec
        .get("valuesFiles")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let Some(text) = v.scalar_text() else {
            continue;
        };
        match normalize_relative(&text).filter(|p| fs.is_file(p)) {
            Some(p) => value_files.push((p, v.span)),
            None if ignore_missing => {}
            None => {
                missing_value_file = true;
                rendered.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    input: None,
                    span: v.span,
                    message: format!(
                        "values file `{text}` does not exist in the chart source (set ignoreMissingValuesFiles to tolerate it)"
                    ),
                });
            }
        }
    }
    if missing_value_file {
        // helm-controller fails the chart build: nothing of this release is applied.
        rendered.sources.push(format!("helm {chart_path}"));
        return (app, rendered, None);
    }
    let mut unit = flux_helm_unit(
        obj,
        spec,
        &ns,
        chart_path.clone(),
        value_files,
        ctx,
        &mut rendered,
    );
    unit.ignore_missing_value_files = ignore_missing;
    if let FluxView::Tree(tree) = &view {
        mark_tree(ctx, tree, &chart_path);
    }
    let tree = match &view {
        FluxView::Repo => None,
        FluxView::Tree(tree) => Some(tree),
    };
    ctx.render_unit_in(Unit::Helm(unit), tree, at, &mut rendered);
    // Helm's --namespace is a default: objects that name their namespace keep it.
    (app, rendered, None)
}

/// helm-controller's install of a HelmRelease: release name (`<targetNamespace>-<name>` unless
/// set), namespace, `valuesFrom` and `values` as layers
/// (https://fluxcd.io/flux/components/helm/helmreleases/).
pub(super) fn flux_helm_unit(
    obj: &Object,
    spec: &Node,
    ns: &str,
    chart_dir: String,
    value_files: Vec<(String, Span)>,
    ctx: &Ctx,
    rendered: &mut Rendered,
) -> HelmUnit {
    let near = &ctx.fs.source_map().get(obj.span().file).path;
    let find = |kind: &str, ns: &str, name: &str| ctx.find(kind, ns, name, near);
    let (values_layers, value_issues) =
        super::values_from::flux_values(spec, ns, &find, ctx.fs.source_map());
    rendered.issues.extend(value_issues);
    let target_ns = spec.get("targetNamespace").and_then(Node::scalar_text);
    let release_name = spec
        .get("releaseName")
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| match &target_ns {
            Some(t) => format!("{t}-{}", obj.name),
            None => obj.name.clone(),
        });
    HelmUnit {
        chart_dir,
        release_name,
        namespace: target_ns.unwrap_or_else(|| ns.to_string()),
        value_files,
        ignore_missing_value_files: false,
        inline_values: vec![],
        values_layers,
        parameters: vec![],
        skip_crds: false,
        kube_version: None,
        api_versions: vec![],
    }
}

/// `spec.ref.branch` of a GitRepository, when it names one.
fn ref_branch(git: &Object) -> Option<String> {
    git.root
        .get_path(&["spec", "ref", "branch"])
        .and_then(Node::scalar_text)
}

/// When `git` (a GitRepository judged to be this repository) follows a branch other than the
/// one most of the repository's own GitRepositories follow, that branch and the checkout's.
/// A tenant pointed at `ref.branch: dev-team` of the platform repo reads content this
/// checkout does not hold.
fn other_branch(ctx: &Ctx, git: &Object, path: &str) -> Option<(String, String)> {
    let branch = ref_branch(git)?;
    if !ctx
        .fs
        .is_dir(path.trim_start_matches("./").trim_end_matches('/'))
        && !is_main_source(ctx, git)
    {
        // A second source of this repository, on its own branch, names a path this
        // checkout lacks: that branch holds it. (The repository's main source naming a
        // missing path is a real render failure.)
        return Some((branch, "this checkout".to_string()));
    }
    let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for other in ctx.catalog.iter().filter(|o| o.kind == "GitRepository") {
        let url = other
            .root
            .get_path(&["spec", "url"])
            .and_then(Node::scalar_text);
        if !ctx.identity.judge(url.as_deref(), Some(""), ctx.fs).local {
            continue;
        }
        if let Some(b) = ref_branch(other) {
            *counts.entry(b).or_default() += 1;
        }
    }
    // The checkout's branch: the one most of them follow (ties: the first by name).
    let checkout = counts
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(b, _)| b.clone())?;
    (checkout != branch).then(|| {
        (
            branch,
            format!("`{checkout}` (the branch the other GitRepositories follow)"),
        )
    })
}

/// Is `git` the GitRepository most of the repository's Kustomizations read (by `sourceRef`
/// name; `flux-system`, the bootstrap one, counts even when it is not declared)?
fn is_main_source(ctx: &Ctx, git: &Object) -> bool {
    let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for k in ctx.catalog.iter().filter(|o| is_flux_kustomization(o)) {
        let source = |key: &str| {
            k.root
                .get_path(&["spec", "sourceRef", key])
                .and_then(Node::scalar_text)
        };
        if source("kind").as_deref() == Some("GitRepository")
            && let Some(name) = source("name")
        {
            *counts.entry(name).or_default() += 1;
        }
    }
    let mine = counts.get(&git.name).copied().unwrap_or(0);
    let most = counts.values().copied().max().unwrap_or(0);
    let tied = counts.values().filter(|&&n| n == most).count();
    // On a tie the bootstrap source (`flux-system`) is the main one.
    mine == most && (tied == 1 || git.name == "flux-system")
}
