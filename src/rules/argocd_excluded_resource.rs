//! Objects an Argo CD app declares whose kind the instance's resource exclusions leave out:
//! Argo CD drops them from the desired state (an `ExcludedResourceWarning` condition), so
//! they are never applied. From 3.0 the argocd-cm Argo CD ships excludes Endpoints,
//! EndpointSlice, Lease, the *Review kinds, CSRs, cert-manager CertificateRequests, Kyverno
//! reports and Cilium identities by default.

use super::util::{about, object_id};
use super::{FixAvailability, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::model::argo::Exclusion;

pub const ID: &str = "argocd-excluded-resource";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[],
    summary: "an Argo CD app declares an object of a kind its resource exclusions leave out, so it is never applied",
    doc: include_str!("../../rules/argocd-excluded-resource.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.2.0",
    kinds: Kinds::Apps,
};

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for (app, argo) in model.argo_apps() {
        let settings = model.argo_settings(app);
        let version = model.argo_version(app);
        for mo in model.objects_of(app) {
            let o = &mo.object;
            let Some(why) = settings.exclusion(
                o.group(),
                &o.kind,
                argo.destination_cluster.as_deref(),
                version,
            ) else {
                continue;
            };
            let Some(kind) = o.root.entry("kind") else {
                continue;
            };
            let by = match why {
                Exclusion::Core => "Argo CD's built-in resource exclusions".to_string(),
                Exclusion::Configured(_) => "the `resource.exclusions` of its argocd-cm".to_string(),
                Exclusion::Default => format!(
                    "the default `resource.exclusions` of Argo CD {}",
                    version.named_or("3.0 and later")
                ),
            };
            let mut f = Finding::new(
                ID,
                Severity::Warning,
                format!(
                    "{} is of a kind {by} leave out: Argo CD drops it from app `{}` with an ExcludedResourceWarning and never applies it",
                    object_id(mo),
                    app.name
                ),
                kind.key.span.cover(kind.value.span),
            )
            .label("never applied by Argo CD")
            .help("Remove the object if a controller creates it; if the app must apply it, set `resource.exclusions` in argocd-cm without this kind (the key replaces the whole default list), or apply it outside Argo CD.");
            if let Exclusion::Configured(at) = why {
                f = f.secondary(at, "excluded here");
            }
            out.push(about(f, app, mo));
        }
    }
}
