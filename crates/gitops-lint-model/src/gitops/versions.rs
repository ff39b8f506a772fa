//! Which Argo CD and which Flux judge each app. What makes an app OutOfSync depends on the
//! controller's release (tracking method, default exclusions, the ignore rules a release
//! reads), so every version-dependent rule asks the model for the release of the controller
//! that runs the app: the one on the app's home cluster (where its Application or
//! Kustomization is applied, and so where the controller that reconciles it runs).
//!
//! In order: a command-line flag or `profile.<product>-version` (the user said so), a
//! `profile.clusters.<name>` entry, what the repo installs on that cluster (a remote base or
//! manifest URL at a release tag, an `argocd` image tag, `gotk-components.yaml`'s
//! `# Flux Version:` header, a FluxInstance's `distribution.version`), what the repo installs
//! when it installs one release only, else the latest release this build knows.

use super::model::versions::{How, Judged, PlatformVersions, Product};
use super::{App, AppKind, Cluster, Model};
use crate::config::Profile;
use crate::remote::RemoteKind;
use crate::source::{SourceMap, Span};
use crate::yaml::Node;

/// The newest patch of each Flux 2 minor (the flux2 tags as of 2026-08), for a FluxInstance's `distribution.version`
/// constraint (`2.x`, `2.4.x`, `>=2.3`): the operator installs the newest release matching it.
const FLUX_RELEASES: &[&str] = &[
    "2.0.1", "2.1.2", "2.2.3", "2.3.0", "2.4.0", "2.5.1", "2.6.4", "2.7.5", "2.8.8", "2.9.4",
];

/// Is a helm-controller feature gate switched on for `app`'s cluster: a rendered
/// `helm-controller` Deployment whose container args hold `--feature-gates=…<gate>=true…`
/// (how `flux bootstrap` repos patch gotk-components)? The line that sets it.
pub fn helm_controller_gate(model: &Model, app: &App, gate: &str) -> Option<Span> {
    let wanted = format!("{gate}=true");
    model.objects.iter().find_map(|mo| {
        let o = &mo.object;
        if o.kind != "Deployment" || o.group() != "apps" || o.name != "helm-controller" {
            return None;
        }
        let owner = model.apps.get(mo.app)?;
        if owner.cluster.is_known() && app.home.is_known() && owner.cluster != app.home {
            return None;
        }
        let containers = o
            .root
            .get_path(&["spec", "template", "spec", "containers"])?;
        containers.as_seq()?.iter().find_map(|c| {
            c.get("args")?.as_seq()?.iter().find_map(|arg| {
                let text = arg.scalar_text()?;
                let gates = text.strip_prefix("--feature-gates=")?;
                gates
                    .split(',')
                    .any(|g| g.trim() == wanted)
                    .then_some(arg.span)
            })
        })
    })
}

/// A release the repo installs on a cluster.
#[derive(Clone, Debug)]
struct Found {
    product: Product,
    cluster: Cluster,
    major: u64,
    minor: u64,
    text: String,
    span: Span,
    what: String,
    /// Found in a directory no app deploys (applied by hand, as installs are bootstrapped).
    by_hand: bool,
}

/// Decide the releases of a built model.
pub fn judge(model: &Model, profile: &Profile) -> PlatformVersions {
    let found = found_in_repo(model);
    let mut out = PlatformVersions::default();
    for product in [Product::ArgoCd, Product::Flux] {
        let stated = match product {
            Product::ArgoCd => profile.argo_version.as_ref(),
            Product::Flux => profile.flux_version.as_ref(),
        };
        // An install a GitOps app sends to a cluster the repo does not name (an
        // ApplicationSet over cluster Secrets, a templated destination) says nothing about
        // where the apps run; a directory applied by hand (the usual Argo CD bootstrap) does.
        let of: Vec<&Found> = found
            .iter()
            .filter(|f| f.product == product && (f.cluster.is_known() || f.by_hand))
            .collect();
        let (list, default) = match product {
            Product::ArgoCd => (&mut out.argo, &mut out.argo_default),
            Product::Flux => (&mut out.flux, &mut out.flux_default),
        };
        if let Some(r) = stated {
            *default = Judged::from_release(product, r);
        } else if let Some(first) = of.first()
            && of
                .iter()
                .all(|f| (f.major, f.minor) == (first.major, first.minor))
        {
            // One release in the whole repo: it is what runs wherever the repo does not say.
            *default = judged_from(first);
        }
        for c in &profile.clusters {
            let release = match product {
                Product::ArgoCd => c.argo_version.as_ref(),
                Product::Flux => c.flux_version.as_ref(),
            };
            if let Some(r) = release {
                list.push((c.name.clone(), Judged::from_release(product, r)));
            }
        }
        if stated.is_some() {
            continue; // the user's word holds on every cluster it does not name
        }
        for f in of {
            if !f.cluster.is_known() || list.iter().any(|(n, _)| n == f.cluster.name()) {
                continue; // the first install found on a cluster is the one judged with
            }
            list.push((f.cluster.name().to_string(), judged_from(f)));
        }
    }
    out
}

fn judged_from(f: &Found) -> Judged {
    Judged {
        product: f.product,
        major: f.major,
        minor: f.minor,
        text: f.text.clone(),
        how: How::Repo(f.span, f.what.clone()),
    }
}

/// Every release the repo installs, in model order: remote bases and manifest URLs first
/// (they name the release even offline), then what the rendered objects say.
fn found_in_repo(model: &Model) -> Vec<Found> {
    let mut out = Vec::new();
    for app in &model.apps {
        for u in &app.remotes {
            let r = &u.reference;
            if let Some((chart, (major, minor))) =
                argo_cd_chart_release(r.kind, &r.source, &r.chart, &r.requested)
            {
                out.push(Found {
                    product: Product::ArgoCd,
                    cluster: app.cluster.clone(),
                    major,
                    minor,
                    text: format!("{major}.{minor}"),
                    span: u.span,
                    what: format!("the argo-cd chart {chart} it installs"),
                    by_hand: app.kind == AppKind::Standalone,
                });
                continue;
            }
            if let Some((product, tag)) = release_in_remote(r.kind, &r.source, &r.requested)
                && let Some((major, minor)) = release_numbers(&tag)
            {
                out.push(Found {
                    product,
                    cluster: app.cluster.clone(),
                    major,
                    minor,
                    text: tag,
                    span: u.span,
                    what: format!("the {} install it builds", product.name()),
                    by_hand: app.kind == AppKind::Standalone,
                });
            }
        }
    }
    let mut headers_read: Vec<crate::source::FileId> = Vec::new();
    for mo in &model.objects {
        let Some(app) = model.apps.get(mo.app) else {
            continue;
        };
        let o = &mo.object;
        let file = o.root.span.file;
        if !headers_read.contains(&file)
            && model.map.get(file).path.ends_with("gotk-components.yaml")
        {
            headers_read.push(file);
            if let Some(f) = flux_header(&model.map, file, &app.cluster) {
                out.push(Found {
                    by_hand: app.kind == AppKind::Standalone,
                    ..f
                });
            }
        }
        if o.kind == "FluxInstance"
            && o.group() == "fluxcd.controlplane.io"
            && let Some(v) = o.root.get_path(&["spec", "distribution", "version"])
            && let Some(f) = flux_instance(v, &app.cluster)
        {
            out.push(Found {
                by_hand: app.kind == AppKind::Standalone,
                ..f
            });
        }
        if matches!(o.kind.as_str(), "Deployment" | "StatefulSet") && o.group() == "apps" {
            out.extend(
                argocd_images(&o.root, &app.cluster)
                    .into_iter()
                    .map(|f| Found {
                        by_hand: app.kind == AppKind::Standalone,
                        ..f
                    }),
            );
        }
    }
    out
}

/// An install of Argo CD or Flux at a release from a remote base or manifest URL:
/// `github.com/argoproj/argo-cd/manifests/cluster-install?ref=v2.14.2`,
/// `https://raw.githubusercontent.com/argoproj/argo-cd/v2.14.2/manifests/install.yaml`,
/// `https://github.com/fluxcd/flux2/releases/download/v2.3.0/install.yaml`.
fn release_in_remote(kind: RemoteKind, source: &str, requested: &str) -> Option<(Product, String)> {
    let lower = source.to_ascii_lowercase();
    let path = lower
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_start_matches("git::")
        .trim_start_matches("ssh://")
        .trim_start_matches("git@");
    let product_of = |repo: &str| match repo {
        "argoproj/argo-cd" => Some(Product::ArgoCd),
        "fluxcd/flux2" => Some(Product::Flux),
        _ => None,
    };
    match kind {
        RemoteKind::Git => {
            let repo = path
                .trim_start_matches("github.com/")
                .trim_start_matches("github.com:")
                .trim_end_matches(".git");
            let product = product_of(repo)?;
            Some((product, requested.to_string()))
        }
        RemoteKind::Url => {
            let parts: Vec<&str> = source
                .trim_start_matches("https://")
                .trim_start_matches("http://")
                .split('/')
                .collect();
            match parts.as_slice() {
                // raw.githubusercontent.com/<org>/<repo>/<ref>/…
                [host, org, repo, tag, ..]
                    if host.eq_ignore_ascii_case("raw.githubusercontent.com") =>
                {
                    Some((
                        product_of(&format!("{org}/{repo}").to_ascii_lowercase())?,
                        tag.to_string(),
                    ))
                }
                // github.com/<org>/<repo>/releases/download/<tag>/… and …/raw/<tag>/…
                [host, org, repo, "releases", "download", tag, ..]
                | [host, org, repo, "raw", tag, ..]
                    if host.eq_ignore_ascii_case("github.com") =>
                {
                    Some((
                        product_of(&format!("{org}/{repo}").to_ascii_lowercase())?,
                        tag.to_string(),
                    ))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A chart version (major, minor, patch) and the Argo CD (major, minor) from it on.
type ChartToApp = ((u64, u64, u64), (u64, u64));

/// The argo-cd chart version at which each Argo CD minor release became the chart's
/// `appVersion`, read from the history of `charts/argo-cd/Chart.yaml` in
/// https://github.com/argoproj/argo-helm (to chart 10.1.1, Argo CD 3.4.4, July 2026).
const ARGO_CD_CHART_APP: &[ChartToApp] = &[
    ((3, 0, 0), (2, 0)),
    ((3, 13, 0), (2, 1)),
    ((3, 29, 0), (2, 2)),
    ((4, 0, 0), (2, 3)),
    ((4, 9, 0), (2, 4)),
    ((5, 8, 0), (2, 5)),
    ((5, 20, 0), (2, 6)),
    ((5, 30, 0), (2, 7)),
    ((5, 43, 0), (2, 8)),
    ((5, 51, 0), (2, 9)),
    ((5, 55, 0), (2, 10)),
    ((6, 8, 0), (2, 11)),
    ((7, 4, 0), (2, 12)),
    ((7, 7, 0), (2, 13)),
    ((7, 8, 0), (2, 14)),
    ((8, 0, 0), (3, 0)),
    ((8, 3, 0), (3, 1)),
    ((9, 1, 0), (3, 2)),
    ((9, 4, 0), (3, 3)),
    ((9, 5, 12), (3, 4)),
];
/// The newest argo-cd chart the table knows: a newer one may install a newer Argo CD.
const ARGO_CD_CHART_NEWEST: (u64, u64, u64) = (10, 1, 1);

/// The Argo CD release an exact argo-cd chart version installs (`7.5.2` → 2.12), with the
/// chart version as written: the chart
/// from Argo's Helm repository or its OCI mirror. A range, or a chart newer than the table,
/// says nothing.
fn argo_cd_chart_release(
    kind: RemoteKind,
    source: &str,
    chart: &str,
    requested: &str,
) -> Option<(String, (u64, u64))> {
    let lower = source.to_ascii_lowercase();
    let is_chart = match kind {
        RemoteKind::Helm => chart == "argo-cd" && lower.contains("argoproj"),
        RemoteKind::Oci => lower.ends_with("/argo-cd") && lower.contains("argoproj"),
        _ => false,
    };
    if !is_chart {
        return None;
    }
    let v = requested.trim().trim_start_matches('v');
    let parts: Vec<u64> = v
        .split('.')
        .map(|p| p.parse::<u64>().ok())
        .collect::<Option<Vec<_>>>()?;
    let [a, b, c] = parts.as_slice() else {
        return None;
    };
    let version = (*a, *b, *c);
    if version > ARGO_CD_CHART_NEWEST {
        return None;
    }
    let (_, app) = ARGO_CD_CHART_APP
        .iter()
        .rev()
        .find(|(from, _)| *from <= version)?;
    Some((v.to_string(), *app))
}

/// `v2.14.2`, `2.14` → (2, 14); a branch (`master`, `stable`) or a commit is no release.
fn release_numbers(text: &str) -> Option<(u64, u64)> {
    crate::config::major_minor(text.trim())
}

/// `# Flux Version: v2.3.0`, which `flux bootstrap` and `flux install --export` write at the
/// top of `gotk-components.yaml`.
fn flux_header(map: &SourceMap, file: crate::source::FileId, cluster: &Cluster) -> Option<Found> {
    let source = map.get(file);
    let mut offset = 0usize;
    for line in source.text.lines().take(20) {
        let start = offset;
        offset += line.len() + 1;
        let Some(rest) = line.trim().strip_prefix("# Flux Version:") else {
            continue;
        };
        let text = rest.trim().to_string();
        let (major, minor) = release_numbers(&text)?;
        return Some(Found {
            product: Product::Flux,
            cluster: cluster.clone(),
            major,
            minor,
            text,
            span: Span::new(file, start, start + line.len()),
            what: "the gotk-components.yaml header".into(),
            by_hand: false,
        });
    }
    None
}

/// A FluxInstance's `distribution.version`: an exact release or a semver constraint
/// (`2.x`, `2.4.x`, `>=2.3`), of which the operator installs the newest release.
fn flux_instance(node: &Node, cluster: &Cluster) -> Option<Found> {
    let text = node.scalar_text()?;
    let exact = release_numbers(&text).filter(|_| {
        let t = text.trim_start_matches('v');
        t.bytes().all(|b| b.is_ascii_digit() || b == b'.') && t.split('.').count() == 3
    });
    let (major, minor, shown) = match exact {
        Some((major, minor)) => (major, minor, text.clone()),
        None => {
            let newest = FLUX_RELEASES.iter().rev().find(|r| {
                crate::render::gotmpl::funcs::semver::semver_check(&text, r).unwrap_or(false)
            })?;
            let (major, minor) = release_numbers(newest)?;
            (major, minor, format!("{newest} (the newest {text})"))
        }
    };
    Some(Found {
        product: Product::Flux,
        cluster: cluster.clone(),
        major,
        minor,
        text: shown,
        span: node.span,
        what: "the FluxInstance's distribution.version".into(),
        by_hand: false,
    })
}

/// Argo CD's image at a release tag (`quay.io/argoproj/argocd:v2.14.2`) in a Deployment or
/// StatefulSet: the install manifests and the argo-cd chart run every component from it.
fn argocd_images(root: &Node, cluster: &Cluster) -> Vec<Found> {
    let mut out = Vec::new();
    let Some(spec) = root.get_path(&["spec", "template", "spec"]) else {
        return out;
    };
    for list in ["containers", "initContainers"] {
        for c in spec.get(list).and_then(Node::as_seq).unwrap_or_default() {
            let Some(image) = c.get("image") else {
                continue;
            };
            let Some(text) = image.scalar_text() else {
                continue;
            };
            let name = text.split('@').next().unwrap_or_default();
            let Some((repo, tag)) = name.rsplit_once(':') else {
                continue;
            };
            if !repo.ends_with("argoproj/argocd") {
                continue;
            }
            if let Some((major, minor)) = release_numbers(tag) {
                out.push(Found {
                    product: Product::ArgoCd,
                    cluster: cluster.clone(),
                    major,
                    minor,
                    text: tag.to_string(),
                    span: image.span,
                    what: "the argocd image it runs".into(),
                    by_hand: false,
                });
                return out;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_installs_name_their_release() {
        let git = |s: &str, r: &str| release_in_remote(RemoteKind::Git, s, r);
        assert_eq!(
            git("https://github.com/argoproj/argo-cd", "v2.14.2"),
            Some((Product::ArgoCd, "v2.14.2".into()))
        );
        assert_eq!(
            git("https://github.com/fluxcd/flux2.git", "v2.3.0"),
            Some((Product::Flux, "v2.3.0".into()))
        );
        assert_eq!(
            git("https://github.com/argoproj/argo-rollouts", "v1.7.0"),
            None
        );
        let url = |s: &str| release_in_remote(RemoteKind::Url, s, "");
        assert_eq!(
            url("https://raw.githubusercontent.com/argoproj/argo-cd/v2.7.2/manifests/install.yaml"),
            Some((Product::ArgoCd, "v2.7.2".into()))
        );
        assert_eq!(
            url("https://github.com/fluxcd/flux2/releases/download/v2.8.1/install.yaml"),
            Some((Product::Flux, "v2.8.1".into()))
        );
        assert_eq!(
            url("https://example.com/argoproj/argo-cd/v2.7.2/x.yaml"),
            None
        );
        assert_eq!(release_numbers("stable"), None);
        let chart = |kind, source: &str, chart: &str, v: &str| {
            argo_cd_chart_release(kind, source, chart, v).map(|(_, mm)| mm)
        };
        let helm_repo = "https://argoproj.github.io/argo-helm";
        assert_eq!(
            chart(RemoteKind::Helm, helm_repo, "argo-cd", "7.5.2"),
            Some((2, 12))
        );
        assert_eq!(
            chart(RemoteKind::Helm, helm_repo, "argo-cd", "7.8.0"),
            Some((2, 14))
        );
        assert_eq!(
            chart(RemoteKind::Helm, helm_repo, "argo-cd", "8.0.17"),
            Some((3, 0))
        );
        assert_eq!(
            chart(
                RemoteKind::Oci,
                "ghcr.io/argoproj/argo-helm/argo-cd",
                "",
                "9.4.2"
            ),
            Some((3, 3))
        );
        assert_eq!(chart(RemoteKind::Helm, helm_repo, "argo-cd", "7.x"), None);
        assert_eq!(
            chart(RemoteKind::Helm, helm_repo, "argo-cd", "11.0.0"),
            None
        );
        assert_eq!(
            chart(RemoteKind::Helm, helm_repo, "argo-rollouts", "2.37.0"),
            None
        );
        assert_eq!(release_numbers("v2.14.2"), Some((2, 14)));
    }

    #[test]
    fn flux_instance_constraints_pick_the_newest_matching_release() {
        let mut got = Vec::new();
        for text in ["2.x", "2.4.x", ">=2.3.0 <2.7.0", "2.3.0", "v2.8.1", "3.x"] {
            let doc = crate::yaml::first_doc(&format!("v: \"{text}\"\n"));
            let node = doc.get("v").cloned();
            got.push(
                node.and_then(|n| flux_instance(&n, &Cluster::Default))
                    .map(|f| (f.major, f.minor)),
            );
        }
        assert_eq!(
            got,
            vec![
                Some((2, 9)),
                Some((2, 4)),
                Some((2, 6)),
                Some((2, 3)),
                Some((2, 8)),
                None
            ]
        );
    }

    #[test]
    fn the_gotk_components_header_names_the_flux_release() {
        let map = SourceMap::new();
        let id = map.add_text(
            "clusters/prod/flux-system/gotk-components.yaml",
            "---\n# This manifest was generated by flux. DO NOT EDIT.\n# Flux Version: v2.3.0\n# Components: source-controller,kustomize-controller\napiVersion: v1\nkind: Namespace\n",
        );
        let f = flux_header(&map, id, &Cluster::Named("prod".into()));
        assert_eq!(
            f.as_ref()
                .map(|f| (f.major, f.minor, map.line_col(f.span).line)),
            Some((2, 3, 3))
        );
    }

    #[test]
    fn argocd_images_name_the_release_other_images_do_not() {
        let text = "spec:\n  template:\n    spec:\n      initContainers:\n        - image: busybox:1.36\n      containers:\n        - image: quay.io/argoproj/argocd:v2.14.2\n";
        let found = argocd_images(&crate::yaml::first_doc(text), &Cluster::Default);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].major, found[0].minor), (2, 14));
        let other = "spec:\n  template:\n    spec:\n      containers:\n        - image: ghcr.io/example/argocd-notifications:v2.0.0\n";
        assert!(argocd_images(&crate::yaml::first_doc(other), &Cluster::Default).is_empty());
    }
}
