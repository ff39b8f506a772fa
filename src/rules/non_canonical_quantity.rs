//! Quantities and durations not written in the form the API server stores.
//! Argo CD normalizes them on built-in kinds; on custom resources the diff never settles.

use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Edit, Finding, Fix, Severity};
use crate::gitops::{Model, ModelObject};
use crate::ownership::kb::in_argo_scheme;
use super::util::{Controller, about, object_id};
use crate::ownership::quantity::canonical_quantity;
use crate::yaml::{Entry, Node, Value};
use std::borrow::Cow;

pub const ID: &str = "non-canonical-quantity";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Info,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "Flux does not apply the object and Argo CD does not normalize the field (a custom resource's field outside `knownTypeFields`, or a built-in object with fields its schema does not know), so Git and the stored form never match",
        },
    ],
    summary: "quantities/durations not in canonical form where Argo does not normalize",
    doc: include_str!("../../rules/non-canonical-quantity.md"),
    fix: FixAvailability::Safe,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// A custom resource without its CRD in the repo: only quantities of an embedded pod
/// template (`…template.spec.containers[].resources.requests|limits.*`) are
/// known to be typed; free-form fields (a HelmRelease's `spec.values`) are not.
fn embedded_pod_quantity(path: &[Cow<'_, str>]) -> bool {
    let n = path.len();
    n >= 7
        && path[0] == "spec"
        && matches!(path[n - 2].as_ref(), "requests" | "limits")
        && path[n - 3] == "resources"
        && matches!(
            path[n - 5].as_ref(),
            "containers" | "initContainers" | "ephemeralContainers"
        )
        && path[n - 6] == "spec"
        && path[n - 7] == "template"
}

/// The declared entries a schema calls quantities: the built-in schema for built-in kinds,
/// the repo's CRD for custom resources, embedded pod templates otherwise.
fn quantities<'a>(
    mo: &'a ModelObject,
    schemas: &[crate::ownership::crd::CrdSchema<'_>],
) -> Vec<(&'a Entry, Vec<String>)> {
    let o = &mo.object;
    if crate::ownership::k8s_schema::knows(o) {
        return crate::ownership::k8s_schema::quantity_entries(o);
    }
    let version = o.api_version.rsplit('/').next().unwrap_or("");
    if let Some(crd) = schemas
        .iter()
        .find(|s| s.group == o.group() && s.kind == o.kind && s.version == version)
    {
        return crate::ownership::crd::quantity_entries(&o.root, crd.schema);
    }
    let mut out = Vec::new();
    embedded_pod_quantities(&o.root, &mut Vec::new(), &mut out);
    out
}

/// The embedded pod quantities under `node` (at `path`), in the order of a depth-first walk
/// that takes a map's matching entries first and then its other entries and a list's items
/// last to first. One path buffer serves the walk; a path is copied only for a quantity.
fn embedded_pod_quantities<'a>(
    node: &'a Node,
    path: &mut Vec<Cow<'a, str>>,
    out: &mut Vec<(&'a Entry, Vec<String>)>,
) {
    // Chart values and patches are free-form data, not fields of the object (the keys above
    // were checked on the way down).
    if path.len() > 64 || path.last().is_some_and(|k| super::declared_empty_or_null::opaque_key(k)) {
        return;
    }
    match &node.value {
        Value::Map(entries) => {
            for e in entries {
                path.push(e.key.key_str());
                if embedded_pod_quantity(path) {
                    out.push((e, path.iter().map(|k| k.to_string()).collect()));
                }
                path.pop();
            }
            for e in entries.iter().rev() {
                path.push(e.key.key_str());
                if !embedded_pod_quantity(path) {
                    embedded_pod_quantities(&e.value, path, out);
                }
                path.pop();
            }
        }
        Value::Seq(items) => {
            for (i, item) in items.iter().enumerate().rev() {
                path.push(Cow::Owned(i.to_string()));
                embedded_pod_quantities(item, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Does Argo normalize this path (built-in kinds, a Rollout's pod spec, knownTypeFields)?
fn argo_normalizes(model: &Model, mo: &ModelObject, path: &[String], raw_fallback: bool) -> bool {
    let o = &mo.object;
    if in_argo_scheme(o.group()) {
        return !raw_fallback;
    }
    if o.group() == "argoproj.io"
        && o.kind == "Rollout"
        && path.starts_with(&["spec".into(), "template".into(), "spec".into()])
    {
        return true;
    }
    let key = format!(
        "resource.customizations.knownTypeFields.{}_{}",
        o.group(),
        o.kind
    );
    model
        .argo
        .decl
        .as_ref()
        .and_then(|cm| cm.root.get("data"))
        .is_some_and(|d| d.get(&key).is_some())
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let schemas = crate::ownership::crd::crd_schemas(model);
    for mo in model.in_scope() {
        let o = &mo.object;
        // An unknown field makes Argo fall back to the raw object (worked out once, for an
        // object with quantities).
        let mut raw_fallback = None;
        for (e, path) in quantities(mo, &schemas) {
            if crate::gitops::sops::is_ciphertext(&e.value) {
                continue;
            }
            let raw_fallback = *raw_fallback.get_or_insert_with(|| {
                in_argo_scheme(o.group()) && crate::ownership::k8s_schema::has_unknown_fields(o)
            });
            if let Some(f) = judge(model, mo, e, &path, raw_fallback) {
                out.push(f);
            }
        }
    }
}

fn judge(
    model: &Model,
    mo: &ModelObject,
    e: &Entry,
    path: &[String],
    raw_fallback: bool,
) -> Option<Finding> {
    let controller = model.app_of(mo).controller();
    // Flux's drift check is a server-side dry-run: it compares what the API server stores
    // on both sides, so only Argo CD can loop on the written form.
    let normalized = controller.is_flux() || argo_normalizes(model, mo, path, raw_fallback);
    let (written, canonical) = match &e.value.value {
        Value::String(s) => (s.clone(), canonical_quantity(s)?),
        // A number: a built-in kind's Quantity stores it as a string, which Argo CD
        // normalizes; a custom resource stores the JSON number as sent (CRD validation
        // converts nothing, `x-kubernetes-int-or-string` keeps either type), so Git and the
        // live object hold the same number and nothing differs.
        Value::Int(_) | Value::Float(_) => {
            if !normalized {
                return None;
            }
            let text = e.value.text_as_written()?;
            let canonical = canonical_quantity(&text)?;
            if normalized && canonical == text {
                return None;
            }
            (text, canonical)
        }
        _ => return None,
    };
    let is_number = !matches!(e.value.value, Value::String(_));
    if written == canonical && !is_number {
        return None;
    }
    let severity = if normalized {
        Severity::Info
    } else {
        Severity::Warning
    };
    let quoted = if canonical
        .chars()
        .all(|c| c.is_ascii_digit() || c == '-' || c == '.' || c == 'e')
    {
        format!("\"{canonical}\"")
    } else {
        canonical.clone()
    };
    let key = e.key.key_str().into_owned();
    let mut f = Finding::new(
        ID,
        severity,
        format!(
            "{} declares {key}: {written}; the API server stores `{canonical}`{}",
            object_id(mo),
            match (controller, normalized) {
                (Controller::FluxKustomize | Controller::FluxHelm, _) => format!(
                    " ({}'s server-side dry-run compares the stored form, so this is cosmetic)",
                    controller.name()
                ),
                (Controller::Argocd, true) => " (Argo CD normalizes it here)".to_string(),
                (Controller::Argocd, false) => ", and Argo CD does not normalize this field, so \
                    the app never settles"
                    .to_string(),
                (Controller::None, true) => String::new(),
                (Controller::None, false) => ", and a diff of Git's text against the live \
                    object (Argo CD's on a custom resource) never settles"
                    .to_string(),
            }
        ),
        crate::ownership::edit_span(e),
    )
    .label(format!("write {quoted}"))
    .field(path.join("."))
    .help(if controller == Controller::Argocd || !normalized {
        format!(
            "Write `{canonical}`. For CRDs embedding Kubernetes types add \
             `resource.customizations.knownTypeFields.{}_{}` to argocd-cm \
             (e.g. `field: spec.template.spec, type: core/v1/PodSpec`).",
            mo.object.group(),
            mo.object.kind
        )
    } else {
        format!("Write `{canonical}`, the form the API server stores.")
    });
    if e.key.span.file == e.value.span.file && super::fixes::editable(&model.map, e.value.span.file)
    {
        f = f.with_fix(Fix {
            title: format!("write {quoted}"),
            safe: true,
            edits: vec![Edit {
                span: e.value.span,
                replacement: quoted,
            }],
        });
    }
    Some(about(f, model.app_of(mo), mo))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quantity_paths(yaml: &str) -> Vec<String> {
        let doc = crate::yaml::parse_str(yaml, crate::source::FileId(0), &Default::default())
            .docs
            .remove(0);
        let mut out = Vec::new();
        embedded_pod_quantities(&doc.root, &mut Vec::new(), &mut out);
        out.iter().map(|(_, path)| path.join(".")).collect()
    }

    #[test]
    fn a_custom_resource_without_schema_has_quantities_only_in_embedded_pod_templates() {
        let paths = quantity_paths(
            "apiVersion: example.com/v1
kind: Worker
spec:
  values:
    template:
      spec:
        containers:
          - resources: {requests: {cpu: 1000m}}
  template:
    spec:
      containers:
        - name: a
          resources:
            requests: {cpu: 500m, memory: 1Gi}
            limits: {cpu: 1000m}
        - name: b
          resources:
            requests: {memory: 512Mi}
      initContainers:
        - resources: {limits: {memory: 64Mi}}
  replicas: 2
",
        );
        // Chart values are free-form data; the order is the walk's: a map's later entries and
        // a list's later items first, each map's own quantities before its children.
        assert_eq!(
            paths,
            [
                "spec.template.spec.initContainers.0.resources.limits.memory",
                "spec.template.spec.containers.1.resources.requests.memory",
                "spec.template.spec.containers.0.resources.limits.cpu",
                "spec.template.spec.containers.0.resources.requests.cpu",
                "spec.template.spec.containers.0.resources.requests.memory",
            ]
        );
    }
}
