//! Helm hooks as each controller runs them: whether an object the chart renders is applied
//! when its app syncs. One classification, read by the rule runner (which leaves objects no
//! controller applies out of every rule) and by the render-twice comparison.
//!
//! Argo CD maps `helm.sh/hook` events to its own hook phases and ignores the rest
//! (https://argo-cd.readthedocs.io/en/stable/user-guide/helm/#helm-hooks, and gitops-engine's
//! `pkg/sync/hook/helm`); an object with `argocd.argoproj.io/hook` follows that annotation and
//! its `helm.sh/hook` is ignored. helm-controller installs and upgrades with the Helm SDK,
//! which applies test hooks only under `helm test` (after install/upgrade when the HelmRelease
//! sets `spec.test.enable: true`) and leaves hooks out of drift detection
//! (https://fluxcd.io/flux/components/helm/helmreleases/#test-configuration).
//! kustomize-controller knows nothing of Helm annotations and applies every object.

use super::Controller;
use crate::object::Object;

pub const HELM_HOOK: &str = "helm.sh/hook";
pub const ARGO_HOOK: &str = "argocd.argoproj.io/hook";

/// One `helm.sh/hook` event, as Argo CD maps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelmHookEvent {
    /// `pre-install`, `pre-upgrade`.
    PreSync,
    /// `post-install`, `post-upgrade`.
    PostSync,
    /// `pre-delete` (Argo CD 3.x).
    PreDelete,
    /// `post-delete`.
    PostDelete,
    /// `crd-install` (Helm 2): Argo CD applies the object as a plain resource.
    CrdInstall,
    /// `test`, and Helm 2's `test-success` / `test-failure`: run by `helm test` only; Argo
    /// CD ignores them.
    Test,
    /// `pre-rollback`, `post-rollback`, anything else: no Argo CD phase.
    Unsupported,
}

impl HelmHookEvent {
    pub fn parse(name: &str) -> HelmHookEvent {
        match name.trim() {
            "pre-install" | "pre-upgrade" => HelmHookEvent::PreSync,
            "post-install" | "post-upgrade" => HelmHookEvent::PostSync,
            "pre-delete" => HelmHookEvent::PreDelete,
            "post-delete" => HelmHookEvent::PostDelete,
            "crd-install" => HelmHookEvent::CrdInstall,
            "test" | "test-success" | "test-failure" => HelmHookEvent::Test,
            _ => HelmHookEvent::Unsupported,
        }
    }
}

/// What an object's hook annotations say, before knowing which controller applies it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObjectHooks {
    /// `argocd.argoproj.io/hook` is set (Argo CD then ignores `helm.sh/hook`).
    pub argo: bool,
    /// `helm.sh/hook` names test events only: the object is a Helm test.
    pub helm_test: bool,
}

impl ObjectHooks {
    pub fn of(obj: &Object) -> ObjectHooks {
        let helm_test = obj.annotation(HELM_HOOK).is_some_and(|v| {
            let mut events = v.split(',').map(HelmHookEvent::parse).peekable();
            events.peek().is_some() && events.all(|e| e == HelmHookEvent::Test)
        });
        ObjectHooks {
            argo: obj.annotation(ARGO_HOOK).is_some(),
            helm_test,
        }
    }

    /// Does `controller` apply the object when it syncs? Not a Helm test under Argo CD (no
    /// phase), helm-controller or a chart installed by hand (`helm test` only); everything
    /// under kustomize-controller.
    pub fn applied_by(self, controller: Controller) -> bool {
        match controller {
            Controller::Argocd => !self.helm_test || self.argo,
            Controller::FluxHelm | Controller::None => !self.helm_test,
            Controller::FluxKustomize => true,
        }
    }
}

impl super::Model {
    /// Is `mo` applied when its app syncs (see [`ObjectHooks::applied_by`])? Rules see only
    /// such objects.
    pub fn applied_on_sync(&self, mo: &super::ModelObject) -> bool {
        ObjectHooks::of(&mo.object).applied_by(self.app_of(mo).controller())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(annotations: &str) -> Object {
        let text = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations:\n{annotations}"
        );
        let root = crate::yaml::parse_str(&text, crate::source::FileId(0), &Default::default())
            .docs
            .remove(0)
            .root;
        Object::from_node(root).unwrap_or_else(|| panic!("not an object: {text}"))
    }

    #[test]
    fn helm_events_map_to_argo_phases() {
        use HelmHookEvent::*;
        let cases = [
            ("pre-install", PreSync),
            ("pre-upgrade", PreSync),
            ("post-install", PostSync),
            ("post-upgrade", PostSync),
            ("pre-delete", PreDelete),
            ("post-delete", PostDelete),
            ("crd-install", CrdInstall),
            ("test", Test),
            (" test-success", Test),
            ("test-failure", Test),
            ("pre-rollback", Unsupported),
        ];
        for (name, event) in cases {
            assert_eq!(HelmHookEvent::parse(name), event, "{name}");
        }
    }

    #[test]
    fn a_helm_test_is_applied_only_by_kustomize_controller() {
        let test = ObjectHooks::of(&object("    helm.sh/hook: test\n"));
        assert!(test.helm_test);
        for c in [Controller::Argocd, Controller::FluxHelm, Controller::None] {
            assert!(!test.applied_by(c), "{c:?}");
        }
        assert!(test.applied_by(Controller::FluxKustomize));
    }

    #[test]
    fn other_hooks_and_argo_hooks_stay_applied() {
        // A test that is also a lifecycle hook runs on install/upgrade too.
        let both = ObjectHooks::of(&object("    helm.sh/hook: post-install,test\n"));
        assert!(!both.helm_test && both.applied_by(Controller::Argocd));
        // Argo CD follows its own annotation and ignores helm.sh/hook.
        let argo = ObjectHooks::of(&object(
            "    helm.sh/hook: test\n    argocd.argoproj.io/hook: PostSync\n",
        ));
        assert!(argo.applied_by(Controller::Argocd));
        assert!(!argo.applied_by(Controller::FluxHelm));
        let plain = ObjectHooks::of(&object("    team: web\n"));
        assert_eq!(plain, ObjectHooks::default());
    }
}
