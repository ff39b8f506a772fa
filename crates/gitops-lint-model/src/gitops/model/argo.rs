//! The Argo CD part of the model: an Application's sources, sync policy and ignore
//! entries, and the settings of an Argo CD instance (argocd-cm, argocd-cmd-params-cm).

use super::{App, Cluster};
use crate::gitops::ignore::IgnoreEntry;
use crate::object::Object;
use crate::source::Span;
use crate::yaml::Node;

#[derive(Clone, Debug, Default)]
pub struct SyncPolicy {
    /// `automated` present and not `enabled: false`.
    pub automated: bool,
    pub self_heal: bool,
    pub prune: bool,
    /// `syncOptions[]` items (nodes, to report on the exact line).
    pub options: Vec<Node>,
    /// Span of `syncPolicy` (or the spec when absent), where a fix adds options.
    pub span: Option<Span>,
}

impl SyncPolicy {
    pub fn has_option(&self, exact: &str) -> bool {
        self.options.iter().any(|o| o.as_str() == Some(exact))
    }
}

#[derive(Clone, Debug)]
pub struct ArgoSource {
    pub repo_url: Option<String>,
    pub path: Option<String>,
    pub path_span: Option<Span>,
    pub chart: Option<String>,
    pub target_revision: Option<String>,
    pub ref_name: Option<String>,
    /// `directory.recurse`
    pub recurse: bool,
    pub include: Option<String>,
    pub exclude: Option<String>,
    pub node: Node,
    /// Set by discovery: the source is this repository (`remotes.rs` decides).
    pub local: bool,
}

/// The Argo-specific part of an app: read from the Application (or ApplicationSet template).
#[derive(Clone, Debug)]
pub struct ArgoApp {
    /// The Application / ApplicationSet object as written.
    pub decl: Object,
    pub from_appset: bool,
    pub sources: Vec<ArgoSource>,
    pub sync: SyncPolicy,
    pub ignores: Vec<IgnoreEntry>,
    /// The destination cluster (`spec.destination.server`, else `.name`) as written after
    /// generator expansion; `None` when absent or still a template.
    pub destination_cluster: Option<String>,
}

/// Argo CD settings from an `argocd-cm` ConfigMap in the repo
/// (https://argo-cd.readthedocs.io/en/stable/operator-manual/argocd-cm-yaml/), read from the
/// rendered output like any object: one per Argo CD instance (namespace and cluster of the
/// ConfigMap), since each controller reads the argocd-cm of its own namespace.
#[derive(Clone, Debug, Default)]
pub struct ArgoSettings {
    /// The ConfigMap, when the repo has one.
    pub decl: Option<Object>,
    /// The namespace the ConfigMap lands in: the instance's namespace.
    pub namespace: Option<String>,
    /// The cluster the ConfigMap lands in.
    pub cluster: Cluster,
    /// `controller.diff.server.side` in the instance's `argocd-cmd-params-cm`.
    pub server_side_diff: Option<bool>,
    pub instance_label_key: Option<String>,
    pub tracking_method: Option<String>,
    /// System-level ignore entries (`resource.customizations.ignoreDifferences.*`).
    pub ignores: Vec<IgnoreEntry>,
    /// Problems that make Argo's `GetResourceOverrides` fail (every app goes Unknown).
    pub override_errors: Vec<(Span, String)>,
    /// `resource.exclusions`: kinds Argo CD neither discovers nor syncs.
    pub exclusions: Vec<FilteredResource>,
    /// The `resource.exclusions` key, when argocd-cm sets it: it then replaces the default
    /// list the install manifests and the chart ship from 3.0.
    pub exclusions_at: Option<Span>,
}

/// One `resource.exclusions` entry: glob patterns; an empty list matches everything.
#[derive(Clone, Debug, Default)]
pub struct FilteredResource {
    pub api_groups: Vec<String>,
    pub kinds: Vec<String>,
    pub clusters: Vec<String>,
}

impl FilteredResource {
    fn matches(&self, group: &str, kind: &str, cluster: Option<&str>) -> bool {
        let any = |list: &[String], value: &str| {
            list.is_empty() || list.iter().any(|p| crate::glob::glob_match(p, value))
        };
        // An unknown destination matches only an entry for every cluster.
        let cluster_ok = match cluster {
            Some(c) => {
                let server = if c == "in-cluster" {
                    "https://kubernetes.default.svc"
                } else {
                    c
                };
                any(&self.clusters, server) || any(&self.clusters, c)
            }
            None => self.clusters.is_empty() || self.clusters.iter().any(|p| p == "*"),
        };
        any(&self.api_groups, group) && any(&self.kinds, kind) && cluster_ok
    }
}

/// Why Argo CD leaves objects of a kind out of every sync and comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exclusion {
    /// Argo CD's built-in list (Event, events.k8s.io, metrics.k8s.io, Lease), every release.
    Core,
    /// The instance's own `resource.exclusions` (the key's span).
    Configured(Span),
    /// The default `resource.exclusions` of the argocd-cm Argo CD ships from 3.0.
    Default,
}

/// `coreExcludedResources` (util/settings/resources_filter.go), the same from 2.x to 3.x.
const CORE_EXCLUSIONS: &[(&[&str], &[&str])] = &[
    (&["events.k8s.io", "metrics.k8s.io"], &[]),
    (&[""], &["Event"]),
    (&["coordination.k8s.io"], &["Lease"]),
];

/// The `resource.exclusions` of the argocd-cm in Argo CD's install manifests from v3.0.0
/// (manifests/base/config/argocd-cm.yaml; docs/operator-manual/upgrading/2.14-3.0.md), also
/// the argo-cd chart's default values from chart 8.0.
const DEFAULT_EXCLUSIONS_3_0: &[(&[&str], &[&str])] = &[
    (&["", "discovery.k8s.io"], &["Endpoints", "EndpointSlice"]),
    (&["coordination.k8s.io"], &["Lease"]),
    (
        &["authentication.k8s.io", "authorization.k8s.io"],
        &[
            "SelfSubjectReview",
            "TokenReview",
            "LocalSubjectAccessReview",
            "SelfSubjectAccessReview",
            "SelfSubjectRulesReview",
            "SubjectAccessReview",
        ],
    ),
    (&["certificates.k8s.io"], &["CertificateSigningRequest"]),
    (&["cert-manager.io"], &["CertificateRequest"]),
    (
        &["cilium.io"],
        &["CiliumIdentity", "CiliumEndpoint", "CiliumEndpointSlice"],
    ),
    (
        &["kyverno.io", "reports.kyverno.io", "wgpolicyk8s.io"],
        &[
            "PolicyReport",
            "ClusterPolicyReport",
            "EphemeralReport",
            "ClusterEphemeralReport",
            "AdmissionReport",
            "ClusterAdmissionReport",
            "BackgroundScanReport",
            "ClusterBackgroundScanReport",
            "UpdateRequest",
        ],
    ),
];

fn listed(list: &[(&[&str], &[&str])], group: &str, kind: &str) -> bool {
    list.iter().any(|(groups, kinds)| {
        (groups.is_empty() || groups.contains(&group))
            && (kinds.is_empty() || kinds.contains(&kind))
    })
}

impl ArgoSettings {
    /// Does Argo CD leave objects of this group and kind out on the app's destination cluster
    /// (never applied, never compared), and why? Its built-in list always; then the
    /// instance's `resource.exclusions` when argocd-cm sets the key (it replaces the
    /// default), else the default list of the release: from 3.0 the install manifests ship one,
    /// before 3.0 none.
    pub fn exclusion(
        &self,
        group: &str,
        kind: &str,
        cluster: Option<&str>,
        version: &super::versions::Judged,
    ) -> Option<Exclusion> {
        if listed(CORE_EXCLUSIONS, group, kind) {
            return Some(Exclusion::Core);
        }
        match self.exclusions_at {
            Some(at) => self
                .exclusions
                .iter()
                .any(|r| r.matches(group, kind, cluster))
                .then_some(Exclusion::Configured(at)),
            None => (!version.before(3, 0) && listed(DEFAULT_EXCLUSIONS_3_0, group, kind))
                .then_some(Exclusion::Default),
        }
    }

    /// Does Argo CD leave objects of this group and kind out of every sync and comparison?
    pub fn excludes(
        &self,
        group: &str,
        kind: &str,
        cluster: Option<&str>,
        version: &super::versions::Judged,
    ) -> bool {
        self.exclusion(group, kind, cluster, version).is_some()
    }
}

/// The instance that runs an Application: the controller of the namespace the Application
/// is declared in (Argo CD reads the argocd-cm of its own namespace; an Application in
/// another namespace is served by the control plane listing it in `application.namespaces`,
/// taken here as the only instance there is). Ties between clusters go to the cluster the
/// Application is applied to.
pub fn instance_for<'a>(instances: &'a [ArgoSettings], app: &App) -> Option<&'a ArgoSettings> {
    let ns = app.argo.as_ref().and_then(|a| a.decl.namespace.clone());
    let in_ns: Vec<&ArgoSettings> = instances
        .iter()
        .filter(|s| ns.is_some() && s.namespace == ns)
        .collect();
    match in_ns.as_slice() {
        [one] => return Some(one),
        [] => {}
        several => {
            return several
                .iter()
                .find(|s| s.cluster.name() == app.home.name())
                .or(several.first())
                .copied();
        }
    }
    match instances {
        [one] => Some(one),
        _ => None,
    }
}
