//! Knowledge base of fields controllers rewrite after apply: what is known
//! from the object itself (injection annotations, `aggregationRule`) or from other objects
//! in the same repo (a cert-manager `Certificate` naming a Secret, a webhook patch Job).

use super::path::{Hit, Pattern, resolve};
use crate::gitops::{Model, ModelObject};
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

/// The finalizer an operator adds to its own custom resources, where upstream's source names
/// it: KEDA's `finalizer.keda.sh` (ScaledObject, ScaledJob, TriggerAuthentication;
/// https://github.com/kedacore/keda/tree/main/controllers/keda), the AWS Load Balancer
/// Controller's `elbv2.k8s.aws/resources` (TargetGroupBinding;
/// https://github.com/kubernetes-sigs/aws-load-balancer-controller/tree/main/controllers/elbv2).
const OPERATOR_FINALIZERS: &[(&str, &str)] = &[
    ("keda.sh", "finalizer.keda.sh"),
    ("elbv2.k8s.aws", "elbv2.k8s.aws/resources"),
];

/// The finalizer the operator of `group` adds, when the table above knows it.
pub fn operator_finalizer(group: &str) -> Option<&'static str> {
    OPERATOR_FINALIZERS
        .iter()
        .find(|(g, _)| *g == group)
        .map(|(_, f)| *f)
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

pub const CA_INJECT_ANNOTATIONS: &[&str] = &[
    "cert-manager.io/inject-ca-from",
    "cert-manager.io/inject-ca-from-secret",
    "cert-manager.io/inject-apiserver-ca",
];

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

/// The cainjector annotation on the object, with its span.
pub fn ca_injection(mo: &ModelObject) -> Option<(String, Span)> {
    let ann = mo.object.metadata()?.get("annotations")?;
    CA_INJECT_ANNOTATIONS.iter().find_map(|k| {
        let e = ann.entry(k)?;
        Some((k.to_string(), e.key.span.cover(e.value.span)))
    })
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

/// Is the ValidatingWebhookConfiguration one istiod flips from `Ignore` to `Fail`?
pub fn istiod_flips_failure_policy(mo: &ModelObject) -> bool {
    mo.object.kind == "ValidatingWebhookConfiguration"
        && (mo.object.name == "istiod-default-validator"
            || mo.object.name.starts_with("istio-validator"))
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

/// Operators that write the CA bundle of their own webhooks or CRDs at runtime. Only a placeholder
/// bundle in Git is then theirs to fill.
pub fn self_signing_operator(mo: &ModelObject) -> Option<&'static str> {
    let o = &mo.object;
    match o.kind.as_str() {
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            const KNOWN: &[(&str, &str)] = &[
                ("keda-admission", "the KEDA operator"),
                ("elastic-webhook", "the ECK operator"),
                ("elastic-operator", "the ECK operator"),
                ("dapr-sidecar-injector", "the Dapr operator"),
                ("metallb-webhook", "the MetalLB controller"),
                ("istio-sidecar-injector", "istiod"),
                ("istio-revision-tag", "istiod"),
                ("vault-agent-injector", "the Vault injector"),
                ("actions-runner-controller", "actions-runner-controller"),
            ];
            KNOWN
                .iter()
                .find(|(prefix, _)| o.name.starts_with(prefix))
                .map(|(_, who)| *who)
        }
        "CustomResourceDefinition" => {
            match o.root.get_path(&["spec", "group"]).and_then(Node::as_str) {
                Some("keda.sh" | "eventing.keda.sh") => Some("the KEDA operator"),
                Some("metallb.io") => Some("the MetalLB controller"),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{finalizer_in_group_domain, operator_finalizer};

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
        assert_eq!(operator_finalizer("keda.sh"), Some("finalizer.keda.sh"));
        assert_eq!(operator_finalizer("example.com"), None);
    }
}
