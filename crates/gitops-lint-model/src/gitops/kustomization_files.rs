//! The repository's kustomization files as written (not as built): their
//! `configMapGenerator` / `secretGenerator` entries and `generatorOptions` are render inputs,
//! not objects, so `kustomize-generator-hygiene` reads them here rather than parsing files.

use super::Model;
use crate::source::{Origin, dir_of};
use crate::yaml::{Limits, Node, parse_str};

/// One kustomization file of the repo: its directory and its first document.
pub struct KustomizationFile {
    /// Repo-relative directory (`""` for the root).
    pub dir: String,
    pub root: Node,
}

fn is_kustomization(path: &str) -> bool {
    matches!(
        path.rsplit('/').next(),
        Some("kustomization.yaml" | "kustomization.yml" | "Kustomization")
    )
}

impl Model {
    /// The directory of every kustomization file of the repo (fetched content excluded).
    pub fn kustomization_dirs(&self) -> std::collections::BTreeSet<String> {
        self.map
            .ids()
            .into_iter()
            .map(|id| self.map.get(id))
            .filter(|f| f.origin == Origin::Repo && is_kustomization(&f.path))
            .map(|f| dir_of(&f.path).to_string())
            .collect()
    }

    /// Every kustomization file read from the repo (fetched content excluded), in source-map
    /// order; a file that does not parse is left out (the pipeline reports it).
    pub fn kustomization_files(&self) -> Vec<KustomizationFile> {
        let mut out = Vec::new();
        for id in self.map.ids() {
            let file = self.map.get(id);
            if file.origin != Origin::Repo || !is_kustomization(&file.path) {
                continue;
            }
            let parsed = parse_str(&file.text, id, &Limits::default());
            let Some(root) = parsed.docs.into_iter().next().map(|d| d.root) else {
                continue;
            };
            out.push(KustomizationFile {
                dir: dir_of(&file.path).to_string(),
                root,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kustomization_file_names_and_directories() {
        assert!(is_kustomization("apps/web/kustomization.yaml"));
        assert!(is_kustomization("Kustomization"));
        assert!(!is_kustomization("apps/web/deployment.yaml"));
        assert_eq!(dir_of("apps/web/kustomization.yaml"), "apps/web");
        assert_eq!(dir_of("kustomization.yaml"), "");
    }
}
