//! Native `kustomize build` with provenance.
//!
//! Renders a kustomization the way `kubectl kustomize` (Kustomize v5.5) does, offline and
//! without running anything from the repository, reading every file through [`RepoFs`].
//! Each output node keeps the span of the place a person edits: the base manifest, the
//! patch that set it (with the overridden base value as a related span), or the
//! kustomization entry whose transformer produced it.

mod acc;
mod budget;
mod build;
mod crds;
mod fieldpath;
mod fieldspec;
mod files;
mod generators;
pub mod git_url;
mod helm_charts;
mod json6902;
mod kustomization;
mod merge_keys;
mod name_hash;
mod nameref;
mod namespace;
mod openapi;
mod overrides;
mod patches;
mod plugins;
mod remote_file;
mod replacements;
mod resource;
mod selector;
mod shared;
mod smp;
mod sort;
mod transform;
mod tree;
mod value_add;
mod vars;

pub use shared::SharedBuilds;

pub use overrides::{ImageOverride, KustomizeOverrides, PatchOverride, ReplicaOverride};

use crate::object::Object;
use crate::render::RenderOutput;
use crate::source::{RepoFs, Span};
use acc::{Builder, Fail};
use resource::Resource;

/// Where files may be loaded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LoadRestrictions {
    /// kustomize's default (and Argo CD's): files only in or below the kustomization's
    /// directory; other directories only as kustomizations.
    #[default]
    RootOnly,
    /// `--load-restrictor LoadRestrictionsNone` (Flux): any file, but still never outside
    /// the repository.
    None,
}

#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub load_restrictions: LoadRestrictions,
    /// Most resources one build may hold.
    pub max_resources: usize,
    /// Deepest chain of nested kustomizations.
    pub max_depth: usize,
    /// When the build must give up (`limits.max-render-seconds`).
    pub deadline: Option<std::time::Instant>,
    /// Fetched remote bases and charts (`helmCharts` with a `repo`).
    pub remotes: crate::render::RemoteInputs,
    /// Included kustomizations built once and shared with other builds over the same files
    /// (`shared.rs`); `None` builds every one.
    pub shared: Option<std::sync::Arc<SharedBuilds>>,
    /// Bytes the build may create (`budget.rs`; `limits.max-render-memory-bytes`).
    pub max_memory_bytes: usize,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            load_restrictions: LoadRestrictions::RootOnly,
            max_resources: 50_000,
            max_depth: 64,
            deadline: None,
            remotes: crate::render::RemoteInputs::default(),
            shared: None,
            max_memory_bytes: crate::render::gotmpl::funcs::memory::DEFAULT_MAX_RENDER_MEMORY_BYTES,
        }
    }
}

/// Build the kustomization in `dir` (repo-relative; "" or "." for the root).
pub fn build(fs: &dyn RepoFs, dir: &str, opts: &BuildOptions) -> RenderOutput {
    run(fs, dir, opts, None)
}

/// Build with Argo CD's `source.kustomize` overrides applied to the kustomization file as
/// Argo applies them (`kustomize edit set …` on a copy).
pub fn build_with_overrides(
    fs: &dyn RepoFs,
    dir: &str,
    overrides: &KustomizeOverrides,
    opts: &BuildOptions,
) -> RenderOutput {
    let dir = normalize_dir(dir);
    let b = Builder::new(fs, opts);
    let k = match b.load_kustomization(&dir, Span::default()) {
        Ok(k) => k,
        Err(issue) => return failed_output(*issue),
    };
    let node = overrides.apply(&k);
    run(fs, &dir, opts, Some((dir.clone(), node)))
}

/// Build `dir` with its kustomization file's content replaced by `kustomization`: the
/// overlay a GitOps controller writes before building (Flux's kustomize-controller). The
/// directory must hold a kustomization file; spans stay those of the given nodes.
pub fn build_with_kustomization(
    fs: &dyn RepoFs,
    dir: &str,
    kustomization: crate::yaml::Node,
    opts: &BuildOptions,
) -> RenderOutput {
    let dir = normalize_dir(dir);
    run(fs, &dir, opts, Some((dir.clone(), kustomization)))
}

/// The YAML stream `kubectl kustomize` prints for these objects.
pub fn to_yaml_stream(objects: &[Object]) -> String {
    crate::yaml::emit::to_yaml_stream(objects.iter().map(|o| &o.root))
}

/// One patch applied to one object outside a build (the `patch` fuzz target): a sequence is
/// a JSON 6902 op list, anything else a strategic merge, as a `patches` entry decides.
/// `builtin` selects Kubernetes' merge keys, `infer` kyaml's inferred keys for other lists.
#[doc(hidden)]
pub fn apply_patch(
    object: &mut crate::yaml::Node,
    patch: &crate::yaml::Node,
    builtin: bool,
    infer: bool,
) -> Result<(), (Span, String)> {
    if patch.as_seq().is_some() {
        let ops = json6902::parse_ops(patch)?;
        return json6902::apply(object, &ops);
    }
    let root = if builtin {
        let av = object.get_str("apiVersion").unwrap_or_default().to_string();
        let kind = object.get_str("kind").unwrap_or_default().to_string();
        merge_keys::root(&av, &kind)
    } else {
        None
    };
    smp::Smp {
        builtin: root,
        infer,
        custom: None,
    }
    .merge(object, patch);
    Ok(())
}

fn normalize_dir(dir: &str) -> String {
    crate::source::normalize_relative(dir).unwrap_or_else(|| dir.to_string())
}

fn failed_output(issue: crate::render::RenderIssue) -> RenderOutput {
    RenderOutput {
        objects: Vec::new(),
        issues: vec![issue],
        remotes: Vec::new(),
        kustomize_dirs: Vec::new(),
    }
}

fn run(
    fs: &dyn RepoFs,
    dir: &str,
    opts: &BuildOptions,
    overlay: Option<(String, crate::yaml::Node)>,
) -> RenderOutput {
    let dir = normalize_dir(dir);
    let mut b = Builder::new(fs, opts);
    b.overlay = overlay;
    let result = budget::within(opts.max_memory_bytes, || build_top(&mut b, &dir));
    // Remote entries that are not fetched were left out and the build went on (kustomize
    // would have them): they are reported with whatever the rest renders.
    let mut out = RenderOutput {
        objects: Vec::new(),
        issues: b.skipped.take(),
        remotes: b.remotes.take(),
        kustomize_dirs: entered_repo_dirs(&b.entered),
    };
    match result {
        Ok(resources) => out.objects = resources.into_iter().map(to_object).collect(),
        Err(issue) => out.issues.push(*issue),
    }
    out
}

/// The repository's directories among those a build entered, once each, in order.
fn entered_repo_dirs(entered: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    entered
        .iter()
        .filter(|d| crate::render::remote::mount_of(d).is_none())
        .filter(|d| seen.insert(d.as_str()))
        .cloned()
        .collect()
}

/// kustomize keeps objects without an apiVersion, so the identity is read leniently.
fn to_object(r: Resource) -> Object {
    let namespace = Some(r.namespace().into_owned()).filter(|n| !n.is_empty());
    Object {
        api_version: r.api_version().into_owned(),
        kind: r.kind().into_owned(),
        name: r.name().into_owned(),
        namespace,
        root: r.root,
    }
}

fn build_top(b: &mut Builder, dir: &str) -> Result<Vec<Resource>, Fail> {
    let top = b.load_kustomization(dir, Span::default())?;
    let mut acc = acc::Acc::default();
    b.run(&top, &mut acc, Span::new(top.file, 0, 0))?;
    // Names get their content hash only now, after every transformer saw the content.
    for r in &mut acc.resources {
        if r.needs_hash {
            let h = name_hash::hash_suffix(r);
            let name = format!("{}-{h}", r.name());
            let span = r
                .root
                .get_path(&["metadata", "name"])
                .map(|n| n.span)
                .unwrap_or(r.origin);
            r.set_name(&name, span);
        }
    }
    let mut config = fieldspec::TransformerConfig::shared_defaults().clone();
    fieldspec::TransformerConfig::merge_shared(&mut config, &acc.config);
    nameref::fix(&mut acc.resources, &config)?;
    vars::resolve(&mut acc, &config.var_reference)?;
    // Local-config objects (`config.kubernetes.io/local-config: "true"`) feed the build but
    // are never output.
    acc.resources.retain(|r| {
        r.root
            .get_path(&[
                "metadata",
                "annotations",
                "config.kubernetes.io/local-config",
            ])
            .and_then(tree::text)
            .is_none_or(|v| v != "true")
    });
    check_sort_options(&top)?;
    apply_sort(&top, &mut acc.resources);
    build_metadata(&top, &mut acc.resources);
    Ok(acc.resources)
}

/// `legacySortOptions` only go with `order: legacy`.
fn check_sort_options(k: &kustomization::Kustomization) -> Result<(), Fail> {
    let Some(so) = k.get("sortOptions") else {
        return Ok(());
    };
    let order = so.get_str("order");
    if so.get("legacySortOptions").is_some() && order != Some("legacy") {
        return Err(acc::failed(
            so.span,
            "sortOptions.legacySortOptions requires sortOptions.order: legacy",
        ));
    }
    if so.get("fifoSortOptions").is_some() && order != Some("fifo") {
        return Err(acc::failed(
            so.span,
            "sortOptions.fifoSortOptions requires sortOptions.order: fifo",
        ));
    }
    Ok(())
}

fn apply_sort(k: &kustomization::Kustomization, resources: &mut [Resource]) {
    let so = k.get("sortOptions");
    let order = so.and_then(|s| s.get_str("order")).unwrap_or("legacy");
    if order == "fifo" {
        return;
    }
    let list = |key: &str| -> Option<Vec<String>> {
        let seq = so?.get("legacySortOptions")?.get(key)?.as_seq()?;
        Some(seq.iter().filter_map(tree::text).collect())
    };
    let first = list("orderFirst");
    let last = list("orderLast");
    sort::legacy(resources, first.as_deref(), last.as_deref());
}

/// `buildMetadata: [managedByLabel]` adds the label kustomize stamps (as kubectl's embedded
/// kustomize prints its version).
fn build_metadata(k: &kustomization::Kustomization, resources: &mut [Resource]) {
    let items = k.items("buildMetadata");
    if items.iter().any(|i| i.text == "originAnnotations") {
        let span = k.span_of("buildMetadata");
        for r in resources.iter_mut() {
            let Some(text) = origin_text(&k.dir, r.source.as_ref()) else {
                continue;
            };
            if let Some(meta) = tree::entry_or_insert(&mut r.root, "metadata", || tree::map(span))
                && let Some(ann) = tree::entry_or_insert(meta, "annotations", || tree::map(span))
            {
                tree::set(
                    ann,
                    "config.kubernetes.io/origin",
                    tree::string(&text, span),
                );
            }
        }
    }
    if items.iter().any(|i| i.text == "transformerAnnotations") {
        let span = k.span_of("buildMetadata");
        for r in resources.iter_mut() {
            if r.transformations.is_empty() {
                continue;
            }
            let mut text = String::new();
            for (file, kind, meta) in &r.transformations {
                text.push_str(&format!(
                    "- configuredIn: {}\n  configuredBy:\n    apiVersion: builtin\n    kind: {kind}\n",
                    relative_to(&k.dir, file)
                ));
                if let Some((name, ns)) = meta {
                    if !name.is_empty() {
                        text.push_str(&format!("    name: {name}\n"));
                    }
                    if !ns.is_empty() {
                        text.push_str(&format!("    namespace: {ns}\n"));
                    }
                }
            }
            if let Some(meta) = tree::entry_or_insert(&mut r.root, "metadata", || tree::map(span))
                && let Some(ann) = tree::entry_or_insert(meta, "annotations", || tree::map(span))
            {
                tree::set(
                    ann,
                    "alpha.config.kubernetes.io/transformations",
                    tree::string(&text, span),
                );
            }
        }
    }
    if !items.iter().any(|i| i.text == "managedByLabel") {
        return;
    }
    let span = k.span_of("buildMetadata");
    let pairs = vec![(
        "app.kubernetes.io/managed-by".to_string(),
        "kustomize-(devel)".to_string(),
        span,
    )];
    let mut acc = acc::Acc {
        resources: resources.to_vec(),
        ..Default::default()
    };
    let specs = vec![fieldspec::FieldSpec {
        path: vec!["metadata".into(), "labels".into()],
        create: true,
        ..Default::default()
    }];
    transform::set_map_fields(&mut acc, &pairs, &specs);
    for (dst, src) in resources.iter_mut().zip(acc.resources) {
        *dst = src;
    }
}

/// `path` relative to directory `from` (both repo-relative), with `..` as needed.
fn relative_to(from: &str, path: &str) -> String {
    let f: Vec<&str> = from.split('/').filter(|s| !s.is_empty()).collect();
    let p: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let common = f.iter().zip(&p).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; f.len() - common];
    parts.extend(&p[common..]);
    parts.join("/")
}

/// The `config.kubernetes.io/origin` annotation text kustomize writes.
fn origin_text(top: &str, source: Option<&resource::SourceInfo>) -> Option<String> {
    match source? {
        resource::SourceInfo::File(path) => Some(format!("path: {}\n", relative_to(top, path))),
        resource::SourceInfo::Generator {
            configured_in,
            kind,
            name,
        } => {
            let mut s = format!(
                "configuredIn: {}\nconfiguredBy:\n  apiVersion: builtin\n  kind: {kind}\n",
                relative_to(top, configured_in)
            );
            if let Some(n) = name {
                s.push_str(&format!("  name: {n}\n"));
            }
            Some(s)
        }
    }
}
