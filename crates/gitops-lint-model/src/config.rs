//! `.gitops-lint.yaml`: rule severities, excludes, per-object ignores, repo URLs, limits.
//! Strict: an unknown key or rule id is an error (exit 2), never silently ignored.

use crate::finding::Severity;
use crate::source::{FileId, SourceMap, Span};
use crate::yaml::{Limits, Node, parse_str};

pub mod checks;
pub mod kb;
pub mod schema;

#[derive(Clone, Debug, PartialEq)]
pub enum RuleSetting {
    Off,
    Severity(Severity),
}

#[derive(Clone, Debug)]
pub struct ObjectIgnore {
    pub rule: String,
    /// `Kind/namespace/name` or `Kind/name` (cluster-scoped); `*` matches any part.
    pub object: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    pub rules: Vec<(String, RuleSetting)>,
    pub exclude: Vec<String>,
    pub ignore: Vec<ObjectIgnore>,
    pub repo_urls: Vec<String>,
    pub max_file_bytes: Option<u64>,
    pub max_files: Option<usize>,
    pub yaml_limits: Limits,
    /// Limits of each render (`max-template-steps`, `max-render-seconds`, ...).
    pub render_budget: crate::render::RenderBudget,
    /// Facts about the platform the repo deploys to (`platform:`).
    pub platform: Platform,
    /// The cluster the repo deploys to, as the renderers need it (`profile:`).
    pub profile: Profile,
    /// The repository's own checks (`checks:`), run like rules.
    pub checks: Vec<checks::Check>,
    /// Cost limits of the checks' expressions (`limits.max-check-cost`, `max-checks-cost`).
    pub check_limits: checks::CheckLimits,
    /// Settings that were ignored, located on their key (a `limits:` value above the
    /// default): reported as warnings, never an error, so the lint still runs.
    pub warnings: Vec<ConfigWarning>,
}

#[derive(Clone, Debug)]
pub struct ConfigWarning {
    pub span: Span,
    pub message: String,
}

/// `profile:` — what the repo does not say about the destination cluster: its Kubernetes
/// and Argo CD versions, its API list, labels of namespaces created outside the repo, and
/// autoscalers created outside the repo (Argo CD passes `--kube-version` / `--api-versions`
/// from the cluster unless the app pins them).
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// `kube-version`: `.Capabilities.KubeVersion` and the chart `kubeVersion` check.
    pub kube_version: Option<String>,
    /// `api-versions`: extra `.Capabilities.APIVersions` (`v1`, `group/version` or
    /// `group/version/Kind`).
    pub api_versions: Vec<String>,
    /// `argo-version`: the Argo CD release, for defaults that changed between releases
    /// (`--argo-version` overrides it).
    pub argo_version: Option<Release>,
    /// `flux-version`: the Flux release (`--flux-version` overrides it).
    pub flux_version: Option<Release>,
    /// `clusters:` releases per cluster, where a repo deploys to several that differ.
    pub clusters: Vec<ProfileCluster>,
    /// `namespaces:` labels of namespaces as they are in the cluster.
    pub namespaces: Vec<ProfileNamespace>,
    /// `autoscalers:` HPAs and ScaledObjects that exist in the cluster but not in the repo.
    pub autoscalers: Vec<ProfileAutoscaler>,
    /// `operators:` knowledge-base operators the clusters run outside the repo, with the
    /// line that names each.
    pub operators: Vec<(String, Span)>,
}

/// An Argo CD or Flux release `major.minor[.patch]`, as the configuration or a command-line
/// flag states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub major: u64,
    pub minor: u64,
    pub text: String,
    /// The value in the configuration file; `None` for a command-line flag.
    pub span: Option<Span>,
}

/// One `profile.clusters` entry: the releases one cluster runs.
#[derive(Clone, Debug)]
pub struct ProfileCluster {
    /// The cluster's name as `gitops-lint apps` shows it.
    pub name: String,
    pub argo_version: Option<Release>,
    pub flux_version: Option<Release>,
    pub span: Span,
}

impl Release {
    /// A release from a command-line flag (`--argo-version 2.14`).
    pub fn from_flag(text: &str) -> Option<Release> {
        let (major, minor) = major_minor(text)?;
        Some(Release {
            major,
            minor,
            text: text.to_string(),
            span: None,
        })
    }

    /// Is this release older than `major.minor`?
    /// Is this release older than `major.minor`?
    pub fn before(&self, major: u64, minor: u64) -> bool {
        (self.major, self.minor) < (major, minor)
    }
}

/// One `profile.namespaces` entry: a namespace and its labels in the cluster.
#[derive(Clone, Debug)]
pub struct ProfileNamespace {
    pub name: String,
    /// Label key, value, and the `key: value` span in the config file.
    pub labels: Vec<(String, String, Span)>,
    pub span: Span,
}

/// One `profile.autoscalers` entry: an HPA or a KEDA ScaledObject made outside the repo.
#[derive(Clone, Debug)]
pub struct ProfileAutoscaler {
    /// `HorizontalPodAutoscaler` or `ScaledObject`.
    pub kind: String,
    pub name: String,
    pub namespace: String,
    /// The target's API group (`apps` for `apps/v1`), kind and name.
    pub target_group: String,
    pub target_kind: String,
    pub target_name: String,
    pub min_replicas: Option<i64>,
    pub max_replicas: Option<i64>,
    /// The entry in the config file.
    pub span: Span,
}

impl ProfileAutoscaler {
    /// For messages: `HorizontalPodAutoscaler web/api (profile)`.
    pub fn describe(&self) -> String {
        let what = if self.kind == "ScaledObject" {
            "KEDA ScaledObject"
        } else {
            "HorizontalPodAutoscaler"
        };
        format!(
            "{what} {}/{} (.gitops-lint.yaml profile.autoscalers)",
            self.namespace, self.name
        )
    }
}

/// A version as written: an unquoted `1.30` is a float to YAML, whose text would be `1.3`.
fn version_text(node: &Node) -> Option<String> {
    node.text_as_written()
}

/// `major.minor` numbers of `1.31`, `v1.31.2`, `3.1.0-rc1` (none for a branch or a commit).
pub(crate) fn major_minor(text: &str) -> Option<(u64, u64)> {
    let mut parts = text.trim_start_matches('v').split(['.', '-', '+']);
    let number = |p: Option<&str>| {
        p.filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<u64>().ok())
    };
    Some((number(parts.next())?, number(parts.next())?))
}

/// `key: 2.14` of a `profile` mapping: a release `major.minor[.patch]`.
fn parse_release(
    node: &Node,
    key: &str,
    shown_as: &str,
    product: &str,
    example: &str,
) -> Result<Option<Release>, (Span, String)> {
    let Some(v) = node.get(key) else {
        return Ok(None);
    };
    let text = version_text(v).unwrap_or_default();
    let Some((major, minor)) = major_minor(&text) else {
        return Err((
            v.span,
            format!("`{shown_as}` is not {product} version ({example})"),
        ));
    };
    Ok(Some(Release {
        major,
        minor,
        text,
        span: Some(v.span),
    }))
}

fn parse_profile(node: &Node) -> Result<Profile, (Span, String)> {
    unknown_keys(node, &schema::names(schema::PROFILE), "`profile`")?;
    let mut profile = Profile::default();
    if let Some(v) = node.get("kube-version") {
        let text = version_text(v).filter(|t| !t.is_empty()).ok_or((
            v.span,
            "`profile.kube-version` must be a version such as `1.31.2`".to_string(),
        ))?;
        if major_minor(&text).is_none() {
            return Err((
                v.span,
                "`profile.kube-version` is not a Kubernetes version (`1.31` or `v1.31.2`)".into(),
            ));
        }
        profile.kube_version = Some(text);
    }
    if let Some(v) = node.get("api-versions") {
        let items = v
            .as_seq()
            .ok_or((v.span, "`profile.api-versions` must be a list".to_string()))?;
        for item in items {
            match item
                .scalar_text()
                .filter(|t| !t.is_empty() && !t.contains(char::is_whitespace))
            {
                Some(t) => profile.api_versions.push(t),
                None => {
                    return Err((
                        item.span,
                        "`profile.api-versions` entries are `v1`, `group/version` or `group/version/Kind`".into(),
                    ));
                }
            }
        }
    }
    let argo = ("an Argo CD", "`2.14` or `v3.1.2`");
    let flux = ("a Flux", "`2.8` or `v2.9.4`");
    profile.argo_version =
        parse_release(node, "argo-version", "profile.argo-version", argo.0, argo.1)?;
    profile.flux_version =
        parse_release(node, "flux-version", "profile.flux-version", flux.0, flux.1)?;
    if let Some(v) = node.get("clusters") {
        let entries = v.as_map().ok_or((
            v.span,
            "`profile.clusters` maps a cluster name to its releases".to_string(),
        ))?;
        for e in entries {
            let name = e.key.key_str().into_owned();
            unknown_keys(
                &e.value,
                &schema::names(schema::PROFILE_CLUSTER),
                "a `profile.clusters` entry",
            )?;
            let shown = |key: &str| format!("profile.clusters.{name}.{key}");
            profile.clusters.push(ProfileCluster {
                argo_version: parse_release(
                    &e.value,
                    "argo-version",
                    &shown("argo-version"),
                    argo.0,
                    argo.1,
                )?,
                flux_version: parse_release(
                    &e.value,
                    "flux-version",
                    &shown("flux-version"),
                    flux.0,
                    flux.1,
                )?,
                span: e.key.span,
                name,
            });
        }
    }
    if let Some(v) = node.get("namespaces") {
        profile.namespaces = parse_profile_namespaces(v)?;
    }
    if let Some(v) = node.get("autoscalers") {
        let items = v
            .as_seq()
            .ok_or((v.span, "`profile.autoscalers` must be a list".to_string()))?;
        for item in items {
            profile.autoscalers.push(parse_profile_autoscaler(item)?);
        }
    }
    if let Some(v) = node.get("operators") {
        let items = v
            .as_seq()
            .ok_or((v.span, "`profile.operators` must be a list".to_string()))?;
        for item in items {
            let id = item
                .scalar_text()
                .ok_or((item.span, "expected an operator id".to_string()))?;
            let known = kb::ids();
            if !known.contains(&id.as_str()) {
                return Err((
                    item.span,
                    format!(
                        "unknown operator `{id}` in `profile.operators`{} (known: {}; \
                         see `gitops-lint explain writers`)",
                        closest_id(&id, &known)
                            .map(|near| format!(" (did you mean `{near}`?)"))
                            .unwrap_or_default(),
                        known.join(", ")
                    ),
                ));
            }
            profile.operators.push((id, item.span));
        }
    }
    Ok(profile)
}

/// `namespaces: {NAME: {labels: {KEY: VALUE}}}`.
fn parse_profile_namespaces(node: &Node) -> Result<Vec<ProfileNamespace>, (Span, String)> {
    let entries = node.as_map().ok_or((
        node.span,
        "`profile.namespaces` must map namespace names to `{labels: {...}}`".to_string(),
    ))?;
    let mut out = Vec::new();
    for e in entries {
        let name = e.key.key_str().into_owned();
        let what = format!("`profile.namespaces.{}`", key_text(&name));
        unknown_keys(&e.value, &schema::names(schema::PROFILE_NAMESPACE), &what)?;
        let mut ns = ProfileNamespace {
            name,
            labels: Vec::new(),
            span: e.key.span.cover(e.value.span),
        };
        if let Some(labels) = e.value.get("labels") {
            let pairs = labels
                .as_map()
                .ok_or((labels.span, format!("{what}.labels must be a mapping")))?;
            for l in pairs {
                let value = l.value.scalar_text().ok_or((
                    l.value.span,
                    format!("{what}.labels values must be strings"),
                ))?;
                ns.labels.push((
                    l.key.key_str().into_owned(),
                    value,
                    l.key.span.cover(l.value.span),
                ));
            }
        }
        out.push(ns);
    }
    Ok(out)
}

/// `{kind, name, namespace, target: {apiVersion, kind, name}, min-replicas, max-replicas}`.
fn parse_profile_autoscaler(item: &Node) -> Result<ProfileAutoscaler, (Span, String)> {
    const WHAT: &str = "a `profile.autoscalers` entry";
    unknown_keys(item, &schema::names(schema::PROFILE_AUTOSCALER), WHAT)?;
    let text = |n: &Node, k: &str| {
        n.get(k)
            .and_then(Node::scalar_text)
            .filter(|t| !t.is_empty())
    };
    let kind = text(item, "kind").unwrap_or_else(|| "HorizontalPodAutoscaler".into());
    if kind != "HorizontalPodAutoscaler" && kind != "ScaledObject" {
        return Err((
            item.get("kind").map(|n| n.span).unwrap_or(item.span),
            format!("{WHAT}: `kind` must be HorizontalPodAutoscaler or ScaledObject"),
        ));
    }
    let (Some(name), Some(namespace)) = (text(item, "name"), text(item, "namespace")) else {
        return Err((item.span, format!("{WHAT} needs `name` and `namespace`")));
    };
    let Some(target) = item.get("target") else {
        return Err((item.span, format!("{WHAT} needs a `target`")));
    };
    unknown_keys(target, &schema::names(schema::PROFILE_TARGET), "`target`")?;
    let Some(target_name) = text(target, "name") else {
        return Err((target.span, "`target` needs a `name`".into()));
    };
    let api_version = text(target, "apiVersion").unwrap_or_else(|| "apps/v1".into());
    let count = |k: &str| match item.get(k) {
        Some(n) => n
            .as_i64()
            .filter(|v| *v >= 0)
            .map(Some)
            .ok_or((n.span, format!("`{k}` must be a whole number"))),
        None => Ok(None),
    };
    Ok(ProfileAutoscaler {
        kind,
        name,
        namespace,
        target_group: api_version
            .split_once('/')
            .map(|(g, _)| g.to_string())
            .unwrap_or_default(),
        target_kind: text(target, "kind").unwrap_or_else(|| "Deployment".into()),
        target_name,
        min_replicas: count("min-replicas")?,
        max_replicas: count("max-replicas")?,
        span: item.span,
    })
}

/// `platform:` — what the linter cannot see in the repo.
#[derive(Clone, Debug, Default)]
pub struct Platform {
    /// `owned-fields`: fields a webhook or controller outside the repo writes.
    pub owned_fields: Vec<OwnedField>,
}

/// One `platform.owned-fields` entry: `owner` writes `path` (optionally to `value`) on the
/// objects `selector` names (`kinds` as `Kind` or `group/Kind`, `names` and `namespaces`
/// globs, `namespace-selector` / `object-selector` label selectors).
#[derive(Clone, Debug)]
pub struct OwnedField {
    pub owner: String,
    pub path: String,
    pub value: Option<String>,
    pub kinds: Vec<String>,
    pub names: Vec<String>,
    pub namespaces: Vec<String>,
    /// Annotation keys: the writer acts on objects carrying one (cert-manager's
    /// `inject-ca-from`).
    pub annotations: Vec<String>,
    pub namespace_selector: Option<Node>,
    pub object_selector: Option<Node>,
    /// Where upstream documents the write.
    pub link: Option<String>,
    /// Why, for the reader (`reason:`).
    pub reason: Option<String>,
    /// The entry in the config file (secondary label on findings).
    pub span: Span,
}

#[derive(Debug)]
pub struct ConfigError {
    pub file: FileId,
    pub span: Option<Span>,
    pub message: String,
}

/// Highest value `--limit KEY=VALUE` may set: even a trusted workflow cannot make a render
/// unbounded (`schema::LIMITS`).
fn hard_ceiling(name: &str) -> u64 {
    schema::ceiling(name)
}

/// The value of limit `name` in `cfg` (its default when unset).
pub(crate) fn limit_value(cfg: &Config, name: &str) -> u64 {
    let walk = crate::source::WalkOptions::default();
    let b = &cfg.render_budget;
    match name {
        "max-file-bytes" => cfg.max_file_bytes.unwrap_or(walk.max_file_bytes),
        "max-files" => cfg.max_files.unwrap_or(walk.max_files) as u64,
        "max-depth" => cfg.yaml_limits.max_depth as u64,
        "max-alias-nodes" => cfg.yaml_limits.max_alias_nodes as u64,
        "max-documents" => cfg.yaml_limits.max_documents as u64,
        "max-parse-seconds" => cfg.yaml_limits.max_parse_time.as_secs(),
        "max-template-steps" => b.max_template_steps,
        "max-template-output-bytes" => b.max_template_output_bytes as u64,
        "max-range-length" => b.max_range_length as u64,
        "max-include-depth" => b.max_include_depth as u64,
        "max-kustomize-resources" => b.max_kustomize_resources as u64,
        "max-kustomize-depth" => b.max_kustomize_depth as u64,
        "max-render-seconds" => b.max_render_time.as_secs(),
        "max-render-memory-bytes" => b.max_render_memory_bytes as u64,
        "max-apps" => b.max_apps as u64,
        "max-check-cost" => cfg.check_limits.per_evaluation,
        "max-checks-cost" => cfg.check_limits.per_lint,
        _ => 0,
    }
}

fn set_limit(cfg: &mut Config, name: &str, n: u64) {
    let size = usize::try_from(n).unwrap_or(usize::MAX);
    let b = &mut cfg.render_budget;
    match name {
        "max-file-bytes" => cfg.max_file_bytes = Some(n),
        "max-files" => cfg.max_files = Some(size),
        "max-depth" => cfg.yaml_limits.max_depth = size,
        "max-alias-nodes" => cfg.yaml_limits.max_alias_nodes = size,
        "max-documents" => cfg.yaml_limits.max_documents = size,
        "max-parse-seconds" => cfg.yaml_limits.max_parse_time = std::time::Duration::from_secs(n),
        "max-template-steps" => b.max_template_steps = n,
        "max-template-output-bytes" => b.max_template_output_bytes = size,
        "max-range-length" => b.max_range_length = size,
        "max-include-depth" => b.max_include_depth = size,
        "max-kustomize-resources" => b.max_kustomize_resources = size,
        "max-kustomize-depth" => b.max_kustomize_depth = size,
        "max-render-seconds" => b.max_render_time = std::time::Duration::from_secs(n),
        "max-render-memory-bytes" => b.max_render_memory_bytes = size,
        "max-apps" => b.max_apps = size,
        "max-check-cost" => cfg.check_limits.per_evaluation = n,
        "max-checks-cost" => cfg.check_limits.per_lint = n,
        _ => {}
    }
}

/// `--limit KEY=VALUE` from the command line (the workflow author's side, which a pull
/// request cannot change): sets a limit either way, up to its hard ceiling.
pub fn parse_cli_limit(arg: &str) -> Result<(String, u64), String> {
    let (name, value) = arg
        .split_once('=')
        .ok_or_else(|| format!("--limit {arg}: expected KEY=VALUE"))?;
    if !schema::limit_keys().contains(&name) {
        return Err(format!(
            "--limit {arg}: unknown limit `{name}` ({})",
            schema::limit_keys().join(", ")
        ));
    }
    let n: u64 = value
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("--limit {arg}: the value must be a positive integer"))?;
    let ceiling = hard_ceiling(name);
    if n > ceiling {
        return Err(format!(
            "--limit {arg}: above the hard ceiling {ceiling} of `{name}`"
        ));
    }
    Ok((name.to_string(), n))
}

impl Config {
    /// Applies `--limit` values (already checked by [`parse_cli_limit`]) over the file's.
    pub fn apply_cli_limits(&mut self, limits: &[(String, u64)]) {
        for (name, n) in limits {
            set_limit(self, name, (*n).min(hard_ceiling(name)));
        }
    }

    pub fn setting(&self, rule: &str) -> Option<&RuleSetting> {
        self.rules
            .iter()
            .rev()
            .find(|(r, _)| r == rule)
            .map(|(_, s)| s)
    }

    pub fn exclude_set(&self) -> Result<globset::GlobSet, String> {
        let mut b = globset::GlobSetBuilder::new();
        for (i, pat) in self.exclude.iter().enumerate() {
            let g = globset::GlobBuilder::new(pat)
                .literal_separator(false)
                .build()
                .map_err(|e| format!("`exclude` entry {}: {}", i + 1, e.kind()))?;
            b.add(g);
            // `dir/` or `dir` also excludes everything below it.
            if let Ok(g) = globset::Glob::new(&format!("{}/**", pat.trim_end_matches('/'))) {
                b.add(g);
            }
        }
        b.build().map_err(|e| e.to_string())
    }

    /// Parse a config file already registered in the source map.
    pub fn parse(
        map: &SourceMap,
        file: FileId,
        known_rules: &[&str],
    ) -> Result<Config, ConfigError> {
        let src = map.get(file);
        let err = |span: Option<Span>, message: String| ConfigError {
            file,
            span,
            message,
        };
        let parsed = parse_str(&src.text, file, &Limits::default());
        if let Some(e) = parsed.error {
            return Err(err(Some(e.span), format!("does not parse: {}", e.message)));
        }
        let mut cfg = Config::default();
        let Some(root) = parsed.docs.into_iter().next().map(|d| d.root) else {
            return Ok(cfg);
        };
        let Some(entries) = root.as_map() else {
            return Err(err(Some(root.span), "must be a mapping".into()));
        };
        // Checks first: `rules:` and `ignore:` may name them, wherever they are written.
        if let Some(node) = root.get("checks") {
            cfg.checks = checks::parse(node, known_rules).map_err(|(s, m)| err(Some(s), m))?;
        }
        let with_checks: Vec<&str> = known_rules
            .iter()
            .copied()
            .chain(cfg.checks.iter().map(|c| c.id))
            .collect();
        let known_rules = with_checks.as_slice();
        for e in entries {
            let key = e.key.key_str();
            match key.as_ref() {
                "checks" => {}
                "rules" => {
                    for r in e.value.as_map().unwrap_or_default() {
                        let id = r.key.key_str().into_owned();
                        if !known_rules.contains(&id.as_str()) {
                            return Err(err(
                                Some(r.key.span),
                                format!(
                                    "unknown rule {}{}",
                                    quoted_key(&id),
                                    did_you_mean(&id, known_rules)
                                ),
                            ));
                        }
                        let v = r.value.scalar_text().unwrap_or_default();
                        let setting = match v.as_str() {
                            "off" | "false" => RuleSetting::Off,
                            s => RuleSetting::Severity(Severity::parse(s).ok_or_else(|| {
                                err(
                                    Some(r.value.span),
                                    format!(
                                        "rule `{id}`: the setting must be one of error, warning, info, off"
                                    ),
                                )
                            })?),
                        };
                        cfg.rules.push((id, setting));
                    }
                }
                "exclude" => {
                    cfg.exclude = strings(&e.value).map_err(|m| err(Some(e.value.span), m))?;
                    cfg.exclude_set().map_err(|m| err(Some(e.value.span), m))?;
                }
                "repo-urls" => {
                    cfg.repo_urls = strings(&e.value).map_err(|m| err(Some(e.value.span), m))?
                }
                "ignore" => {
                    for item in e.value.as_seq().unwrap_or_default() {
                        for k in item.as_map().unwrap_or_default() {
                            let name = k.key.key_str();
                            if !schema::names(schema::IGNORE).contains(&name.as_ref()) {
                                return Err(err(
                                    Some(k.key.span),
                                    format!(
                                        "unknown key {} in an ignore entry (rule, object, reason)",
                                        quoted_key(&name)
                                    ),
                                ));
                            }
                        }
                        let get =
                            |k: &str| item.get(k).and_then(Node::scalar_text).unwrap_or_default();
                        let rule = get("rule");
                        if !known_rules.contains(&rule.as_str()) {
                            return Err(err(
                                Some(item.span),
                                // The value is not echoed (configuration errors quote keys);
                                // the suggestion is one of our own rule ids.
                                format!(
                                    "ignore entry: `rule` names no rule{}",
                                    did_you_mean(&rule, known_rules)
                                ),
                            ));
                        }
                        let reason = get("reason");
                        if reason.trim().is_empty() {
                            return Err(err(
                                Some(item.span),
                                "ignore entry needs a `reason`".into(),
                            ));
                        }
                        cfg.ignore.push(ObjectIgnore {
                            rule,
                            object: get("object"),
                            reason,
                        });
                    }
                }
                "limits" => {
                    for l in e.value.as_map().unwrap_or_default() {
                        let name = l.key.key_str();
                        if !schema::limit_keys().contains(&name.as_ref()) {
                            return Err(err(
                                Some(l.key.span),
                                format!(
                                    "unknown limit {} ({})",
                                    quoted_key(&name),
                                    schema::limit_keys().join(", ")
                                ),
                            ));
                        }
                        let n = l.value.as_i64().filter(|n| *n > 0).ok_or_else(|| {
                            err(
                                Some(l.value.span),
                                format!("`limits.{name}` must be a positive integer"),
                            )
                        })? as u64;
                        // The config comes with the change under review: it may tighten
                        // a limit, never loosen one (SECURITY.md).
                        let default = limit_value(&Config::default(), &name);
                        if n > default {
                            cfg.warnings.push(ConfigWarning {
                                span: l.key.span,
                                message: format!(
                                    "`limits.{name}: {n}` is above the default {default}; the repository's configuration may only lower limits, so {default} applies (raise it with `--limit {name}={n}` in the workflow)"
                                ),
                            });
                            continue;
                        }
                        set_limit(&mut cfg, &name, n);
                    }
                }
                "platform" => {
                    cfg.platform = parse_platform(&e.value).map_err(|(s, m)| err(Some(s), m))?
                }
                "profile" => {
                    cfg.profile = parse_profile(&e.value).map_err(|(s, m)| err(Some(s), m))?
                }
                other => {
                    return Err(err(
                        Some(e.key.span),
                        format!(
                            "unknown key {} (expected one of {})",
                            quoted_key(other),
                            schema::names(schema::TOP).join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(cfg)
    }
}

/// A key for a message: a configuration error quotes keys, never values (a `--config`
/// outside the repository must not be echoed), and a key is cut short and kept on one line.
fn key_text(key: &str) -> String {
    const MAX_CHARS: usize = 64;
    let mut out: String = key
        .chars()
        .take(MAX_CHARS)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if key.chars().nth(MAX_CHARS).is_some() {
        out.push('…');
    }
    out
}

fn quoted_key(key: &str) -> String {
    format!("`{}`", key_text(key))
}

fn unknown_keys(node: &Node, known: &[&str], what: &str) -> Result<(), (Span, String)> {
    let Some(entries) = node.as_map() else {
        return Err((node.span, format!("{what} must be a mapping")));
    };
    for k in entries {
        let name = k.key.key_str();
        if !known.contains(&name.as_ref()) {
            return Err((
                k.key.span,
                format!(
                    "unknown key {} in {what} ({})",
                    quoted_key(&name),
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

fn parse_platform(node: &Node) -> Result<Platform, (Span, String)> {
    unknown_keys(node, &schema::names(schema::PLATFORM), "`platform`")?;
    let mut platform = Platform::default();
    let Some(items) = node.get("owned-fields") else {
        return Ok(platform);
    };
    let Some(items) = items.as_seq() else {
        return Err((items.span, "`platform.owned-fields` must be a list".into()));
    };
    for item in items {
        platform
            .owned_fields
            .push(parse_owned_field(item, schema::OWNED_FIELD, None)?);
    }
    Ok(platform)
}

/// One `owned-fields` entry, with the keys of `keys` (`platform.owned-fields`, or a
/// knowledge-base file's, which may leave `owner` to `default_owner`).
pub(crate) fn parse_owned_field(
    item: &Node,
    keys: &[schema::Key],
    default_owner: Option<&str>,
) -> Result<OwnedField, (Span, String)> {
    unknown_keys(
        item,
        &schema::names(keys),
        "a `platform.owned-fields` entry",
    )?;
    let text = |k: &str| item.get(k).and_then(Node::scalar_text);
    let (Some(owner), Some(path)) = (
        text("owner").or(default_owner.map(str::to_string)),
        text("path"),
    ) else {
        return Err((
            item.span,
            "`platform.owned-fields` entry needs `owner` and `path`".into(),
        ));
    };
    if crate::yaml::path::Pattern::parse_dotted(&path).is_none() {
        return Err((
            item.get("path").map(|n| n.span).unwrap_or(item.span),
            "`path` is not a field path (e.g. `spec.template.spec.containers[*].imagePullPolicy`)"
                .into(),
        ));
    }
    let mut fact = OwnedField {
        owner,
        path,
        value: text("value"),
        kinds: Vec::new(),
        names: Vec::new(),
        namespaces: Vec::new(),
        annotations: Vec::new(),
        namespace_selector: None,
        object_selector: None,
        link: text("link"),
        reason: text("reason"),
        span: item.span,
    };
    if let Some(sel) = item.get("selector") {
        unknown_keys(sel, &schema::names(schema::OWNED_SELECTOR), "`selector`")?;
        fact.kinds = strings_at(sel, "kinds")?;
        fact.names = strings_at(sel, "names")?;
        fact.namespaces = strings_at(sel, "namespaces")?;
        fact.annotations = strings_at(sel, "annotations")?;
        fact.namespace_selector = sel.get("namespace-selector").cloned();
        fact.object_selector = sel.get("object-selector").cloned();
    }
    Ok(fact)
}

/// The list of strings at `key` of `node` (none: empty), an error located on the list.
fn strings_at(node: &Node, key: &str) -> Result<Vec<String>, (Span, String)> {
    match node.get(key) {
        Some(n) => strings(n).map_err(|m| (n.span, m)),
        None => Ok(Vec::new()),
    }
}

fn strings(node: &Node) -> Result<Vec<String>, String> {
    node.as_seq()
        .ok_or_else(|| "expected a list of strings".to_string())?
        .iter()
        .map(|n| {
            n.scalar_text()
                .ok_or_else(|| "expected a string".to_string())
        })
        .collect()
}

/// Does `pattern` (`Kind/ns/name`, `Kind/name`, `*` parts) name this object?
pub fn object_matches(pattern: &str, object_id: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let o: Vec<&str> = object_id.split('/').collect();
    let o: Vec<&str> = if p.len() == 2 && o.len() == 3 {
        vec![o[0], o[2]]
    } else {
        o
    };
    p.len() == o.len() && p.iter().zip(&o).all(|(a, b)| *a == "*" || a == b)
}

/// ` (did you mean `x`? see `gitops-lint rules`)`, or the pointer to the list alone.
pub fn did_you_mean(typo: &str, known: &[&str]) -> String {
    match closest_id(typo, known) {
        Some(near) => format!(" (did you mean `{near}`? see `gitops-lint rules`)"),
        None => " (see `gitops-lint rules`)".to_string(),
    }
}

/// The known id nearest to `typo` by edit distance, when it is near enough to be a typo
/// (at most a third of the id's length, and at most 4 edits): the "did you mean" of every
/// place a rule id is typed (configuration, suppressions, `explain`).
pub fn closest_id<'a>(typo: &str, known: &[&'a str]) -> Option<&'a str> {
    let limit = (typo.chars().count() / 3).clamp(1, 4);
    known
        .iter()
        .map(|k| (edit_distance(typo, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelled_rule_ids_get_the_nearest_known_id() {
        let known = [
            "hpa-replicas-conflict",
            "shared-resource",
            "unpinned-source",
        ];
        assert_eq!(
            closest_id("hpa-replica-conflict", &known),
            Some("hpa-replicas-conflict")
        );
        assert_eq!(
            closest_id("shared-resources", &known),
            Some("shared-resource")
        );
        assert_eq!(closest_id("no-such-thing-at-all", &known), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    fn parse(text: &str) -> Result<Config, ConfigError> {
        let map = SourceMap::new();
        let id = map.add_text(".gitops-lint.yaml", text);
        Config::parse(&map, id, &[])
    }

    #[test]
    fn every_limit_has_a_key() {
        let text = schema::limit_keys()
            .iter()
            .enumerate()
            .map(|(i, k)| format!("  {k}: {}\n", i + 2))
            .collect::<String>();
        let cfg = parse(&format!("limits:\n{text}")).unwrap_or_default();
        let b = &cfg.render_budget;
        assert_eq!(cfg.max_file_bytes, Some(2));
        assert_eq!(cfg.max_files, Some(3));
        assert_eq!(
            (
                cfg.yaml_limits.max_depth,
                cfg.yaml_limits.max_alias_nodes,
                cfg.yaml_limits.max_documents
            ),
            (4, 5, 6)
        );
        assert_eq!(
            cfg.yaml_limits.max_parse_time,
            std::time::Duration::from_secs(7)
        );
        assert_eq!(
            (
                b.max_template_steps,
                b.max_template_output_bytes,
                b.max_range_length,
                b.max_include_depth
            ),
            (8, 9, 10, 11)
        );
        assert_eq!((b.max_kustomize_resources, b.max_kustomize_depth), (12, 13));
        assert_eq!((b.max_render_memory_bytes, b.max_apps), (15, 16));
        // 14 s is above the 10 s default: ignored, with a warning.
        assert_eq!(b.max_render_time, std::time::Duration::from_secs(10));
        assert_eq!(cfg.warnings.len(), 1, "{:?}", cfg.warnings);
    }

    #[test]
    fn a_repository_config_cannot_raise_a_limit() {
        let map = SourceMap::new();
        let text = "limits:\n  max-template-steps: 4000000000000\n  max-render-seconds: 100000\n  max-range-length: 10\n";
        let id = map.add_text(".gitops-lint.yaml", text);
        let cfg = Config::parse(&map, id, &[]).unwrap_or_default();
        let b = &cfg.render_budget;
        let d = crate::render::RenderBudget::default();
        assert_eq!(b.max_template_steps, d.max_template_steps);
        assert_eq!(b.max_render_time, d.max_render_time);
        assert_eq!(b.max_range_length, 10, "lowering is allowed");
        let at: Vec<(usize, usize)> = cfg
            .warnings
            .iter()
            .map(|w| {
                let lc = map.line_col(w.span);
                (lc.line, lc.column)
            })
            .collect();
        assert_eq!(at, [(2, 3), (3, 3)], "located on each key");
        assert!(
            cfg.warnings[0]
                .message
                .contains("--limit max-template-steps=")
        );
    }

    #[test]
    fn the_command_line_raises_limits_up_to_a_hard_ceiling() {
        let mut cfg = Config::default();
        let l = parse_cli_limit("max-render-seconds=30");
        assert_eq!(l, Ok(("max-render-seconds".to_string(), 30)));
        cfg.apply_cli_limits(&[l.unwrap_or_default()]);
        assert_eq!(
            cfg.render_budget.max_render_time,
            std::time::Duration::from_secs(30)
        );
        let over = parse_cli_limit("max-render-seconds=100000").unwrap_err();
        assert!(over.contains("hard ceiling 600"), "{over}");
        assert!(parse_cli_limit("max-steps=5").is_err());
        assert!(parse_cli_limit("max-files").is_err());
        assert!(parse_cli_limit("max-files=0").is_err());
        for k in schema::limit_keys() {
            assert!(hard_ceiling(k) >= limit_value(&Config::default(), k), "{k}");
        }
    }

    #[test]
    fn a_bad_limit_is_located() {
        let e = parse("limits:\n  max-render-seconds: 0\n").err();
        assert!(
            e.as_ref()
                .is_some_and(|e| e.message.contains("positive integer")
                    && e.span.is_some_and(|s| s.start == 30)),
            "{e:?}"
        );
        let e = parse("limits:\n  max-steps: 5\n").err();
        assert!(
            e.is_some_and(|e| e.message.contains("unknown limit `max-steps`")
                && e.message.contains("max-template-steps"))
        );
    }

    /// `(line, message)` of a config error, for the located-error tests.
    fn error_at(text: &str) -> Option<(usize, String)> {
        let map = SourceMap::new();
        let id = map.add_text(".gitops-lint.yaml", text);
        let e = Config::parse(&map, id, &[]).err()?;
        Some((map.line_col(e.span?).line, e.message))
    }

    #[test]
    fn profile_reads_argo_version_namespaces_and_autoscalers() {
        let cfg = parse(
            "profile:\n  argo-version: v3.1.2\n  kube-version: 1.30\n  namespaces:\n    shop:\n      labels: {team: shop, tier: '1'}\n  autoscalers:\n    - {kind: ScaledObject, name: q, namespace: shop, target: {name: worker}, max-replicas: 4}\n",
        )
        .unwrap_or_default();
        let p = &cfg.profile;
        assert_eq!(
            p.argo_version
                .as_ref()
                .map(|v| (v.major, v.minor, v.before(3, 0))),
            Some((3, 1, false))
        );
        assert_eq!(p.kube_version.as_deref(), Some("1.30"), "not the float 1.3");
        let cfg = parse("profile:\n  argo-version: 2.10\n").unwrap_or_default();
        assert_eq!(
            cfg.profile.argo_version.map(|v| (v.major, v.minor)),
            Some((2, 10))
        );
        let labels: Vec<(&str, &str)> = p.namespaces[0]
            .labels
            .iter()
            .map(|(k, v, _)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(labels, [("team", "shop"), ("tier", "1")]);
        let a = &p.autoscalers[0];
        assert_eq!(
            (
                a.kind.as_str(),
                a.target_group.as_str(),
                a.target_kind.as_str(),
                a.target_name.as_str(),
                a.min_replicas,
                a.max_replicas
            ),
            (
                "ScaledObject",
                "apps",
                "Deployment",
                "worker",
                None,
                Some(4)
            )
        );
    }

    #[test]
    fn bad_profile_keys_are_located() {
        let cases: &[(&str, usize, &str)] = &[
            (
                "profile:\n  argo: 3\n",
                2,
                "unknown key `argo` in `profile`",
            ),
            (
                "profile:\n  argo-version: latest\n",
                2,
                "`profile.argo-version` is not an Argo CD version",
            ),
            (
                "profile:\n  namespaces:\n    shop:\n      label: {a: b}\n",
                4,
                "unknown key `label` in `profile.namespaces.shop`",
            ),
            (
                "profile:\n  namespaces:\n    shop:\n      labels: {a: [b]}\n",
                4,
                "labels values must be strings",
            ),
            (
                "profile:\n  namespaces: [shop]\n",
                2,
                "must map namespace names",
            ),
            (
                "profile:\n  autoscalers:\n    - name: a\n      namespace: b\n      target: {name: c}\n      minReplicas: 2\n",
                6,
                "unknown key `minReplicas`",
            ),
            (
                "profile:\n  autoscalers:\n    - name: a\n      namespace: b\n      kind: VerticalPodAutoscaler\n      target: {name: c}\n",
                5,
                "`kind` must be HorizontalPodAutoscaler or ScaledObject",
            ),
            (
                "profile:\n  autoscalers:\n    - name: a\n      target: {name: c}\n",
                3,
                "needs `name` and `namespace`",
            ),
            (
                "profile:\n  autoscalers:\n    - name: a\n      namespace: b\n      target: {kind: Deployment}\n",
                5,
                "`target` needs a `name`",
            ),
            (
                "profile:\n  autoscalers:\n    - name: a\n      namespace: b\n      target: {name: c}\n      max-replicas: many\n",
                6,
                "`max-replicas` must be a whole number",
            ),
        ];
        for (text, line, message) in cases {
            let got = error_at(text);
            assert!(
                got.as_ref()
                    .is_some_and(|(l, m)| l == line && m.contains(message)),
                "{text:?}: {got:?}"
            );
        }
    }
}
