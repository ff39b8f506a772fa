//! Render units: what one app source turns into objects (a plain directory, Flux's
//! generated kustomization, a kustomize build, a Helm chart), and the dispatch to the
//! renderers. Units are rendered as jobs (`render_jobs.rs`); objects keep spans into the
//! files to edit.

use crate::render::{IssueKind, RemoteInputs, RenderBudget, RenderIssue, RenderOutput};
use crate::source::{RepoFs, Span};
use crate::yaml::Node;

#[derive(Clone, Debug)]
pub enum Unit {
    /// Argo CD directory source: YAML files directly in `dir`, or below it with `recurse`.
    Directory {
        dir: String,
        recurse: bool,
        include: Option<String>,
        exclude: Option<String>,
    },
    /// A Flux Kustomization path without kustomization.yaml: every YAML file below it,
    /// sub-directories with their own kustomization built as such, as kustomize-controller does.
    FluxDirectory {
        dir: String,
    },
    Kustomize(KustomizeUnit),
    Helm(HelmUnit),
}

#[derive(Clone, Debug)]
pub struct KustomizeUnit {
    pub dir: String,
    /// Flux builds without the root-only load restriction (still inside the repo).
    pub flux: bool,
    /// Argo CD `source.kustomize` options, as written in the Application.
    pub argo_options: Option<Node>,
}

#[derive(Clone, Debug)]
pub struct HelmUnit {
    pub chart_dir: String,
    pub release_name: String,
    pub namespace: String,
    /// Repo-relative value files, in order, with the span of their entry.
    pub value_files: Vec<(String, Span)>,
    pub ignore_missing_value_files: bool,
    /// Inline values documents applied after the files (Argo `values`/`valuesObject`,
    /// Flux `values`), in order.
    pub inline_values: Vec<Node>,
    /// Values a controller layers after those (Flux `valuesFrom` and `values`), in order.
    pub values_layers: Vec<crate::render::helm::layers::ValuesLayer>,
    /// `--set` style parameters: (name, value, force string, the line that wrote the value).
    pub parameters: Vec<(String, String, bool, Span)>,
    pub skip_crds: bool,
    pub kube_version: Option<String>,
    pub api_versions: Vec<String>,
}

impl Unit {
    pub fn describe(&self) -> String {
        match self {
            Unit::Directory { dir, .. } => format!("directory {}", display_dir(dir)),
            Unit::FluxDirectory { dir } => format!("directory {} (flux)", display_dir(dir)),
            Unit::Kustomize(k) => format!("kustomize {}", display_dir(&k.dir)),
            Unit::Helm(h) => format!("helm {}", display_dir(&h.chart_dir)),
        }
    }
}

fn display_dir(d: &str) -> &str {
    if d.is_empty() { "." } else { d }
}

/// Render a kustomize or Helm unit (directories are resolved from already-parsed files by
/// the caller, which knows them). A panic is caught by the caller, per render
/// (`render_jobs::JobEnv::run`).
pub(super) fn render_unguarded(
    unit: &Unit,
    fs: &dyn RepoFs,
    budget: &RenderBudget,
    remotes: &RemoteInputs,
    shared: Option<std::sync::Arc<crate::render::kustomize::SharedBuilds>>,
) -> RenderOutput {
    match unit {
        Unit::Kustomize(k) => render_kustomize(k, fs, budget, remotes, shared),
        Unit::Helm(h) => render_helm(h, fs, budget, remotes, false).0,
        Unit::Directory { .. } | Unit::FluxDirectory { .. } => RenderOutput::default(),
    }
}

pub(super) fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("panic")
}

fn render_kustomize(
    k: &KustomizeUnit,
    fs: &dyn RepoFs,
    budget: &RenderBudget,
    remotes: &RemoteInputs,
    shared: Option<std::sync::Arc<crate::render::kustomize::SharedBuilds>>,
) -> RenderOutput {
    use crate::render::kustomize::{self, BuildOptions, LoadRestrictions};
    let opts = BuildOptions {
        load_restrictions: if k.flux {
            LoadRestrictions::None
        } else {
            LoadRestrictions::RootOnly
        },
        max_resources: budget.max_kustomize_resources,
        max_depth: budget.max_kustomize_depth,
        deadline: Some(budget.deadline()),
        remotes: remotes.clone(),
        shared,
        max_memory_bytes: budget.max_render_memory_bytes,
    };
    match kustomize_overrides(k, fs) {
        Some(o) => kustomize::build_with_overrides(fs, &k.dir, &o, &opts),
        None => kustomize::build(fs, &k.dir, &opts),
    }
}

/// The overrides an Argo CD `source.kustomize` block makes, as the build applies them.
pub(super) fn kustomize_overrides(
    k: &KustomizeUnit,
    fs: &dyn RepoFs,
) -> Option<crate::render::kustomize::KustomizeOverrides> {
    k.argo_options.as_ref().map(|node| {
        let mut o = argo_overrides(node);
        // `ignoreMissingComponents`: components missing from the repo are not added
        // (Argo CD's `ignoreMissingComponents`) instead of failing `kustomize edit add component`.
        if node.get("ignoreMissingComponents").and_then(Node::as_bool) == Some(true) {
            o.components.retain(|c| {
                c.contains("://")
                    || crate::source::normalize_relative(&format!("{}/{c}", k.dir))
                        .is_some_and(|p| fs.is_dir(&p))
            });
        }
        o
    })
}

/// Argo CD's `source.kustomize` block as the renderer's overrides.
fn argo_overrides(node: &Node) -> crate::render::kustomize::KustomizeOverrides {
    use crate::render::kustomize::{
        ImageOverride, KustomizeOverrides, PatchOverride, ReplicaOverride,
    };
    let s = |k: &str| node.get(k).and_then(Node::scalar_text);
    let pairs = |k: &str| -> Vec<(String, String)> {
        node.get(k)
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(|e| Some((e.key.key_str().into_owned(), e.value.scalar_text()?)))
            .collect()
    };
    let list = |k: &str| -> Vec<Node> {
        node.get(k)
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .to_vec()
    };
    KustomizeOverrides {
        name_prefix: s("namePrefix"),
        name_suffix: s("nameSuffix"),
        namespace: s("namespace"),
        images: list("images")
            .iter()
            .filter_map(Node::scalar_text)
            .map(|spec| ImageOverride { spec })
            .collect(),
        common_labels: pairs("commonLabels"),
        common_annotations: pairs("commonAnnotations"),
        force_common_labels: node.get("forceCommonLabels").and_then(Node::as_bool) == Some(true),
        force_common_annotations: node.get("forceCommonAnnotations").and_then(Node::as_bool)
            == Some(true),
        patches: list("patches")
            .iter()
            .map(|p| PatchOverride {
                patch: p.get("patch").and_then(Node::scalar_text),
                path: p.get("path").and_then(Node::scalar_text),
                target: p
                    .get("target")
                    .and_then(Node::as_map)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|e| Some((e.key.key_str().into_owned(), e.value.scalar_text()?)))
                    .collect(),
            })
            .collect(),
        replicas: list("replicas")
            .iter()
            .filter_map(|r| {
                Some(ReplicaOverride {
                    name: r.get("name")?.scalar_text()?,
                    count: r.get("count").and_then(Node::as_i64)?,
                })
            })
            .collect(),
        components: list("components")
            .iter()
            .filter_map(Node::scalar_text)
            .collect(),
    }
}

/// First render: seed 1, the real clock, UTC.
fn first_clock() -> crate::render::helm::render::RenderClock {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    crate::render::helm::render::RenderClock {
        seed: 1,
        now_unix_nanos: now,
        utc_offset_secs: 0,
    }
}

/// The scheme of a value file Helm reads through a downloader (`secrets://x.yaml`,
/// `secrets+age-import:///key?x.yaml`, `https://…`): a name of two or more characters
/// before `:` (one letter is a Windows drive).
pub fn downloader_scheme(file: &str) -> Option<&str> {
    let (scheme, _) = file.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && scheme.len() >= 2;
    valid.then_some(scheme)
}

/// The second render's clock: another seed, a clock 1 day and 1.1 s later, another zone.
fn other_clock() -> crate::render::helm::render::RenderClock {
    let first = first_clock();
    crate::render::helm::render::RenderClock {
        seed: 0x005e_ed2b,
        now_unix_nanos: first.now_unix_nanos + 86_401_100_000_000,
        utc_offset_secs: 5 * 3600 + 1800,
    }
}

/// Render a chart (seed 1, the real clock, UTC), and, with `twice`, again with
/// [`other_clock`]: the fields whose values differ (a chart that renders differently every
/// time). Only the seed, clock and zone differ between the two, so a first render that read
/// none of them is not repeated. The second render is compared as text first: the same text
/// is the same objects, so only a chart that prints something else is rendered into objects
/// a second time.
pub(super) fn render_helm(
    h: &HelmUnit,
    fs: &dyn RepoFs,
    budget: &RenderBudget,
    remotes: &RemoteInputs,
    twice: bool,
) -> (RenderOutput, Vec<super::model::RenderDifference>) {
    use crate::render::helm;
    let (opts, offline) = match helm_options(h, fs, first_clock(), budget, remotes) {
        Ok(o) => o,
        Err(out) => return (out, Vec::new()),
    };
    let first = helm::template_with_text(fs, &h.chart_dir, &opts);
    let (mut out, text) = (first.output, first.text);
    out.issues.extend(offline);
    if !twice || !out.issues.is_empty() || !first.clock_read {
        return (out, Vec::new());
    }
    // The same commit, another seed, clock and zone: what changes is not Git.
    let opts = helm::TemplateOptions {
        clock: Some(other_clock()),
        ..opts
    };
    let differences = match helm::template_to_string(fs, &h.chart_dir, &opts) {
        Ok(again) if again == text => Vec::new(),
        Ok(_) => {
            let again = helm::template(fs, &h.chart_dir, &opts);
            if again.issues.is_empty() {
                super::twice::compare(&out.objects, &again.objects)
            } else {
                Vec::new()
            }
        }
        Err(_) => Vec::new(),
    };
    (out, differences)
}

/// The `helm template` invocation of a unit, with the issues of value files a downloader
/// plugin reads (the chart is rendered without them), or the render's output when a value
/// file is missing (nothing is rendered then).
fn helm_options(
    h: &HelmUnit,
    fs: &dyn RepoFs,
    clock: crate::render::helm::render::RenderClock,
    budget: &RenderBudget,
    remotes: &RemoteInputs,
) -> Result<(crate::render::helm::TemplateOptions, Vec<RenderIssue>), RenderOutput> {
    use crate::render::helm::TemplateOptions;
    let mut issues = Vec::new();
    let mut value_files = Vec::new();
    let mut offline = Vec::new();
    for (file, span) in &h.value_files {
        if let Some(scheme) = downloader_scheme(file) {
            // helm-secrets (`secrets://`, `secrets+age-import://`) or a URL: a Helm downloader
            // plugin reads it at render time; the chart is rendered without it.
            offline.push(RenderIssue {
                kind: IssueKind::Unrenderable,
                input: None,
                span: *span,
                message: format!(
                    "value file `{file}` is read through Helm's `{scheme}` downloader (a plugin such as helm-secrets, or a URL), which is not run offline; the chart is rendered without it"
                ),
            });
        } else if fs.is_file(file) {
            value_files.push(file.clone());
        } else if !h.ignore_missing_value_files {
            // Argo CD fails manifest generation on a missing value file.
            issues.push(RenderIssue {
                kind: IssueKind::Failed,
                input: None,
                span: *span,
                message: format!("value file `{file}` does not exist (set helm.ignoreMissingValueFiles to tolerate it)"),
            });
        }
    }
    if !issues.is_empty() {
        issues.extend(offline);
        return Err(RenderOutput {
            issues,
            ..RenderOutput::default()
        });
    }
    let mut inline = Vec::new();
    let mut inline_layers = Vec::new();
    for n in &h.inline_values {
        match n.as_str() {
            Some(text) => {
                match super::in_place::located_roots(&written_node(n), text, false, fs.source_map())
                {
                    // A values block keeps its lines, so a finding names the line to edit.
                    Ok(roots) => {
                        inline_layers.push(crate::render::helm::layers::ValuesLayer::Docs {
                            label: "value from the Application's helm.values".into(),
                            roots,
                        })
                    }
                    // Helm's own parse error says what is wrong.
                    Err(_) => inline.push(text.to_string()),
                }
            }
            // JSON is YAML: an object given inline (valuesObject) is passed as its JSON.
            None => inline.push(n.to_json().to_string()),
        }
    }
    inline_layers.extend(h.values_layers.iter().cloned());
    let mut opts = TemplateOptions {
        release_name: h.release_name.clone(),
        namespace: h.namespace.clone(),
        value_files,
        values_yaml_inline: inline,
        values_layers: inline_layers,
        include_crds: !h.skip_crds,
        skip_crds: h.skip_crds,
        kube_version: h.kube_version.clone(),
        api_versions: h.api_versions.clone(),
        // Argo CD passes the release name as `--name-template`, so `{{ }}` in
        // it is executed. (Flux takes it literally; a Flux name with `{{` fails helm's name
        // check in both cases, only the message differs.)
        name_template: h
            .release_name
            .contains("{{")
            .then(|| h.release_name.clone()),
        clock: Some(clock),
        budget: budget.clone(),
        remotes: remotes.clone(),
        // The controller would have the dependencies: render what is vendored, name the rest.
        partial_dependencies: true,
        ..Default::default()
    };
    for (name, value, force_string, span) in &h.parameters {
        let kv = format!("{name}={value}");
        if *force_string {
            opts.set_string.push(kv);
        } else {
            opts.set.push(kv);
        }
        opts.set_origins.push((
            name.clone(),
            *span,
            "value from the Application's helm.parameters".into(),
        ));
    }
    Ok((opts, offline))
}

/// `n` as it stands where a person wrote it: an Application a chart rendered carries, in
/// its values block, the template action that printed it; the values line it printed is the
/// block as written (a literal block there keeps its lines).
pub(super) fn written_node(n: &Node) -> Node {
    let mut at = n.clone();
    at.span = crate::render::helm::values::written_at(n);
    if at.span != n.span {
        at.style = crate::yaml::Style::Literal;
        at.related = None;
    }
    at
}

#[cfg(test)]
mod downloader_tests {
    use super::downloader_scheme;

    #[test]
    fn value_files_read_by_downloader_plugins() {
        assert_eq!(
            downloader_scheme("secrets://values.enc.yaml"),
            Some("secrets")
        );
        assert_eq!(
            downloader_scheme(
                "secrets+age-import:///helm-secrets-private-keys/key.txt?values.yaml"
            ),
            Some("secrets+age-import")
        );
        assert_eq!(
            downloader_scheme("https://example.com/v.yaml"),
            Some("https")
        );
        assert_eq!(downloader_scheme("values-prod.yaml"), None);
        assert_eq!(downloader_scheme("C:/values.yaml"), None);
    }
}
