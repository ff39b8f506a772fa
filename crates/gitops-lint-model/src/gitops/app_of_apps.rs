//! App-of-apps: an Argo app whose source renders `Application` / `ApplicationSet` objects
//! manages those apps, so they become apps of the model too, rendered in turn. A child
//! declared as a plain file is already an app (it only gains its parent); a child rendered
//! by a chart or kustomization is created here, its spans pointing at the template line or
//! the file in the parent's path. Nesting is bounded and cycles are reported.

use super::App;
use super::model::kinds::{is_argo_app, is_argo_appset};
use super::rendered::Rendered;
use crate::hash::FastMap;
use crate::object::Object;
use crate::render::{IssueKind, RenderIssue};
use crate::source::Span;

/// Deeper nesting than this is almost certainly a generated loop; Argo itself has no limit,
/// but a linter must stop somewhere.
pub const MAX_DEPTH: usize = 8;

/// One pending app: the app, what it rendered, its default-namespace override.
pub(super) type Pending = (App, Rendered, Option<String>);

/// The object an app was read from (an Application, or the ApplicationSet that generated it).
#[derive(Clone, Debug)]
pub(super) struct Origin {
    span: Span,
    kind: String,
    namespace: Option<String>,
    name: String,
}

impl Origin {
    pub(super) fn of(obj: &Object) -> Origin {
        Origin {
            span: obj.span(),
            kind: obj.kind.clone(),
            namespace: obj.namespace.clone(),
            name: obj.name.clone(),
        }
    }

    /// The same Argo object: kind and name, and the namespace when both name one (a root
    /// applied by hand often omits it).
    fn same_object(&self, other: &Origin) -> bool {
        self.kind == other.kind
            && self.name == other.name
            && match (&self.namespace, &other.namespace) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// Add the apps rendered by Argo apps to `pending` (breadth first), and set every child's
/// parent. `origins[i]` is the declaring object of `pending[i]` (None for Flux and
/// standalone apps); `create` reads the apps of a rendered Application or ApplicationSet.
///
/// With `from_builds`, the parents are the standalone kustomize and Helm builds instead: a
/// chart or kustomization of Applications that nothing in the repo deploys (the root a person
/// applies by hand) still gets its Applications rendered, under the directory's name.
pub(super) fn expand(
    pending: &mut Vec<Pending>,
    origins: &mut Vec<Option<Origin>>,
    from_builds: bool,
    max_apps: usize,
    mut create: impl FnMut(&Object) -> Vec<Pending>,
) {
    // Apps created here, all parents and levels together: depth alone leaves a fan-out of
    // 30 per level at 30⁷ apps.
    let mut created = 0usize;
    let mut cut = false;
    origins.resize(pending.len(), None);
    let mut parents: Vec<Option<usize>> = vec![None; pending.len()];
    // The pending apps declared by an object of each name, in order: looking a child up
    // among all pending apps made expanding hundreds of Applications quadratic.
    let mut by_name: FastMap<String, Vec<usize>> = FastMap::default();
    for (j, o) in origins.iter().enumerate() {
        if let Some(o) = o {
            by_name.entry(o.name.clone()).or_default().push(j);
        }
    }
    let mut i = 0;
    while i < pending.len() {
        let is_parent = if from_builds {
            pending[i].0.kind == super::AppKind::Standalone
                && pending[i]
                    .1
                    .sources
                    .iter()
                    .any(|s| s.starts_with("kustomize ") || s.starts_with("helm "))
        } else {
            pending[i].0.argo.is_some()
        };
        if !is_parent {
            i += 1;
            continue;
        }
        let children: Vec<Object> = pending[i]
            .1
            .objects
            .iter()
            .filter(|o| is_argo_app(o) || is_argo_appset(o))
            .cloned()
            .collect();
        for child in children {
            let origin = Origin::of(&child);
            let at = child
                .metadata()
                .and_then(|m| m.get("name"))
                .map(|n| n.span)
                .unwrap_or(origin.span);
            // An app managing its own Application is the usual root pattern, not a cycle.
            if origins[i].as_ref().is_some_and(|o| o.same_object(&origin)) {
                continue;
            }
            let chain = ancestors(&parents, i);
            if let Some(&a) = chain
                .iter()
                .find(|&&a| origins[a].as_ref().is_some_and(|o| o.same_object(&origin)))
            {
                let mut names: Vec<&str> = chain
                    .iter()
                    .rev()
                    .skip_while(|&&c| c != a)
                    .map(|&c| pending[c].0.name.as_str())
                    .collect();
                names.push(pending[i].0.name.as_str());
                names.push(pending[a].0.name.as_str());
                let message = format!(
                    "app-of-apps cycle {}: `{}` is not expanded again",
                    names.join(" → "),
                    origin.name
                );
                pending[i].1.issues.push(RenderIssue {
                    kind: IssueKind::Unrenderable,
                    input: None,
                    span: at,
                    message,
                });
                continue;
            }
            // A child declared in the repo (or created for an earlier parent) already exists.
            // One template line renders many Applications (a `range`, a chain of levels), so
            // the same span alone does not make the same app: the name must match too.
            let existing: Vec<usize> = by_name
                .get(&origin.name)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&j| {
                    origins[j].as_ref().is_some_and(|o| {
                        o.same_object(&origin) && (o.span == origin.span || j != i)
                    })
                })
                .collect();
            if !existing.is_empty() {
                for j in existing {
                    // The first parent wins; a second one is a shared resource (rule 9).
                    if j != i && parents[j].is_none() && pending[j].0.parent.is_none() {
                        parents[j] = Some(i);
                    }
                }
                continue;
            }
            // A cut tree is an error: the apps past it are not linted, and hostile input
            // must not push apps past a `--fail-on error` check that way.
            if chain.len() + 1 >= MAX_DEPTH {
                pending[i].1.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    input: None,
                    span: at,
                    message: format!(
                        "app-of-apps nesting deeper than {MAX_DEPTH} levels: `{}` is not rendered",
                        origin.name
                    ),
                });
                continue;
            }
            if created >= max_apps {
                // Said once, where the cut began; later parents' children are dropped too.
                if std::mem::replace(&mut cut, true) {
                    break;
                }
                pending[i].1.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    input: None,
                    span: at,
                    message: format!(
                        "app-of-apps creates more than {max_apps} Applications in total (limit `limits.max-apps`): `{}` and the rest are not rendered",
                        origin.name
                    ),
                });
                break;
            }
            let apps = create(&child);
            created += apps.len();
            for app in apps {
                by_name
                    .entry(origin.name.clone())
                    .or_default()
                    .push(pending.len());
                pending.push(app);
                origins.push(Some(origin.clone()));
                parents.push(Some(i));
            }
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

/// `i`'s ancestors, nearest first.
fn ancestors(parents: &[Option<usize>], i: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut cur = parents[i];
    while let Some(p) = cur {
        if out.contains(&p) || out.len() > parents.len() {
            break;
        }
        out.push(p);
        cur = parents[p];
    }
    out
}
