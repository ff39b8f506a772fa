//! Which files are Kubernetes manifests (issue 16, class 1).
//!
//! A file is read as Kubernetes YAML when an app deploys it, or, outside every app, when its
//! documents look like Kubernetes objects. Templates of other tools share YAML's extensions
//! but no GitOps controller applies them as they are: they are not parsed at all. A YAML
//! error in a file that no app deploys is `info`; in what an app deploys it stays an error.

use crate::gitops::{AppKind, Model};
use std::collections::BTreeSet;

/// Helm templates are Go templates, not YAML: the Helm renderer reads them. A chart's
/// `files/` are read through `.Files` (often as `tpl` input), never as manifests.
pub fn is_helm_template(path: &str, chart_dirs: &[String]) -> bool {
    chart_dirs.iter().any(|d| {
        let prefix = if d.is_empty() {
            String::new()
        } else {
            format!("{d}/")
        };
        path.strip_prefix(&prefix).is_some_and(|rest| {
            rest.starts_with("templates/")
                || rest.starts_with("charts/")
                || rest.starts_with("files/")
        })
    }) || path.ends_with(".tpl")
}

/// Templates of tools other than Helm that look like YAML files: Ansible/Jinja (`*.j2`,
/// `roles/*/templates/`), Terraform/OpenTofu (`*.tftpl`), helmfile, gomplate and go-task Go
/// templates (`*.gotmpl`, `*.tmpl`, `*.tmpl.yaml`), and HTML.
pub fn is_foreign_template(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    const EXTENSIONS: [&str; 9] = [
        ".j2", ".jinja", ".jinja2", ".tftpl", ".gotmpl", ".tmpl", ".tpl", ".html", ".htm",
    ];
    if EXTENSIONS.iter().any(|e| name.ends_with(e)) {
        return true;
    }
    // `release.yaml.gotmpl` is caught above; `job.tmpl.yaml` / `values.gotmpl.yaml` here.
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"));
    if stem.is_some_and(|s| s.ends_with(".tmpl") || s.ends_with(".gotmpl") || s.ends_with(".j2")) {
        return true;
    }
    is_ansible_role_template(path)
}

/// `roles/<role>/templates/…`: Ansible renders these with Jinja before anything reads them.
fn is_ansible_role_template(path: &str) -> bool {
    let dirs: Vec<&str> = path.split('/').collect();
    let dirs = &dirs[..dirs.len().saturating_sub(1)];
    dirs.windows(3)
        .any(|w| w[0] == "roles" && w[2] == "templates")
}

/// The files and directories that some GitOps app (Argo CD Application or ApplicationSet,
/// Flux Kustomization or HelmRelease) reads: the app's declaration, its source paths, and
/// every file an object or render issue of it came from. Standalone groupings are not apps.
pub struct Deployed {
    files: BTreeSet<String>,
    dirs: Vec<String>,
}

impl Deployed {
    pub fn of(model: &Model) -> Deployed {
        let mut files = BTreeSet::new();
        let mut dirs = Vec::new();
        for app in model.apps.iter().filter(|a| a.kind != AppKind::Standalone) {
            for input in crate::gitops::inputs::app_inputs(model, app) {
                match input.strip_suffix('/') {
                    Some(dir) => dirs.push(dir.to_string()),
                    None => {
                        files.insert(input);
                    }
                }
            }
        }
        dirs.sort();
        dirs.dedup();
        Deployed { files, dirs }
    }

    pub fn contains(&self, path: &str) -> bool {
        self.files.contains(path)
            || self.dirs.iter().any(|d| {
                d.is_empty()
                    || path
                        .strip_prefix(d.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_of_other_tools_are_not_manifests() {
        for p in [
            "bootstrap/helmfile/templates/release.yaml.gotmpl",
            "ansible/roles/k3s/templates/config.yaml.j2",
            "ansible/roles/k3s/templates/registries.yaml",
            "infra/templates/user-data.tftpl",
            ".taskfiles/rook/WipeDiskJob.tmpl.yaml",
            "docs/index.html",
        ] {
            assert!(is_foreign_template(p), "{p}");
        }
        for p in [
            "apps/web/deployment.yaml",
            "roles.yaml",
            "kubernetes/templates/volsync/claim.yaml",
            "roles/templates.yaml",
        ] {
            assert!(!is_foreign_template(p), "{p}");
        }
    }

    #[test]
    fn chart_files_are_read_by_helm_only() {
        let charts = vec!["charts/web".to_string()];
        assert!(is_helm_template("charts/web/files/config.yaml", &charts));
        assert!(is_helm_template("charts/web/templates/cm.yaml", &charts));
        assert!(!is_helm_template("charts/web/values.yaml", &charts));
        assert!(!is_helm_template("apps/files/cm.yaml", &charts));
    }
}
