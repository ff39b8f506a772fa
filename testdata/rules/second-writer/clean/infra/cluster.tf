# Terraform manages what no GitOps app deploys.
resource "kubernetes_manifest" "legacy" {
  manifest = yamldecode(file("${path.module}/../apps/legacy/configmap.yaml"))
}
