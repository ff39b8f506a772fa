# Terraform still manages one object Argo CD deploys.
resource "kubernetes_manifest" "web" {
  manifest = yamldecode(file("${path.module}/../apps/web/deployment.yaml"))
}
