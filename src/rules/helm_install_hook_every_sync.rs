//! Catalog §26: install-only Helm hooks, which Argo CD runs on every sync.

use super::RuleMeta;
use super::util::{about, object_id};
use crate::gitops::Model;
use crate::report::{Finding, Severity};

pub const ID: &str = "helm-install-hook-every-sync";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    summary: "install-only Helm hooks run on every Argo CD sync",
    doc: include_str!("../../rules/helm-install-hook-every-sync.md"),
};

pub fn check(model: &Model, out: &mut Vec<Finding>) {
    for mo in &model.objects {
        let app = model.app_of(mo);
        if app.argo.is_none() || mo.object.annotation("argocd.argoproj.io/hook").is_some() {
            continue;
        }
        let Some(entry) = mo
            .object
            .metadata()
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.entry("helm.sh/hook"))
        else {
            continue;
        };
        let hooks: Vec<String> = entry
            .value
            .scalar_text()
            .unwrap_or_default()
            .split(',')
            .map(|h| h.trim().to_string())
            .collect();
        for (install, upgrade) in [
            ("pre-install", "pre-upgrade"),
            ("post-install", "post-upgrade"),
        ] {
            if hooks.iter().any(|h| h == install) && !hooks.iter().any(|h| h == upgrade) {
                out.push(about(
                    Finding::new(ID, Severity::Warning, format!("{} is a `{install}` hook: Argo CD cannot tell install from upgrade and runs it on every sync", object_id(mo)), entry.value.span)
                        .label("runs on every sync under Argo CD")
                        .help("Make the hook idempotent, generate secrets outside the chart (External Secrets, Sealed Secrets, cert-manager), and do not rely on .Release.IsInstall under Argo CD."),
                    app,
                    mo,
                ));
            }
        }
    }
}
