//! Catalog §22: quantities and durations not written in the form the API server stores.
//! Argo CD normalizes them on built-in kinds; on custom resources the diff never settles.

use super::{FixAvailability, RuleMeta};
use super::util::{about, object_id};
use crate::finding::{Edit, Finding, Fix, Severity};
use crate::gitops::{Model, ModelObject};
use crate::ownership::kb::in_argo_scheme;
use crate::ownership::quantity::{canonical_duration, canonical_quantity};
use crate::yaml::{Entry, Node, Value};

pub const ID: &str = "non-canonical-quantity";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Info,
    summary: "quantities/durations not in canonical form where Argo does not normalize",
    doc: include_str!("../../rules/non-canonical-quantity.md"),
    fix: FixAvailability::Safe,
    removal: false,
    since: "0.1.0",
};

#[derive(Clone, Copy, PartialEq)]
enum Typed {
    Quantity,
    Duration,
}

/// Which typed field an entry path is (only typed paths are checked).
fn typed(kind: &str, group: &str, path: &[String]) -> Option<Typed> {
    let n = path.len();
    let at = |i: usize| path.get(n.wrapping_sub(i)).map(String::as_str);
    if n >= 3 && at(3) == Some("resources") && matches!(at(2), Some("requests" | "limits")) {
        return Some(Typed::Quantity);
    }
    if at(2) == Some("emptyDir") && at(1) == Some("sizeLimit") {
        return Some(Typed::Quantity);
    }
    match (group, kind) {
        ("", "ResourceQuota") if path.starts_with(&["spec".into(), "hard".into()]) && n == 3 => {
            Some(Typed::Quantity)
        }
        ("", "LimitRange")
            if n == 5
                && matches!(
                    at(2),
                    Some("default" | "defaultRequest" | "max" | "min" | "maxLimitRequestRatio")
                ) =>
        {
            Some(Typed::Quantity)
        }
        ("autoscaling", "HorizontalPodAutoscaler")
            if at(2) == Some("target") && matches!(at(1), Some("averageValue" | "value")) =>
        {
            Some(Typed::Quantity)
        }
        ("cert-manager.io", "Certificate")
            if n == 2 && path[0] == "spec" && matches!(at(1), Some("duration" | "renewBefore")) =>
        {
            Some(Typed::Duration)
        }
        _ => None,
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

pub fn check(model: &Model, out: &mut Vec<Finding>) {
    for mo in &model.objects {
        let o = &mo.object;
        // An unknown field makes Argo fall back to the raw object (catalog A3.1).
        let raw_fallback = in_argo_scheme(o.group())
            && !crate::ownership::k8s_schema::unknown_fields(o).is_empty();
        let mut stack: Vec<(&Node, Vec<String>)> = vec![(&o.root, Vec::new())];
        while let Some((node, path)) = stack.pop() {
            if path.len() > 64 || super::declared_empty_or_null::opaque(&path) {
                continue;
            }
            match &node.value {
                Value::Map(entries) => {
                    for e in entries {
                        let mut p = path.clone();
                        p.push(e.key.key_str().into_owned());
                        if let Some(t) = typed(&o.kind, o.group(), &p)
                            && let Some(f) = judge(model, mo, e, &p, t, raw_fallback)
                        {
                            out.push(f);
                        }
                        stack.push((&e.value, p));
                    }
                }
                Value::Seq(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let mut p = path.clone();
                        p.push(i.to_string());
                        stack.push((item, p));
                    }
                }
                _ => {}
            }
        }
    }
}

fn judge(
    model: &Model,
    mo: &ModelObject,
    e: &Entry,
    path: &[String],
    t: Typed,
    raw_fallback: bool,
) -> Option<Finding> {
    let normalized = argo_normalizes(model, mo, path, raw_fallback);
    let (written, canonical) = match (&e.value.value, t) {
        (Value::String(s), Typed::Quantity) => (s.clone(), canonical_quantity(s)?),
        (Value::String(s), Typed::Duration) => (s.clone(), canonical_duration(s)?),
        // A number where the server stores a string: only a diff where Argo does not
        // normalize (custom resources).
        (Value::Int(_) | Value::Float(_), Typed::Quantity) => {
            let text = e
                .value
                .raw
                .as_deref()
                .map(str::to_string)
                .or_else(|| e.value.scalar_text())?;
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
            if normalized {
                " (Argo CD normalizes it here)"
            } else {
                ", and Argo CD does not normalize this field, so the app never settles"
            }
        ),
        crate::ownership::edit_span(e),
    )
    .label(format!("write {quoted}"))
    .field(path.join("."))
    .help(format!(
        "Write `{canonical}`. For CRDs embedding Kubernetes types add \
         `resource.customizations.knownTypeFields.{}_{}` to argocd-cm \
         (e.g. `field: spec.template.spec, type: core/v1/PodSpec`).",
        mo.object.group(),
        mo.object.kind
    ));
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
