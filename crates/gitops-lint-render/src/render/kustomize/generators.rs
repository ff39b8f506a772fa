//! configMapGenerator / secretGenerator (and the same builtin kinds under `generators:`),
//! with kustomize's name hash and create/merge/replace behaviours.

use super::acc::{Acc, Builder, Fail, failed, unrenderable};
use super::kustomization::{Item, Kustomization, string_pairs};
use super::resource::{Behavior, Resource};
use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};

struct GenOptions {
    labels: Vec<(String, String, Span)>,
    annotations: Vec<(String, String, Span)>,
    disable_hash: bool,
    immutable: bool,
}

fn read_options(n: Option<&Node>) -> GenOptions {
    GenOptions {
        labels: string_pairs(n.and_then(|o| o.get("labels"))),
        annotations: string_pairs(n.and_then(|o| o.get("annotations"))),
        disable_hash: n
            .and_then(|o| o.get("disableNameSuffixHash"))
            .and_then(Node::as_bool)
            .unwrap_or(false),
        immutable: n
            .and_then(|o| o.get("immutable"))
            .and_then(Node::as_bool)
            .unwrap_or(false),
    }
}

/// `configMapGenerator` and `secretGenerator` (kustomize runs them before `helmCharts`).
pub fn run_builtin(b: &mut Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    let global = k.get("generatorOptions");
    for g in k.seq("configMapGenerator") {
        let r = generate(b, k, g, "ConfigMap", global)?;
        add(b, acc, r)?;
    }
    for g in k.seq("secretGenerator") {
        let r = generate(b, k, g, "Secret", global)?;
        add(b, acc, r)?;
    }
    Ok(())
}

/// `generators:` entries: configs of builtin generator kinds (after `helmCharts`).
pub fn run_configured(b: &mut Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    for item in k.items("generators") {
        if item.text.contains('\n') {
            for doc in super::acc::inline_docs(b, k, &tree::string(&item.text, item.span))? {
                generate_from_config(b, k, &doc, &item, acc)?;
            }
            continue;
        }
        let path = b.resolve(k, &item)?;
        if b.fs.is_dir(&path) {
            let sub = b.build_dir(&path, item.span)?;
            for d in sub.resources {
                generate_from_config(b, k, &d.root, &item, acc)?;
            }
            continue;
        }
        for doc in b.load_docs(k, &item)? {
            generate_from_config(b, k, &doc, &item, acc)?;
        }
    }
    Ok(())
}

fn generate_from_config(
    b: &mut Builder,
    k: &Kustomization,
    doc: &Node,
    item: &Item,
    acc: &mut Acc,
) -> Result<(), Fail> {
    let kind = doc.get("kind").and_then(tree::text).unwrap_or_default();
    if let Some(why) = super::plugins::plugin_reason(doc) {
        return Err(unrenderable(
            item.span,
            format!("generator '{}' ({kind}) {why}", item.text),
        ));
    }
    if kind == "IAMPolicyGenerator" {
        let r = iam_policy(doc, item)?;
        return b.append(acc, r, item.span);
    }
    let gen_kind = match kind.as_str() {
        "ConfigMapGenerator" => "ConfigMap",
        "SecretGenerator" => "Secret",
        _ => {
            return Err(unrenderable(
                item.span,
                format!(
                    "generator '{}' has kind '{kind}', which is not a builtin generator; plugins are not run",
                    item.text
                ),
            ));
        }
    };
    let mut cfg = doc.clone();
    // A plugin config names the object in metadata; the generator fields sit at the top.
    if cfg.get("name").is_none()
        && let Some(n) = doc.get_path(&["metadata", "name"])
    {
        tree::set(&mut cfg, "name", n.clone());
    }
    if cfg.get("namespace").is_none()
        && let Some(n) = doc.get_path(&["metadata", "namespace"])
    {
        tree::set(&mut cfg, "namespace", n.clone());
    }
    let mut r = generate(b, k, &cfg, gen_kind, None)?;
    if let Some(super::resource::SourceInfo::Generator {
        configured_in,
        name,
        ..
    }) = &mut r.source
    {
        if !item.text.contains('\n')
            && let Ok(path) = b.resolve(k, item)
        {
            *configured_in = path;
        }
        *name = doc.get_path(&["metadata", "name"]).and_then(tree::text);
    }
    add(b, acc, r)
}

/// The builtin IAMPolicyGenerator: a ServiceAccount bound to a GKE service account.
fn iam_policy(doc: &Node, item: &Item) -> Result<Resource, Fail> {
    let span = item.span;
    let t = |path: &[&str]| doc.get_path(path).and_then(tree::text).unwrap_or_default();
    if t(&["cloud"]) != "gke" {
        return Err(failed(
            span,
            "IAMPolicyGenerator: only cloud 'gke' is supported",
        ));
    }
    let name = t(&["kubernetesService", "name"]);
    let namespace = t(&["kubernetesService", "namespace"]);
    let gsa = format!(
        "{}@{}.iam.gserviceaccount.com",
        t(&["serviceAccount", "name"]),
        t(&["serviceAccount", "projectId"])
    );
    let mut meta = tree::map(span);
    let mut ann = tree::map(span);
    tree::set(
        &mut ann,
        "iam.gke.io/gcp-service-account",
        tree::string(&gsa, span),
    );
    tree::set(&mut meta, "annotations", ann);
    tree::set(&mut meta, "name", tree::string(&name, span));
    if !namespace.is_empty() {
        tree::set(&mut meta, "namespace", tree::string(&namespace, span));
    }
    let mut root = tree::map(span);
    tree::set(&mut root, "apiVersion", tree::string("v1", span));
    tree::set(&mut root, "kind", tree::string("ServiceAccount", span));
    tree::set(&mut root, "metadata", meta);
    Ok(Resource::new(root, span))
}

pub fn add(b: &mut Builder, acc: &mut Acc, r: Resource) -> Result<(), Fail> {
    let span = r.origin;
    let (name, ns) = (r.name(), r.effective_namespace());
    let kind = r.kind();
    // Matched against every id the object had, so a base object the base's namespace
    // transformer moved is still found by its original id.
    let pos = acc.resources.iter().position(|x| {
        let mut spaces = x.history.iter().map(|(_, s)| {
            if s.is_empty() {
                "default".to_string()
            } else {
                s.clone()
            }
        });
        x.kind() == kind
            && (x.effective_namespace() == ns || spaces.any(|s| s == ns))
            && x.all_names().iter().any(|n| *n == *name)
    });
    match (&r.behavior, pos) {
        (Behavior::Create, Some(_)) => Err(failed(
            span,
            format!(
                "merging from generator {kind}/{name}: id already exists; use 'behavior: merge' or 'behavior: replace' to change it"
            ),
        )),
        (Behavior::Create, None) => b.append(acc, r, span),
        // Its target may be in a remote input left out offline: recorded against it.
        (_, None) => b.target_absent(
            acc,
            failed(
                span,
                format!("id {kind}/{name} does not exist; cannot merge or replace"),
            ),
        ),
        (Behavior::Merge, Some(i)) => {
            let old = acc.resources[i].clone();
            let mut new = r;
            for field in ["data", "binaryData"] {
                if let Some(old_data) = old.root.get(field).and_then(Node::as_map) {
                    let data = tree::entry_or_insert(&mut new.root, field, || tree::map(span));
                    if let Some(data) = data {
                        for e in old_data {
                            if data.get(&e.key.key_str()).is_none() {
                                tree::set(data, &e.key.key_str(), e.value.clone());
                            }
                        }
                    }
                }
            }
            merge_meta(&mut new, &old);
            acc.resources[i] = new;
            Ok(())
        }
        (Behavior::Replace, Some(i)) => {
            let old = acc.resources[i].clone();
            let mut new = r;
            merge_meta(&mut new, &old);
            acc.resources[i] = new;
            Ok(())
        }
    }
}

/// Keep the old object's identity and metadata under the new content.
fn merge_meta(new: &mut Resource, old: &Resource) {
    for field in ["labels", "annotations"] {
        if let Some(old_map) = old
            .root
            .get_path(&["metadata", field])
            .and_then(Node::as_map)
        {
            let span = new.origin;
            if let Some(meta) = tree::entry_or_insert(&mut new.root, "metadata", || tree::map(span))
                && let Some(m) = tree::entry_or_insert(meta, field, || tree::map(span))
            {
                for e in old_map {
                    if m.get(&e.key.key_str()).is_none() {
                        tree::set(m, &e.key.key_str(), e.value.clone());
                    }
                }
            }
        }
    }
    let span = new.origin;
    let name = old.name();
    let ns = old.namespace();
    if let Some(meta) = tree::entry_or_insert(&mut new.root, "metadata", || tree::map(span)) {
        tree::set(
            meta,
            "name",
            old.root
                .get_path(&["metadata", "name"])
                .cloned()
                .unwrap_or_else(|| tree::string(&name, span)),
        );
        if !ns.is_empty() {
            tree::set(meta, "namespace", tree::string(&ns, span));
        }
    }
    new.history = old.history.clone();
    new.prefixes = old.prefixes.clone();
    new.uid = old.uid;
    if new.behavior == Behavior::Merge {
        new.source = old.source.clone();
    }
    new.suffixes = old.suffixes.clone();
    // The merged object keeps the old one's build options (a hash only if it had one).
    new.needs_hash = old.needs_hash && new.needs_hash;
    new.behavior = Behavior::Create;
}

fn remove_quotes(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() >= 2
        && ((b[0] == b'"' && b[b.len() - 1] == b'"') || (b[0] == b'\'' && b[b.len() - 1] == b'\''))
    {
        return &s[1..s.len() - 1];
    }
    s
}

fn generate(
    b: &Builder,
    k: &Kustomization,
    g: &Node,
    kind: &str,
    global: Option<&Node>,
) -> Result<Resource, Fail> {
    let span = g.span;
    let name = g.get("name").and_then(tree::text).unwrap_or_default();
    let namespace = g.get("namespace").and_then(tree::text).unwrap_or_default();
    let behavior = match g.get("behavior").and_then(tree::text).as_deref() {
        None | Some("") | Some("create") => Behavior::Create,
        Some("merge") => Behavior::Merge,
        Some("replace") => Behavior::Replace,
        // kustomize treats an unknown behavior as unspecified (create).
        Some(_) => Behavior::Create,
    };
    let mut binary: Vec<(String, String, Span)> = Vec::new();
    let mut data: Vec<(String, String, Span)> = Vec::new();
    // Keys seen, as a set: thousands of literals were a scan each.
    let mut keys: std::collections::HashSet<String> = Default::default();
    // A Secret's value is stored base64-encoded too: about twice its size in all.
    let copies = if kind == "Secret" { 3 } else { 1 };
    // `at` is where the value comes from, `entry` the generator line that asked for it.
    let mut push = |key: String, value: String, at: Span, entry: Span| -> Result<(), Fail> {
        if !keys.insert(key.clone()) {
            return Err(failed(
                at,
                format!("{kind} {name} illegally repeats the key `{key}`"),
            ));
        }
        // Generator data is the build's to charge: many generators may read one big file.
        super::budget::charge(
            (key.len() + value.len())
                .saturating_mul(copies)
                .saturating_add(64),
        )
        .map_err(|m| failed(entry, m))?;
        data.push((key, value, at));
        Ok(())
    };
    let mut envs: Vec<Item> = Vec::new();
    if let Some(e) = g.get("env")
        && let Some(t) = tree::text(e)
    {
        envs.push(Item {
            text: t,
            span: e.span,
        });
    }
    for e in g.get("envs").and_then(Node::as_seq).unwrap_or(&[]) {
        if let Some(t) = tree::text(e) {
            envs.push(Item {
                text: t,
                span: e.span,
            });
        }
    }
    for item in envs {
        let file = b.read_file(k, &item)?;
        let text = b.fs.source_map().get(file).text.clone();
        for (i, raw) in text.lines().enumerate() {
            let mut line = raw.trim_end_matches('\r');
            if i == 0 {
                line = line.trim_start_matches('\u{feff}');
            }
            let line = line.trim_start();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = match line.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (line.to_string(), String::new()),
            };
            if key.is_empty() || key.contains(char::is_whitespace) {
                return Err(failed(
                    item.span,
                    format!("invalid key '{key}' in env file {}", item.text),
                ));
            }
            push(key, value, item.span, item.span)?;
        }
    }
    for lit in g.get("literals").and_then(Node::as_seq).unwrap_or(&[]) {
        let text = tree::text(lit).unwrap_or_default();
        let Some((key, value)) = text.split_once('=') else {
            return Err(failed(
                lit.span,
                format!("invalid literal source {text}, expected key=value"),
            ));
        };
        push(
            key.to_string(),
            remove_quotes(value).to_string(),
            lit.span,
            lit.span,
        )?;
    }
    for f in g.get("files").and_then(Node::as_seq).unwrap_or(&[]) {
        let text = tree::text(f).unwrap_or_default();
        let (key, path) = match text.split_once('=') {
            Some((k, p)) => (k.to_string(), p.to_string()),
            None => (
                text.rsplit('/').next().unwrap_or(&text).to_string(),
                text.clone(),
            ),
        };
        let item = Item {
            text: path,
            span: f.span,
        };
        match b.read_file(k, &item) {
            Ok(file) => {
                let content = b.fs.source_map().get(file).text.to_string();
                push(key, content, Span::new(file, 0, 0), item.span)?;
            }
            // Not text: kustomize puts it under binaryData, base64-encoded.
            Err(e) if e.message.contains("UTF-8") || e.message.contains("binary file") => {
                let path = b.resolve(k, &item)?;
                let bytes =
                    b.fs.read_bytes(&path)
                        .map_err(|e| failed(item.span, e.to_string()))?;
                super::budget::charge(bytes.len().saturating_mul(2))
                    .map_err(|m| failed(item.span, m))?;
                binary.push((key, base64_lines(&bytes), item.span));
            }
            Err(e) => return Err(e),
        }
    }
    let global_opts = read_options(global);
    let own = read_options(g.get("options"));
    let mut labels = global_opts.labels.clone();
    labels.extend(own.labels);
    let mut annotations = global_opts.annotations.clone();
    annotations.extend(own.annotations);

    let s = |t: &str| tree::string(t, span);
    let mut meta = tree::map(span);
    tree::set(&mut meta, "name", s(&name));
    if !namespace.is_empty() {
        tree::set(&mut meta, "namespace", s(&namespace));
    }
    for (field, pairs) in [("labels", &labels), ("annotations", &annotations)] {
        if !pairs.is_empty() {
            let mut m = tree::map(span);
            for (k, v, at) in pairs {
                tree::set(&mut m, k, tree::string(v, *at));
            }
            tree::set(&mut meta, field, m);
        }
    }
    let mut root = tree::map(span);
    tree::set(&mut root, "apiVersion", s("v1"));
    tree::set(&mut root, "kind", s(kind));
    tree::set(&mut root, "metadata", meta);
    // kustomize's Secret always has a data map (empty without sources); a ConfigMap gets
    // one with its first key.
    if !data.is_empty() || kind == "Secret" {
        // The keys are distinct (`push`): appended, not looked up one by one.
        let entries = data
            .iter()
            .map(|(k, v, at)| {
                let value = if kind == "Secret" {
                    base64_lines(v.as_bytes())
                } else {
                    v.clone()
                };
                crate::yaml::Entry {
                    key: Node::string(k, *at),
                    value: tree::string(&value, *at),
                }
            })
            .collect();
        let mut d = tree::map(span);
        d.value = Value::Map(entries);
        tree::set(&mut root, "data", d);
    }
    if !binary.is_empty() {
        let mut d = tree::map(span);
        for (k, v, at) in &binary {
            tree::set(&mut d, k, tree::string(v, *at));
        }
        let field = if kind == "Secret" {
            "data"
        } else {
            "binaryData"
        };
        match root.get_mut(field) {
            Some(existing) => {
                for (k, v, at) in &binary {
                    tree::set(existing, k, tree::string(v, *at));
                }
            }
            None => tree::set(&mut root, field, d),
        }
    }
    if kind == "Secret" {
        let t = g
            .get("type")
            .and_then(tree::text)
            .unwrap_or_else(|| "Opaque".into());
        tree::set(&mut root, "type", s(&t));
    }
    if global_opts.immutable || own.immutable {
        tree::set(&mut root, "immutable", Node::new(Value::Bool(true), span));
    }
    let mut r = Resource::new(root, span);
    r.source = Some(super::resource::SourceInfo::Generator {
        configured_in: b.fs.source_map().path(k.file),
        kind: format!("{kind}Generator"),
        name: None,
    });
    r.needs_hash = !(global_opts.disable_hash || own.disable_hash);
    r.behavior = behavior;
    Ok(r)
}

/// Base64 broken into 70-character lines (each ending in a newline) once it is that long,
/// as kustomize encodes generated Secret data.
pub fn base64_lines(bytes: &[u8]) -> String {
    const LINE: usize = 70;
    let enc = base64(bytes);
    if enc.len() < LINE {
        return enc;
    }
    let mut out = String::with_capacity(enc.len() + enc.len() / LINE + 1);
    for chunk in enc.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// Generated Secret data: standard padded base64.
pub use crate::base64::encode as base64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }
}
