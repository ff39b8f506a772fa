//! The kinds of object the model reads, by API group and kind (any served version): the
//! declarations that are apps, and the Flux sources they name. One table, so a new kind is
//! one row here, one `AppKind` variant and the reader the compiler then asks for
//! (`discover.rs`).

use super::AppKind;
use crate::object::Object;

/// A kind of declaration that is an app: the model reads each object of it as one app (an
/// ApplicationSet as the apps it generates).
pub struct AppDeclaration {
    pub group: &'static str,
    pub kind: &'static str,
    pub app_kind: AppKind,
}

/// Every kind of app declaration the model reads.
pub const APP_DECLARATIONS: &[AppDeclaration] = &[
    AppDeclaration {
        group: "argoproj.io",
        kind: "Application",
        app_kind: AppKind::Argo,
    },
    AppDeclaration {
        group: "argoproj.io",
        kind: "ApplicationSet",
        app_kind: AppKind::ArgoAppSet,
    },
    AppDeclaration {
        group: "kustomize.toolkit.fluxcd.io",
        kind: "Kustomization",
        app_kind: AppKind::FluxKustomization,
    },
    AppDeclaration {
        group: "helm.toolkit.fluxcd.io",
        kind: "HelmRelease",
        app_kind: AppKind::FluxHelmRelease,
    },
];

/// The kind of app `o` declares, if it declares one.
pub fn app_kind_of(o: &Object) -> Option<AppKind> {
    let group = o.group();
    APP_DECLARATIONS
        .iter()
        .find(|d| d.kind == o.kind && d.group == group)
        .map(|d| d.app_kind.clone())
}

/// Does `o` declare an app of this kind?
pub fn declares(o: &Object, kind: AppKind) -> bool {
    app_kind_of(o) == Some(kind)
}

pub fn is_argo_app(o: &Object) -> bool {
    declares(o, AppKind::Argo)
}

pub fn is_argo_appset(o: &Object) -> bool {
    declares(o, AppKind::ArgoAppSet)
}

pub fn is_flux_kustomization(o: &Object) -> bool {
    declares(o, AppKind::FluxKustomization)
}

pub fn is_helm_release(o: &Object) -> bool {
    declares(o, AppKind::FluxHelmRelease)
}

/// A Flux app read by a Flux controller (a Kustomization or a HelmRelease).
pub fn is_flux_app(o: &Object) -> bool {
    app_kind_of(o).is_some_and(|k| k.is_flux())
}

/// A Flux GitRepository: the source whose artifact a Kustomization applies.
pub fn is_git_repository(o: &Object) -> bool {
    o.group() == "source.toolkit.fluxcd.io" && o.kind == "GitRepository"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(api_version: &str, kind: &str) -> Object {
        let text = format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: x\n");
        let mut parsed =
            crate::yaml::parse_str(&text, crate::source::FileId(0), &Default::default());
        let root = (!parsed.docs.is_empty()).then(|| parsed.docs.remove(0).root);
        match root.and_then(Object::from_node) {
            Some(o) => o,
            None => panic!("test object did not parse: {text}"),
        }
    }

    #[test]
    fn every_served_version_of_a_declared_kind_is_that_app() {
        let cases = [
            ("argoproj.io/v1alpha1", "Application", Some(AppKind::Argo)),
            (
                "argoproj.io/v1alpha1",
                "ApplicationSet",
                Some(AppKind::ArgoAppSet),
            ),
            (
                "kustomize.toolkit.fluxcd.io/v1",
                "Kustomization",
                Some(AppKind::FluxKustomization),
            ),
            (
                "kustomize.toolkit.fluxcd.io/v1beta2",
                "Kustomization",
                Some(AppKind::FluxKustomization),
            ),
            (
                "helm.toolkit.fluxcd.io/v2",
                "HelmRelease",
                Some(AppKind::FluxHelmRelease),
            ),
            (
                "helm.toolkit.fluxcd.io/v2beta1",
                "HelmRelease",
                Some(AppKind::FluxHelmRelease),
            ),
            // kustomize's own Kustomization is a build file, not an app.
            ("kustomize.config.k8s.io/v1beta1", "Kustomization", None),
            ("source.toolkit.fluxcd.io/v1", "GitRepository", None),
            ("v1", "ConfigMap", None),
        ];
        for (api_version, kind, want) in cases {
            assert_eq!(
                app_kind_of(&object(api_version, kind)),
                want,
                "{api_version} {kind}"
            );
        }
    }

    #[test]
    fn the_table_names_each_app_kind_once() {
        for (i, a) in APP_DECLARATIONS.iter().enumerate() {
            for b in &APP_DECLARATIONS[i + 1..] {
                assert!(a.app_kind != b.app_kind, "{} twice", a.app_kind.as_str());
                assert!(
                    (a.group, a.kind) != (b.group, b.kind),
                    "{} {} twice",
                    a.group,
                    a.kind
                );
            }
        }
    }
}
