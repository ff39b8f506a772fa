//! Name reference fix-up: after prefixes, suffixes and hashes renamed resources, fields that
//! name them (configMapRef, secretName, roleRef, serviceAccountName, …) follow.
//!
//! Candidates are chosen as kustomize's name-reference filter chooses them: only resources
//! that were renamed or moved (they have a previous id) and that the referrer can reach
//! (same namespace, cluster-scoped, or a namespace its RoleBinding subjects name), then sieved
//! by previous name, namespace and prefix/suffix history. More than one distinct survivor is
//! an error, as in kustomize: the build cannot tell which object is meant.

use super::acc::{Fail, failed};
use super::fieldspec::{FieldSpec, NameBackRef, TransformerConfig};
use super::resource::Resource;
use super::tree;
use crate::source::Span;
use crate::yaml::{Node, Value};

/// A resource that may be the target of a name reference, as it is at the end of the build.
struct Candidate {
    /// Names it had before each rename (not the current one): kustomize's previous ids.
    prev_names: Vec<String>,
    name: String,
    /// Current namespace as written (may be empty).
    namespace: String,
    /// Effective namespace of its original id ("default" when none was set).
    org_namespace: String,
    cluster_scoped: bool,
    is_service_account: bool,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
    /// Where its name is written (the provenance a fixed reference points at).
    span: Span,
    id: String,
}

impl Candidate {
    fn of(r: &Resource) -> Candidate {
        let kind = r.kind();
        let org_namespace = r
            .history
            .first()
            .map(|(_, ns)| eff(ns))
            .unwrap_or_else(|| r.effective_namespace().into_owned());
        Candidate {
            prev_names: r.history.iter().map(|(n, _)| n.clone()).collect(),
            name: r.name().into_owned(),
            namespace: r.namespace().into_owned(),
            org_namespace,
            cluster_scoped: r.is_cluster_scoped(),
            is_service_account: kind == "ServiceAccount",
            prefixes: r.prefixes.clone(),
            suffixes: r.suffixes.clone(),
            span: r
                .root
                .get_path(&["metadata", "name"])
                .map(|n| n.span)
                .unwrap_or_default(),
            id: r.id_string(),
        }
    }

    fn effective_namespace(&self) -> String {
        eff(&self.namespace)
    }
}

fn eff(ns: &str) -> String {
    if ns.is_empty() {
        "default".into()
    } else {
        ns.to_string()
    }
}

/// Do two prefix (or suffix) stacks end the same way? `allow_empty`: an empty stack goes
/// with any other (kustomize sieves leniently first, then strictly if several remain).
fn ends_alike(a: &[String], b: &[String], allow_empty: bool) -> bool {
    if a.is_empty() || b.is_empty() {
        return allow_empty || a.is_empty() == b.is_empty();
    }
    let n = a.len().min(b.len());
    a[a.len() - n..] == b[b.len() - n..]
}

fn same_affixes(c: &Candidate, r: &Referrer, allow_empty: bool) -> bool {
    ends_alike(&c.prefixes, &r.prefixes, allow_empty)
        && ends_alike(&c.suffixes, &r.suffixes, allow_empty)
}

/// What name resolution needs to know about the object holding the reference.
struct Referrer {
    prefixes: Vec<String>,
    suffixes: Vec<String>,
    /// Effective namespace; `None` when the referrer is cluster-scoped.
    namespace: Option<String>,
    id: String,
}

/// Why a reference could not be fixed.
struct Ambiguous {
    ids: Vec<String>,
}

pub fn fix(resources: &mut [Resource], config: &TransformerConfig) -> Result<(), Fail> {
    for r in resources.iter() {
        check_blank_subject_namespaces(r)?;
    }
    // Each resource's group, version and kind, read once: every back reference tests them
    // against its field specs (name references never change them).
    let gvks: Vec<(String, String, String)> = resources.iter().map(Resource::gvk).collect();
    let selects = |gvk: &super::fieldspec::Gvk, i: usize| {
        let (g, v, k) = &gvks[i];
        gvk.selects_gvk(g, v, k)
    };
    for backref in &config.name_reference {
        let cands: Vec<(usize, Candidate)> = resources
            .iter()
            .enumerate()
            .filter(|(i, _)| selects(&backref.gvk, *i))
            .map(|(i, r)| (i, Candidate::of(r)))
            .collect();
        if cands.is_empty() {
            continue;
        }
        // Namespaces of every resource, for the reachability subset.
        let all_ns: Vec<(bool, String, String)> = resources
            .iter()
            .map(|r| {
                (
                    r.is_cluster_scoped(),
                    r.effective_namespace().into_owned(),
                    r.namespace().into_owned(),
                )
            })
            .collect();
        for (i, r) in resources.iter_mut().enumerate() {
            // Most resources hold no field of this reference: skip them before working out
            // what they reach (that work was over a third of a kustomize build's).
            if !backref.referrers.iter().any(|fs| selects(&fs.gvk, i)) {
                continue;
            }
            let reachable = reachable_from(r, &cands, &all_ns);
            fix_referrer(r, backref, &reachable)?;
        }
    }
    Ok(())
}

/// kustomize refuses a RoleBinding whose ServiceAccount subject has a `namespace:` key with
/// no value: it cannot tell which namespaces the binding reaches.
fn check_blank_subject_namespaces(r: &Resource) -> Result<(), Fail> {
    if r.kind() != "RoleBinding" {
        return Ok(());
    }
    let Some(subjects) = r.root.get("subjects").and_then(Node::as_seq) else {
        return Ok(());
    };
    for s in subjects {
        let (Some(ns), Some(kind)) = (s.get("namespace"), s.get_str("kind")) else {
            continue;
        };
        if kind == "ServiceAccount" && ns.is_null() {
            return Err(failed(
                ns.span,
                format!(
                    "Invalid Input: namespace is blank for resource \"{}\" (a ServiceAccount subject's namespace must be a name, or the key left out)",
                    r.id_string()
                ),
            ));
        }
    }
    Ok(())
}

/// The candidates a referrer can name: all of them for a cluster-scoped referrer; otherwise
/// cluster-scoped ones, those in its namespace, and those in a namespace one of its
/// RoleBinding ServiceAccount subjects names.
fn reachable_from<'a>(
    r: &Resource,
    cands: &'a [(usize, Candidate)],
    all_ns: &[(bool, String, String)],
) -> Vec<&'a Candidate> {
    if r.is_cluster_scoped() {
        return cands.iter().map(|(_, c)| c).collect();
    }
    let own = r.effective_namespace();
    let subject_ns = rolebinding_namespaces(r);
    cands
        .iter()
        .filter(|(i, _)| {
            let Some((cluster, effective, raw)) = all_ns.get(*i) else {
                return false;
            };
            *cluster || *effective == own || subject_ns.contains(raw)
        })
        .map(|(_, c)| c)
        .collect()
}

fn rolebinding_namespaces(r: &Resource) -> Vec<String> {
    if r.kind() != "RoleBinding" {
        return Vec::new();
    }
    r.root
        .get("subjects")
        .and_then(Node::as_seq)
        .map(|subjects| {
            subjects
                .iter()
                .filter(|s| s.get_str("kind") == Some("ServiceAccount"))
                .filter_map(|s| s.get("namespace").and_then(tree::text))
                .collect()
        })
        .unwrap_or_default()
}

/// kustomize's sieve: previous name, reachability by namespace, then the prefix and suffix
/// history; several survivors that are not the same object (by `identical`) are ambiguous.
fn select<'a>(
    cands: &[&'a Candidate],
    old: &str,
    referrer: &Referrer,
    identical: fn(&Candidate, &Candidate) -> bool,
) -> Result<Option<&'a Candidate>, Ambiguous> {
    let sieved: Vec<&Candidate> = cands
        .iter()
        .copied()
        .filter(|c| c.prev_names.iter().any(|n| n == old))
        .filter(|c| match &referrer.namespace {
            None => true,
            Some(ns) => c.cluster_scoped || c.is_service_account || c.effective_namespace() == *ns,
        })
        .collect();
    if sieved.len() == 1 {
        return Ok(sieved.first().copied());
    }
    let mut sieved: Vec<&Candidate> = sieved
        .into_iter()
        .filter(|c| same_affixes(c, referrer, true))
        .collect();
    if sieved.len() > 1 {
        sieved.retain(|c| same_affixes(c, referrer, false));
    }
    let Some(first) = sieved.first().copied() else {
        return Ok(None);
    };
    if sieved.iter().all(|c| identical(first, c)) {
        return Ok(Some(first));
    }
    Err(Ambiguous {
        ids: sieved.iter().map(|c| c.id.clone()).collect(),
    })
}

fn same_name(a: &Candidate, b: &Candidate) -> bool {
    a.name == b.name
}

fn same_name_and_namespace(a: &Candidate, b: &Candidate) -> bool {
    a.name == b.name && a.namespace == b.namespace
}

fn fix_referrer(r: &mut Resource, backref: &NameBackRef, cands: &[&Candidate]) -> Result<(), Fail> {
    let (g, v, k) = r.gvk();
    let referral_kind = backref.gvk.kind.clone();
    let referrer = Referrer {
        prefixes: r.prefixes.clone(),
        suffixes: r.suffixes.clone(),
        namespace: (!r.is_cluster_scoped()).then(|| r.effective_namespace().into_owned()),
        id: r.id_string(),
    };
    let mut seen: Vec<&Vec<String>> = Vec::new();
    for fs in &backref.referrers {
        if !fs.gvk.selects_gvk(&g, &v, &k) || seen.contains(&&fs.path) {
            continue;
        }
        seen.push(&fs.path);
        if fs.path.last().is_some_and(|l| l == "resourceNames") {
            fix_resource_names(&mut r.root, fs, cands, &referrer)?;
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
        fix_path(&mut r.root, fs, cands, &referrer, &referral_kind)?;
    }
    Ok(())
}

fn ambiguity(fs: &FieldSpec, referrer: &Referrer, at: Span, a: Ambiguous) -> Fail {
    failed(
        at,
        format!(
            "updating name reference in '{}' field of '{}': found multiple possible referrals: {}",
            fs.path.join("/"),
            referrer.id,
            a.ids.join(", ")
        ),
    )
}

/// A reference that is just a name.
fn set_scalar(
    n: &mut Node,
    fs: &FieldSpec,
    cands: &[&Candidate],
    referrer: &Referrer,
) -> Result<(), Fail> {
    let Some(old) = n.as_str().map(str::to_string) else {
        return Ok(());
    };
    let picked =
        select(cands, &old, referrer, same_name).map_err(|a| ambiguity(fs, referrer, n.span, a))?;
    if let Some(c) = picked
        && c.name != old
    {
        tree::replace_scalar(n, Value::String(c.name.clone()), c.span, "referenced name");
    }
    Ok(())
}

fn fix_path(
    root: &mut Node,
    fs: &FieldSpec,
    cands: &[&Candidate],
    referrer: &Referrer,
    kind: &str,
) -> Result<(), Fail> {
    let mut result = Ok(());
    super::fieldspec::visit(
        root,
        &fs.path,
        Span::default(),
        None,
        &mut |n: &mut Node| {
            if result.is_err() {
                return;
            }
            result = match &mut n.value {
                Value::String(_) => set_scalar(n, fs, cands, referrer),
                Value::Map(_) => set_mapping(n, fs, cands, referrer, kind),
                _ => Ok(()),
            };
        },
    );
    result
}

/// `{kind?, name, namespace?}` references (subjects, webhook services): the namespace the
/// reference names narrows the candidates (by original, else current namespace), and a
/// picked object in a namespace writes that namespace too.
fn set_mapping(
    item: &mut Node,
    fs: &FieldSpec,
    cands: &[&Candidate],
    referrer: &Referrer,
    kind: &str,
) -> Result<(), Fail> {
    if let Some(k) = item.get("kind").and_then(tree::text)
        && k != kind
    {
        return Ok(());
    }
    let Some(name_node) = item.get("name") else {
        return Ok(());
    };
    let Some(name) = tree::text(name_node) else {
        return Ok(());
    };
    let at = name_node.span;
    let ns = item
        .get("namespace")
        .map(|n| tree::text(n).unwrap_or_default());
    let narrowed: Vec<&Candidate> = match &ns {
        None => cands.to_vec(),
        Some(ns) => {
            let by_org: Vec<&Candidate> = cands
                .iter()
                .copied()
                .filter(|c| !c.cluster_scoped && c.org_namespace == *ns)
                .collect();
            if by_org.is_empty() {
                cands
                    .iter()
                    .copied()
                    .filter(|c| !c.cluster_scoped && c.effective_namespace() == *ns)
                    .collect()
            } else {
                by_org
            }
        }
    };
    let picked = select(&narrowed, &name, referrer, same_name_and_namespace)
        .map_err(|a| ambiguity(fs, referrer, at, a))?;
    let Some(c) = picked else {
        return Ok(());
    };
    if c.name == name && c.namespace.is_empty() {
        return Ok(());
    }
    if c.name != name
        && let Some(n) = item.get_mut("name")
    {
        tree::replace_scalar(n, Value::String(c.name.clone()), c.span, "referenced name");
    }
    if !c.namespace.is_empty() && ns.as_deref() != Some(c.namespace.as_str()) {
        match item.get_mut("namespace") {
            Some(n) => tree::replace_scalar(
                n,
                Value::String(c.namespace.clone()),
                c.span,
                "referenced namespace",
            ),
            None => tree::set(item, "namespace", tree::string(&c.namespace, c.span)),
        }
    }
    Ok(())
}

fn fix_resource_names(
    root: &mut Node,
    fs: &FieldSpec,
    cands: &[&Candidate],
    referrer: &Referrer,
) -> Result<(), Fail> {
    // kustomize v5.5 renames resourceNames whatever the rule's resources are.
    let Some(Value::Seq(rules)) = root.get_mut("rules").map(|r| &mut r.value) else {
        return Ok(());
    };
    for rule in rules {
        if let Some(Value::Seq(names)) = rule.get_mut("resourceNames").map(|n| &mut n.value) {
            for n in names {
                set_scalar(n, fs, cands, referrer)?;
            }
        }
    }
    Ok(())
}
