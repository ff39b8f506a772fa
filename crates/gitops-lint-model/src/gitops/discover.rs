//! From parsed files to the app model: find the Argo CD and Flux apps and settings, decide
//! what each app renders (its units) and which objects it deploys, and gather the rest into
//! standalone apps (per directory, per unreferenced kustomization or chart).

use super::Skip;
use super::app_of_apps::{Origin, Pending};
use super::appset::{self, RepoTree};
use super::argo::{self};
use super::context::*;
use super::flux;
use super::model::flux::FluxApp;
use super::model::kinds::{app_kind_of, is_flux_app, is_flux_kustomization};
use super::remotes::{IdentityRule, RepoIdentity, git_remotes};
use super::render_jobs::{RenderMemo, render_parallel};
use super::rendered::Rendered;
use super::units::{HelmUnit, KustomizeUnit, Unit};
use super::{App, AppKind, Cluster, Controller, Model, ModelObject};
use crate::config::Profile;
use crate::object::Object;
use crate::render::RenderBudget;
use crate::source::{FileId, RepoFs, SourceMap, Span, is_within};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// What the model needs besides the files: from `.gitops-lint.yaml` and the command line.
pub struct ModelSettings<'a> {
    /// URLs that mean "this repository" in Application sources.
    pub repo_urls: &'a [String],
    /// Limits of each render.
    pub budget: &'a RenderBudget,
    /// The destination cluster (`profile:`): Helm's `.Capabilities` unless an app pins them.
    pub profile: &'a Profile,
    /// The lock file and cache: remote charts and bases `fetch` downloaded render from here.
    pub remotes: &'a crate::render::RemoteInputs,
}

pub fn build_model(
    files: &[LoadedFile],
    fs: &dyn RepoFs,
    map: Arc<SourceMap>,
    root: &Path,
    settings: &ModelSettings,
) -> Model {
    build_model_with(
        files,
        fs,
        map,
        root,
        settings,
        Some(&super::gotemplate::render),
    )
}

/// Passes that only plan (renders found are rendered together, on all cores, before the
/// next pass) before one that renders what is left where it is asked for. Each pass goes as
/// deep as the renders it has allow (a Flux Kustomization's children are known once it is
/// rendered), so this bounds the nesting planned in parallel, not what is rendered.
const MAX_PLANNING_PASSES: usize = 24;

/// A pass that found fewer renders than this is the last that plans: the next renders what
/// is left where it is asked for (a pass costs about as much as a few renders).
const MIN_JOBS_TO_PLAN_AGAIN: usize = 16;

/// Build the model. The builder runs in passes over the same files: a pass asks for the
/// renders its apps need (`RenderJob`s); those not yet done are noted and the pass stops at
/// the next phase boundary, the noted jobs are rendered in parallel into the memo, and the
/// next pass starts over with them. The pass that finds every render done is the model:
/// the same sequential reading as a single pass rendering in place, so the result does not
/// depend on the order the jobs finished in.
pub fn build_model_with(
    files: &[LoadedFile],
    fs: &dyn RepoFs,
    map: Arc<SourceMap>,
    root: &Path,
    settings: &ModelSettings,
    go_template: GoTemplateFn,
) -> Model {
    // Fetched inputs appear to every renderer as directories under `.gitops-lint/remote/`.
    let mounted = crate::render::MountFs {
        inner: fs,
        remotes: settings.remotes.clone(),
    };
    let fs: &dyn RepoFs = &mounted;
    let prepared = Prepared::of(files, fs, root, settings);
    let mut memo = RenderMemo::default();
    let mut carried = None;
    let mut pass = 0;
    let mut plan = true;
    loop {
        pass += 1;
        let mut ctx = prepared.new_ctx(fs, settings, memo, carried, plan);
        if let Some(model) = build_pass(&mut ctx, &prepared, &map, settings, go_template) {
            return model;
        }
        let jobs = std::mem::take(&mut ctx.wanted);
        // Each pass reads the repo again up to where it stopped: another one pays only while
        // it finds enough renders to share out (the first finds the roots, often few).
        plan = pass < MAX_PLANNING_PASSES && (pass == 1 || jobs.len() >= MIN_JOBS_TO_PLAN_AGAIN);
        let done = render_parallel(&ctx.job_env(), jobs);
        ctx.memo.extend(done);
        carried = Some(ctx.carry());
        memo = ctx.memo;
    }
}

/// What every pass starts from, read once from the parsed files: the repo's layout, its
/// plain manifests, who this repo is, what Flux references can name.
struct Prepared {
    layout: Layout,
    plain: Arc<Vec<(Object, String)>>,
    plain_by_dir: Arc<super::plain_index::PlainByDir>,
    identity: RepoIdentity,
    catalog: Arc<Vec<Object>>,
    tree_files: Vec<(FileId, String)>,
    /// The directories Flux bootstraps apply (`cluster::bootstrap_paths`).
    bootstraps: Arc<Vec<String>>,
}

impl Prepared {
    fn of(
        files: &[LoadedFile],
        fs: &dyn RepoFs,
        root: &Path,
        settings: &ModelSettings,
    ) -> Prepared {
        let layout = Layout::of(files);
        let mut plain: Vec<(Object, String)> = Vec::new();
        for f in files {
            if layout.is_render_input(&f.path) {
                continue;
            }
            for doc in &f.docs {
                if let Some(obj) = Object::from_node(doc.root.clone()) {
                    plain.push((obj, f.path.clone()));
                }
            }
        }
        let mut identity = RepoIdentity::new(&git_remotes(root), settings.repo_urls);
        if !identity.knows_urls() {
            // No remote and nothing configured: the repo's own declarations name it.
            for url in flux::bootstrap_urls(&plain) {
                identity.add(&url, IdentityRule::FluxBootstrap);
            }
            if let Some(url) = argo::majority_repo_url(&plain, fs) {
                identity.add(&url, IdentityRule::ArgoMajority);
            }
        }
        // What Flux references can name: declared objects first, then every object written
        // in a render input as it is (the ConfigMap a `substituteFrom` names often sits in a
        // kustomization another Kustomization builds).
        let mut catalog: Vec<Object> = plain
            .iter()
            .filter(|(o, _)| flux_can_name(&o.api_version, &o.kind))
            .map(|(o, _)| o.clone())
            .collect();
        for f in files.iter().filter(|f| layout.is_render_input(&f.path)) {
            catalog.extend(
                f.docs
                    .iter()
                    .filter(|d| {
                        let text = |key| {
                            d.root
                                .get(key)
                                .and_then(crate::yaml::Node::as_str)
                                .unwrap_or("")
                        };
                        flux_can_name(text("apiVersion"), text("kind"))
                    })
                    .filter_map(|d| Object::from_node(d.root.clone())),
            );
        }
        // Then the Secrets the ExternalSecrets and SealedSecrets among them make.
        let made = super::producers::made_secrets(&catalog);
        catalog.extend(made);
        // A bootstrap Kustomization is often listed by the kustomization of its own directory
        // (`flux/config/kustomization.yaml`): read the Flux objects of render inputs as
        // written too, each with its file.
        let path_of: std::collections::HashMap<FileId, &str> =
            files.iter().map(|f| (f.id, f.path.as_str())).collect();
        let written = catalog
            .iter()
            .filter(|o| is_flux_kustomization(o))
            .filter_map(|o| Some((o, *path_of.get(&o.span().file)?)));
        let bootstraps = super::cluster::bootstrap_paths(
            plain.iter().map(|(o, f)| (o, f.as_str())).chain(written),
            files.iter().map(|f| f.path.as_str()),
        );
        Prepared {
            bootstraps: Arc::new(bootstraps),
            layout,
            plain_by_dir: Arc::new(super::plain_index::PlainByDir::of(
                plain.iter().map(|(_, file)| file.as_str()),
            )),
            plain: Arc::new(plain),
            identity,
            catalog: Arc::new(catalog),
            tree_files: files.iter().map(|f| (f.id, f.path.clone())).collect(),
        }
    }

    /// The builder's state at the start of a pass: the artifacts this repo builds are built
    /// in the first and carried to the next ones.
    fn new_ctx<'a>(
        &self,
        fs: &'a dyn RepoFs,
        settings: &ModelSettings<'a>,
        memo: RenderMemo,
        carried: Option<Carried>,
        defer_renders: bool,
    ) -> Ctx<'a> {
        let first = carried.is_none();
        let carried = carried.unwrap_or_default();
        let mut ctx = Ctx {
            layout: self.layout.clone(),
            identity: self.identity.clone(),
            fs,
            plain: self.plain.clone(),
            plain_by_dir: self.plain_by_dir.clone(),
            owned: vec![false; self.plain.len()],
            rendered_dirs: BTreeSet::new(),
            budget: settings.budget.clone(),
            profile: settings.profile,
            catalog: self.catalog.clone(),
            bootstraps: self.bootstraps.clone(),
            artifacts: carried.artifacts,
            artifact_problems: carried.artifact_problems,
            all_files: carried.all_files,
            git_trees: carried.git_trees,
            remotes: settings.remotes.clone(),
            memo,
            defer_renders,
            wanted: Vec::new(),
            wanted_keys: Default::default(),
            tree_keys: carried.tree_keys,
        };
        if first {
            ctx.build_artifacts();
        }
        ctx
    }
}

/// A pass stops at a phase boundary when it asked for renders not done yet: what comes
/// after depends on them.
fn renders_missing(ctx: &Ctx) -> bool {
    !ctx.wanted.is_empty()
}

/// One pass of the model builder (see [`build_model_with`]): the model, or `None` when it
/// asked for renders that are not done yet (`ctx.wanted`).
fn build_pass(
    ctx: &mut Ctx,
    prepared: &Prepared,
    map: &Arc<SourceMap>,
    settings: &ModelSettings,
    go_template: GoTemplateFn,
) -> Option<Model> {
    let mut model = Model {
        map: map.clone(),
        apps: Vec::new(),
        objects: Vec::new(),
        argo: Default::default(),
        argo_instances: Vec::new(),
        platform: Default::default(),
        profile: settings.profile.clone(),
        versions: Default::default(),
    };
    let tree_files = &prepared.tree_files;
    let cluster_secrets: Vec<Object> = ctx
        .plain
        .iter()
        .map(|(o, _)| o)
        .filter(|o| appset::is_cluster_secret(o))
        .cloned()
        .collect();
    let plain = ctx.plain.clone();
    let declared = plain.iter().map(|(o, _)| o);
    let map = map.clone();

    // (app, rendered objects, default namespace override)
    let mut pending: Vec<(App, Rendered, Option<String>)> = Vec::new();
    // The Application / ApplicationSet each pending app was read from (app-of-apps).
    let mut origins: Vec<Option<Origin>> = Vec::new();
    // Applications the declared ApplicationSets generated so far (`limits.max-apps`).
    let mut generated = 0usize;
    let reading = Reading {
        tree: RepoTree {
            files: tree_files,
            map: &map,
            clusters: &cluster_secrets,
        },
        go_template,
    };
    for obj in declared {
        let Some(kind) = app_kind_of(obj) else {
            continue;
        };
        let before = pending.len();
        pending.extend(read_declaration(ctx, obj, &kind, &reading, &mut generated));
        // An app-of-apps child knows the Application or ApplicationSet it was read from.
        let origin = (kind.controller() == Controller::Argocd).then(|| Origin::of(obj));
        origins.resize(before, None);
        origins.resize(pending.len(), origin);
    }
    for (app, _, _) in pending.iter_mut() {
        if let Some(file) = app.flux.as_ref().map(|f| map.path(f.decl.span().file)) {
            let home = initial_flux_home(ctx, &file);
            place_flux_app(app, home);
        }
    }

    flux::expand_flux(ctx, &mut pending, false);
    let max_apps = ctx.budget.max_apps;
    super::app_of_apps::expand(&mut pending, &mut origins, false, max_apps, |obj| {
        rendered_argo_apps(ctx, obj, &reading)
    });
    if renders_missing(ctx) {
        return None;
    }

    // Standalone: unreferenced kustomizations and charts, then loose manifests per directory.
    let standalone_kustomize = standalone_kustomizations(&ctx.layout, &ctx.rendered_dirs);
    let standalone_charts: Vec<String> = ctx
        .layout
        .charts
        .iter()
        .filter(|d| !ctx.layout.charts.iter().any(|c| c != *d && is_within(c, d)))
        .filter(|d| !ctx.rendered_dirs.contains(*d))
        .cloned()
        .collect();
    // What each standalone app stands for, to drop it if an app found below renders it.
    let mut standalone_of: Vec<(usize, Result<String, Vec<usize>>)> = Vec::new();
    for dir in standalone_kustomize {
        standalone_of.push((pending.len(), Ok(dir.clone())));
        let mut r = Rendered::default();
        let at = kustomization_span(tree_files, &dir);
        ctx.render_unit(
            Unit::Kustomize(KustomizeUnit {
                dir: dir.clone(),
                flux: false,
                argo_options: None,
            }),
            at,
            &mut r,
        );
        pending.push((
            new_app(
                if dir.is_empty() { ".".into() } else { dir },
                AppKind::Standalone,
                Some(at),
            ),
            r,
            None,
        ));
    }
    for dir in standalone_charts {
        standalone_of.push((pending.len(), Ok(dir.clone())));
        let mut r = Rendered::default();
        let chart_yaml = if dir.is_empty() {
            "Chart.yaml".to_string()
        } else {
            format!("{dir}/Chart.yaml")
        };
        let at = tree_files
            .iter()
            .find(|(_, path)| *path == chart_yaml)
            .map(|(id, _)| Span::new(*id, 0, 0))
            .unwrap_or_default();
        let name = file_name(&dir).to_string();
        let unit = HelmUnit {
            chart_dir: dir.clone(),
            release_name: "release-name".into(),
            namespace: "default".into(),
            value_files: vec![],
            ignore_missing_value_files: false,
            inline_values: vec![],
            values_layers: vec![],
            parameters: vec![],
            skip_crds: false,
            kube_version: None,
            api_versions: vec![],
        };
        ctx.render_unit(Unit::Helm(unit), at, &mut r);
        pending.push((
            new_app(
                if name.is_empty() { ".".into() } else { name },
                AppKind::Standalone,
                Some(at),
            ),
            r,
            None,
        ));
    }
    let mut by_dir: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (_, file)) in ctx.plain.iter().enumerate() {
        if !ctx.owned[i] {
            by_dir.entry(dir_of(file).to_string()).or_default().push(i);
        }
    }
    for (dir, indices) in by_dir {
        let mut r = Rendered {
            sources: vec![format!(
                "directory {}",
                if dir.is_empty() { "." } else { &dir }
            )],
            ..Default::default()
        };
        r.objects = indices.iter().map(|&i| ctx.plain[i].0.clone()).collect();
        standalone_of.push((pending.len(), Err(indices)));
        pending.push((
            new_app(
                if dir.is_empty() { ".".into() } else { dir },
                AppKind::Standalone,
                None,
            ),
            r,
            None,
        ));
    }

    if renders_missing(ctx) {
        return None;
    }
    // Directories rendered from here on are rendered by apps found in standalone builds.
    let _before = std::mem::take(&mut ctx.rendered_dirs);
    flux::expand_flux(ctx, &mut pending, true);
    super::app_of_apps::expand(&mut pending, &mut origins, true, max_apps, |obj| {
        rendered_argo_apps(ctx, obj, &reading)
    });
    if renders_missing(ctx) {
        return None;
    }
    // Every Flux object the repo declares is an app: one in a build that did not render
    // (a remote base, a broken fragment) is listed as written, not rendered.
    // Known by name and by the file that declares it: the same names in another cluster's
    // files are other objects.
    let known: Vec<(flux::FluxKey, FileId)> = pending
        .iter()
        .filter_map(|(a, _, _)| {
            a.flux
                .as_ref()
                .map(|f| (flux::flux_key(&f.decl), flux::declared_in(&f.decl)))
        })
        .collect();
    let unlisted: Vec<Object> = ctx
        .catalog
        .iter()
        .filter(|o| is_flux_app(o))
        .filter(|o| !o.name.contains("${"))
        .filter(|o| {
            !known.iter().any(|(k, file)| {
                // Render inputs hold patches that look like the objects they patch: by
                // name there; a plain file declares its own object.
                let declared = flux::declared_in(o);
                flux::same_flux(k, &flux::flux_key(o))
                    && (*file == declared || ctx.layout.is_render_input(&map.path(declared)))
            })
        })
        .cloned()
        .collect();
    for obj in unlisted {
        let Some(kind) = app_kind_of(&obj) else {
            continue;
        };
        let mut app = new_app(
            obj.name.clone(),
            kind,
            obj.metadata().and_then(|m| m.get("name")).map(|n| n.span),
        );
        app.flux = Some(FluxApp::read(&obj));
        app.depends_on = flux::depends_on(&obj);
        let file = ctx.fs.source_map().get(obj.span().file).path.clone();
        let home = initial_flux_home(ctx, &file);
        place_flux_app(&mut app, home);
        app.skipped.push(Skip {
            reason: "parent-not-rendered",
            message: format!(
                "declared in {file}, which no rendered build deploys: listed as written, not rendered"
            ),
        });
        pending.push((app, Rendered::default(), None));
    }
    // A standalone directory that an app found inside a standalone build renders (the
    // Applications of an app-of-apps chart) is that app's, not an app of its own.
    let parents: BTreeSet<String> = pending
        .iter()
        .filter_map(|(a, _, _)| a.parent.clone())
        .collect();
    let superseded: BTreeSet<usize> = standalone_of
        .into_iter()
        .filter(|(i, what)| {
            !parents.contains(&pending[*i].0.name)
                && match what {
                    Ok(dir) => ctx.rendered_dirs.contains(dir),
                    Err(indices) => indices.iter().all(|&k| ctx.owned[k]),
                }
        })
        .map(|(i, _)| i)
        .collect();
    let mut pending: Vec<Pending> = pending
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !superseded.contains(i))
        .map(|(_, p)| p)
        .collect();
    let source_trees = local_source_trees(ctx);
    let shipped = |file: &str| {
        source_trees
            .iter()
            .any(|t| t.files.values().any(|repo| repo == file))
    };
    for (app, rendered, _) in pending.iter_mut() {
        if let Some(flux) = app.flux.as_ref().filter(|_| app.parent.is_none())
            && !source_trees.is_empty()
        {
            app.outside_source = !shipped(map.path(flux.decl.span().file).as_str());
        }
        // A directory that holds Flux objects is applied by `flux bootstrap` or by hand when a
        // GitRepository ships it, and is an archive when none does.
        if app.kind == AppKind::Standalone {
            app.outside_source = match app.span {
                Some(span) if !source_trees.is_empty() => !shipped(map.path(span.file).as_str()),
                _ => true,
            };
            let excluded = !source_trees.is_empty() && app.outside_source;
            app.entry_point = !excluded && rendered.objects.iter().any(declares_gitops);
        }
    }
    place_apps(&mut pending, &cluster_secrets, &prepared.bootstraps, &map);
    // This pass is the model: no render is asked for from here on.
    ctx.memo.release_outputs();
    // Thousands of objects, each moved once into place rather than again as the list grows.
    model
        .objects
        .reserve(pending.iter().map(|(_, r, _)| r.objects.len()).sum());
    model.apps.reserve(pending.len());
    // Argo CD ConfigMaps made from an unfetched argo-cd chart's values, by app.
    let mut argo_config: Vec<(Object, usize)> = Vec::new();
    for (mut app, mut rendered, ns_override) in pending {
        let index = model.apps.len();
        argo_config.extend(rendered.argo_config.drain(..).map(|o| (o, index)));
        ctx.note_unfetched(&mut rendered);
        app.issues.extend(rendered.issues);
        app.sources.extend(rendered.sources);
        for skip in rendered.skipped {
            if !app.skipped.iter().any(|s| s.message == skip.message) {
                app.skipped.push(skip);
            }
        }
        for r in rendered.remotes {
            if !app.remotes.contains(&r) {
                app.remotes.push(r);
            }
        }
        app.kustomize_dirs.extend(rendered.kustomize_dirs);
        app.render_differences.extend(rendered.differences);
        for obj in rendered.objects.into_objects() {
            let namespace = if obj.is_cluster_scoped() {
                String::new()
            } else {
                ns_override
                    .clone()
                    .or_else(|| obj.namespace.clone())
                    .or_else(|| app.destination_namespace.clone())
                    .unwrap_or_else(|| "default".into())
            };
            app.objects.push(model.objects.len());
            model.objects.push(ModelObject {
                object: obj,
                app: index,
                namespace,
            });
        }
        model.apps.push(app);
    }
    // Argo CD's settings as rendered (kustomize namespace, patches, generators, chart values).
    let chart_config: Vec<ModelObject> = argo_config
        .into_iter()
        .map(|(object, app)| ModelObject {
            namespace: object.namespace.clone().unwrap_or_else(|| "default".into()),
            object,
            app,
        })
        .collect();
    model.argo_instances = argo::read_instances(
        model.objects.iter().chain(chart_config.iter()),
        &model.apps,
        &model.map,
    );
    if let Some(first) = model
        .argo_instances
        .iter()
        .find(|s| s.decl.is_some() && s.namespace.as_deref() == Some("argocd"))
        .or_else(|| model.argo_instances.iter().find(|s| s.decl.is_some()))
        .or(model.argo_instances.first())
    {
        model.argo = first.clone();
    }
    model.versions = super::versions::judge(&model, settings.profile);
    Some(model)
}

/// An Argo CD or Flux declaration: a directory of them is what a person (or `flux
/// bootstrap`) applies to start GitOps in a cluster (`kubectl apply -f argocd/`,
/// `clusters/prod`).
fn declares_gitops(o: &Object) -> bool {
    let group = o.group();
    group == "argoproj.io" || group.ends_with(".fluxcd.io")
}

/// Every app's cluster, as the build ends: Argo CD apps by their destination, Flux trees
/// without a bootstrap path settled into one cluster or one per root (`cluster::settle`).
fn place_apps(
    pending: &mut [Pending],
    cluster_secrets: &[Object],
    bootstraps: &[String],
    map: &SourceMap,
) {
    let applied_root: Vec<bool> = pending
        .iter()
        .map(|(a, _, _)| a.parent.is_none() && !a.outside_source)
        .collect();
    let keys: Vec<Option<(String, String, String)>> = pending
        .iter()
        .map(|(a, _, _)| {
            a.flux.as_ref().map(|f| {
                let (kind, ns, name) = flux::flux_key(&f.decl);
                (kind, ns.unwrap_or_default(), name)
            })
        })
        .collect();
    let mut clusters: Vec<Cluster> = pending.iter().map(|(a, _, _)| a.cluster.clone()).collect();
    let mut homes: Vec<Cluster> = pending.iter().map(|(a, _, _)| a.home.clone()).collect();
    super::cluster::settle(
        &mut clusters,
        &mut homes,
        &keys,
        &applied_root,
        bootstraps.len(),
    );
    for (((app, _, _), cluster), home) in pending.iter_mut().zip(clusters).zip(homes) {
        app.cluster = cluster;
        app.home = home;
        if let Some(spec) = app.argo.as_ref().and_then(|a| a.decl.root.get("spec")) {
            app.cluster = super::cluster::argo_destination(spec, cluster_secrets);
        }
        // A directory below a bootstrap path is applied there by the bootstrap.
        if app.kind == AppKind::Standalone {
            // Kustomizations and charts by the file that makes them one; a directory of
            // manifests is named by its directory ("." for the root).
            let dir = match app.span {
                Some(span) => dir_of(&map.path(span.file)).to_string(),
                None if app.name == "." => String::new(),
                None => app.name.clone(),
            };
            if let Some(c) = super::cluster::bootstrap_cluster_of(bootstraps, &dir) {
                app.cluster = c.clone();
                app.home = c;
            }
        }
    }
}

/// The kustomizations built as standalone apps: those no other kustomization lists and no
/// app renders, then one per group of kustomizations that only list each other (a cycle no
/// root reaches: its build reports the cycle, once, on the entry that closes it).
/// Components and directories inside charts are fragments, never built alone.
fn standalone_kustomizations(layout: &Layout, rendered: &BTreeSet<String>) -> Vec<String> {
    let listed_by_other: BTreeSet<&str> = layout
        .edges
        .iter()
        .filter(|(from, to)| from != to)
        .map(|(_, to)| to.as_str())
        .collect();
    let fragment =
        |d: &str| layout.components.contains(d) || layout.charts.iter().any(|c| is_within(c, d));
    let mut reached: BTreeSet<String> = rendered.clone();
    // Flux `spec.components` directories are reached through their Kustomization.
    reached.extend(
        layout
            .referenced
            .iter()
            .filter(|d| !listed_by_other.contains(d.as_str()))
            .cloned(),
    );
    let mut out = Vec::new();
    let mut queue: Vec<String> = Vec::new();
    for d in &layout.kustomizations {
        if !listed_by_other.contains(d.as_str()) && !layout.referenced.contains(d) {
            if !rendered.contains(d) && !fragment(d) {
                out.push(d.clone());
            }
            queue.push(d.clone());
        }
    }
    queue.extend(reached.iter().cloned());
    let reach = |queue: &mut Vec<String>, reached: &mut BTreeSet<String>| {
        while let Some(d) = queue.pop() {
            for (_, to) in layout.edges.iter().filter(|(from, _)| *from == d) {
                if reached.insert(to.clone()) {
                    queue.push(to.clone());
                }
            }
        }
    };
    for d in &queue {
        reached.insert(d.clone());
    }
    reach(&mut queue, &mut reached);
    for d in &layout.kustomizations {
        if reached.contains(d) || fragment(d) {
            continue;
        }
        out.push(d.clone());
        reached.insert(d.clone());
        let mut q = vec![d.clone()];
        reach(&mut q, &mut reached);
    }
    out
}

fn kustomization_span(files: &[(FileId, String)], dir: &str) -> Span {
    files
        .iter()
        .find(|(_, path)| dir_of(path) == dir && is_kustomization_file(path))
        .map(|(id, _)| Span::new(*id, 0, 0))
        .unwrap_or_default()
}

/// Can a Flux reference name an object of this kind? Source, Kustomization and HelmRelease
/// references name Flux objects; `valuesFrom`, `substituteFrom` and `secretRef` name
/// ConfigMaps and Secrets, and a Secret may be one an ExternalSecret or SealedSecret makes
/// (`producers.rs`). The catalog keeps only these (a monorepo's render inputs hold
/// thousands of Deployments no reference can name).
fn flux_can_name(api_version: &str, kind: &str) -> bool {
    match api_version.split_once('/') {
        Some((group, _)) => {
            group.ends_with(".fluxcd.io") || super::producers::makes_secret(api_version, kind)
        }
        None => matches!(kind, "ConfigMap" | "Secret"),
    }
}

/// The artifacts of this repository's GitRepositories that filter it (`spec.ignore`,
/// `.sourceignore`); empty when none does, so every file counts as in the source.
fn local_source_trees(ctx: &mut Ctx) -> Vec<std::sync::Arc<super::artifact::ArtifactTree>> {
    let gits: Vec<Object> = ctx
        .catalog
        .iter()
        .filter(|o| o.kind == "GitRepository")
        .filter(|g| {
            let url = g
                .root
                .get_path(&["spec", "url"])
                .and_then(crate::yaml::Node::scalar_text);
            ctx.identity.judge(url.as_deref(), Some(""), ctx.fs).local
        })
        .cloned()
        .collect();
    gits.iter().filter_map(|g| ctx.git_artifact(g)).collect()
}

/// What the readers need besides the object and the builder's state: the repository's files
/// and clusters (ApplicationSet generators) and the Go template engine they render with.
struct Reading<'a> {
    tree: RepoTree<'a>,
    go_template: GoTemplateFn<'a>,
}

/// The reader of each kind of app declaration (`model::kinds` says which objects are which):
/// an exhaustive match, so a kind added to `AppKind` does not build until it has a reader.
/// `generated` counts the Applications ApplicationSets made (`limits.max-apps`).
fn read_declaration(
    ctx: &mut Ctx,
    obj: &Object,
    kind: &AppKind,
    reading: &Reading,
    generated: &mut usize,
) -> Vec<Pending> {
    match kind {
        AppKind::Argo => obj
            .root
            .get("spec")
            .map(|spec| {
                vec![argo::argo_app(
                    ctx,
                    obj,
                    obj.name.clone(),
                    spec,
                    AppKind::Argo,
                )]
            })
            .unwrap_or_default(),
        AppKind::ArgoAppSet => {
            argo::appset_apps(ctx, obj, &reading.tree, reading.go_template, generated)
        }
        AppKind::FluxKustomization => vec![flux::flux_kustomization(ctx, obj)],
        AppKind::FluxHelmRelease => vec![flux::helm_release(ctx, obj)],
        // Directories and builds nothing declares: made by the builder, never read.
        AppKind::Standalone => Vec::new(),
    }
}

/// The apps an Application or ApplicationSet that another app renders stands for (the
/// app-of-apps step, for declared and for standalone builds alike). ApplicationSets found
/// here are counted by app-of-apps' own total (`app_of_apps::expand`).
fn rendered_argo_apps(ctx: &mut Ctx, obj: &Object, reading: &Reading) -> Vec<Pending> {
    match app_kind_of(obj) {
        Some(kind) => read_declaration(ctx, obj, &kind, reading, &mut 0),
        None => Vec::new(),
    }
}
