//! The builtin transformers (namespace, name prefix/suffix, labels, annotations, replicas,
//! images) and the order a kustomization runs them in. Each value a transformer writes
//! points at the kustomization entry (or transformer config line) that asked for it.

use super::acc::{Acc, Builder, Fail, failed, inline_docs, unrenderable};
use super::fieldspec::{FieldSpec, apply_specs, visit};
use super::kustomization::{Item, Kustomization, string_pairs};
use super::namespace::{SubjectMode, namespace};
use super::tree;
use super::{patches, replacements};
use crate::source::Span;
use crate::yaml::{Node, Value};

pub fn run_builtin(b: &mut Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    let kf = b.fs.source_map().path(k.file);
    charge_records(k, acc, &kf)?;
    patches::strategic_merge(b, k, acc)?;
    if !k.seq("patchesStrategicMerge").is_empty() {
        record(acc, &kf, "PatchStrategicMergeTransformer", None);
    }
    patches::patches(b, k, acc)?;
    for _ in k.seq("patches") {
        record(acc, &kf, "PatchTransformer", None);
    }
    if let Some((ns, span)) = k.string("namespace")
        && !ns.is_empty()
    {
        let config = acc.config.clone();
        let specs = &config.namespace;
        namespace(acc, &ns, span, specs, false, SubjectMode::DefaultOnly)?;
        check_unique(acc, span)?;
        record(acc, &kf, "NamespaceTransformer", None);
    }
    if let Some((p, span)) = k.string("namePrefix")
        && !p.is_empty()
    {
        let config = acc.config.clone();
        let specs = &config.name_prefix;
        prefix_suffix(acc, &p, "", span, specs);
        record(acc, &kf, "PrefixTransformer", None);
    }
    if let Some((s, span)) = k.string("nameSuffix")
        && !s.is_empty()
    {
        let config = acc.config.clone();
        let specs = &config.name_suffix;
        prefix_suffix(acc, "", &s, span, specs);
        record(acc, &kf, "SuffixTransformer", None);
    }
    for l in k.seq("labels") {
        let pairs = string_pairs(l.get("pairs"));
        let include_selectors = l
            .get("includeSelectors")
            .and_then(Node::as_bool)
            .unwrap_or(false);
        let include_templates = l
            .get("includeTemplates")
            .and_then(Node::as_bool)
            .unwrap_or(false);
        let mut specs = FieldSpec::list_from(l.get("fields"));
        specs.extend(acc.config.labels.iter().cloned());
        if include_selectors {
            specs.extend(acc.config.common_labels.iter().cloned());
        } else {
            specs.push(FieldSpec {
                path: vec!["metadata".into(), "labels".into()],
                create: true,
                ..FieldSpec::default()
            });
            if include_templates {
                specs.extend(acc.config.template_labels.iter().cloned());
            }
        }
        set_map_fields(acc, &pairs, &specs);
        record(acc, &kf, "LabelTransformer", None);
    }
    let common = k.string_map("commonLabels");
    if !common.is_empty() {
        let config = acc.config.clone();
        let specs = &config.common_labels;
        set_map_fields(acc, &common, specs);
        record(acc, &kf, "LabelTransformer", None);
    }
    let ann = k.string_map("commonAnnotations");
    if !ann.is_empty() {
        let config = acc.config.clone();
        let specs = &config.common_annotations;
        set_map_fields(acc, &ann, specs);
        record(acc, &kf, "AnnotationsTransformer", None);
    }
    patches::json6902_patches(b, k, acc)?;
    for _ in k.seq("patchesJson6902") {
        record(acc, &kf, "PatchJson6902Transformer", None);
    }
    for r in k.seq("replicas") {
        let name = r.get("name").and_then(tree::text).unwrap_or_default();
        let Some(count) = r.get("count") else {
            return Err(failed(
                r.span,
                format!("replicas entry '{name}' has no count"),
            ));
        };
        let config = acc.config.clone();
        let specs = &config.replicas;
        replicas(b, acc, &name, count, specs, r.span)?;
        record(acc, &kf, "ReplicaCountTransformer", None);
    }
    let mut images: Vec<&Node> = k.seq("images").iter().collect();
    images.extend(k.seq("imageTags").iter());
    for img in images {
        let config = acc.config.clone();
        let specs = &config.images;
        image(acc, img, specs);
        record(acc, &kf, "ImageTagTransformer", None);
    }
    replacements::run_field(b, k, acc)?;
    if !k.seq("replacements").is_empty() {
        record(acc, &kf, "ReplacementTransformer", None);
    }
    Ok(())
}

/// A namespace change must not make two objects the same.
fn check_unique(acc: &Acc, span: Span) -> Result<(), Fail> {
    for (i, a) in acc.resources.iter().enumerate() {
        if let Some(b) = acc.resources[i + 1..]
            .iter()
            .find(|b| super::acc::same_id(a, b))
        {
            return Err(failed(
                span,
                format!(
                    "namespace transformation produces ID conflict: {} and {}",
                    a.id_string(),
                    b.id_string()
                ),
            ));
        }
    }
    Ok(())
}

/// Note on every resource that a transformer ran over it (for
/// `buildMetadata: [transformerAnnotations]`): configured in `file`, of `kind`.
/// Every transformer entry of `k` leaves a record on every resource (`record`): entries
/// times resources, charged before they run, on the longest list of entries.
fn charge_records(k: &Kustomization, acc: &Acc, kf: &str) -> Result<(), Fail> {
    const LISTS: [&str; 7] = [
        "patches",
        "patchesJson6902",
        "replicas",
        "images",
        "imageTags",
        "patchesStrategicMerge",
        "labels",
    ];
    const SINGLE: [&str; 5] = [
        "namespace",
        "namePrefix",
        "nameSuffix",
        "commonLabels",
        "commonAnnotations",
    ];
    let mut entries = SINGLE.iter().filter(|key| k.get(key).is_some()).count();
    let mut longest: Option<&Node> = None;
    for key in LISTS {
        let n = k.seq(key).len();
        entries += n;
        if n > 0 && longest.is_none_or(|l| l.as_seq().map_or(0, <[Node]>::len) < n) {
            longest = k.get(key);
        }
    }
    let bytes = entries
        .saturating_mul(acc.resources.len())
        .saturating_mul(kf.len() + super::budget::RECORD_BYTES);
    super::budget::charge(bytes).map_err(|m| failed(longest.map_or(k.root.span, |l| l.span), m))
}

pub fn record(acc: &mut Acc, file: &str, kind: &str, meta: Option<(&str, &str)>) {
    for r in &mut acc.resources {
        r.transformations.push((
            file.to_string(),
            kind.to_string(),
            meta.map(|(n, s)| (n.to_string(), s.to_string())),
        ));
    }
}

pub fn prefix_suffix(acc: &mut Acc, prefix: &str, suffix: &str, span: Span, specs: &[FieldSpec]) {
    for r in &mut acc.resources {
        let kind = r.kind();
        if kind == "CustomResourceDefinition"
            || kind == "Namespace"
            || (kind == "APIService" && r.group() == "apiregistration.k8s.io")
        {
            continue;
        }
        let before = (r.name().into_owned(), r.namespace().into_owned());
        let make = || tree::string("", span);
        apply_specs(r, specs, span, &make, &mut |n: &mut Node| {
            if let Some(t) = tree::text(n) {
                tree::replace_scalar(
                    n,
                    Value::String(format!("{prefix}{t}{suffix}")),
                    span,
                    "base value",
                );
            }
        });
        if r.name() != before.0 || r.namespace() != before.1 {
            r.history.push(before);
            if !prefix.is_empty() {
                r.prefixes.push(prefix.to_string());
            }
            if !suffix.is_empty() {
                r.suffixes.push(suffix.to_string());
            }
        }
    }
}

/// Set string pairs in the maps the field specs locate (labels, annotations).
pub fn set_map_fields(acc: &mut Acc, pairs: &[(String, String, Span)], specs: &[FieldSpec]) {
    let Some(first) = pairs.first() else { return };
    let span = first.2;
    for r in &mut acc.resources {
        let make = || tree::map(span);
        apply_specs(r, specs, span, &make, &mut |m: &mut Node| {
            if m.is_null() {
                *m = tree::map(span);
            }
            if m.as_map().is_none() {
                return;
            }
            for (k, v, at) in pairs {
                match m.get_mut(k) {
                    Some(n) => tree::replace_scalar(n, Value::String(v.clone()), *at, "base value"),
                    None => tree::set(m, k, tree::string(v, *at)),
                }
            }
        });
    }
}

pub fn replicas(
    b: &Builder,
    acc: &mut Acc,
    name: &str,
    count: &Node,
    specs: &[FieldSpec],
    at: Span,
) -> Result<(), Fail> {
    let mut found = false;
    for r in &mut acc.resources {
        if !r.all_names().iter().any(|n| n == name) {
            continue;
        }
        let (g, v, k) = r.gvk();
        for fs in specs {
            if !fs.gvk.selects_gvk(&g, &v, &k) {
                continue;
            }
            found = true;
            let make = || count.clone();
            let mk: Option<&dyn Fn() -> Node> = if fs.create { Some(&make) } else { None };
            visit(&mut r.root, &fs.path, at, mk, &mut |n: &mut Node| {
                let old = n.span;
                let mut fresh = count.clone();
                if old != fresh.span {
                    tree::push_related(&mut fresh, old, "base value");
                }
                *n = fresh;
            });
        }
    }
    if !found {
        let gvks: Vec<String> = specs.iter().map(|f| f.gvk.kind.clone()).collect();
        return b.target_absent(
            acc,
            failed(
                at,
                format!(
                    "resource with name {name} does not match a config with the following GVK [{}]",
                    gvks.join(" ")
                ),
            ),
        );
    }
    Ok(())
}

/// Text of a scalar as written (`1.10` stays `1.10`).
fn raw_text(n: &Node) -> Option<String> {
    n.raw().map(str::to_string).or_else(|| tree::text(n))
}

/// kustomize's `IsImageMatched` pattern for an `images:` name, compiled once per process:
/// an overlay's few names recur in every app built from it, and compiling is the costly part.
fn image_pattern(name: &str) -> Option<regex::Regex> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    // Names come from the repo: past this many the cache starts again rather than grow.
    const MAX_CACHED: usize = 4096;
    static CACHE: OnceLock<Mutex<HashMap<String, Option<regex::Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(name).cloned()) {
        return hit;
    }
    let compiled = regex::Regex::new(&format!("^{name}(@sha256)?(:[a-zA-Z0-9_.{{}}-]*)?$")).ok();
    if let Ok(mut c) = cache.lock() {
        if c.len() >= MAX_CACHED {
            c.clear();
        }
        c.insert(name.to_string(), compiled.clone());
    }
    compiled
}

pub struct ImageSpec {
    new_name: String,
    new_tag: String,
    digest: String,
    span: Span,
    /// kustomize matches `name` as a regular expression (compiled once).
    pattern: Option<regex::Regex>,
}

impl ImageSpec {
    pub fn from_node(n: &Node) -> ImageSpec {
        // Go's JSON decoding matches struct fields case-insensitively (`Digest:` works).
        let f = |k: &str| {
            n.as_map()
                .and_then(|m| {
                    m.iter()
                        .rev()
                        .find(|e| e.key.key_str().eq_ignore_ascii_case(k))
                })
                .and_then(|e| raw_text(&e.value))
                .unwrap_or_default()
        };
        let pattern = image_pattern(&f("name"));
        ImageSpec {
            new_name: f("newName"),
            new_tag: f("newTag"),
            digest: f("digest"),
            span: n.span,
            pattern,
        }
    }

    fn matches(&self, value: &str) -> bool {
        self.pattern.as_ref().is_some_and(|re| re.is_match(value))
    }

    fn update(&self, value: &str) -> Option<String> {
        if !self.matches(value) {
            return None;
        }
        let (mut name, mut tag, mut digest) = split_image(value);
        if !self.new_name.is_empty() {
            name = self.new_name.clone();
        }
        if !self.new_tag.is_empty() && !self.digest.is_empty() {
            tag = self.new_tag.clone();
            digest = self.digest.clone();
        } else if !self.new_tag.is_empty() {
            tag = self.new_tag.clone();
            digest.clear();
        } else if !self.digest.is_empty() {
            digest = self.digest.clone();
            tag.clear();
        }
        if !tag.is_empty() {
            name = format!("{name}:{tag}");
        }
        if !digest.is_empty() {
            name = format!("{name}@{digest}");
        }
        Some(name)
    }

    fn set(&self, n: &mut Node) {
        if let Some(v) = n.as_str().map(str::to_string)
            && let Some(new) = self.update(&v)
        {
            tree::replace_scalar(n, Value::String(new), self.span, "base value");
        }
    }
}

/// Split `registry/name:tag@digest` the way kustomize does (a registry port is not a tag).
pub fn split_image(image: &str) -> (String, String, String) {
    let slash = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = &image[slash..];
    let id = search.find('@');
    let ic = search.find(':');
    match (ic, id) {
        (None, None) => (image.to_string(), String::new(), String::new()),
        (ic, Some(id)) if ic.is_none_or(|c| id < c) => {
            let id = id + slash;
            (
                image[..id].to_string(),
                String::new(),
                image[id + 1..].to_string(),
            )
        }
        (Some(ic), Some(id)) => {
            let (ic, id) = (ic + slash, id + slash);
            (
                image[..ic].to_string(),
                image[ic + 1..id].to_string(),
                image[id + 1..].to_string(),
            )
        }
        (Some(ic), None) => {
            let ic = ic + slash;
            (
                image[..ic].to_string(),
                image[ic + 1..].to_string(),
                String::new(),
            )
        }
        _ => (image.to_string(), String::new(), String::new()),
    }
}

/// Every `image` of every `containers` / `initContainers` list, at any depth.
fn legacy_images(node: &mut Node, img: &ImageSpec) {
    match &mut node.value {
        Value::Map(entries) => {
            for e in entries.iter_mut() {
                let key = e.key.key_str();
                // kustomize's image filter leaves an empty list where it found `containers:`.
                if (key == "containers" || key == "initContainers") && e.value.is_null() {
                    e.value.value = Value::Seq(Vec::new());
                }
                if (key == "containers" || key == "initContainers")
                    && let Value::Seq(items) = &mut e.value.value
                {
                    for c in items.iter_mut() {
                        if let Some(i) = c.get_mut("image") {
                            img.set(i);
                        }
                    }
                }
                legacy_images(&mut e.value, img);
            }
        }
        Value::Seq(items) => {
            for i in items {
                legacy_images(i, img);
            }
        }
        _ => {}
    }
}

pub fn image(acc: &mut Acc, n: &Node, specs: &[FieldSpec]) {
    let img = ImageSpec::from_node(n);
    apply_image(acc, &img, specs);
}

fn apply_image(acc: &mut Acc, img: &ImageSpec, specs: &[FieldSpec]) {
    let no_create: Vec<FieldSpec> = specs
        .iter()
        .map(|f| FieldSpec {
            create: false,
            ..f.clone()
        })
        .collect();
    for r in &mut acc.resources {
        legacy_images(&mut r.root, img);
        let make = || tree::string("", img.span);
        apply_specs(r, &no_create, img.span, &make, &mut |n: &mut Node| {
            img.set(n)
        });
    }
}

/// `transformers:` entries: configs of builtin transformer kinds (files, inline, or
/// kustomizations producing them). Plugins are never run.
pub fn run_configured(b: &mut Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    for n in k.seq("transformers") {
        let (item, configs) = entry_configs(b, k, n)?;
        for cfg in configs {
            configured(b, k, acc, &cfg, &item)?;
        }
    }
    Ok(())
}

/// Kinds `configured` runs.
const BUILTIN_TRANSFORMERS: [&str; 14] = [
    "PrefixSuffixTransformer",
    "PrefixTransformer",
    "SuffixTransformer",
    "NamespaceTransformer",
    "LabelTransformer",
    "AnnotationsTransformer",
    "ImageTagTransformer",
    "HashTransformer",
    "ReplicaCountTransformer",
    "PatchTransformer",
    "PatchStrategicMergeTransformer",
    "PatchJson6902Transformer",
    "ReplacementTransformer",
    "ValueAddTransformer",
];

/// `validators:` entries, loaded as kustomize loads them after the transformers: a builtin
/// transformer kind runs on a copy and must leave the resources as they were; any other kind
/// is an external plugin, which kustomize refuses to load, so the build fails as it does.
pub fn run_validators(b: &mut Builder, k: &Kustomization, acc: &Acc) -> Result<(), Fail> {
    for n in k.seq("validators") {
        let (item, configs) = entry_configs(b, k, n)?;
        for cfg in configs {
            let kind = cfg.get("kind").and_then(tree::text).unwrap_or_default();
            let builtin_api = cfg.get_str("apiVersion") == Some("builtin");
            if !BUILTIN_TRANSFORMERS.contains(&kind.as_str()) {
                let message = if builtin_api {
                    format!(
                        "validator '{}': unable to load builtin {kind}.builtin.[noGrp]",
                        item.text
                    )
                } else {
                    format!(
                        "validator '{}': external plugins disabled; unable to load external plugin '{kind}'",
                        item.text
                    )
                };
                return Err(failed(item.span, message));
            }
            let mut scratch = Acc {
                resources: acc.resources.clone(),
                config: acc.config.clone(),
                vars: Vec::new(),
                openapi: acc.openapi.clone(),
                left_out: acc.left_out.clone(),
            };
            configured(b, k, &mut scratch, &cfg, &item)?;
            let unchanged = scratch.resources.len() == acc.resources.len()
                && scratch
                    .resources
                    .iter()
                    .zip(&acc.resources)
                    .all(|(a, b)| a.root.to_json() == b.root.to_json());
            if !unchanged {
                return Err(failed(
                    item.span,
                    format!(
                        "validator '{}' ({kind}): validator shouldn't modify the resource map",
                        item.text
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The configs one `transformers:`/`validators:` entry names: inline YAML, a file, or a
/// kustomization directory whose resources are the configs.
fn entry_configs(b: &mut Builder, k: &Kustomization, n: &Node) -> Result<(Item, Vec<Node>), Fail> {
    let text = tree::text(n).unwrap_or_default();
    let item = Item {
        text: text.clone(),
        span: n.span,
    };
    let configs: Vec<Node> = if text.contains('\n') {
        let map = b.fs.source_map();
        let file = map.add(crate::source::SourceFile::new(
            format!("{}#transformer", map.path(k.file)),
            text.clone(),
            crate::source::Origin::Virtual,
        ));
        let parsed = crate::yaml::parse_str(&text, file, &crate::yaml::Limits::default());
        let mut docs: Vec<Node> = parsed
            .docs
            .into_iter()
            .map(|d| d.root)
            .filter(|d| !d.is_null())
            .collect();
        for d in &mut docs {
            tree::set_spans(d, n.span);
        }
        docs
    } else {
        let path = b.resolve(k, &item)?;
        if b.fs.is_dir(&path) {
            b.build_dir(&path, n.span)?
                .resources
                .into_iter()
                .map(|r| r.root)
                .collect()
        } else {
            b.load_docs(k, &item)?
        }
    };
    Ok((item, configs))
}

fn configured(
    b: &mut Builder,
    k: &Kustomization,
    acc: &mut Acc,
    cfg: &Node,
    item: &Item,
) -> Result<(), Fail> {
    let kind = cfg.get("kind").and_then(tree::text).unwrap_or_default();
    if let Some(why) = super::plugins::plugin_reason(cfg) {
        return Err(unrenderable(
            item.span,
            format!("transformer '{}' ({kind}) {why}", item.text),
        ));
    }
    let cfg = &normalize_keys(cfg);
    {
        let file = if item.text.contains('\n') {
            b.fs.source_map().path(k.file)
        } else {
            b.resolve(k, item).unwrap_or_default()
        };
        let name = cfg
            .get_path(&["metadata", "name"])
            .and_then(tree::text)
            .unwrap_or_default();
        let ns = cfg
            .get_path(&["metadata", "namespace"])
            .and_then(tree::text)
            .unwrap_or_default();
        let bytes = file.len() + kind.len() + name.len() + ns.len() + super::budget::RECORD_BYTES;
        super::budget::charge(bytes.saturating_mul(acc.resources.len()))
            .map_err(|m| failed(item.span, m))?;
        record(acc, &file, &kind, Some((&name, &ns)));
    }
    let specs = FieldSpec::list_from(cfg.get("fieldSpecs"));
    let at = cfg.span;
    match kind.as_str() {
        "PrefixSuffixTransformer" | "PrefixTransformer" | "SuffixTransformer" => {
            let p = cfg.get("prefix").and_then(tree::text).unwrap_or_default();
            let s = cfg.get("suffix").and_then(tree::text).unwrap_or_default();
            let span = cfg
                .get("prefix")
                .or(cfg.get("suffix"))
                .map(|n| n.span)
                .unwrap_or(at);
            prefix_suffix(acc, &p, &s, span, &specs);
        }
        "NamespaceTransformer" => {
            let ns_node = cfg.get_path(&["metadata", "namespace"]);
            let ns = ns_node.and_then(tree::text).unwrap_or_default();
            let unset_only = cfg
                .get("unsetOnly")
                .and_then(Node::as_bool)
                .unwrap_or(false);
            let span = ns_node.map(|n| n.span).unwrap_or(at);
            let mode = match cfg
                .get("setRoleBindingSubjects")
                .and_then(tree::text)
                .as_deref()
            {
                Some("allServiceAccounts") => SubjectMode::AllServiceAccounts,
                Some("none") => SubjectMode::None,
                _ => SubjectMode::DefaultOnly,
            };
            namespace(acc, &ns, span, &specs, unset_only, mode)?;
            check_unique(acc, span)?;
        }
        "LabelTransformer" => {
            let pairs = string_pairs(cfg.get("labels"));
            set_map_fields(acc, &pairs, &specs);
        }
        "AnnotationsTransformer" => {
            let pairs = string_pairs(cfg.get("annotations"));
            set_map_fields(acc, &pairs, &specs);
        }
        "ImageTagTransformer" => {
            if let Some(it) = cfg.get("imageTag") {
                let img = ImageSpec::from_node(it);
                apply_image(acc, &img, &specs);
            }
        }
        "HashTransformer" => {
            // As kustomize's: generated objects that want a hash get it now (and again at
            // the end of the build, since they still want one).
            for r in acc.resources.iter_mut().filter(|r| r.needs_hash) {
                let name = format!("{}-{}", r.name(), super::name_hash::hash_suffix(r));
                r.set_name(&name, at);
            }
        }
        "ReplicaCountTransformer" => {
            if let Some(rep) = cfg.get("replica") {
                let name = rep.get("name").and_then(tree::text).unwrap_or_default();
                if let Some(count) = rep.get("count") {
                    replicas(b, acc, &name, count, &specs, rep.span)?;
                }
            }
        }
        "PatchTransformer" => {
            let (docs, pat) = if let Some(p) = cfg.get("path") {
                let it = Item {
                    text: tree::text(p).unwrap_or_default(),
                    span: p.span,
                };
                match b.load_patch_docs(k, &it)? {
                    Some(docs) => (docs, p.span),
                    None => return Ok(()),
                }
            } else if let Some(p) = cfg.get("patch") {
                (inline_docs(b, k, p)?, p.span)
            } else {
                return Err(failed(at, "PatchTransformer needs 'path' or 'patch'"));
            };
            let options = cfg.get("options");
            let allow_name = options
                .and_then(|o| o.get("allowNameChange"))
                .and_then(Node::as_bool)
                .unwrap_or(false);
            let allow_kind = options
                .and_then(|o| o.get("allowKindChange"))
                .and_then(Node::as_bool)
                .unwrap_or(false);
            patches::apply_patch(
                b,
                acc,
                &docs,
                cfg.get("target"),
                pat,
                allow_name,
                allow_kind,
            )?;
        }
        "PatchStrategicMergeTransformer" => {
            if cfg.get("paths").is_none_or(Node::is_empty_value)
                && cfg.get("patches").is_none_or(Node::is_empty_value)
            {
                return Err(failed(at, "empty file path and empty patch content"));
            }
            for p in cfg.get("paths").and_then(Node::as_seq).unwrap_or(&[]) {
                let it = Item {
                    text: tree::text(p).unwrap_or_default(),
                    span: p.span,
                };
                let Some(docs) = b.load_patch_docs(k, &it)? else {
                    continue;
                };
                patches::apply_patch(b, acc, &docs, None, p.span, false, false)?;
            }
            if let Some(p) = cfg.get("patches") {
                let docs = inline_docs(b, k, p)?;
                patches::apply_patch(b, acc, &docs, None, p.span, false, false)?;
            }
        }
        "PatchJson6902Transformer" => {
            let (docs, pat) = if let Some(p) = cfg.get("path") {
                let it = Item {
                    text: tree::text(p).unwrap_or_default(),
                    span: p.span,
                };
                match b.load_patch_docs(k, &it)? {
                    Some(docs) => (docs, p.span),
                    None => return Ok(()),
                }
            } else if let Some(p) = cfg.get("jsonOp") {
                let docs = inline_docs(b, k, p)?;
                if docs.first().is_none_or(|d| d.as_seq().is_none()) {
                    return Err(failed(
                        p.span,
                        "jsonOp is not a JSON patch (a list of operations)",
                    ));
                }
                (docs, p.span)
            } else {
                return Err(failed(
                    at,
                    "PatchJson6902Transformer needs 'path' or 'jsonOp'",
                ));
            };
            patches::apply_patch(b, acc, &docs, cfg.get("target"), pat, false, false)?;
        }
        "ReplacementTransformer" => {
            replacements::run_config(b, k, acc, cfg)?;
        }
        "ValueAddTransformer" => {
            super::value_add::run(b, k, acc, cfg)?;
        }
        "" => {
            return Err(failed(
                item.span,
                format!("transformer config '{}' has no kind", item.text),
            ));
        }
        other => {
            return Err(unrenderable(
                item.span,
                format!(
                    "transformer '{}' has kind '{other}', which is not a builtin transformer; plugins are not run",
                    item.text
                ),
            ));
        }
    }
    Ok(())
}

/// Plugin configs are decoded like Go structs: top-level keys match case-insensitively.
fn normalize_keys(cfg: &Node) -> Node {
    const KEYS: [&str; 17] = [
        "prefix",
        "suffix",
        "fieldSpecs",
        "labels",
        "annotations",
        "imageTag",
        "replica",
        "path",
        "patch",
        "paths",
        "patches",
        "target",
        "jsonOp",
        "replacements",
        "value",
        "targets",
        "targetFilePath",
    ];
    let mut out = cfg.clone();
    if let Value::Map(entries) = &mut out.value {
        for e in entries {
            let k = e.key.key_str().into_owned();
            if let Some(known) = KEYS.iter().find(|x| x.eq_ignore_ascii_case(&k) && **x != k) {
                e.key.value = Value::String((*known).to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::split_image;

    #[test]
    fn image_split_ignores_registry_ports() {
        let s = |x: &str| {
            let (a, b, c) = split_image(x);
            format!("{a}|{b}|{c}")
        };
        assert_eq!(s("nginx"), "nginx||");
        assert_eq!(s("nginx:1.2"), "nginx|1.2|");
        assert_eq!(s("reg:5000/nginx"), "reg:5000/nginx||");
        assert_eq!(
            s("reg:5000/nginx:1@sha256:ab"),
            "reg:5000/nginx|1|sha256:ab"
        );
        assert_eq!(s("nginx@sha256:ab"), "nginx||sha256:ab");
    }
}
