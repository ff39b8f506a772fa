//! Catalog §24: charts, remote bases and external Git/OCI sources that are not pinned.

use super::{FixAvailability, RuleMeta};
use crate::finding::{Finding, Severity};
use crate::gitops::Model;
use crate::yaml::Node;

pub const ID: &str = "unpinned-source";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    summary: "chart, remote base or external source is not pinned to an exact version",
    doc: include_str!("../../rules/unpinned-source.md"),
    fix: FixAvailability::None,
    removal: false,
    since: "0.1.0",
};

const HELP: &str = "Pin the source to an exact version, tag or commit and let a bot (e.g. Renovate) bump it through reviewed pull requests.";

fn is_exact_version(v: &str) -> bool {
    let v = v.trim_start_matches('v');
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    !core.is_empty()
        && parts.len() <= 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

fn is_range(v: &str) -> bool {
    v.contains(['*', '^', '~', '>', '<', 'x', 'X', '|', ' ']) && !is_exact_version(v)
}

fn is_sha(v: &str) -> bool {
    v.len() == 40 && v.chars().all(|c| c.is_ascii_hexdigit())
}

pub fn check(model: &Model, out: &mut Vec<Finding>) {
    for (app, argo) in model.argo_apps() {
        for src in &argo.sources {
            // A value the generator could not supply (a cluster Secret's annotation that is
            // not in the repo) is unknown, not unpinned: nothing to report on it.
            let unknown = |v: Option<&str>| v.is_some_and(|v| v.contains("<no value>") || v.contains("{{"));
            if unknown(src.target_revision.as_deref()) || unknown(src.repo_url.as_deref()) {
                continue;
            }
            let rev = src.target_revision.clone().unwrap_or_default();
            let rev_span = src
                .node
                .get("targetRevision")
                .map(|n| n.span)
                .unwrap_or(src.node.span);
            if let Some(chart) = &src.chart {
                let oci = src
                    .repo_url
                    .as_deref()
                    .is_some_and(|u| u.starts_with("oci://") || !u.contains("://"));
                if rev.is_empty()
                    || rev == "HEAD"
                    || (!is_exact_version(&rev) && !is_range(&rev) && !oci)
                {
                    out.push(Finding::new(ID, Severity::Error, format!("targetRevision `{rev}` of Helm chart `{chart}` is not a chart version or semver constraint: Argo CD cannot resolve the chart, so `{}` never renders", app.name), rev_span).label("not a chart version").app(app.name.clone()).help("Set targetRevision to the chart version, e.g. `1.4.2`."));
                } else if is_range(&rev) {
                    out.push(Finding::new(ID, Severity::Warning, format!("Helm chart `{chart}` follows the range `{rev}`: a new chart release changes what is deployed without a commit"), rev_span).label("version range").app(app.name.clone()).help(HELP));
                }
                continue;
            }
            // Sources in this repo tracking a branch are normal GitOps; only external ones.
            // A generator placeholder left in the template (an ApplicationSet generator that
            // does not expand offline) is no revision at all.
            if src.local || rev.contains("{{") {
                continue;
            }
            if rev.is_empty()
                || rev == "HEAD"
                || (!is_sha(&rev) && !rev.starts_with('v') && !is_exact_version(&rev))
                || is_range(&rev)
            {
                let shown = if rev.is_empty() {
                    "(empty: HEAD)".to_string()
                } else {
                    rev.clone()
                };
                out.push(Finding::new(ID, Severity::Warning, format!("external source {} tracks `{shown}`: its content changes without a commit here", src.repo_url.as_deref().unwrap_or("?")), rev_span).label("not pinned").app(app.name.clone()).help(HELP));
            }
        }
    }
    for app in &model.apps {
        let Some(flux) = &app.flux else { continue };
        if flux.kind != crate::gitops::flux::FluxKind::HelmRelease {
            continue;
        }
        let Some(chart_spec) = flux.decl.root.get_path(&["spec", "chart", "spec"]) else {
            continue;
        };
        let source_kind = chart_spec
            .get_path(&["sourceRef", "kind"])
            .and_then(Node::as_str)
            .unwrap_or("");
        if source_kind != "HelmRepository" {
            continue; // the version is ignored for GitRepository/Bucket sources
        }
        let version = chart_spec
            .get("version")
            .and_then(Node::scalar_text)
            .unwrap_or_default();
        if version.is_empty() || is_range(&version) {
            let span = chart_spec
                .get("version")
                .map(|n| n.span)
                .unwrap_or(chart_spec.span);
            let shown = if version.is_empty() {
                "(empty: defaults to `*`)".to_string()
            } else {
                version
            };
            out.push(
                Finding::new(
                    ID,
                    Severity::Warning,
                    format!("HelmRelease chart version {shown} follows every new release"),
                    span,
                )
                .label("not pinned")
                .app(app.name.clone())
                .help(HELP),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn versions() {
        assert!(is_exact_version("1.2.3"));
        assert!(is_exact_version("v1.2.3-rc.1"));
        assert!(!is_exact_version("1.2.*"));
        assert!(is_range("^1.2.0"));
        assert!(is_range(">=1.0.0 <2.0.0"));
        assert!(!is_range("1.2.3"));
    }
}
