# Generates merge-keys-v1.33.txt, the strategic-merge list keys of built-in kinds, from the shared
# JSON Schemas (kubernetes-validate 1.37.0, Apache-2.0):
#   python3 crates/gitops-lint-render/src/render/kustomize/merge_keys_gen.py ../shared/k8s-schema/v1.33.0/_definitions.json \
#     > crates/gitops-lint-render/src/render/kustomize/merge-keys-v1.33.txt
# kustomize v5.5 merges by its own built-in schema, Kubernetes v1.21.2: lists added after 1.21 and
# kinds it does not know are replaced there. NOT_IN_KUSTOMIZE lists them; each entry was measured
# with merge_keys_probe.py against `kubectl kustomize` (v5.5.0).
import json
import sys

# (type, field) lists kustomize's v1.21.2 schema does not have (or has without a merge strategy).
NOT_IN_KUSTOMIZE = {
    ("io.k8s.api.admissionregistration.v1.MutatingWebhook", "matchConditions"),
    ("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "matchConditions"),
    ("io.k8s.api.core.v1.EphemeralContainer", "ports"),
    ("io.k8s.api.core.v1.PodSpec", "resourceClaims"),
    ("io.k8s.api.core.v1.PodSpec", "schedulingGates"),
    ("io.k8s.api.core.v1.PodStatus", "hostIPs"),
    ("io.k8s.api.core.v1.PodStatus", "resourceClaimStatuses"),
    ("io.k8s.api.flowcontrol.v1.FlowSchemaStatus", "conditions"),
    ("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationStatus", "conditions"),
}
# Group/versions v1.21.2 has that v1.33 dropped: they take the structure of the newest
# version of the same group and kind (kustomize knows e.g. batch/v1beta1 CronJob).
OLD_VERSIONS = [
    "admissionregistration.k8s.io/v1beta1", "apiextensions.k8s.io/v1beta1",
    "apiregistration.k8s.io/v1beta1", "autoscaling/v2beta1", "autoscaling/v2beta2",
    "batch/v1beta1", "certificates.k8s.io/v1beta1", "coordination.k8s.io/v1beta1",
    "discovery.k8s.io/v1beta1", "events.k8s.io/v1beta1", "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1alpha1", "flowcontrol.apiserver.k8s.io/v1beta1",
    "networking.k8s.io/v1beta1", "node.k8s.io/v1alpha1", "node.k8s.io/v1beta1",
    "policy/v1beta1", "rbac.authorization.k8s.io/v1alpha1", "rbac.authorization.k8s.io/v1beta1",
    "scheduling.k8s.io/v1alpha1", "scheduling.k8s.io/v1beta1", "storage.k8s.io/v1alpha1",
    "storage.k8s.io/v1beta1",
]
# Kinds kustomize's schema does not know (measured: their lists, metadata.finalizers too, are
# replaced).
KINDS_KUSTOMIZE_LACKS = {
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicyBinding"),
    ("authentication.k8s.io/v1", "SelfSubjectReview"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("autoscaling/v2beta1", "Scale"),
    ("autoscaling/v2beta2", "Scale"),
    ("batch/v1beta1", "Job"),
    ("certificates.k8s.io/v1alpha1", "ClusterTrustBundle"),
    ("certificates.k8s.io/v1beta1", "ClusterTrustBundle"),
    ("coordination.k8s.io/v1alpha2", "LeaseCandidate"),
    ("coordination.k8s.io/v1beta1", "LeaseCandidate"),
    ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration"),
    ("flowcontrol.apiserver.k8s.io/v1alpha1", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io/v1alpha1", "PriorityLevelConfiguration"),
    ("internal.apiserver.k8s.io/v1alpha1", "StorageVersion"),
    ("networking.k8s.io/v1", "IPAddress"),
    ("networking.k8s.io/v1", "ServiceCIDR"),
    ("networking.k8s.io/v1beta1", "IPAddress"),
    ("networking.k8s.io/v1beta1", "NetworkPolicy"),
    ("networking.k8s.io/v1beta1", "ServiceCIDR"),
    ("node.k8s.io/v1alpha1", "RuntimeClass"),
    ("policy/v1", "Eviction"),
    ("rbac.authorization.k8s.io/v1alpha1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1alpha1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1alpha1", "Role"),
    ("rbac.authorization.k8s.io/v1alpha1", "RoleBinding"),
    ("resource.k8s.io/v1alpha3", "DeviceClass"),
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule"),
    ("resource.k8s.io/v1alpha3", "ResourceClaim"),
    ("resource.k8s.io/v1alpha3", "ResourceClaimTemplate"),
    ("resource.k8s.io/v1alpha3", "ResourceSlice"),
    ("resource.k8s.io/v1beta1", "DeviceClass"),
    ("resource.k8s.io/v1beta1", "ResourceClaim"),
    ("resource.k8s.io/v1beta1", "ResourceClaimTemplate"),
    ("resource.k8s.io/v1beta1", "ResourceSlice"),
    ("resource.k8s.io/v1beta2", "DeviceClass"),
    ("resource.k8s.io/v1beta2", "ResourceClaim"),
    ("resource.k8s.io/v1beta2", "ResourceClaimTemplate"),
    ("resource.k8s.io/v1beta2", "ResourceSlice"),
    ("scheduling.k8s.io/v1alpha1", "PriorityClass"),
    ("storage.k8s.io/v1", "CSIStorageCapacity"),
    ("storage.k8s.io/v1alpha1", "CSIDriver"),
    ("storage.k8s.io/v1alpha1", "CSINode"),
    ("storage.k8s.io/v1alpha1", "CSIStorageCapacity"),
    ("storage.k8s.io/v1alpha1", "StorageClass"),
    ("storage.k8s.io/v1alpha1", "VolumeAttachment"),
    ("storage.k8s.io/v1alpha1", "VolumeAttributesClass"),
    ("storage.k8s.io/v1beta1", "VolumeAttributesClass"),
    ("storagemigration.k8s.io/v1alpha1", "StorageVersionMigration"),
}


def ref_name(s):
    r = s.get("$ref")
    return r.split("/")[-1] if r else None


def shape(s):
    """(shape, child type): 'o' object, 'l' list, 'm' map; child None for scalars."""
    r = ref_name(s)
    if r:
        return "o", r
    t = s.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t == "array":
        return "l", ref_name(s.get("items", {}))
    ap = s.get("additionalProperties")
    if isinstance(ap, dict):
        return "m", ref_name(ap)
    return None, None


def merge_of(type_name, field, s):
    strategy = s.get("x-kubernetes-patch-strategy", "")
    if "merge" not in strategy.split(",") or (type_name, field) in NOT_IN_KUSTOMIZE:
        return None
    return s.get("x-kubernetes-patch-merge-key", "=")


def main():
    defs = json.load(open(sys.argv[1]))["$defs"]
    fields = {}
    for name, s in defs.items():
        out = []
        for p, ps in (s.get("properties") or {}).items():
            sh, child = shape(ps)
            if sh is None:
                continue
            merge = merge_of(name, p, ps) if sh == "l" else None
            out.append((p, sh, child, merge))
        fields[name] = out
    # Keep only types from which a merge list can be reached.
    useful = set()
    changed = True
    while changed:
        changed = False
        for name, fs in fields.items():
            if name in useful:
                continue
            if any(m is not None or (c in useful) for _, _, c, m in fs):
                useful.add(name)
                changed = True
    roots = {}
    for name, s in sorted(defs.items()):
        for gvk in s.get("x-kubernetes-group-version-kind", []):
            g = gvk.get("group", "")
            av = f"{g}/{gvk['version']}" if g else gvk["version"]
            if gvk["kind"].endswith("List") or (av, gvk["kind"]) in KINDS_KUSTOMIZE_LACKS:
                continue
            roots[(av, gvk["kind"])] = name
    newest = {}
    for (av, kind), name in sorted(roots.items()):
        group = av.rsplit("/", 1)[0] if "/" in av else ""
        newest.setdefault((group, kind), name)
    for old in OLD_VERSIONS:
        group = old.rsplit("/", 1)[0]
        for (g, kind), name in sorted(newest.items()):
            if g == group and (old, kind) not in roots and (old, kind) not in KINDS_KUSTOMIZE_LACKS:
                roots[(old, kind)] = name
    print("# kustomize v5.5 strategic-merge list keys of built-in kinds: Kubernetes v1.33.0 schemas")
    print("# (../shared/k8s-schema, kubernetes-validate 1.37.0, Apache-2.0) less what kustomize's v1.21.2")
    print("# schema lacks. Generated by crates/gitops-lint-render/src/render/kustomize/merge_keys_gen.py. `G apiVersion Kind Type`;")
    print("# `T Type` then `  field shape child merge` (shape o/l/m: object, list, map; child '-' none;")
    print("# merge: the merge key, '=' a primitive list merged as a set, '-' replaced).")
    for (av, kind), name in sorted(roots.items()):
        if name in useful:
            print(f"G {av} {kind} {name}")
    for name in sorted(useful):
        print(f"T {name}")
        for p, sh, child, merge in sorted(fields[name]):
            if merge is None and child not in useful:
                continue
            print(f"  {p} {sh} {child if child in useful else '-'} {merge if merge else '-'}")


main()
