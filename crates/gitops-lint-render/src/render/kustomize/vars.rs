//! `vars`: `$(NAME)` references in known fields replaced by a field of another resource,
//! resolved once at the end of the build.

use super::acc::{Acc, Builder, Fail, VarDef, failed};
use super::fieldpath;
use super::fieldspec::{FieldSpec, visit};
use super::kustomization::Kustomization;
use super::resource::Resource;
use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};

pub fn collect(b: &Builder, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
    for v in k.seq("vars") {
        let t = |n: Option<&Node>, key: &str| {
            n.and_then(|o| o.get(key))
                .and_then(tree::text)
                .unwrap_or_default()
        };
        let objref = v.get("objref");
        let def = VarDef {
            name: t(Some(v), "name"),
            kind: t(objref, "kind"),
            obj_name: t(objref, "name"),
            api_version: t(objref, "apiVersion"),
            namespace: t(objref, "namespace"),
            field_path: {
                let mut fp = t(v.get("fieldref"), "fieldpath");
                if fp.is_empty() {
                    fp = t(v.get("fieldref"), "fieldPath");
                }
                if fp.is_empty() {
                    "metadata.name".into()
                } else {
                    fp
                }
            },
            span: v.span,
            bound: 0,
        };
        let mut def = def;
        def.bound = match value_source(&def, &acc.resources) {
            Ok(r) => r.uid,
            // The var's object may be in an input left out offline: recorded against it
            // (its `$(NAME)` references stay as written), or the build fails as kustomize's.
            Err(e) if candidates(&def, &acc.resources).is_empty() => {
                b.target_absent(acc, e)?;
                continue;
            }
            Err(e) => return Err(e),
        };
        if acc.vars.iter().any(|x| x.name == def.name) {
            return Err(failed(
                v.span,
                format!("var '{}' already encountered", def.name),
            ));
        }
        acc.vars.push(def);
    }
    Ok(())
}

fn value_of(def: &VarDef, resources: &[Resource]) -> Result<Node, Fail> {
    let r = match resources.iter().find(|r| r.uid == def.bound) {
        Some(r) => r,
        None => value_source(def, resources)?,
    };
    let fp = def.field_path.trim_start_matches('{').trim_end_matches('}');
    let segs = fieldpath::parse(fp);
    fieldpath::lookup(&r.root, &segs)
        .first()
        .map(|n| (*n).clone())
        .ok_or_else(|| {
            failed(
                def.span,
                format!(
                    "field specified in var '{}' not found in corresponding resource",
                    def.name
                ),
            )
        })
}

/// The objects a var's `objref` matches among `resources`.
fn candidates<'a>(def: &VarDef, resources: &'a [Resource]) -> Vec<&'a Resource> {
    resources
        .iter()
        .filter(|r| {
            r.kind() == def.kind
                && r.all_names().contains(&def.obj_name)
                && (def.api_version.is_empty() || r.api_version() == def.api_version)
                && (def.namespace.is_empty()
                    || r.history.iter().any(|(_, ns)| *ns == def.namespace)
                    || r.namespace() == def.namespace)
        })
        .collect()
}

/// The one object a var refers to among `resources`.
fn value_source<'a>(def: &VarDef, resources: &'a [Resource]) -> Result<&'a Resource, Fail> {
    let candidates = candidates(def, resources);
    let r = match candidates.as_slice() {
        [r] => *r,
        [] => {
            return Err(failed(
                def.span,
                format!(
                    "var '{}' cannot be mapped to a field in the set of known resources",
                    def.name
                ),
            ));
        }
        _ => {
            return Err(failed(
                def.span,
                format!(
                    "found {} resId matches for var {}",
                    candidates.len(),
                    def.name
                ),
            ));
        }
    };
    Ok(r)
}

/// Expand `$(NAME)` in one string; `$$` escapes a `$`.
fn expand(s: &str, vars: &[(String, Node)], used: &mut Vec<String>) -> Option<Value> {
    if !s.contains("$(") {
        return None;
    }
    // A field that is exactly one reference takes the referenced value's type.
    if let Some(name) = s.strip_prefix("$(").and_then(|x| x.strip_suffix(')'))
        && let Some((_, v)) = vars.iter().find(|(n, _)| n == name)
    {
        used.push(name.to_string());
        if v.as_map().is_none() && v.as_seq().is_none() {
            return Some(v.value.clone());
        }
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let mut changed = false;
    while i < chars.len() {
        if chars[i] == '$' && i + 1 < chars.len() {
            if chars[i + 1] == '$' {
                out.push('$');
                i += 2;
                changed = true;
                continue;
            }
            if chars[i + 1] == '('
                && let Some(end) = chars[i + 2..].iter().position(|&c| c == ')')
            {
                {
                    let name: String = chars[i + 2..i + 2 + end].iter().collect();
                    if let Some((_, v)) = vars.iter().find(|(n, _)| *n == name) {
                        used.push(name);
                        out.push_str(&tree::text(v).unwrap_or_default());
                        i += end + 3;
                        changed = true;
                        continue;
                    }
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    changed.then_some(Value::String(out))
}

fn expand_tree(n: &mut Node, vars: &[(String, Node)], used: &mut Vec<String>) {
    match &mut n.value {
        Value::String(s) => {
            if let Some(v) = expand(s, vars, used) {
                n.value = v;
                n.set_raw(None);
            }
        }
        Value::Seq(items) => {
            for i in items {
                expand_tree(i, vars, used);
            }
        }
        Value::Map(entries) => {
            for e in entries {
                expand_tree(&mut e.value, vars, used);
            }
        }
        _ => {}
    }
}

pub fn resolve(acc: &mut Acc, specs: &[FieldSpec]) -> Result<(), Fail> {
    if acc.vars.is_empty() {
        return Ok(());
    }
    let mut values = Vec::new();
    for def in &acc.vars {
        values.push((def.name.clone(), value_of(def, &acc.resources)?));
    }
    let mut used = Vec::new();
    for r in &mut acc.resources {
        let (g, v, k) = r.gvk();
        for fs in specs {
            if !fs.gvk.selects_gvk(&g, &v, &k) {
                continue;
            }
            visit(
                &mut r.root,
                &fs.path,
                Span::default(),
                None,
                &mut |n: &mut Node| expand_tree(n, &values, &mut used),
            );
        }
    }
    Ok(())
}
