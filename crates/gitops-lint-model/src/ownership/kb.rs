//! What Kubernetes itself and the objects of a repo show about fields written after apply:
//! built-in API groups, where injectable kinds keep their CA bundle, webhook patch Jobs in
//! the same app, Secrets a cert-manager `Certificate` names. What named operators write is
//! data, in the shipped knowledge base (`kb/writers/`, read by `operators.rs`).

use super::path::{Hit, Pattern, resolve};
use crate::gitops::Model;
use crate::source::Span;
use crate::yaml::Node;

/// API groups served by Kubernetes itself; everything else is a custom resource.
const BUILTIN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "node.k8s.io",
    "scheduling.k8s.io",
    "certificates.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
];

pub fn is_builtin_group(group: &str) -> bool {
    BUILTIN_GROUPS.contains(&group)
}

/// Is `finalizer` named in the API domain of `group`, as operators name the finalizer they
/// add to their own resources (Kubernetes asks for domain-qualified finalizer names)? The
/// finalizer's domain — the text before `/`, or all of it — and the group end in the same
/// two labels: `finalizer.keda.sh` on `keda.sh`, `strimzi.io/topic-operator` on
/// `kafka.strimzi.io`, `cephcluster.ceph.rook.io` on `ceph.rook.io`.
pub fn finalizer_in_group_domain(group: &str, finalizer: &str) -> bool {
    fn org(domain: &str) -> Option<&str> {
        let mut dots = domain.rmatch_indices('.');
        dots.next()?;
        Some(match dots.next() {
            Some((i, _)) => &domain[i + 1..],
            None => domain,
        })
    }
    let domain = finalizer.split_once('/').map_or(finalizer, |(d, _)| d);
    match (org(domain), org(group)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Is the kind in Argo CD's scheme (typed normalization applies)?
pub fn in_argo_scheme(group: &str) -> bool {
    is_builtin_group(group) && !matches!(group, "apiextensions.k8s.io" | "apiregistration.k8s.io")
}

/// Where an injectable kind keeps its CA bundle.
pub fn ca_bundle_path(group: &str, kind: &str) -> Option<Pattern> {
    match (group, kind) {
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => Pattern::parse_dotted("webhooks[*].clientConfig.caBundle"),
        ("apiregistration.k8s.io", "APIService") => Some(Pattern::keys(&["spec", "caBundle"])),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => Some(Pattern::keys(&[
            "spec",
            "conversion",
            "webhook",
            "clientConfig",
            "caBundle",
        ])),
        _ => None,
    }
}

/// A caBundle value that only stands in for the injected one (`""`, controller-gen's
/// `Cg==`, a short stub).
pub fn is_placeholder_ca(value: &Node) -> bool {
    match value.scalar_text() {
        None => value.is_null(),
        Some(v) => {
            let v = v.trim();
            v.is_empty() || v == "Cg==" || v.len() < 16
        }
    }
}

/// A Job in the same app that patches webhooks at runtime (`kube-webhook-certgen patch`,
/// the ingress-nginx / kube-prometheus-stack admission-patch Jobs), with what its command
/// line says about the failure policy it sets.
pub struct WebhookPatcher {
    pub span: Span,
    pub name: String,
    /// `--patch-failure-policy=<v>`, when given.
    pub failure_policy: Option<String>,
}

pub fn webhook_patchers(model: &Model, app: usize) -> Vec<WebhookPatcher> {
    let mut out = Vec::new();
    for mo in model.objects.iter().filter(|m| m.app == app) {
        if mo.object.kind != "Job" || mo.object.group() != "batch" {
            continue;
        }
        let Some(containers) = mo
            .object
            .root
            .get_path(&["spec", "template", "spec", "containers"])
            .and_then(Node::as_seq)
        else {
            continue;
        };
        for c in containers {
            let mut words: Vec<String> = Vec::new();
            words.extend(c.get("image").and_then(Node::scalar_text));
            for k in ["command", "args"] {
                for w in c.get(k).and_then(Node::as_seq).unwrap_or_default() {
                    words.extend(w.scalar_text());
                }
            }
            let text = words.join(" ");
            if text.contains("kube-webhook-certgen") && words.iter().any(|w| w == "patch") {
                let failure_policy = words.iter().find_map(|w| {
                    w.strip_prefix("--patch-failure-policy=")
                        .map(str::to_string)
                });
                out.push(WebhookPatcher {
                    span: c.get("image").map(|n| n.span).unwrap_or(c.span),
                    name: mo.object.name.clone(),
                    failure_policy,
                });
            }
        }
    }
    out
}

/// Secrets cert-manager writes in `ns`: `Certificate.spec.secretName`, and Ingress TLS
/// secrets under a cert-manager issuer annotation (ingress-shim). Returns the span that
/// names the Secret.
pub fn cert_manager_secret(model: &Model, ns: &str, name: &str) -> Option<(String, Span)> {
    for mo in model.objects.iter().filter(|m| m.namespace == ns) {
        let o = &mo.object;
        if o.group() == "cert-manager.io"
            && o.kind == "Certificate"
            && let Some(node) = o.root.get_path(&["spec", "secretName"])
            && node.scalar_text().as_deref() == Some(name)
        {
            return Some((format!("Certificate {}/{}", ns, o.name), node.span));
        }
        if o.kind == "Ingress"
            && (o.annotation("cert-manager.io/cluster-issuer").is_some()
                || o.annotation("cert-manager.io/issuer").is_some())
        {
            for tls in o
                .root
                .get_path(&["spec", "tls"])
                .and_then(Node::as_seq)
                .unwrap_or_default()
            {
                if let Some(n) = tls.get("secretName")
                    && n.scalar_text().as_deref() == Some(name)
                {
                    return Some((format!("Ingress {}/{} (cert-manager)", ns, o.name), n.span));
                }
            }
        }
    }
    None
}

/// Declared entries at a pattern (re-exported for rules).
pub fn declared<'a>(root: &'a Node, pattern: &Pattern) -> Vec<Hit<'a>> {
    resolve(root, pattern)
}

#[cfg(test)]
mod tests {
    use super::finalizer_in_group_domain;

    #[test]
    fn finalizers_named_in_the_resource_group_domain() {
        assert!(finalizer_in_group_domain("keda.sh", "finalizer.keda.sh"));
        assert!(finalizer_in_group_domain(
            "eventing.keda.sh",
            "finalizer.keda.sh"
        ));
        assert!(finalizer_in_group_domain(
            "kafka.strimzi.io",
            "strimzi.io/topic-operator"
        ));
        assert!(finalizer_in_group_domain(
            "ceph.rook.io",
            "cephcluster.ceph.rook.io"
        ));
        assert!(finalizer_in_group_domain(
            "elbv2.k8s.aws",
            "elbv2.k8s.aws/resources"
        ));
        // Another project's finalizer, or one without a domain.
        assert!(!finalizer_in_group_domain(
            "s3.aws.upbound.io",
            "finalizer.managedresource.crossplane.io"
        ));
        assert!(!finalizer_in_group_domain("example.com", "kubernetes"));
        assert!(!finalizer_in_group_domain("example.com", "example/cleanup"));
    }
}
