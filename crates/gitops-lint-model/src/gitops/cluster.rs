//! Where an app's objects land. Identity in a cluster is (cluster, group, kind, namespace,
//! name): the same Kustomization name in `clusters/staging` and `clusters/production` is two
//! apps, and one ClusterIssuer sent to two spokes is not one object deployed twice.
//!
//! - Flux: a cluster is the entry point a bootstrap reaches. `flux bootstrap --path=P`
//!   commits `P/flux-system/gotk-sync.yaml`, whose Kustomization applies `P`
//!   (https://fluxcd.io/flux/installation/bootstrap/); a FluxInstance's `spec.sync.path` does
//!   the same (https://fluxcd.control-plane.io/operator/fluxinstance/#sync-configuration).
//!   Everything that tree deploys lands in that cluster, except below a Kustomization or
//!   HelmRelease with `spec.kubeConfig`, which applies to the cluster its Secret (or, for
//!   workload identity, ConfigMap) names
//!   (https://fluxcd.io/flux/components/kustomize/kustomizations/#remote-clusters--cluster-api).
//!   Without a bootstrap path, trees whose roots repeat names are separate clusters named by
//!   the directory of their root (one cluster cannot hold two objects of one name).
//! - Argo CD: `spec.destination.server`, or `name` resolved through the repo's cluster
//!   Secrets (https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/#clusters);
//!   `in-cluster` and `https://kubernetes.default.svc` are the cluster Argo CD runs in.

use super::model::cluster::{Cluster, applied_path, applies_itself};

use crate::object::Object;
use crate::source::{dir_of, is_within, normalize_relative};
use crate::yaml::Node;

/// The directories Flux bootstraps apply: the `spec.path` of a Kustomization that applies
/// its own file (`gotk-sync.yaml`), a FluxInstance's `spec.sync.path`, and `P` for every
/// `P/<dir>/gotk-sync.yaml` (the file `flux bootstrap` writes, often committed as a
/// placeholder). Longest first, so the nearest one wins.
pub fn bootstrap_paths<'a>(
    plain: impl Iterator<Item = (&'a Object, &'a str)>,
    files: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for (obj, file) in plain {
        let path = if applies_itself(obj, file) {
            applied_path(obj)
        } else if obj.kind == "FluxInstance" {
            obj.root
                .get_path(&["spec", "sync", "path"])
                .and_then(Node::scalar_text)
                .and_then(|p| normalize_relative(&p))
        } else {
            None
        };
        paths.extend(path);
    }
    for file in files {
        let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
        if name == "gotk-sync.yaml" && !dir.is_empty() {
            paths.push(dir_of(dir).to_string());
        }
    }
    paths.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    paths.dedup();
    paths
}

/// The server of the stand-in cluster an ApplicationSet `clusters` generator expands for
/// when no cluster Secret in the repo matches (a reserved `.invalid` name): where such an app
/// lands is unknown.
pub const STAND_IN_SERVER: &str = "https://clusters-generator.invalid";
/// The stand-in cluster's name.
pub const STAND_IN_NAME: &str = "clusters-generator";

/// A cluster Secret's field (`name`, `server`, `project`): `stringData`, else decoded `data`.
pub fn cluster_secret_field(s: &Object, key: &str) -> Option<String> {
    s.root
        .get_path(&["stringData", key])
        .and_then(Node::scalar_text)
        .or_else(|| {
            s.root
                .get_path(&["data", key])
                .and_then(Node::scalar_text)
                .and_then(|v| super::secret_data::decode_base64(&v))
        })
}

/// The bootstrap cluster whose path holds `file`.
pub fn bootstrap_cluster_of(paths: &[String], file: &str) -> Option<Cluster> {
    paths
        .iter()
        .find(|p| is_within(p, file))
        .map(|p| Cluster::Named(display_path(p)))
}

fn display_path(path: &str) -> String {
    if path.is_empty() {
        ".".to_string()
    } else {
        path.to_string()
    }
}

/// A Kustomization's or HelmRelease's `spec.kubeConfig`: the remote cluster it applies to,
/// named by the Secret (or ConfigMap) and the namespace it is read from.
pub fn kubeconfig_cluster(decl: &Object) -> Option<Cluster> {
    let kc = decl.root.get_path(&["spec", "kubeConfig"])?;
    let (what, name) = [
        ("secretRef", "kubeconfig"),
        ("configMapRef", "kubeconfig-configmap"),
    ]
    .iter()
    .find_map(|(key, what)| {
        let name = kc.get(key)?.get("name").and_then(Node::scalar_text)?;
        Some((*what, name))
    })?;
    let ns = decl.namespace.as_deref().unwrap_or("flux-system");
    Some(Cluster::Named(format!("{what}:{ns}/{name}")))
}

/// An Argo CD destination as one cluster: `server`, else `name` resolved through the
/// repo's cluster Secrets to their server, else the name itself. Templated or missing
/// destinations are unknown.
pub fn argo_destination(spec: &Node, cluster_secrets: &[Object]) -> Cluster {
    let Some(dest) = spec.get("destination") else {
        return Cluster::Unknown;
    };
    let text = |k: &str| {
        dest.get(k)
            .and_then(Node::scalar_text)
            .map(|v| v.trim().trim_end_matches('/').to_string())
            .filter(|v| !v.is_empty())
    };
    let server = match (text("server"), text("name")) {
        (Some(server), _) => server,
        (None, Some(name)) if name == "in-cluster" => return Cluster::Named("in-cluster".into()),
        (None, Some(name)) if name == STAND_IN_NAME => return Cluster::Unknown,
        (None, Some(name)) => cluster_secrets
            .iter()
            .find(|s| cluster_secret_field(s, "name").as_deref() == Some(&name))
            .and_then(|s| cluster_secret_field(s, "server"))
            .map(|s| s.trim().trim_end_matches('/').to_string())
            .unwrap_or(name),
        (None, None) => return Cluster::Unknown,
    };
    if server.contains("{{") || server.contains("${") || server == STAND_IN_SERVER {
        return Cluster::Unknown;
    }
    if server == "https://kubernetes.default.svc" || server == "in-cluster" {
        return Cluster::Named("in-cluster".into());
    }
    Cluster::Named(server)
}

/// Ends the build's provisional clusters: trees without a bootstrap path share one cluster
/// unless two of them hold an app of the same kind, namespace and name (one cluster cannot
/// hold both), and then each is the cluster of its root's directory. A tree whose root
/// nothing applies (an archive outside the source artifact, Flux objects found in a
/// standalone build) lands nowhere: unknown, and it splits no live tree. `keys[i]` is app
/// `i`'s identity, `clusters[i]` and `homes[i]` as the build left them, `applied_root[i]`
/// whether it is a parentless app something applies.
pub fn settle(
    clusters: &mut [Cluster],
    homes: &mut [Cluster],
    keys: &[Option<(String, String, String)>],
    applied_root: &[bool],
    bootstraps: usize,
) {
    use std::collections::{BTreeMap, BTreeSet};
    let applied: BTreeSet<String> = homes
        .iter()
        .zip(applied_root)
        .filter_map(|(home, root)| match home {
            Cluster::Provisional(dir) if *root => Some(dir.clone()),
            _ => None,
        })
        .collect();
    // Which applied provisional trees hold each app identity.
    let mut trees_of: BTreeMap<&(String, String, String), BTreeSet<&str>> = BTreeMap::new();
    for (i, key) in keys.iter().enumerate() {
        if let (Some(key), Cluster::Provisional(dir)) = (key, &homes[i])
            && applied.contains(dir)
        {
            trees_of.entry(key).or_default().insert(dir.as_str());
        }
    }
    let clashing: BTreeSet<String> = trees_of
        .values()
        .filter(|trees| trees.len() > 1)
        .flat_map(|trees| trees.iter().map(|d| d.to_string()))
        .collect();
    let resolve = |c: &Cluster| match c {
        Cluster::Provisional(dir) if !applied.contains(dir) => Cluster::Unknown,
        Cluster::Provisional(dir) if clashing.contains(dir) => Cluster::Named(display_path(dir)),
        // No bootstrap anywhere: the one cluster Flux runs in. Beside bootstrap paths, a
        // tree outside all of them is applied somewhere the repo does not say.
        Cluster::Provisional(_) if bootstraps == 0 => Cluster::Default,
        Cluster::Provisional(_) => Cluster::Unknown,
        other => other.clone(),
    };
    for c in clusters.iter_mut().chain(homes.iter_mut()) {
        *c = resolve(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(text: &str) -> Object {
        let parsed = crate::yaml::parse_str(text, crate::source::FileId(0), &Default::default());
        Object::from_node(parsed.docs[0].root.clone()).expect("an object")
    }

    #[test]
    fn bootstrap_paths_come_from_sync_files_instances_and_self_applying_kustomizations() {
        let ks = obj(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system}\nspec: {path: ./clusters/prod}\n",
        );
        let other = obj(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\nspec: {path: ./apps}\n",
        );
        let inst = obj(
            "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux}\nspec: {sync: {path: clusters/edge}}\n",
        );
        let plain = [
            (&ks, "clusters/prod/flux-system/gotk-sync.yaml"),
            (&other, "clusters/prod/apps.yaml"),
            (&inst, "bootstrap/flux.yaml"),
        ];
        // `./` of an OCIRepository (Flux's own manifests) is another tree, not a bootstrap.
        let oci = obj(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux}\nspec: {path: ./, sourceRef: {kind: OCIRepository, name: flux-manifests}}\n",
        );
        let plain = [
            plain[0],
            plain[1],
            plain[2],
            (&oci, "flux/config/flux.yaml"),
        ];
        let files = ["clusters/staging/flux-system/gotk-sync.yaml", "apps/a.yaml"];
        let paths = bootstrap_paths(plain.into_iter(), files.into_iter());
        assert_eq!(
            paths,
            vec!["clusters/staging", "clusters/edge", "clusters/prod"]
        );
        assert_eq!(
            bootstrap_cluster_of(&paths, "clusters/prod/apps.yaml"),
            Some(Cluster::Named("clusters/prod".into()))
        );
        assert_eq!(bootstrap_cluster_of(&paths, "apps/a.yaml"), None);
    }

    #[test]
    fn kubeconfig_names_secret_or_config_map_with_namespace() {
        let s = obj(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: t, namespace: staging}\nspec: {kubeConfig: {secretRef: {name: cluster-kubeconfig}}}\n",
        );
        let c = obj(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: t}\nspec: {kubeConfig: {configMapRef: {name: aks}}}\n",
        );
        assert_eq!(
            kubeconfig_cluster(&s),
            Some(Cluster::Named(
                "kubeconfig:staging/cluster-kubeconfig".into()
            ))
        );
        assert_eq!(
            kubeconfig_cluster(&c),
            Some(Cluster::Named(
                "kubeconfig-configmap:flux-system/aks".into()
            ))
        );
    }

    #[test]
    fn argo_destination_resolves_names_through_cluster_secrets() {
        let secret = obj(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod-cluster\n  labels: {argocd.argoproj.io/secret-type: cluster}\nstringData: {name: prod, server: 'https://prod.example.com/'}\n",
        );
        let app = |dest: &str| {
            obj(&format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  destination: {dest}\n"
            ))
        };
        let secrets = [secret];
        let dest = |d: &str| {
            let app = app(d);
            argo_destination(app.root.get("spec").expect("a spec"), &secrets)
        };
        assert_eq!(
            dest("{name: prod}"),
            Cluster::Named("https://prod.example.com".into())
        );
        assert_eq!(
            dest("{server: 'https://prod.example.com'}"),
            Cluster::Named("https://prod.example.com".into())
        );
        assert_eq!(
            dest("{name: in-cluster}"),
            Cluster::Named("in-cluster".into())
        );
        assert_eq!(
            dest("{server: 'https://kubernetes.default.svc'}"),
            Cluster::Named("in-cluster".into())
        );
        assert_eq!(dest("{server: '{{server}}'}"), Cluster::Unknown);
        assert_eq!(
            dest(&format!("{{server: {}}}", STAND_IN_SERVER)),
            Cluster::Unknown
        );
        assert_eq!(dest("{namespace: x}"), Cluster::Unknown);
    }

    #[test]
    fn provisional_trees_merge_unless_their_apps_clash() {
        let key = |n: &str| {
            Some((
                "Kustomization".to_string(),
                "flux-system".to_string(),
                n.to_string(),
            ))
        };
        let p = |d: &str| Cluster::Provisional(d.into());
        // Two trees that repeat `apps`, one that does not.
        let keys = [key("apps"), key("apps"), key("infra")];
        let mut homes = [p("k/main"), p("k/test"), p("k/other")];
        let mut clusters = homes.clone();
        settle(&mut clusters, &mut homes, &keys, &[true; 3], 0);
        assert_eq!(clusters[0], Cluster::Named("k/main".into()));
        assert_eq!(clusters[1], Cluster::Named("k/test".into()));
        assert_eq!(clusters[2], Cluster::Default);
        // Beside a bootstrap path, a tree outside it lands somewhere unknown.
        let mut homes = [p("x")];
        let mut clusters = homes.clone();
        settle(&mut clusters, &mut homes, &[key("apps")], &[true], 1);
        assert_eq!(clusters[0], Cluster::Unknown);
        // An archived copy of a live tree splits nothing: it lands nowhere.
        let mut homes = [p("live"), p(".archive/x")];
        let mut clusters = homes.clone();
        settle(
            &mut clusters,
            &mut homes,
            &[key("apps"), key("apps")],
            &[true, false],
            0,
        );
        assert_eq!(clusters, [Cluster::Default, Cluster::Unknown]);
    }
}
