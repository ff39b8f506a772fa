//! `immutable-field-changed`: fields the API server refuses to change on an existing object.
//! A sync that changes one fails with "field is immutable" on every retry, and the app stays
//! OutOfSync until a person re-creates the object. Each object the change touches is compared
//! with itself in the base (same app, same identity, see `identity.rs`).
//!
//! The fields are Kubernetes' update validation (https://kubernetes.io/docs/reference/kubernetes-api/):
//! a workload's `spec.selector` (apps/v1), a StatefulSet's spec beyond its template, replicas,
//! update strategy and a few others, a Job's selector and template, a Service's `clusterIP`,
//! a bound claim's spec beyond a larger size, a binding's `roleRef`, the data of a ConfigMap
//! or Secret marked `immutable: true`, a CRD's `scope`; and on custom resources, the fields
//! their CRD guards with the CEL transition rule `self == oldSelf`
//! (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#transition-rules).

use super::identity::{Identity, Side};
use super::values::{Difference, first_difference, shown};
use super::way_out;
use crate::finding::{Finding, Severity};
use crate::gitops::{App, Controller, ModelObject};
use crate::rules::immutable_field_changed::ID;
use crate::yaml::Node;
use std::collections::HashMap;

/// How a field may change.
#[derive(Clone, Copy)]
enum Compare {
    /// Not at all. `default`: what the server sets when the manifest leaves the field out
    /// (leaving it out and writing the default is no change). `server_fills`: the server sets
    /// it from elsewhere (a claim's bound volume), so declaring it later may match.
    Fixed {
        default: Option<&'static str>,
        server_fills: bool,
    },
    /// A claim's requested size may grow (where the class allows it), never shrink.
    StorageNoShrink,
    /// A Service keeps its cluster IP: a different address declared on both sides fails; a
    /// manifest that stops declaring it keeps the allocated one.
    ClusterIp,
    /// `immutable: true` freezes `data`, `binaryData` (and a Secret's `stringData`) and the
    /// flag itself.
    FrozenData,
}

struct Field {
    /// `(group, kind)`.
    kinds: &'static [(&'static str, &'static str)],
    path: &'static [&'static str],
    compare: Compare,
}

const FIXED: Compare = Compare::Fixed {
    default: None,
    server_fills: false,
};

const WORKLOADS: &[(&str, &str)] = &[
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "DaemonSet"),
    ("apps", "StatefulSet"),
];
const STATEFULSET: &[(&str, &str)] = &[("apps", "StatefulSet")];
const JOB: &[(&str, &str)] = &[("batch", "Job")];
const SERVICE: &[(&str, &str)] = &[("", "Service")];
const PVC: &[(&str, &str)] = &[("", "PersistentVolumeClaim")];
const BINDINGS: &[(&str, &str)] = &[
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
];
const DATA: &[(&str, &str)] = &[("", "ConfigMap"), ("", "Secret")];
const CRD: &[(&str, &str)] = &[("apiextensions.k8s.io", "CustomResourceDefinition")];

const FIELDS: &[Field] = &[
    Field {
        kinds: WORKLOADS,
        path: &["spec", "selector"],
        compare: FIXED,
    },
    Field {
        kinds: STATEFULSET,
        path: &["spec", "volumeClaimTemplates"],
        compare: FIXED,
    },
    Field {
        kinds: STATEFULSET,
        path: &["spec", "serviceName"],
        compare: Compare::Fixed {
            default: Some(""),
            server_fills: false,
        },
    },
    Field {
        kinds: STATEFULSET,
        path: &["spec", "podManagementPolicy"],
        compare: Compare::Fixed {
            default: Some("OrderedReady"),
            server_fills: false,
        },
    },
    Field {
        kinds: JOB,
        path: &["spec", "selector"],
        compare: Compare::Fixed {
            default: None,
            server_fills: true,
        },
    },
    Field {
        kinds: JOB,
        path: &["spec", "template"],
        compare: FIXED,
    },
    Field {
        kinds: SERVICE,
        path: &["spec", "clusterIP"],
        compare: Compare::ClusterIp,
    },
    Field {
        kinds: PVC,
        path: &["spec", "storageClassName"],
        compare: Compare::Fixed {
            default: None,
            server_fills: true,
        },
    },
    Field {
        kinds: PVC,
        path: &["spec", "volumeName"],
        compare: Compare::Fixed {
            default: None,
            server_fills: true,
        },
    },
    Field {
        kinds: PVC,
        path: &["spec", "accessModes"],
        compare: FIXED,
    },
    Field {
        kinds: PVC,
        path: &["spec", "resources", "requests", "storage"],
        compare: Compare::StorageNoShrink,
    },
    Field {
        kinds: BINDINGS,
        path: &["roleRef"],
        compare: FIXED,
    },
    Field {
        kinds: DATA,
        path: &[],
        compare: Compare::FrozenData,
    },
    Field {
        kinds: CRD,
        path: &["spec", "scope"],
        compare: FIXED,
    },
];

/// Paths a CRD guards with `self == oldSelf`, by the (group, kind) it defines.
pub type TransitionRules = HashMap<(String, String), Vec<Vec<String>>>;

/// One finding per immutable field the change touches, on the head's line.
pub fn check(base: &Side, head: &Side, transitions: &TransitionRules, out: &mut Vec<Finding>) {
    let mut ids: Vec<&Identity> = head.objects.keys().collect();
    ids.sort();
    for id in ids {
        for after in &head.objects[id] {
            let app = head.app(after);
            let Some(before) = base.rendered_by(id, &app.name) else {
                continue;
            };
            if recreated_each_sync(app, after) || id.name.is_empty() {
                continue;
            }
            if way_out::recreates_on_immutable_change(app, after) {
                continue;
            }
            let typed = (id.group, id.kind);
            for field in FIELDS.iter().filter(|f| f.kinds.contains(&typed)) {
                if let Some(f) = compare_field(field, before, after) {
                    out.push(finish(f, app, after, id, field_name(field.path)));
                }
            }
            let key = (id.group.to_string(), id.kind.to_string());
            for path in transitions.get(&key).into_iter().flatten() {
                let path: Vec<&str> = path.iter().map(String::as_str).collect();
                let (Some(old), Some(new)) = (
                    before.object.root.get_path(&path),
                    after.object.root.get_path(&path),
                ) else {
                    continue;
                };
                if let Some(d) = first_difference(old, new) {
                    let name = field_name(&path);
                    let why = format!(
                        "its CustomResourceDefinition requires `self == oldSelf` on `{name}`"
                    );
                    out.push(finish(
                        changed(&name, d, &why, false),
                        app,
                        after,
                        id,
                        name.clone(),
                    ));
                }
            }
        }
    }
}

fn field_name(path: &[&str]) -> String {
    path.join(".")
}

/// Hooks are created anew by each sync (Argo CD, and Helm under helm-controller, delete a
/// hook before creating it again by default), so their fields never change in place.
pub(super) fn recreated_each_sync(app: &App, mo: &ModelObject) -> bool {
    use crate::gitops::model::hooks::{ARGO_HOOK, HELM_HOOK};
    let argo = mo.object.annotation(ARGO_HOOK).is_some();
    let helm = mo.object.annotation(HELM_HOOK).is_some();
    match app.controller() {
        Controller::Argocd => argo || helm,
        Controller::FluxHelm => helm,
        Controller::FluxKustomize | Controller::None => false,
    }
}

/// A finding before app and object are attached: message, place, field.
struct Changed {
    message: String,
    at: crate::source::Span,
    related: Vec<(crate::source::Span, String)>,
}

fn changed(field: &str, d: Difference, why: &str, secret: bool) -> Changed {
    let below = if d.path.is_empty() {
        format!("`{field}`")
    } else if field.is_empty() {
        format!("`{}`", d.path)
    } else if d.path.starts_with('[') {
        format!("`{field}{}`", d.path)
    } else {
        format!("`{field}.{}`", d.path)
    };
    let values = if secret {
        String::new()
    } else {
        format!(" from {} to {}", shown(d.before), shown(d.after))
    };
    let related = d
        .related
        .and_then(|n| n.related.as_ref())
        .map(|r| r.iter().map(|x| (x.span, x.label.clone())).collect())
        .unwrap_or_default();
    Changed {
        message: format!("{below} changes{values}: {why}"),
        at: d.at,
        related,
    }
}

fn compare_field(field: &Field, before: &ModelObject, after: &ModelObject) -> Option<Changed> {
    let name = field_name(field.path);
    let old = before.object.root.get_path(field.path);
    let new = after.object.root.get_path(field.path);
    match field.compare {
        Compare::Fixed {
            default,
            server_fills,
        } => {
            let why = format!("`{name}` cannot change once the object exists");
            match (old, new) {
                (Some(o), Some(n)) => {
                    first_difference(o, n).map(|d| changed(&name, d, &why, false))
                }
                // The server sets it (or keeps what it bound): declaring it may match.
                (None, Some(_)) if server_fills => None,
                (None, Some(n)) if default.is_some() && n.scalar_text().as_deref() == default => {
                    None
                }
                (Some(o), None) if default.is_some() && o.scalar_text().as_deref() == default => {
                    None
                }
                (None, Some(n)) => Some(Changed {
                    message: format!(
                        "`{name}` is set to {} on an object created without it: {why}",
                        shown(Some(n))
                    ),
                    at: n.full_span(),
                    related: Vec::new(),
                }),
                (Some(o), None) => Some(Changed {
                    message: format!(
                        "`{name}` ({}) is no longer declared, and the sync would remove it: {why}",
                        shown(Some(o))
                    ),
                    at: after
                        .object
                        .root
                        .get_path(&field.path[..field.path.len().saturating_sub(1)])
                        .map_or(after.object.root.span, |n| n.span),
                    related: Vec::new(),
                }),
                (None, None) => None,
            }
        }
        Compare::StorageNoShrink => {
            let (o, n) = (old?, new?);
            let (ot, nt) = (o.scalar_text()?, n.scalar_text()?);
            let smaller = crate::ownership::quantity::compare_quantities(&nt, &ot)
                == Some(std::cmp::Ordering::Less);
            smaller.then(|| Changed {
                message: format!("`{name}` shrinks from {ot} to {nt}: a claim's requested size can grow (where its StorageClass allows expansion), never shrink"),
                at: n.span,
                related: Vec::new(),
            })
        }
        Compare::ClusterIp => {
            let (o, n) = (old?.scalar_text()?, new?);
            let nt = n.scalar_text()?;
            (!o.is_empty() && !nt.is_empty() && o != nt).then(|| Changed {
                message: format!("`{name}` changes from {o:?} to {nt:?}: a Service keeps the cluster IP it was given (`None` for a headless one) for its lifetime"),
                at: n.span,
                related: Vec::new(),
            })
        }
        Compare::FrozenData => {
            if old_frozen(before) != Some(true) {
                return None;
            }
            let secret = after.object.kind == "Secret";
            let why = format!(
                "the {} was created with `immutable: true`, so its data and the flag itself cannot change",
                after.object.kind
            );
            ["immutable", "data", "binaryData", "stringData"]
                .iter()
                .find_map(|key| {
                    let o = before.object.root.get(key);
                    let n = after.object.root.get(key);
                    let d = match (o, n) {
                        (Some(o), Some(n)) => first_difference(o, n)?,
                        (None, None) => return None,
                        (o, n) => Difference {
                            path: String::new(),
                            before: o,
                            after: n,
                            at: n.map_or(after.object.root.span, |n| n.span),
                            related: n,
                        },
                    };
                    Some(changed(key, d, &why, secret))
                })
        }
    }
}

fn old_frozen(mo: &ModelObject) -> Option<bool> {
    mo.object.root.get("immutable").and_then(Node::as_bool)
}

fn finish(c: Changed, app: &App, mo: &ModelObject, id: &Identity, field: String) -> Finding {
    let automated = match app.controller() {
        Controller::Argocd => app.argo.as_ref().is_some_and(|a| a.sync.automated),
        Controller::FluxKustomize | Controller::FluxHelm => true,
        Controller::None => false,
    };
    let (severity, consequence) = if automated {
        (
            Severity::Error,
            "every automated sync fails with \"field is immutable\" and the app stays OutOfSync until the object is re-created",
        )
    } else {
        (
            Severity::Warning,
            "the next sync fails with \"field is immutable\" until the object is re-created",
        )
    };
    let mut f = Finding::new(
        ID,
        severity,
        format!("{}: {}: {consequence}", id.display(), c.message),
        c.at,
    )
    .label("changed here")
    .help(way_out::recreate_help(app))
    .field(field);
    for (span, text) in c.related {
        f = f.secondary(span, text);
    }
    crate::rules::util::about(f, app, mo)
}
