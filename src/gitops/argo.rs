//! Argo CD objects read from the repo: Application, ApplicationSet (its template, first
//! cut: not expanded), and argocd-cm settings (catalog A1).

use super::ignore::{IgnoreEntry, IgnoreOrigin};
use crate::object::Object;
use crate::source::{SourceMap, Span};
use crate::yaml::{Limits, Node, parse_str};

pub fn is_argo_app(obj: &Object) -> bool {
    obj.group() == "argoproj.io" && obj.kind == "Application"
}
pub fn is_argo_appset(obj: &Object) -> bool {
    obj.group() == "argoproj.io" && obj.kind == "ApplicationSet"
}

#[derive(Clone, Debug, Default)]
pub struct SyncPolicy {
    /// `automated` present and not `enabled: false`.
    pub automated: bool,
    pub self_heal: bool,
    pub prune: bool,
    /// `syncOptions[]` items (nodes, to report on the exact line).
    pub options: Vec<Node>,
    /// Span of `syncPolicy` (or the spec when absent), where a fix adds options.
    pub span: Option<Span>,
}

impl SyncPolicy {
    pub fn has_option(&self, exact: &str) -> bool {
        self.options.iter().any(|o| o.as_str() == Some(exact))
    }
}

#[derive(Clone, Debug)]
pub struct ArgoSource {
    pub repo_url: Option<String>,
    pub path: Option<String>,
    pub path_span: Option<Span>,
    pub chart: Option<String>,
    pub target_revision: Option<String>,
    pub ref_name: Option<String>,
    /// `directory.recurse`
    pub recurse: bool,
    pub include: Option<String>,
    pub exclude: Option<String>,
    pub node: Node,
    /// Set by discovery: the source is this repository (catalog A1.9).
    pub local: bool,
}

/// The Argo-specific part of an app: read from the Application (or ApplicationSet template).
#[derive(Clone, Debug)]
pub struct ArgoApp {
    /// The Application / ApplicationSet object as written.
    pub decl: Object,
    pub from_appset: bool,
    pub sources: Vec<ArgoSource>,
    pub sync: SyncPolicy,
    pub ignores: Vec<IgnoreEntry>,
}

fn source_from(node: &Node) -> ArgoSource {
    let dir = node.get("directory");
    ArgoSource {
        repo_url: node.get_str("repoURL").map(str::to_string),
        path: node.get("path").and_then(Node::scalar_text),
        path_span: node.get("path").map(|n| n.span),
        chart: node.get_str("chart").map(str::to_string),
        target_revision: node.get("targetRevision").and_then(Node::scalar_text),
        ref_name: node.get_str("ref").map(str::to_string),
        recurse: dir
            .and_then(|d| d.get("recurse"))
            .and_then(Node::as_bool)
            .unwrap_or(false),
        include: dir.and_then(|d| d.get_str("include")).map(str::to_string),
        exclude: dir.and_then(|d| d.get_str("exclude")).map(str::to_string),
        node: node.clone(),
        local: false,
    }
}

/// Read the app part of an Application spec (for an ApplicationSet: its template's spec).
/// `automated.enabled` exists since Argo CD 3.1 (catalog A1.5); `reads_enabled` false is an
/// older release, whose CRD prunes the field, so `automated` is on whatever it says.
pub fn read_app_spec(
    decl: &Object,
    spec: &Node,
    from_appset: bool,
    reads_enabled: bool,
) -> ArgoApp {
    let mut sources = Vec::new();
    if let Some(items) = spec.get("sources").and_then(Node::as_seq) {
        sources.extend(items.iter().map(source_from));
    } else if let Some(src) = spec.get("source") {
        sources.push(source_from(src));
    }
    let mut sync = SyncPolicy::default();
    if let Some(sp) = spec.get("syncPolicy") {
        sync.span = Some(sp.span);
        if let Some(auto) = sp.get("automated") {
            let enabled =
                !reads_enabled || auto.get("enabled").and_then(Node::as_bool).unwrap_or(true);
            sync.automated = enabled;
            sync.self_heal = enabled && auto.get("selfHeal").and_then(Node::as_bool) == Some(true);
            sync.prune = enabled && auto.get("prune").and_then(Node::as_bool) == Some(true);
        }
        if let Some(opts) = sp.get("syncOptions").and_then(Node::as_seq) {
            sync.options = opts.to_vec();
        }
    }
    let ignores = spec
        .get("ignoreDifferences")
        .and_then(Node::as_seq)
        .map(|items| {
            items
                .iter()
                .map(|i| IgnoreEntry::from_item(i, IgnoreOrigin::App))
                .collect()
        })
        .unwrap_or_default();
    ArgoApp {
        decl: decl.clone(),
        from_appset,
        sources,
        sync,
        ignores,
    }
}

/// Argo CD settings from an `argocd-cm` ConfigMap in the repo (catalog A1.4).
#[derive(Clone, Debug, Default)]
pub struct ArgoSettings {
    /// The ConfigMap, when the repo has one.
    pub decl: Option<Object>,
    pub instance_label_key: Option<String>,
    pub tracking_method: Option<String>,
    /// System-level ignore entries (`resource.customizations.ignoreDifferences.*`).
    pub ignores: Vec<IgnoreEntry>,
    /// Problems that make Argo's `GetResourceOverrides` fail (every app goes Unknown).
    pub override_errors: Vec<(Span, String)>,
}

pub fn is_argocd_cm(obj: &Object) -> bool {
    obj.kind == "ConfigMap" && obj.group().is_empty() && obj.name == "argocd-cm"
}

const CUSTOMIZATION_TYPES: &[&str] = &[
    "health",
    "useOpenLibs",
    "actions",
    "ignoreDifferences",
    "ignoreResourceUpdates",
    "knownTypeFields",
];

pub fn read_argocd_cm(obj: &Object, map: &SourceMap) -> ArgoSettings {
    let mut s = ArgoSettings {
        decl: Some(obj.clone()),
        ..Default::default()
    };
    let Some(data) = obj.root.get("data").and_then(Node::as_map) else {
        return s;
    };
    for entry in data {
        let key = entry.key.key_str().into_owned();
        let value = &entry.value;
        match key.as_str() {
            "application.instanceLabelKey" => s.instance_label_key = value.scalar_text(),
            "application.resourceTrackingMethod" => s.tracking_method = value.scalar_text(),
            "resource.customizations" => {
                read_legacy_customizations(&mut s, entry.key.span, value, map)
            }
            _ => {}
        }
        let Some(rest) = key.strip_prefix("resource.customizations.") else {
            continue;
        };
        let (kind_of, group_kind) = rest.split_once('.').unwrap_or((rest, ""));
        if !CUSTOMIZATION_TYPES.contains(&kind_of) {
            s.override_errors.push((
                entry.key.span,
                format!("resource customization type `{kind_of}` is not supported"),
            ));
            continue;
        }
        if kind_of != "ignoreDifferences" {
            continue;
        }
        let (group, kind) = if group_kind == "all" {
            (Some("*".to_string()), Some("*".to_string()))
        } else {
            match group_kind.split('_').collect::<Vec<_>>().as_slice() {
                [kind] => (None, Some(kind.to_string())),
                [group, kind] => (Some(group.to_string()), Some(kind.to_string())),
                _ => {
                    s.override_errors.push((
                        entry.key.span,
                        format!("malformed group_kind `{group_kind}` (more than one `_`)"),
                    ));
                    continue;
                }
            }
        };
        match parse_embedded(value, map, &key) {
            Ok(parsed) => s.ignores.push(IgnoreEntry::from_system(
                &key,
                entry.key.span,
                group,
                kind,
                &parsed,
            )),
            Err(msg) => s.override_errors.push((value.span, msg)),
        }
    }
    s
}

/// The legacy single key: a YAML map keyed `group/Kind` whose `ignoreDifferences` values
/// must be YAML strings.
fn read_legacy_customizations(s: &mut ArgoSettings, key_span: Span, value: &Node, map: &SourceMap) {
    let parsed = match parse_embedded(value, map, "resource.customizations") {
        Ok(p) => p,
        Err(msg) => {
            s.override_errors.push((value.span, msg));
            return;
        }
    };
    let Some(entries) = parsed.as_map() else {
        return;
    };
    for e in entries {
        let gk = e.key.key_str().into_owned();
        let Some(ignore) = e.value.get("ignoreDifferences") else {
            continue;
        };
        let inner = match ignore.as_str() {
            Some(text) => parse_str(text, key_span.file, &Limits::default())
                .docs
                .into_iter()
                .next()
                .map(|d| d.root),
            None => {
                s.override_errors.push((
                    key_span,
                    format!(
                        "`resource.customizations` entry `{gk}`: ignoreDifferences must be a YAML string, not a mapping"
                    ),
                ));
                continue;
            }
        };
        let (group, kind) = match gk.split_once('/') {
            Some((g, k)) => (Some(g.to_string()), Some(k.to_string())),
            None => (None, Some(gk.clone())),
        };
        if let Some(inner) = inner {
            s.ignores.push(IgnoreEntry::from_system(
                "resource.customizations",
                key_span,
                group,
                kind,
                &inner,
            ));
        }
    }
}

/// Values in argocd-cm are strings holding YAML: parse them as their own (virtual) file.
fn parse_embedded(value: &Node, map: &SourceMap, key: &str) -> Result<Node, String> {
    let Some(text) = value.as_str() else {
        return Err(format!("`{key}` must be a string holding YAML"));
    };
    let parent = map.get(value.span.file);
    let file = map.add(crate::source::SourceFile::new(
        format!("{}#{key}", parent.path),
        text.to_string(),
        crate::source::Origin::Virtual,
    ));
    let parsed = parse_str(text, file, &Limits::default());
    if let Some(err) = parsed.error {
        return Err(format!("`{key}` does not parse as YAML: {}", err.message));
    }
    Ok(parsed
        .docs
        .into_iter()
        .next()
        .map(|d| d.root)
        .unwrap_or_else(|| Node::new(crate::yaml::Value::Null, value.span)))
}

/// With no git remote, the `repoURL` most of the repo's Applications use for source paths
/// that exist here (ties: the first in file order).
pub fn majority_repo_url(
    plain: &[(Object, String)],
    fs: &dyn crate::source::RepoFs,
) -> Option<String> {
    let mut counts: Vec<(String, String, usize)> = Vec::new();
    for (o, _) in plain.iter().filter(|(o, _)| is_argo_app(o)) {
        let Some(spec) = o.root.get("spec") else {
            continue;
        };
        let sources: Vec<&Node> = match spec.get("sources").and_then(Node::as_seq) {
            Some(s) => s.iter().collect(),
            None => spec.get("source").into_iter().collect(),
        };
        for s in sources {
            let (Some(url), Some(path)) = (
                s.get("repoURL").and_then(Node::scalar_text),
                s.get("path").and_then(Node::scalar_text),
            ) else {
                continue;
            };
            if !crate::source::normalize_relative(&path).is_some_and(|p| fs.is_dir(&p)) {
                continue;
            }
            let key = super::remotes::normalize_url(&url);
            match counts.iter_mut().find(|(k, _, _)| *k == key) {
                Some(c) => c.2 += 1,
                None => counts.push((key, url, 1)),
            }
        }
    }
    let best = counts.iter().map(|c| c.2).max()?;
    counts.into_iter().find(|c| c.2 == best).map(|c| c.1)
}
