//! patches / patchesStrategicMerge / patchesJson6902: load each patch (file or inline),
//! find its targets and apply it as a strategic merge or a JSON 6902 patch.

use super::acc::{Acc, Builder, Fail, drop_empty_annotations, failed, stringify_metadata_map};
use super::json6902;
use super::kustomization::{Item, Kustomization};
use super::merge_keys;
use super::openapi::SchemaChoice;
use super::resource::Resource;
use super::selector::Selector;
use super::smp::{Smp, deletes_object};
use super::tree;
use crate::source::{FileId, Span};
use crate::yaml::{Limits, Node, parse_str};

/// Parse inline patch text. Its spans point into a virtual file named after the
/// kustomization, offset to where the text sits, so findings land near the right line.
fn parse_inline(b: &Builder, k: &Kustomization, text: &str, at: Span) -> Result<Vec<Node>, Fail> {
    let map = b.fs.source_map();
    let name = format!("{}#inline@{}", map.path(k.file), map.line_col(at).line);
    let file: FileId = map.add(crate::source::SourceFile::new(
        name,
        text.to_string(),
        crate::source::Origin::Virtual,
    ));
    let parsed = parse_str(text, file, &Limits::default());
    if let Some(e) = parsed.error {
        return Err(failed(at, format!("invalid inline patch: {}", e.message)));
    }
    let mut docs: Vec<Node> = parsed
        .docs
        .into_iter()
        .map(|d| d.root)
        .filter(|n| !n.is_null())
        .collect();
    // Point the inline patch's values at the kustomization entry that holds them.
    for d in &mut docs {
        tree::set_spans(d, at);
    }
    Ok(docs)
}

/// The schema comes from the patch's own apiVersion/kind (as kyaml looks it up), falling
/// back to the target's.
pub fn smp_for(r: &Resource, patch: &Node, openapi: &SchemaChoice) -> Smp {
    let kind = patch
        .get("kind")
        .and_then(tree::text)
        .unwrap_or_else(|| r.kind().into_owned());
    let (group, version) = match patch.get("apiVersion").and_then(tree::text) {
        Some(av) => match av.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), av),
        },
        None => (r.group().into_owned(), r.version().into_owned()),
    };
    Smp {
        builtin: merge_keys::root(
            &if group.is_empty() {
                version.clone()
            } else {
                format!("{group}/{version}")
            },
            &kind,
        ),
        // Any `openapi:` path makes kyaml infer list keys where the schema is silent.
        infer: openapi.chosen && openapi.custom.is_some(),
        custom: openapi
            .custom
            .clone()
            .map(|schema| (schema, (group, version, kind))),
    }
}

/// Does the patch document look like a JSON 6902 op list?
/// (kustomize reads only the first document of a multi-document JSON patch.)
fn is_json6902(docs: &[Node]) -> bool {
    docs.first().is_some_and(|d| d.as_seq().is_some())
}

/// `patchesStrategicMerge`: files or inline YAML, each applied to the resource it names.
pub fn strategic_merge(b: &Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    for n in k.seq("patchesStrategicMerge") {
        let text = tree::text(n).unwrap_or_default();
        let docs = if text.contains('\n') || text.trim_start().starts_with('{') {
            parse_inline(b, k, &text, n.span)?
        } else {
            let item = Item {
                text: text.clone(),
                span: n.span,
            };
            match b.load_patch_docs(k, &item)? {
                Some(docs) => docs,
                None => continue,
            }
        };
        if docs.is_empty() {
            return Err(failed(n.span, format!("patch '{text}' is empty")));
        }
        for doc in docs {
            apply_smp_by_id(b, acc, &doc, n.span)?;
        }
    }
    Ok(())
}

fn patch_id(doc: &Node) -> (String, String, String, String, String) {
    let av = doc
        .get("apiVersion")
        .and_then(tree::text)
        .unwrap_or_default();
    let (g, v) = match av.split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), av),
    };
    let kind = doc.get("kind").and_then(tree::text).unwrap_or_default();
    let name = doc
        .get_path(&["metadata", "name"])
        .and_then(tree::text)
        .unwrap_or_default();
    let ns = doc
        .get_path(&["metadata", "namespace"])
        .and_then(tree::text)
        .unwrap_or_default();
    (g, v, kind, name, ns)
}

fn apply_smp_by_id(b: &Builder, acc: &mut Acc, doc: &Node, at: Span) -> Result<(), Fail> {
    let (g, v, kind, name, ns) = patch_id(doc);
    let eff = |s: &str| {
        if s.is_empty() {
            "default".to_string()
        } else {
            s.to_string()
        }
    };
    let matches: Vec<usize> = acc
        .resources
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.kind() == kind
                && r.group() == g
                && (v.is_empty() || r.version() == v)
                && r.all_names().contains(&name)
                && {
                    let mut spaces: Vec<String> = r.history.iter().map(|(_, ns)| eff(ns)).collect();
                    spaces.push(r.effective_namespace().into_owned());
                    spaces.contains(&eff(&ns))
                }
        })
        .map(|(i, _)| i)
        .collect();
    let id = if ns.is_empty() {
        format!(
            "{kind}.{}{}/{name}.[noNs]",
            v,
            if g.is_empty() {
                String::new()
            } else {
                format!(".{g}")
            }
        )
    } else {
        format!(
            "{kind}.{}{}/{name}.{ns}",
            v,
            if g.is_empty() {
                String::new()
            } else {
                format!(".{g}")
            }
        )
    };
    match matches.as_slice() {
        [] => b.target_absent(
            acc,
            failed(
                at,
                format!("no matches for Id {id}; failed to find unique target for patch {id}"),
            ),
        ),
        [i] => {
            apply_smp(acc, *i, doc);
            Ok(())
        }
        _ => Err(failed(
            at,
            format!("multiple matches for Id {id}; failed to find unique target for patch {id}"),
        )),
    }
}

fn apply_smp(acc: &mut Acc, i: usize, doc: &Node) {
    if deletes_object(doc) {
        acc.resources.remove(i);
        return;
    }
    let r = &mut acc.resources[i];
    let smp = smp_for(r, doc, &acc.openapi);
    let mut patch = doc.clone();
    // A patch never renames: the target keeps its identity.
    if let Some(meta) = patch.get_mut("metadata") {
        tree::remove(meta, "name");
        tree::remove(meta, "namespace");
    }
    tree::remove(&mut patch, "apiVersion");
    tree::remove(&mut patch, "kind");
    smp.merge(&mut r.root, &patch);
    drop_empty_annotations(&mut r.root);
}

/// `patches`: each with a file or inline patch and an optional target selector.
pub fn patches(b: &Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    for n in k.seq("patches") {
        let (docs, at) = if let Some(p) = n.get("path") {
            let item = Item {
                text: tree::text(p).unwrap_or_default(),
                span: p.span,
            };
            match b.load_patch_docs(k, &item)? {
                Some(docs) => (docs, p.span),
                None => continue,
            }
        } else if let Some(p) = n.get("patch") {
            (
                parse_inline(b, k, &tree::text(p).unwrap_or_default(), p.span)?,
                p.span,
            )
        } else {
            return Err(failed(n.span, "patch entry needs 'path' or 'patch'"));
        };
        let options = n.get("options");
        let allow_name = options
            .and_then(|o| o.get("allowNameChange"))
            .and_then(Node::as_bool)
            .unwrap_or(false);
        let allow_kind = options
            .and_then(|o| o.get("allowKindChange"))
            .and_then(Node::as_bool)
            .unwrap_or(false);
        apply_patch(b, acc, &docs, n.get("target"), at, allow_name, allow_kind)?;
    }
    Ok(())
}

/// Apply a loaded patch (SMP or JSON 6902) to its target(s).
pub fn apply_patch(
    b: &Builder,
    acc: &mut Acc,
    docs: &[Node],
    target: Option<&Node>,
    at: Span,
    allow_name: bool,
    allow_kind: bool,
) -> Result<(), Fail> {
    if docs.is_empty() {
        return Err(failed(at, "patch is empty"));
    }
    let json = is_json6902(docs);
    let Some(target) = target else {
        if json {
            return Err(failed(
                at,
                "unable to apply JSON 6902 patch without a target",
            ));
        }
        for d in docs {
            apply_smp_by_id(b, acc, d, at)?;
        }
        return Ok(());
    };
    if !json && docs.len() > 1 {
        return Err(failed(
            at,
            "Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field",
        ));
    }
    let sel = Selector::from_node(target)
        .compile()
        .map_err(|e| failed(target.span, format!("invalid patch target: {e}")))?;
    let idx: Vec<usize> = acc
        .resources
        .iter()
        .enumerate()
        .filter(|(_, r)| sel.matches(r))
        .map(|(i, _)| i)
        .collect();
    if idx.is_empty() {
        // kustomize applies a selector that picks nothing without complaint; offline, with an
        // input left out, the target may be one of its objects: say the patch did not apply.
        if !acc.left_out.is_empty() {
            b.target_absent(
                acc,
                failed(target.span, "the patch's target selector picks no object"),
            )?;
        }
        return Ok(());
    }
    // Every target gets a copy of what the patch adds.
    let patch_bytes: usize = docs.iter().map(|d| d.span.len()).sum();
    super::budget::charge(idx.len().saturating_mul(patch_bytes)).map_err(|m| failed(at, m))?;
    if json {
        let ops = json6902::parse_ops(&docs[0]).map_err(|(s, m)| failed(s, m))?;
        for &i in &idx {
            let r = &mut acc.resources[i];
            let before = (r.name().into_owned(), r.namespace().into_owned());
            apply_json6902(&mut r.root, &ops)
                .map_err(|(s, m)| failed(s, format!("{m} (patching {})", r.id_string())))?;
            if r.name() != before.0 || r.namespace() != before.1 {
                r.history.push(before);
            }
        }
        return Ok(());
    }
    let mut removed: Vec<usize> = Vec::new();
    for &i in &idx {
        for d in docs {
            if deletes_object(d) {
                removed.push(i);
                continue;
            }
            let r = &mut acc.resources[i];
            let smp = smp_for(r, d, &acc.openapi);
            let mut patch = d.clone();
            let before = (r.name().into_owned(), r.namespace().into_owned());
            if !allow_name && let Some(meta) = patch.get_mut("metadata") {
                tree::remove(meta, "name");
            }
            if let Some(meta) = patch.get_mut("metadata") {
                tree::remove(meta, "namespace");
            }
            if !allow_kind {
                tree::remove(&mut patch, "kind");
                tree::remove(&mut patch, "apiVersion");
            }
            smp.merge(&mut r.root, &patch);
            drop_empty_annotations(&mut r.root);
            if r.name() != before.0 || r.namespace() != before.1 {
                r.history.push(before);
            }
        }
    }
    removed.sort_unstable();
    removed.dedup();
    for i in removed.into_iter().rev() {
        acc.resources.remove(i);
    }
    Ok(())
}

/// A JSON 6902 patch as kustomize applies it: the object carries kustomize's bookkeeping
/// annotations (its previous names) while the ops run, so `/metadata/annotations` is there
/// even on an object without annotations, or with an empty map the file gave, and an `add`
/// below it works; afterwards the annotations are set again from a string map, so values
/// read as strings and an empty map goes.
fn apply_json6902(root: &mut Node, ops: &[json6902::Op]) -> Result<(), (Span, String)> {
    if let Some(meta) = root.get_mut("metadata")
        && meta.as_map().is_some()
    {
        let span = meta.span;
        tree::entry_or_insert(meta, "annotations", || tree::map(span));
    }
    let applied = json6902::apply(root, ops);
    stringify_metadata_map(root, "annotations");
    drop_empty_annotations(root);
    applied
}

/// `patchesJson6902`: a target by gvk/name plus a file or inline op list.
pub fn json6902_patches(b: &Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    for n in k.seq("patchesJson6902") {
        let (docs, at) = if let Some(p) = n.get("path") {
            let item = Item {
                text: tree::text(p).unwrap_or_default(),
                span: p.span,
            };
            match b.load_patch_docs(k, &item)? {
                Some(docs) => (docs, p.span),
                None => continue,
            }
        } else if let Some(p) = n.get("patch") {
            (
                parse_inline(b, k, &tree::text(p).unwrap_or_default(), p.span)?,
                p.span,
            )
        } else {
            return Err(failed(
                n.span,
                "patchesJson6902 entry needs 'path' or 'patch'",
            ));
        };
        let Some(target) = n.get("target") else {
            return Err(failed(n.span, "patchesJson6902 entry needs a 'target'"));
        };
        // Legacy targets name exactly; escape them for the selector.
        let mut t = target.clone();
        for key in ["name", "namespace", "kind", "group", "version"] {
            if let Some(v) = t.get(key).and_then(tree::text) {
                tree::set(&mut t, key, tree::string(&regex::escape(&v), target.span));
            }
        }
        if !is_json6902(&docs) {
            apply_patch(b, acc, &docs, Some(&t), at, false, false)?;
            continue;
        }
        apply_patch(b, acc, &docs, Some(&t), at, false, false)?;
    }
    Ok(())
}
