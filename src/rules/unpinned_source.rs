//! Charts, remote bases and external Git/OCI sources that are not pinned.

use super::util::ForApp;
use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::Model;
use crate::yaml::Node;

pub const ID: &str = "unpinned-source";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Error,
            when: "an Argo CD Helm chart's targetRevision is empty, `HEAD`, or (outside OCI) neither a chart version nor a semver range, so Argo CD cannot resolve the chart",
        },
    ],
    summary: "chart, remote base or external source is not pinned to an exact version",
    doc: include_str!("../../rules/unpinned-source.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Of(&[
        "source.toolkit.fluxcd.io/OCIRepository",
        "source.toolkit.fluxcd.io/HelmChart",
    ]),
};

const HELP: &str = "Pin the source to an exact version, tag or commit and let a bot (e.g. Renovate) bump it through reviewed pull requests.";

fn is_exact_version(v: &str) -> bool {
    let v = v.trim_start_matches('v');
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    !core.is_empty()
        && parts.len() <= 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

fn is_range(v: &str) -> bool {
    v.contains(['*', '^', '~', '>', '<', 'x', 'X', '|', ' ']) && !is_exact_version(v)
}

fn is_sha(v: &str) -> bool {
    v.len() == 40 && v.chars().all(|c| c.is_ascii_hexdigit())
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    remote_kustomize_bases(model, out);
    floating_charts(model, out);
    flux_sources(model, out);
    for (app, argo) in model.argo_apps() {
        for src in &argo.sources {
            // A value the generator could not supply (a cluster Secret's annotation that is
            // not in the repo) is unknown, not unpinned: nothing to report on it.
            let unknown = |v: Option<&str>| v.is_some_and(|v| v.contains("<no value>") || v.contains("{{"));
            if unknown(src.target_revision.as_deref()) || unknown(src.repo_url.as_deref()) {
                continue;
            }
            let rev = src.target_revision.clone().unwrap_or_default();
            let rev_span = src
                .node
                .get("targetRevision")
                .map(|n| n.span)
                .unwrap_or(src.node.span);
            if let Some(chart) = &src.chart {
                let oci = src
                    .repo_url
                    .as_deref()
                    .is_some_and(|u| u.starts_with("oci://") || !u.contains("://"));
                if rev.is_empty()
                    || rev == "HEAD"
                    || (!is_exact_version(&rev) && !is_range(&rev) && !oci)
                {
                    out.push(Finding::new(ID, Severity::Error, format!("targetRevision `{rev}` of Helm chart `{chart}` is not a chart version or semver constraint: Argo CD cannot resolve the chart, so `{}` never renders", app.name), rev_span).label("not a chart version").for_app(app).help("Set targetRevision to the chart version, e.g. `1.4.2`."));
                } else if is_range(&rev) {
                    out.push(Finding::new(ID, Severity::Warning, format!("Helm chart `{chart}` follows the range `{rev}`: a new chart release changes what is deployed without a commit"), rev_span).label("version range").for_app(app).help(HELP));
                } else if oci && !is_exact_version(&rev) && !rev.starts_with("sha256:") {
                    // An OCI tag that is no version (`latest`, `stable`, `main`) is moved by
                    // each push: Argo CD renders whatever it points at when it resolves it.
                    out.push(Finding::new(ID, Severity::Warning, format!("OCI chart `{chart}` follows the tag `{rev}`, which each push moves: what is deployed changes without a commit"), rev_span).label("floating tag").for_app(app).help("Pin targetRevision to a version tag (or a `sha256:` digest) and let a bot such as Renovate bump it through reviewed pull requests."));
                }
                continue;
            }
            // Sources in this repo tracking a branch are normal GitOps; only external ones.
            // A generator placeholder left in the template (an ApplicationSet generator that
            // does not expand offline) is no revision at all.
            if src.local || rev.contains("{{") {
                continue;
            }
            if rev.is_empty()
                || rev == "HEAD"
                || (!is_sha(&rev) && !rev.starts_with('v') && !is_exact_version(&rev))
                || is_range(&rev)
            {
                let shown = if rev.is_empty() {
                    "(empty: HEAD)".to_string()
                } else {
                    rev.clone()
                };
                out.push(Finding::new(ID, Severity::Warning, format!("external source {} tracks `{shown}`: its content changes without a commit here", src.repo_url.as_deref().unwrap_or("?")), rev_span).label("not pinned").for_app(app).help(HELP));
            }
        }
    }
    for app in &model.apps {
        let Some(flux) = &app.flux else { continue };
        if flux.kind != crate::gitops::model::flux::FluxKind::HelmRelease {
            continue;
        }
        let Some(chart_spec) = flux.decl.root.get_path(&["spec", "chart", "spec"]) else {
            continue;
        };
        let source_kind = chart_spec
            .get_path(&["sourceRef", "kind"])
            .and_then(Node::as_str)
            .unwrap_or("");
        if source_kind != "HelmRepository" {
            continue; // the version is ignored for GitRepository/Bucket sources
        }
        let version = chart_spec
            .get("version")
            .and_then(Node::scalar_text)
            .unwrap_or_default();
        if version.is_empty() || is_range(&version) {
            // Without `version`, point at the chart it applies to.
            let span = chart_spec
                .get("version")
                .map(|n| n.span)
                .or_else(|| chart_spec.entry("chart").map(|e| e.key.span.cover(e.value.span)))
                .unwrap_or(chart_spec.span);
            let shown = if version.is_empty() {
                "(empty: defaults to `*`)".to_string()
            } else {
                version
            };
            out.push(
                Finding::new(
                    ID,
                    Severity::Warning,
                    format!("HelmRelease chart version {shown} follows every new release"),
                    span,
                )
                .label("not pinned")
                .for_app(app)
                .help(HELP),
            );
        }
    }
}

/// Does a kustomize entry name a git repository (kustomize clones those), rather than one
/// file fetched over HTTP?
fn git_repo_spec(entry: &str) -> bool {
    // kustomize downloads an http(s) link to one YAML/JSON file before it tries a clone
    // (a release asset such as `…/releases/download/v0.12.0/serving.yaml` is no git base).
    if crate::render::kustomize::git_url::is_remote_file(entry) {
        return false;
    }
    let host_path = entry.split_once("://").map(|(_, r)| r).unwrap_or(entry);
    entry.starts_with("git@")
        || entry.starts_with("git::")
        || entry.starts_with("ssh://")
        || ["github.com/", "gitlab.com/", "bitbucket.org/"]
            .iter()
            .any(|h| host_path.starts_with(h))
        || host_path.contains("//")
        || host_path.contains(".git/")
        || host_path.contains(".git?")
        || host_path.ends_with(".git")
        || host_path.contains("/_git/")
}

/// `host/org/repo` of a git URL, lower-cased, without scheme, user, `.git` or what follows.
fn repo_key(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let rest = rest.split_once('@').map(|(_, r)| r).unwrap_or(rest).replacen(':', "/", 1);
    let rest = rest.split(['?', '#']).next().unwrap_or("").replace("//", "/");
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).take(3).collect();
    parts.join("/").trim_end_matches(".git").to_ascii_lowercase()
}

fn same_repo(app: &crate::gitops::App, entry: &str) -> bool {
    app.repository
        .as_ref()
        .and_then(|j| j.url.as_deref())
        .is_some_and(|u| repo_key(u) == repo_key(entry))
}

/// A git ref that names one commit for good: a full SHA or a version tag (also
/// `path/v1.2.3`, as monorepo tags are written).
fn pinned_ref(r: &str) -> bool {
    let last = r.rsplit('/').next().unwrap_or(r);
    // Release tags of repositories that ship several things carry a prefix
    // (`controller-v1.11.3`, `helm-chart-4.11.3`); a full x.y.z is a release, where
    // `release-1.2` is a branch.
    is_sha(r)
        || is_exact_version(last)
        || last
            .split('-')
            .any(|p| p.matches('.').count() == 2 && is_exact_version(p))
}

/// Remote kustomize `resources`/`components` that are git repositories: without `ref` (or
/// its alias `version`) kustomize clones the default branch at every build; a branch moves.
/// Each is a remote input of its app (`App::remotes`, fetched or not) on the entry's line;
/// an entry the renderer left unrendered (not fetched) is read from its issue too.
fn remote_kustomize_bases(model: &Model, out: &mut Vec<Finding>) {
    use crate::remote::RemoteKind;
    use crate::render::IssueKind;
    for app in &model.apps {
        let mut seen = Vec::new();
        let fetched = app
            .remotes
            .iter()
            .filter(|u| matches!(u.reference.kind, RemoteKind::Git | RemoteKind::Url))
            .map(|u| u.span);
        let unfetched = app
            .issues
            .iter()
            .filter(|i| i.kind == IssueKind::Unrenderable)
            .map(|i| i.span);
        for span in fetched.chain(unfetched) {
            if seen.contains(&span) {
                continue;
            }
            seen.push(span);
            let raw = model.map.text(span);
            let entry = generator_file_path(raw.trim().trim_matches(|c| c == '"' || c == '\''));
            if !git_repo_spec(entry) {
                if let Some((msg, label)) = unpinned_file_url(entry) {
                    out.push(
                        Finding::new(ID, Severity::Warning, msg, span)
                            .label(label)
                            .for_app(app)
                            .help("Point the URL at a tag or a commit (a release asset, or the raw file at a commit SHA), or vendor the file, and let a bot (e.g. Renovate) bump it through reviewed pull requests."),
                    );
                }
                continue;
            }
            // A base in this same repository follows its branch like the app itself does
            // (the GitOps norm, not an unpinned dependency).
            if same_repo(app, entry) {
                continue;
            }
            let query = entry.split_once('?').map(|(_, q)| q).unwrap_or("");
            let git_ref = query.split('&').find_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                matches!(k, "ref" | "version").then_some(v)
            });
            let (msg, label) = match git_ref {
                None => (
                    format!("remote base `{entry}` has no `ref`: kustomize clones the repository's default branch at every build, so what is deployed changes without a commit here"),
                    "no ref",
                ),
                Some(r) if !pinned_ref(r) => (
                    format!("remote base `{entry}` follows `{r}`, which looks like a branch: its content changes without a commit here"),
                    "not pinned",
                ),
                Some(_) => continue,
            };
            out.push(
                Finding::new(ID, Severity::Warning, msg, span)
                    .label(label)
                    .for_app(app)
                    .help("Add `?ref=<tag or commit>` to the URL (`?version=` is the same) and let a bot (e.g. Renovate) bump it through reviewed pull requests."),
            );
        }
    }
}

/// A generator's `files:` entry may name its key (`app.properties=https://…`): the URL is
/// what follows the `=`.
fn generator_file_path(entry: &str) -> &str {
    match entry.split_once('=') {
        Some((key, path))
            if !key.contains('/')
                && (path.starts_with("https://") || path.starts_with("http://")) =>
        {
            path
        }
        _ => entry,
    }
}

/// A remote file kustomize downloads over HTTP (`resources:` or a patch `path:`): where the
/// URL names a git ref (raw file hosts, release assets), the ref must be a tag or a commit;
/// a URL with no version or commit in it at all serves whatever is published there today.
/// `None` when pinned, or when the entry is not a URL.
fn unpinned_file_url(entry: &str) -> Option<(String, &'static str)> {
    let rest = entry
        .strip_prefix("https://")
        .or_else(|| entry.strip_prefix("http://"))?;
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let parts: Vec<&str> = rest.split('/').collect();
    let host = parts.first().copied().unwrap_or_default().to_ascii_lowercase();
    // The segment that names the ref, by the host's URL layout.
    let git_ref = match host.as_str() {
        // raw.githubusercontent.com/<org>/<repo>/<ref>/<path> (also refs/heads/<branch>)
        "raw.githubusercontent.com" => match parts.get(3).copied() {
            Some("refs") => parts.get(5).copied(),
            r => r,
        },
        // github.com/<org>/<repo>/{raw,blob}/<ref>/… and …/releases/download/<tag>/…
        "github.com" => match (parts.get(3).copied(), parts.get(4).copied()) {
            (Some("raw" | "blob"), r) => r,
            (Some("releases"), Some("download")) => parts.get(5).copied(),
            (Some("releases"), Some("latest")) => Some("latest"),
            _ => None,
        },
        // gitlab.com/<group>/<repo>/-/raw/<ref>/…
        _ => parts
            .iter()
            .position(|p| *p == "-")
            .filter(|&i| matches!(parts.get(i + 1).copied(), Some("raw" | "blob")))
            .and_then(|i| parts.get(i + 2).copied()),
    };
    match git_ref {
        Some(r) if pinned_ref(r) => None,
        Some(r) => Some((
            format!("remote file `{entry}` is read from `{r}`, which moves: kustomize downloads whatever it holds at every build, so what is deployed changes without a commit here"),
            "not pinned",
        )),
        // Anything else: pinned when some path segment carries a version or a commit.
        None if parts.iter().skip(1).any(|p| segment_pins(p)) => None,
        None => Some((
            format!("remote file `{entry}` names no version or commit: kustomize downloads whatever the server holds at every build"),
            "no version",
        )),
    }
}

/// A URL path segment that pins content: a commit SHA, a version (`v1.2.3`), or a file or
/// directory named with one (`cert-manager-1.14.0.yaml`, `operator-v0.9`).
fn segment_pins(segment: &str) -> bool {
    if pinned_ref(segment) {
        return true;
    }
    let stem = segment.rsplit_once('.').map_or(segment, |(s, ext)| {
        if ext.chars().all(|c| c.is_ascii_alphabetic()) { s } else { segment }
    });
    stem.split(['-', '_', '@'])
        .any(|p| p.contains('.') && is_exact_version(p))
}

/// Flux sources declared in the repo that follow a moving target: an `OCIRepository` with
/// a `semver` range, the `latest` tag or no `ref` at all (source-controller then pulls
/// `latest`), and `HelmChart` versions that are ranges on a Helm repository.
/// Charts a render pulls at whatever is newest (a kustomize `helmCharts` entry without
/// `version` and not vendored: `helm pull` without `--version`). Fetched or not, the cluster
/// gets the chart that is latest when Argo CD or Flux builds, not the one the lint saw.
fn floating_charts(model: &Model, out: &mut Vec<Finding>) {
    for app in &model.apps {
        let mut seen = Vec::new();
        for u in app.remotes.iter().filter(|u| u.floats) {
            if seen.contains(&u.span) {
                continue;
            }
            seen.push(u.span);
            out.push(
                Finding::new(
                    ID,
                    Severity::Warning,
                    format!(
                        "helmCharts entry `{}` sets no `version`: kustomize pulls the newest chart from {} at every build, so the same commit deploys a different chart once a new one is published",
                        model.map.text(u.span).trim(),
                        u.reference.source
                    ),
                    u.span,
                )
                .label("no version: the newest chart at each build")
                .for_app(app)
                .help("Set `version:` to the chart version (and let a bot such as Renovate bump it through reviewed pull requests), or vendor the chart under `helmGlobals.chartHome`."),
            );
        }
    }
}

fn flux_sources(model: &Scope, out: &mut Vec<Finding>) {
    for mo in model.in_scope() {
        let o = &mo.object;
        let app = model.app_of(mo);
        let Some(spec) = o.root.get("spec") else {
            continue;
        };
        let found = match o.kind.as_str() {
            "OCIRepository" => {
                let r = spec.get("ref");
                let get = |k: &str| r.and_then(|r| r.get(k)).and_then(Node::scalar_text);
                if get("digest").is_some() {
                    None
                } else if let Some(semver) = get("semver") {
                    (!is_exact_version(&semver)).then(|| {
                        let span = r.and_then(|r| r.get("semver")).map(|n| n.span);
                        (format!("OCIRepository {} follows the semver range `{semver}`: source-controller pulls every newer matching tag", o.name), span)
                    })
                } else {
                    match get("tag") {
                        Some(tag) if tag != "latest" => None,
                        Some(_) => Some((
                            format!("OCIRepository {} follows the `latest` tag", o.name),
                            r.and_then(|r| r.get("tag")).map(|n| n.span),
                        )),
                        None => Some((
                            format!("OCIRepository {} sets no `ref`: source-controller pulls the `latest` tag", o.name),
                            spec.get("url").map(|n| n.span),
                        )),
                    }
                }
            }
            "HelmChart" => {
                let helm_repo = spec.get_path(&["sourceRef", "kind"]).and_then(Node::as_str)
                    == Some("HelmRepository");
                let version = spec.get("version").and_then(Node::scalar_text).unwrap_or_default();
                (helm_repo && (version.is_empty() || is_range(&version))).then(|| {
                    (
                        format!("HelmChart {} version `{}` follows every new release", o.name, if version.is_empty() { "*" } else { &version }),
                        spec.get("version").map(|n| n.span),
                    )
                })
            }
            _ => None,
        };
        let Some((msg, span)) = found else { continue };
        out.push(
            Finding::new(ID, Severity::Warning, msg, span.unwrap_or(o.span()))
                .label("not pinned")
                .for_app(app)
                .help(HELP),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn versions() {
        assert!(is_exact_version("1.2.3"));
        assert!(is_exact_version("v1.2.3-rc.1"));
        assert!(!is_exact_version("1.2.*"));
        assert!(is_range("^1.2.0"));
        assert!(is_range(">=1.0.0 <2.0.0"));
        assert!(!is_range("1.2.3"));
        // Flux HelmRelease `version` forms that float: the default `*`, `1.x`, `>=1.0.0`.
        assert!(is_range("*"));
        assert!(is_range("1.x"));
        assert!(is_range(">=1.0.0"));
    }
    #[test]
    fn kustomize_git_specs_and_refs() {
        assert!(git_repo_spec("https://github.com/org/repo//base?ref=main"));
        assert!(git_repo_spec("github.com/org/repo/base"));
        assert!(git_repo_spec("git@github.com:org/repo.git/base"));
        assert!(git_repo_spec("https://dev.azure.com/org/proj/_git/repo/base"));
        assert!(!git_repo_spec("https://raw.example.com/org/repo/v1.2.0/deploy.yaml"));
        assert!(!git_repo_spec(
            "https://github.com/knative/serving/releases/download/v0.12.0/serving.yaml"
        ));
        assert!(pinned_ref("v5.4.1"));
        assert!(pinned_ref("kustomize/v5.4.1"));
        assert!(pinned_ref("controller-v1.11.3"));
        assert!(pinned_ref("helm-chart-4.11.3"));
        assert!(pinned_ref("3c9a1b2f0e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"));
        assert!(!pinned_ref("main"));
        assert!(!pinned_ref("release-1.2"));
        assert_eq!(
            repo_key("https://github.com/Org/Repo.git"),
            repo_key("github.com/org/repo/base?ref=main")
        );
        assert_eq!(repo_key("git@github.com:org/repo.git//x"), "github.com/org/repo");
    }
    #[test]
    fn remote_file_urls_pin_by_tag_or_commit() {
        let floats = |u: &str| unpinned_file_url(u).is_some();
        // a branch in the raw URL, the `refs/heads/` form, the latest release, nothing at all
        assert!(floats("https://raw.githubusercontent.com/org/repo/master/deploy/install.yaml"));
        assert!(floats("https://raw.githubusercontent.com/org/repo/refs/heads/main/a.yaml"));
        assert!(floats("https://github.com/org/repo/releases/latest/download/install.yaml"));
        assert!(floats("https://github.com/org/repo/raw/main/install.yaml"));
        assert!(floats("https://gitlab.com/group/repo/-/raw/develop/install.yaml"));
        assert!(floats("https://example.com/install.yaml"));
        // a tag, a commit, a release asset, a versioned file name
        assert!(!floats("https://raw.githubusercontent.com/org/repo/v1.4.2/deploy/install.yaml"));
        assert!(!floats(
            "https://raw.githubusercontent.com/org/repo/3c9a1b2f0e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b/a.yaml"
        ));
        assert!(!floats("https://github.com/knative/serving/releases/download/v0.12.0/serving.yaml"));
        assert!(!floats("https://example.com/cert-manager-1.14.0.yaml"));
        assert!(!floats("https://example.com/releases/v2.3.1/install.yaml"));
        // not a URL: nothing to say
        assert!(!floats("../base"));
    }
}
