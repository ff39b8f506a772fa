//! Name reference fix-up: after prefixes, suffixes and hashes renamed resources, fields that
//! name them (configMapRef, secretName, roleRef, serviceAccountName, …) follow.

use super::fieldspec::{FieldSpec, NameBackRef, TransformerConfig};
use super::resource::{Resource, is_cluster_scoped};
use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};

struct Candidate {
    names: Vec<String>,
    namespaces: Vec<String>,
    name: String,
    namespace: String,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
    span: Span,
}

fn eff(ns: &str) -> String {
    if ns.is_empty() {
        "default".into()
    } else {
        ns.to_string()
    }
}

/// Do two prefix (or suffix) stacks end the same way? One empty and one not do not.
fn ends_alike(a: &[String], b: &[String]) -> bool {
    if a.is_empty() != b.is_empty() {
        return false;
    }
    let n = a.len().min(b.len());
    a[a.len() - n..] == b[b.len() - n..]
}

pub fn fix(resources: &mut [Resource], config: &TransformerConfig) {
    for backref in &config.name_reference {
        let cands: Vec<Candidate> = resources
            .iter()
            .filter(|r| backref.gvk.selects(r))
            .map(|r| Candidate {
                names: r.all_names(),
                namespaces: {
                    let mut v: Vec<String> = r.history.iter().map(|(_, ns)| eff(ns)).collect();
                    v.push(r.effective_namespace());
                    v
                },
                name: r.name(),
                namespace: r.namespace(),
                prefixes: r.prefixes.clone(),
                suffixes: r.suffixes.clone(),
                span: r
                    .root
                    .get_path(&["metadata", "name"])
                    .map(|n| n.span)
                    .unwrap_or_default(),
            })
            .collect();
        if cands.is_empty() {
            continue;
        }
        for r in resources.iter_mut() {
            fix_referrer(r, backref, &cands);
        }
    }
}

fn pick<'a>(
    cands: &'a [Candidate],
    name: &str,
    ns: Option<&str>,
    referrer: &Referrer,
) -> Option<&'a Candidate> {
    let by_name: Vec<&Candidate> = cands
        .iter()
        .filter(|c| c.names.iter().any(|n| n == name))
        .collect();
    let in_ns: Vec<&Candidate> = match ns {
        Some(ns) => by_name
            .iter()
            .copied()
            .filter(|c| c.namespaces.contains(&eff(ns)))
            .collect(),
        None => by_name,
    };
    if in_ns.len() <= 1 {
        return in_ns.first().copied();
    }
    // Same-named candidates: prefer the one whose prefix and suffix stacks end like the
    // referrer's (it came through the same overlays).
    let score = |c: &Candidate| {
        u8::from(ends_alike(&c.prefixes, &referrer.prefixes))
            + u8::from(ends_alike(&c.suffixes, &referrer.suffixes))
    };
    let best = in_ns.iter().map(|c| score(c)).max().unwrap_or(0);
    in_ns.into_iter().find(|c| score(c) == best)
}

/// What name resolution needs to know about the object holding the reference.
struct Referrer {
    prefixes: Vec<String>,
    suffixes: Vec<String>,
    namespace: String,
}

fn fix_referrer(r: &mut Resource, backref: &NameBackRef, cands: &[Candidate]) {
    let (g, v, k) = (r.group(), r.version(), r.kind());
    let referral_kind = backref.gvk.kind.clone();
    let referrer_ns = if is_cluster_scoped(&k) {
        None
    } else {
        Some(r.namespace())
    };
    let snapshot = Referrer {
        prefixes: r.prefixes.clone(),
        suffixes: r.suffixes.clone(),
        namespace: r.namespace(),
    };
    let mut seen: Vec<&Vec<String>> = Vec::new();
    for fs in &backref.referrers {
        if !fs.gvk.selects_gvk(&g, &v, &k) || seen.contains(&&fs.path) {
            continue;
        }
        seen.push(&fs.path);
        if fs.path.last().is_some_and(|l| l == "resourceNames") {
            fix_resource_names(
                &mut r.root,
                &referral_kind,
                cands,
                &snapshot,
                referrer_ns.as_deref(),
            );
            continue;
        }
        if fs.path.first().is_some_and(|f| f == "roleRef") {
            let rk = r
                .root
                .get_path(&["roleRef", "kind"])
                .and_then(tree::text)
                .unwrap_or_default();
            if rk != referral_kind {
                continue;
            }
        }
        let ns_check = if referral_kind_is_cluster(&referral_kind) {
            None
        } else {
            referrer_ns.clone()
        };
        fix_path(
            &mut r.root,
            fs,
            cands,
            &snapshot,
            ns_check.as_deref(),
            &referral_kind,
        );
    }
}

fn referral_kind_is_cluster(kind: &str) -> bool {
    is_cluster_scoped(kind)
}

fn rename(n: &mut Node, cands: &[Candidate], referrer: &Referrer, ns: Option<&str>) {
    let Some(old) = n.as_str().map(str::to_string) else {
        return;
    };
    if let Some(c) = pick(cands, &old, ns, referrer)
        && c.name != old
    {
        tree::replace_scalar(n, Value::String(c.name.clone()), c.span, "referenced name");
    }
}

fn fix_path(
    root: &mut Node,
    fs: &FieldSpec,
    cands: &[Candidate],
    referrer: &Referrer,
    ns: Option<&str>,
    kind: &str,
) {
    let span = Span::default();
    super::fieldspec::visit(
        root,
        &fs.path,
        span,
        None,
        &mut |n: &mut Node| match &mut n.value {
            Value::String(_) => rename(n, cands, referrer, ns),
            Value::Seq(items) => {
                // subjects: [{kind, name, namespace}]
                for item in items {
                    if item.as_map().is_some() {
                        fix_object_ref(item, cands, referrer, kind);
                    } else {
                        rename(item, cands, referrer, ns);
                    }
                }
            }
            Value::Map(_) => fix_object_ref(n, cands, referrer, kind),
            _ => {}
        },
    );
}

/// `{kind?, name, namespace?}` references (subjects, webhook services).
fn fix_object_ref(item: &mut Node, cands: &[Candidate], referrer: &Referrer, kind: &str) {
    if let Some(k) = item.get("kind").and_then(tree::text)
        && k != kind
    {
        return;
    }
    let Some(name) = item.get("name").and_then(tree::text) else {
        return;
    };
    let ns = item.get("namespace").and_then(tree::text);
    let Some(c) = pick(
        cands,
        &name,
        ns.as_deref().or(Some(&referrer.namespace.clone())),
        referrer,
    )
    .or_else(|| pick(cands, &name, None, referrer)) else {
        return;
    };
    let (new_name, new_ns, span) = (c.name.clone(), c.namespace.clone(), c.span);
    if let Some(n) = item.get_mut("name")
        && new_name != name
    {
        tree::replace_scalar(n, Value::String(new_name), span, "referenced name");
    }
    if !new_ns.is_empty() && ns.as_deref() != Some(new_ns.as_str()) {
        match item.get_mut("namespace") {
            Some(n) => tree::replace_scalar(n, Value::String(new_ns), span, "referenced namespace"),
            None => tree::set(item, "namespace", tree::string(&new_ns, span)),
        }
    }
}

fn fix_resource_names(
    root: &mut Node,
    kind: &str,
    cands: &[Candidate],
    referrer: &Referrer,
    ns: Option<&str>,
) {
    // kustomize v5.5 renames resourceNames whatever the rule's resources are.
    let _ = kind;
    let Some(Value::Seq(rules)) = root.get_mut("rules").map(|r| &mut r.value) else {
        return;
    };
    for rule in rules {
        if let Some(Value::Seq(names)) = rule.get_mut("resourceNames").map(|n| &mut n.value) {
            for n in names {
                rename(n, cands, referrer, ns);
            }
        }
    }
}
