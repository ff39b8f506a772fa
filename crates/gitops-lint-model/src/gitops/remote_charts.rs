//! Charts an app takes from a Helm repository or an OCI registry: which [`RemoteRef`] an Argo
//! CD source or a Flux HelmRelease names, and its render from the cache when `fetch` put it
//! there (as a vendored chart, with the app's values). What is not fetched stays an
//! `offline-unrenderable-input` saying to run `gitops-lint fetch`.

use super::Skip;
use super::context::Ctx;
use super::rendered::Rendered;
use super::secret_data::decode_base64;
use super::units::{HelmUnit, Unit};
use super::{App, RemoteUse};
use crate::object::Object;
use crate::remote::RemoteRef;
use crate::render::{Fetched, IssueKind, RenderIssue};
use crate::source::Span;
use crate::yaml::Node;

/// The chart an Argo CD source names. `repoURL` with `oci://`, or without a scheme (a Helm
/// repository over OCI is registered without one, `enableOCI: "true"`), is an OCI registry;
/// an `https://` URL is a Helm repository unless a repository Secret in the repo marks that
/// URL `enableOCI`. Without `chart:` (Argo CD 3.1's OCI sources) the repoURL is the chart.
pub(super) fn argo_chart_ref(
    ctx: &Ctx,
    repo_url: &str,
    chart: Option<&str>,
    revision: &str,
) -> RemoteRef {
    let url = repo_url.trim();
    let chart = chart.unwrap_or("");
    let has_scheme = url.contains("://");
    if url.starts_with("oci://") || !has_scheme || argo_oci_enabled(ctx, url) {
        let bare = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
        RemoteRef::oci(bare, chart, revision)
    } else {
        RemoteRef::helm(url, chart, revision)
    }
}

/// A repository Secret (`argocd.argoproj.io/secret-type: repository` or `repo-creds`) for
/// this URL with `type: helm` and `enableOCI: "true"`.
fn argo_oci_enabled(ctx: &Ctx, url: &str) -> bool {
    let bare = |u: &str| {
        let u = u.trim().trim_end_matches('/');
        u.split_once("://").map(|(_, r)| r).unwrap_or(u).to_string()
    };
    let want = bare(url);
    ctx.plain.iter().map(|(o, _)| o).any(|o| {
        let secret_type = o.label("argocd.argoproj.io/secret-type");
        if o.kind != "Secret" || !matches!(secret_type, Some("repository" | "repo-creds")) {
            return false;
        }
        let field = |k: &str| secret_field(o, k);
        let matches_url = field("url").is_some_and(|u| {
            let u = bare(&u);
            if secret_type == Some("repo-creds") {
                want.starts_with(&u)
            } else {
                u == want
            }
        });
        matches_url
            && field("enableOCI").as_deref() == Some("true")
            && field("type").is_none_or(|t| t == "helm")
    })
}

/// A Secret's value from `stringData`, else base64-decoded `data`.
fn secret_field(o: &Object, key: &str) -> Option<String> {
    if let Some(v) = o
        .root
        .get_path(&["stringData", key])
        .and_then(Node::scalar_text)
    {
        return Some(v);
    }
    o.root
        .get_path(&["data", key])
        .and_then(Node::scalar_text)
        .and_then(|v| decode_base64(&v))
}

/// The chart a Flux `HelmRepository` serves: OCI when `spec.type: oci` or the URL is
/// `oci://…`; `version` defaults to `*` (the newest).
pub(super) fn flux_helm_repository_ref(
    repo: &Object,
    chart: &str,
    version: &str,
) -> Option<RemoteRef> {
    let url = repo
        .root
        .get_path(&["spec", "url"])
        .and_then(Node::scalar_text)?;
    let version = if version.trim().is_empty() {
        "*"
    } else {
        version
    };
    let oci = url.starts_with("oci://")
        || repo
            .root
            .get_path(&["spec", "type"])
            .and_then(Node::scalar_text)
            .as_deref()
            == Some("oci");
    Some(if oci {
        RemoteRef::oci(&url, chart, version)
    } else {
        RemoteRef::helm(&url, chart, version)
    })
}

/// The chart a Flux `OCIRepository` names: `spec.url`, at `spec.ref.digest`, else
/// `semver`, else `tag`, else `latest` (source-controller's order).
pub(super) fn flux_oci_repository_ref(repo: &Object) -> Option<RemoteRef> {
    let url = repo
        .root
        .get_path(&["spec", "url"])
        .and_then(Node::scalar_text)?;
    let r = |k: &str| {
        repo.root
            .get_path(&["spec", "ref", k])
            .and_then(Node::scalar_text)
            .filter(|v| !v.trim().is_empty())
    };
    let requested = r("digest")
        .map(|d| format!("@{}", d.trim_start_matches('@')))
        .or_else(|| r("semver"))
        .or_else(|| r("tag"))
        .unwrap_or_else(|| "latest".into());
    Some(RemoteRef::oci(&url, "", &requested))
}

/// Render a remote chart an app names at `span` (its `chart:` line): from the cache, or an
/// issue saying why not. `unit` builds the Helm invocation for the mounted chart directory.
pub(super) fn render_remote_chart(
    ctx: &mut Ctx,
    app: &mut App,
    rendered: &mut Rendered,
    reference: RemoteRef,
    span: Span,
    unit: impl FnOnce(&mut Ctx, &mut Rendered, String) -> Option<HelmUnit>,
) {
    rendered.remotes.push(RemoteUse {
        reference: reference.clone(),
        span,
        floats: false,
    });
    match ctx.remotes.chart(&reference) {
        Fetched::Ready { root } => {
            if !ctx.fs.is_file(&format!("{root}/Chart.yaml")) {
                rendered.sources.push(format!("{reference}"));
                rendered.issues.push(RenderIssue {
                    kind: IssueKind::Failed,
                    input: None,
                    span,
                    message: format!("{reference} holds no Chart.yaml at its root"),
                });
                return;
            }
            if let Some(u) = unit(ctx, rendered, root) {
                let before = rendered.sources.len();
                ctx.render_unit(Unit::Helm(u), span, rendered);
                // Name the chart as the app does, not by where it is mounted.
                for s in &mut rendered.sources[before..] {
                    *s = format!("helm {reference}");
                }
            }
        }
        Fetched::Missing(why) => {
            // Argo CD's own chart: its ConfigMaps from the repo's values, so the settings of
            // the instance it installs are read (the chart's other objects stay unrendered).
            if super::argo_chart::is_argo_cd_chart(&reference) {
                let mut scratch = Rendered::default();
                // A root no repo path can be: value files inside the chart are not read.
                if let Some(u) = unit(ctx, &mut scratch, "\0unfetched-chart".to_string()) {
                    rendered
                        .argo_config
                        .extend(super::argo_chart::config_maps(ctx.fs, &u, span));
                }
            }
            rendered.sources.push(format!("{reference}"));
            app.skipped.push(Skip {
                reason: "remote-chart",
                message: why.clone(),
            });
            rendered.issues.push(RenderIssue {
                kind: IssueKind::Unrenderable,
                input: crate::render::MissingInput::fetchable(reference.to_string()),
                span,
                message: why,
            });
        }
        Fetched::Broken(why) => {
            rendered.sources.push(format!("{reference}"));
            rendered.issues.push(RenderIssue {
                kind: IssueKind::Failed,
                input: None,
                span,
                message: why,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::RemoteKind;

    fn obj(text: &str) -> Object {
        let parsed = crate::yaml::parse_str(text, Default::default(), &Default::default());
        Object::from_node(parsed.docs[0].root.clone()).unwrap()
    }

    #[test]
    fn flux_helm_repository_https_and_oci() {
        let https = obj(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: bitnami}\nspec:\n  url: https://charts.bitnami.com/bitnami/\n",
        );
        let r = flux_helm_repository_ref(&https, "redis", "").unwrap();
        assert_eq!(
            r,
            RemoteRef::helm("https://charts.bitnami.com/bitnami", "redis", "*")
        );
        let typed = obj(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: p}\nspec:\n  type: oci\n  url: oci://ghcr.io/stefanprodan/charts\n",
        );
        let r = flux_helm_repository_ref(&typed, "podinfo", "6.x").unwrap();
        assert_eq!(r.kind, RemoteKind::Oci);
        assert_eq!(r.source, "oci://ghcr.io/stefanprodan/charts/podinfo");
        assert_eq!(r.requested, "6.x");
    }

    #[test]
    fn flux_oci_repository_ref_precedence_digest_semver_tag_latest() {
        let base = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: p}\nspec:\n  url: oci://ghcr.io/org/charts/podinfo\n";
        let r = flux_oci_repository_ref(&obj(base)).unwrap();
        assert_eq!(
            r,
            RemoteRef::oci("oci://ghcr.io/org/charts/podinfo", "", "latest")
        );
        let tag = format!("{base}  ref:\n    tag: 6.5.4\n");
        assert_eq!(
            flux_oci_repository_ref(&obj(&tag)).unwrap().requested,
            "6.5.4"
        );
        let semver = format!("{base}  ref:\n    tag: 6.5.4\n    semver: '>=6.0.0'\n");
        assert_eq!(
            flux_oci_repository_ref(&obj(&semver)).unwrap().requested,
            ">=6.0.0"
        );
        let digest = format!("{base}  ref:\n    semver: '>=6.0.0'\n    digest: sha256:abc\n");
        assert_eq!(
            flux_oci_repository_ref(&obj(&digest)).unwrap().requested,
            "@sha256:abc"
        );
    }
}
