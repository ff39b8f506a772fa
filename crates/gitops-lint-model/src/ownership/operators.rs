//! Which operators of the shipped knowledge base (`config::kb`, `kb/writers/*.yaml`) act on
//! this repository's objects. An entry applies to an object when the repo deploys its
//! operator on the object's cluster (a CRD of its group, its chart, its image), when
//! `profile.operators` names the operator, or, for a self-evident entry (the operator's own
//! API group, the annotation that asks it), wherever its selector matches.

use super::namespaces::NamespaceLabels;
use super::path::Pattern;
use super::platform;
use super::selector::Tri;
use crate::config::kb::{KbField, Operator, catalog};
use crate::gitops::{Model, ModelObject, Placement};
use crate::source::Span;
use crate::yaml::Node;

/// What shows that an operator runs.
#[derive(Clone, Debug)]
pub enum Evidence {
    /// The repo deploys it: the app, the line, and what it is ("the keda chart").
    Deployed {
        app: usize,
        span: Span,
        what: String,
    },
    /// `profile.operators` names it.
    Profile(Span),
}

/// One operator the repo shows running.
#[derive(Clone, Debug)]
pub struct Deployment {
    pub operator: &'static Operator,
    pub evidence: Evidence,
}

/// A field an operator writes on one object, with where the repo shows it.
#[derive(Clone, Debug)]
pub struct OperatorWrite {
    pub operator: &'static Operator,
    pub field: &'static KbField,
    pub path: Pattern,
    pub evidence: Span,
    /// Says why the operator writes here, for the evidence's label.
    pub evidence_label: String,
}

impl OperatorWrite {
    /// The value the operator writes, when the knowledge base says it.
    pub fn value(&self) -> Option<&str> {
        self.field.fact.value.as_deref()
    }

    /// Is this write asked for by the object itself (cert-manager's `inject-ca-from`), so
    /// that it replaces any declared value, not only a placeholder?
    pub fn requested_by_annotation(&self) -> bool {
        !self.field.fact.annotations.is_empty()
    }
}

/// Every operator the repo deploys (one evidence per operator and app) or the profile names.
pub fn deployments(model: &Model) -> Vec<Deployment> {
    let mut out: Vec<Deployment> = Vec::new();
    let mut push = |operator: &'static Operator, app: usize, span: Span, what: String| {
        let known = out.iter().any(|d| {
            std::ptr::eq(d.operator, operator)
                && matches!(d.evidence, Evidence::Deployed { app: a, .. } if a == app)
        });
        if !known {
            out.push(Deployment {
                operator,
                evidence: Evidence::Deployed { app, span, what },
            });
        }
    };
    for (i, app) in model.apps.iter().enumerate() {
        for u in &app.remotes {
            let name = chart_name(&u.reference);
            for op in catalog()
                .iter()
                .filter(|op| op.charts.iter().any(|c| c == name))
            {
                push(op, i, u.span, format!("the {name} chart"));
            }
        }
    }
    // An image names the operator itself; a CRD of its group only that its API is
    // installed, so images are taken first as evidence.
    for mo in &model.objects {
        for image in images(&mo.object.root) {
            let Some(text) = image.scalar_text() else {
                continue;
            };
            for op in catalog() {
                if op.images.iter().any(|i| same_repository(&text, i)) {
                    push(op, mo.app, image.span, format!("image {text}"));
                }
            }
        }
    }
    for mo in &model.objects {
        let o = &mo.object;
        if o.kind != "CustomResourceDefinition" {
            continue;
        }
        let Some(group) = o.root.get_path(&["spec", "group"]) else {
            continue;
        };
        let Some(name) = group.as_str() else {
            continue;
        };
        for op in catalog()
            .iter()
            .filter(|op| op.crd_groups.iter().any(|c| c == name))
        {
            push(op, mo.app, group.span, format!("CRD {}", o.name));
        }
    }
    for (id, span) in &model.profile.operators {
        if let Some(op) = catalog().iter().find(|o| &o.id == id) {
            out.push(Deployment {
                operator: op,
                evidence: Evidence::Profile(*span),
            });
        }
    }
    out
}

/// The knowledge base ready to match: every entry's selector and path built once, and the
/// operators the repo shows running.
pub struct Operators {
    pub deployments: Vec<Deployment>,
    entries: Vec<Entry>,
}

struct Entry {
    operator: &'static Operator,
    field: &'static KbField,
    scope: super::Scope,
    path: Pattern,
}

impl Operators {
    pub fn build(model: &Model) -> Operators {
        let entries = catalog()
            .iter()
            .flat_map(|op| op.fields.iter().map(move |f| (op, f)))
            .filter_map(|(operator, field)| {
                Some(Entry {
                    operator,
                    field,
                    scope: platform::scope(&field.fact),
                    path: Pattern::parse_dotted(&field.fact.path)?,
                })
            })
            .collect();
        Operators {
            deployments: deployments(model),
            entries,
        }
    }

    /// What the operators of the knowledge base write on `mo`, where the repo shows they act
    /// on it.
    pub fn writes(
        &self,
        model: &Model,
        namespaces: &NamespaceLabels,
        mo: &ModelObject,
    ) -> Vec<OperatorWrite> {
        let mut out = Vec::new();
        for e in &self.entries {
            let kind = (mo.object.group(), mo.object.kind.as_str());
            if e.scope.applies(mo, kind, namespaces) != Tri::Yes {
                continue;
            }
            let Some((evidence, evidence_label)) =
                evidence_for(model, &self.deployments, e.operator, e.field, mo)
            else {
                continue;
            };
            out.push(OperatorWrite {
                operator: e.operator,
                field: e.field,
                path: e.path.clone(),
                evidence,
                evidence_label,
            });
        }
        out
    }
}

/// Where the repo shows that `op` acts on `mo`, when it does.
fn evidence_for(
    model: &Model,
    deployments: &[Deployment],
    op: &'static Operator,
    field: &KbField,
    mo: &ModelObject,
) -> Option<(Span, String)> {
    let o = &mo.object;
    let meta = o.metadata();
    if field.self_evident {
        // The object shows it best: the annotation that asks the operator, or its own name.
        let annotation = field.fact.annotations.iter().find_map(|k| {
            let e = meta?.get("annotations")?.entry(k)?;
            Some((e.key.span.cover(e.value.span), k))
        });
        return Some(match annotation {
            Some((span, key)) => (span, format!("`{key}` asks {} to write it", op.name)),
            None => (
                o.name_span(),
                field.fact.reason.clone().unwrap_or_else(|| {
                    format!(
                        "{} writes this object's {} at runtime",
                        op.name, field.fact.path
                    )
                }),
            ),
        });
    }
    let why = field
        .fact
        .reason
        .clone()
        .unwrap_or_else(|| format!("it writes {} at runtime", field.fact.path));
    for d in deployments.iter().filter(|d| std::ptr::eq(d.operator, op)) {
        match &d.evidence {
            Evidence::Deployed { app, span, what } => {
                let same_cluster = model.apps.get(*app).is_none_or(|a| {
                    crate::gitops::model::cluster::placement(a, model.app_of(mo))
                        != Placement::Different
                });
                if same_cluster {
                    return Some((*span, format!("{what} deploys {}: {why}", op.name)));
                }
            }
            Evidence::Profile(span) => {
                return Some((*span, format!("profile.operators names {}: {why}", op.name)));
            }
        }
    }
    None
}

/// `gitops-lint explain writers`: every operator of the knowledge base, what it writes,
/// and, for this repository, what shows it runs and how many objects each entry applies to.
pub fn explain(model: &Model, map: &crate::source::SourceMap) -> String {
    use std::fmt::Write as _;
    let at = |span: Span| format!("{}:{}", map.path(span.file), map.line_col(span).line);
    let operators = Operators::build(model);
    let found = &operators.deployments;
    let namespaces = NamespaceLabels::from_model(model);
    let mut matched: Vec<(&'static KbField, usize)> = Vec::new();
    for mo in &model.objects {
        for w in operators.writes(model, &namespaces, mo) {
            match matched.iter_mut().find(|(f, _)| std::ptr::eq(*f, w.field)) {
                Some((_, n)) => *n += 1,
                None => matched.push((w.field, 1)),
            }
        }
    }
    let mut out = format!(
        "The knowledge base of writers: {} operators (kb/writers/*.yaml, built into gitops-lint).\n\
         An entry applies where the repository deploys its operator on the object's cluster (a CRD \
         of its group, its chart, its image), where profile.operators names it, or, when it is \
         self-evident, wherever its selector matches.\n",
        catalog().len()
    );
    let mut unseen = Vec::new();
    for op in catalog() {
        // One line per place, naming every app that deploys it.
        let mut evidence: Vec<(String, Vec<&str>)> = Vec::new();
        for d in found.iter().filter(|d| std::ptr::eq(d.operator, op)) {
            let (place, app) = match &d.evidence {
                Evidence::Deployed { app, span, what } => (
                    format!("{what} at {}", at(*span)),
                    model.apps.get(*app).map(|a| a.name.as_str()),
                ),
                Evidence::Profile(span) => (format!("profile.operators at {}", at(*span)), None),
            };
            match evidence.iter_mut().find(|(p, _)| *p == place) {
                Some((_, apps)) => apps.extend(app),
                None => evidence.push((place, app.into_iter().collect())),
            }
        }
        let hits: usize = matched
            .iter()
            .filter(|(f, _)| op.fields.iter().any(|g| std::ptr::eq(g, *f)))
            .map(|(_, n)| n)
            .sum();
        if evidence.is_empty() && hits == 0 {
            unseen.push(op.id.as_str());
        }
        let _ = writeln!(out, "\n{} — {} ({})", op.id, op.name, op.link);
        for (place, apps) in &evidence {
            let shown = match apps.len() {
                0 => String::new(),
                1 => format!(" (app {})", apps[0]),
                n => format!(" (apps {} and {} more)", apps[0], n - 1),
            };
            let _ = writeln!(out, "  runs here: {place}{shown}");
        }
        for f in &op.fields {
            let n = matched
                .iter()
                .find(|(g, _)| std::ptr::eq(*g, f))
                .map_or(0, |(_, n)| *n);
            let value = f
                .fact
                .value
                .as_deref()
                .map(|v| format!(" = {v}"))
                .unwrap_or_default();
            let mut on = f.fact.kinds.join(", ");
            for (what, list) in [("named", &f.fact.names), ("annotated", &f.fact.annotations)] {
                if !list.is_empty() {
                    let _ = write!(on, " {what} {}", list.join(" or "));
                }
            }
            let _ = writeln!(
                out,
                "  writes {}{value} on {}{}: applied to {n} object{}",
                f.fact.path,
                on,
                if f.self_evident {
                    " (self-evident)"
                } else {
                    ""
                },
                if n == 1 { "" } else { "s" }
            );
        }
    }
    if !unseen.is_empty() {
        let _ = writeln!(
            out,
            "\nNot seen in this repository: {}. Name those your clusters run in \
             profile.operators of .gitops-lint.yaml.",
            unseen.join(", ")
        );
    }
    out
}

/// The chart a remote names: the index name, or an OCI reference's last segment.
fn chart_name(r: &crate::remote::RemoteRef) -> &str {
    use crate::remote::RemoteKind;
    match r.kind {
        RemoteKind::Helm => &r.chart,
        RemoteKind::Oci => r.source.rsplit('/').next().unwrap_or_default(),
        RemoteKind::Git | RemoteKind::Url => "",
    }
}

/// The `image:` nodes of an object's pod template.
fn images(root: &Node) -> Vec<&Node> {
    let Some(kind) = root.get("kind").and_then(Node::as_str) else {
        return Vec::new();
    };
    let Some(prefix) = super::pod_template_prefix(kind) else {
        return Vec::new();
    };
    let mut path: Vec<&str> = prefix.to_vec();
    path.push("spec");
    let Some(spec) = root.get_path(&path) else {
        return Vec::new();
    };
    ["containers", "initContainers"]
        .iter()
        .flat_map(|k| spec.get(k).and_then(Node::as_seq).unwrap_or_default())
        .filter_map(|c| c.get("image"))
        .collect()
}

/// Is `image` (with any tag or digest, from any registry or mirror) of `repository`? The
/// repository's path after the registry must end the image's path: `kedacore/keda` matches
/// `ghcr.io/kedacore/keda:2.16.0` and `mirror.example.com/kedacore/keda@sha256:…`.
fn same_repository(image: &str, repository: &str) -> bool {
    fn path(reference: &str) -> &str {
        let no_digest = reference.split('@').next().unwrap_or_default();
        let no_tag = match no_digest.rsplit_once(':') {
            Some((name, tag)) if !tag.contains('/') => name,
            _ => no_digest,
        };
        match no_tag.split_once('/') {
            Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => rest,
            _ => no_tag,
        }
    }
    let (have, want) = (path(image), path(repository));
    let have = have.strip_prefix("library/").unwrap_or(have);
    !want.is_empty() && (have == want || have.ends_with(&format!("/{want}")))
}

#[cfg(test)]
mod tests {
    use super::same_repository;

    #[test]
    fn images_match_their_repository_from_any_registry() {
        assert!(same_repository(
            "ghcr.io/kedacore/keda:2.16.0",
            "ghcr.io/kedacore/keda"
        ));
        assert!(same_repository(
            "mirror.example.com/kedacore/keda@sha256:abc",
            "ghcr.io/kedacore/keda"
        ));
        assert!(same_repository(
            "istio/pilot:1.24.0",
            "docker.io/istio/pilot"
        ));
        assert!(same_repository(
            "localhost:5000/istio/pilot:1.24.0",
            "istio/pilot"
        ));
        // Another image of the same project, or a name that only ends alike.
        assert!(!same_repository(
            "ghcr.io/kedacore/keda-metrics-apiserver:2.16.0",
            "ghcr.io/kedacore/keda"
        ));
        assert!(!same_repository("example.com/notkeda:1", "kedacore/keda"));
    }
}
