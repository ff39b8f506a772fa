//! ApplicationSet expansion offline: list, git directories and git files
//! (against this repo's tree), matrix and merge of those. Other generators (clusters, SCM,
//! pull requests, plugins, cluster decision resources) cannot be expanded offline: the
//! template is linted once with placeholder values and the app set gets an
//! `offline-unrenderable-input` warning naming the generator.

use crate::object::Object;
use crate::render::{IssueKind, RenderIssue};
use crate::source::{FileId, SourceMap, Span};
use crate::yaml::{Limits, Node, Value, parse_str};
use serde_json::{Map as JMap, Value as J};

/// What the expander needs to know about the repo.
pub struct RepoTree<'a> {
    /// Repo-relative paths of the files read by the walk.
    pub files: &'a [(FileId, String)],
    pub map: &'a SourceMap,
    /// Argo CD cluster Secrets declared in the repo (`argocd.argoproj.io/secret-type: cluster`).
    pub clusters: &'a [Object],
}

impl RepoTree<'_> {
    fn dirs(&self) -> Vec<String> {
        let mut dirs: Vec<String> = Vec::new();
        for (_, p) in self.files {
            let mut d = p.as_str();
            while let Some((parent, _)) = d.rsplit_once('/') {
                dirs.push(parent.to_string());
                d = parent;
            }
        }
        dirs.sort();
        dirs.dedup();
        dirs
    }
}

/// Renders one template string with a parameter set (Go template or fasttemplate).
pub type TemplateFn<'a> = &'a dyn Fn(&str, &J) -> Result<String, String>;

pub struct Expansion {
    /// Generated Applications, with their parameters.
    pub apps: Vec<(Object, J)>,
    pub issues: Vec<RenderIssue>,
    /// The template could not be expanded for every element; it was linted with placeholders.
    pub placeholder: bool,
}

const MAX_ELEMENTS: usize = 5_000;

fn glob(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern.trim_start_matches('/'))
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

fn path_params(path: &str, file: Option<&str>) -> J {
    let basename = path.rsplit('/').next().unwrap_or(path);
    let normalize = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect::<String>()
    };
    let mut m = JMap::new();
    m.insert("path".into(), J::String(path.into()));
    m.insert("basename".into(), J::String(basename.into()));
    m.insert("basenameNormalized".into(), J::String(normalize(basename)));
    m.insert(
        "segments".into(),
        J::Array(path.split('/').map(|s| J::String(s.into())).collect()),
    );
    if let Some(f) = file {
        m.insert("filename".into(), J::String(f.into()));
        m.insert("filenameNormalized".into(), J::String(normalize(f)));
    }
    J::Object(m)
}

/// Evaluate one generator into parameter sets, or say why it cannot be expanded offline.
fn generate(generator: &Node, tree: &RepoTree, depth: usize) -> Result<Vec<J>, (Span, String)> {
    let Some(entries) = generator.as_map() else {
        return Err((generator.span, "generator is not a mapping".into()));
    };
    let Some(first) = entries.first() else {
        return Err((generator.span, "empty generator".into()));
    };
    let kind = first.key.key_str().into_owned();
    let body = &first.value;
    match kind.as_str() {
        "list" => {
            let mut out = Vec::new();
            for el in body
                .get("elements")
                .and_then(Node::as_seq)
                .unwrap_or_default()
            {
                out.push(el.to_json());
            }
            if let Some(text) = body.get_str("elementsYaml") {
                let parsed = parse_str(text, body.span.file, &Limits::default());
                for d in parsed.docs {
                    if let Some(items) = d.root.as_seq() {
                        out.extend(items.iter().map(Node::to_json));
                    }
                }
            }
            Ok(out)
        }
        "git" => {
            let mut out = Vec::new();
            if let Some(dirs) = body.get("directories").and_then(Node::as_seq) {
                // Argo CD's filterApps: a directory is generated when it matches an include
                // pattern and no exclude pattern (exclude wins whatever the order), in the
                // order of the repository's directories; one pass over them.
                let mut patterns = Vec::new();
                for d in dirs {
                    let Some(pattern) = d.get_str("path") else {
                        continue;
                    };
                    let Some(g) = glob(pattern) else {
                        return Err((d.span, format!("invalid path pattern `{pattern}`")));
                    };
                    let exclude = d.get("exclude").and_then(Node::as_bool) == Some(true);
                    patterns.push((g, exclude));
                }
                // Directories whose name begins with `.` (`.git`, `.github`) are never listed.
                for dir in tree
                    .dirs()
                    .into_iter()
                    .filter(|d| !d.split('/').any(|p| p.starts_with('.')))
                {
                    let matching = patterns.iter().filter(|(g, _)| g.is_match(&dir));
                    let (mut include, mut exclude) = (false, false);
                    for (_, ex) in matching {
                        if *ex {
                            exclude = true;
                        } else {
                            include = true;
                        }
                    }
                    if include && !exclude {
                        let mut m = JMap::new();
                        m.insert("path".into(), path_params(&dir, None));
                        out.push(J::Object(m));
                    }
                }
            }
            if let Some(files) = body.get("files").and_then(Node::as_seq) {
                for f in files {
                    let Some(pattern) = f.get_str("path") else {
                        continue;
                    };
                    let Some(g) = glob(pattern) else {
                        return Err((f.span, format!("invalid path pattern `{pattern}`")));
                    };
                    for (id, path) in tree.files {
                        if !g.is_match(path) {
                            continue;
                        }
                        let src = tree.map.get(*id);
                        let parsed = parse_str(&src.text, *id, &Limits::default());
                        for d in parsed.docs {
                            let mut params = match d.root.to_json() {
                                J::Object(m) => m,
                                _ => continue,
                            };
                            let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
                            params.insert("path".into(), path_params(dir, Some(file)));
                            out.push(J::Object(params));
                        }
                    }
                }
            }
            Ok(out)
        }
        "matrix" | "merge" if depth < 3 => {
            let gens = body
                .get("generators")
                .and_then(Node::as_seq)
                .unwrap_or_default();
            let mut sets = Vec::new();
            for g in gens {
                sets.push(generate(g, tree, depth + 1)?);
            }
            if kind == "matrix" {
                // Past the limit one more element is kept, so `expand` sees the set was cut.
                let mut acc: Vec<J> = vec![J::Object(JMap::new())];
                for set in sets {
                    let mut next = Vec::new();
                    'product: for a in &acc {
                        for b in &set {
                            next.push(merge_json(a, b));
                            if next.len() > MAX_ELEMENTS {
                                break 'product;
                            }
                        }
                    }
                    acc = next;
                }
                Ok(acc)
            } else {
                let keys: Vec<String> = body
                    .get("mergeKeys")
                    .and_then(Node::as_seq)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(Node::scalar_text)
                    .collect();
                let mut iter = sets.into_iter();
                let mut base = iter.next().unwrap_or_default();
                for other in iter {
                    for b in base.iter_mut() {
                        if let Some(o) = other
                            .iter()
                            .find(|o| keys.iter().all(|k| lookup(o, k) == lookup(b, k)))
                        {
                            *b = merge_json(b, o);
                        }
                    }
                }
                Ok(base)
            }
        }
        "clusters" => Ok(cluster_params(body, tree.clusters)),
        other => Err((
            first.key.span,
            format!(
                "the `{other}` generator needs a live cluster or an external service; the template is linted once with placeholder values"
            ),
        )),
    }
}

/// Is this an Argo CD cluster Secret?
pub fn is_cluster_secret(o: &Object) -> bool {
    o.kind == "Secret" && o.label("argocd.argoproj.io/secret-type") == Some("cluster")
}

/// A `selector`'s `matchLabels` and `matchExpressions` (In, NotIn, Exists, DoesNotExist).
fn selector_matches(selector: Option<&Node>, labels: &JMap<String, J>) -> bool {
    let Some(sel) = selector else { return true };
    let label = |k: &str| labels.get(k).and_then(J::as_str);
    let by_labels = sel
        .get("matchLabels")
        .and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .all(|e| label(&e.key.key_str()) == e.value.scalar_text().as_deref());
    let by_exprs = sel
        .get("matchExpressions")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .all(|x| {
            let key = x.get_str("key").unwrap_or_default();
            let values: Vec<String> = x
                .get("values")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(Node::scalar_text)
                .collect();
            let v = label(key);
            match x.get_str("operator").unwrap_or_default() {
                "In" => v.is_some_and(|v| values.iter().any(|x| x == v)),
                "NotIn" => !v.is_some_and(|v| values.iter().any(|x| x == v)),
                "Exists" => v.is_some(),
                "DoesNotExist" => v.is_none(),
                _ => false,
            }
        });
    by_labels && by_exprs
}

/// The `clusters` generator over the repo's cluster Secrets: `name`, `nameNormalized`,
/// `server`, `project`, `metadata.labels/annotations` and the generator's `values` (each
/// itself a template over those). With no matching Secret the generator yields one
/// placeholder cluster named for it, so the template is still linted (the caller reports
/// that the real clusters are unknown).
fn cluster_params(body: &Node, secrets: &[Object]) -> Vec<J> {
    let selector = body.get("selector");
    let mut out = Vec::new();
    for s in secrets.iter().filter(|s| is_cluster_secret(s)) {
        let meta_map = |k: &str| -> JMap<String, J> {
            s.metadata()
                .and_then(|m| m.get(k))
                .and_then(Node::as_map)
                .unwrap_or_default()
                .iter()
                .filter_map(|e| {
                    Some((
                        e.key.key_str().into_owned(),
                        J::String(e.value.scalar_text()?),
                    ))
                })
                .collect()
        };
        let labels = meta_map("labels");
        if !selector_matches(selector, &labels) {
            continue;
        }
        let field = |k: &str| super::cluster::cluster_secret_field(s, k);
        let name = field("name").unwrap_or_else(|| s.name.clone());
        out.push(cluster_param_set(
            body,
            &name,
            &field("server").unwrap_or_default(),
            field("project"),
            labels,
            meta_map("annotations"),
        ));
    }
    if out.is_empty() {
        let mut labels = JMap::new();
        for e in selector
            .and_then(|s| s.get("matchLabels"))
            .and_then(Node::as_map)
            .unwrap_or_default()
        {
            if let Some(v) = e.value.scalar_text() {
                labels.insert(e.key.key_str().into_owned(), J::String(v));
            }
        }
        out.push(cluster_param_set(
            body,
            super::cluster::STAND_IN_NAME,
            super::cluster::STAND_IN_SERVER,
            None,
            labels,
            JMap::new(),
        ));
    }
    out
}

fn cluster_param_set(
    body: &Node,
    name: &str,
    server: &str,
    project: Option<String>,
    labels: JMap<String, J>,
    annotations: JMap<String, J>,
) -> J {
    let normalized: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let mut p = JMap::new();
    p.insert("name".into(), J::String(name.into()));
    p.insert("nameNormalized".into(), J::String(normalized));
    p.insert("server".into(), J::String(server.into()));
    p.insert("project".into(), J::String(project.unwrap_or_default()));
    let mut meta = JMap::new();
    meta.insert("labels".into(), J::Object(labels));
    meta.insert("annotations".into(), J::Object(annotations));
    p.insert("metadata".into(), J::Object(meta));
    let base = J::Object(p.clone());
    let mut values = JMap::new();
    for e in body
        .get("values")
        .and_then(Node::as_map)
        .unwrap_or_default()
    {
        let raw = e.value.scalar_text().unwrap_or_default();
        let v = fasttemplate(&raw, &base).unwrap_or(raw);
        values.insert(e.key.key_str().into_owned(), J::String(v));
    }
    p.insert("values".into(), J::Object(values));
    J::Object(p)
}

fn lookup<'a>(v: &'a J, dotted: &str) -> Option<&'a J> {
    dotted.split('.').try_fold(v, |acc, k| acc.get(k))
}

fn merge_json(a: &J, b: &J) -> J {
    match (a, b) {
        (J::Object(x), J::Object(y)) => {
            let mut m = x.clone();
            for (k, v) in y {
                let merged = match m.get(k) {
                    Some(old) => merge_json(old, v),
                    None => v.clone(),
                };
                m.insert(k.clone(), merged);
            }
            J::Object(m)
        }
        (_, b) => b.clone(),
    }
}

/// Flatten nested parameters for fasttemplate (`path.basename`, `path[0]`, `values.x`).
pub fn flatten(v: &J) -> Vec<(String, String)> {
    fn go(prefix: &str, v: &J, out: &mut Vec<(String, String)>) {
        match v {
            J::Object(m) => {
                for (k, child) in m {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    // the directory itself is `{{path}}`, its fields `{{path.basename}}`
                    if k == "path" && child.is_object() {
                        if let Some(p) = child.get("path").and_then(J::as_str) {
                            out.push((key.clone(), p.to_string()));
                        }
                        if let Some(segs) = child.get("segments").and_then(J::as_array) {
                            for (i, s) in segs.iter().enumerate() {
                                out.push((format!("{key}[{i}]"), s.as_str().unwrap_or("").into()));
                            }
                        }
                        for (f, fv) in child.as_object().into_iter().flatten() {
                            if f != "path" && f != "segments" {
                                go(&format!("{key}.{f}"), fv, out);
                            }
                        }
                        continue;
                    }
                    go(&key, child, out);
                }
            }
            J::String(s) => out.push((prefix.to_string(), s.clone())),
            J::Null => out.push((prefix.to_string(), String::new())),
            other => out.push((prefix.to_string(), other.to_string())),
        }
    }
    let mut out = Vec::new();
    go("", v, &mut out);
    out
}

/// fasttemplate as the ApplicationSet controller uses it: `{{ key }}` replaced when the key
/// is a parameter, left as it is otherwise.
pub fn fasttemplate(text: &str, params: &J) -> Result<String, String> {
    let flat = flatten(params);
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find("}}") {
            Some(end) => {
                let key = after[..end].trim();
                match flat.iter().find(|(k, _)| k == key) {
                    Some((_, v)) => out.push_str(v),
                    None => out.push_str(&rest[i..i + 2 + end + 2]),
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Apply a template function to every string (and key) of a tree; spans stay on the
/// template, which is the line a person edits.
fn apply(node: &Node, params: &J, render: TemplateFn) -> Result<Node, String> {
    let mut n = node.clone();
    let mut stack: Vec<&mut Node> = vec![&mut n];
    while let Some(cur) = stack.pop() {
        if let Value::String(s) = &cur.value
            && s.contains("{{")
        {
            let out = render(s, params)?;
            cur.value = Value::String(out);
            continue;
        }
        match &mut cur.value {
            Value::Seq(items) => stack.extend(items.iter_mut()),
            Value::Map(entries) => {
                for e in entries.iter_mut() {
                    if let Value::String(k) = &e.key.value
                        && k.contains("{{")
                    {
                        e.key.value = Value::String(render(k, params)?);
                    }
                    stack.push(&mut e.value);
                }
            }
            _ => {}
        }
    }
    Ok(n)
}

/// Build the Application that a template produces for one parameter set.
fn application(appset: &Object, template: &Node) -> Option<Object> {
    let mut root = template.clone();
    if let Value::Map(entries) = &mut root.value {
        let api = Node::string(appset.api_version.clone(), appset.root.span);
        let kind = Node::string("Application", appset.root.span);
        entries.insert(
            0,
            crate::yaml::Entry {
                key: Node::string("apiVersion", appset.root.span),
                value: api,
            },
        );
        entries.insert(
            1,
            crate::yaml::Entry {
                key: Node::string("kind", appset.root.span),
                value: kind,
            },
        );
    }
    Object::from_node(root)
}

/// Does this generator (or one nested in a matrix/merge) fall back to the placeholder cluster?
fn uses_placeholder_cluster(g: &Node, tree: &RepoTree) -> bool {
    let Some(first) = g.as_map().and_then(|m| m.first()) else {
        return false;
    };
    match first.key.key_str().as_ref() {
        "clusters" => {
            let selector = first.value.get("selector");
            !tree.clusters.iter().any(|s| {
                let labels: JMap<String, J> = s
                    .metadata()
                    .and_then(|m| m.get("labels"))
                    .and_then(Node::as_map)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|e| {
                        Some((
                            e.key.key_str().into_owned(),
                            J::String(e.value.scalar_text()?),
                        ))
                    })
                    .collect();
                is_cluster_secret(s) && selector_matches(selector, &labels)
            })
        }
        "matrix" | "merge" => first
            .value
            .get("generators")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .any(|n| uses_placeholder_cluster(n, tree)),
        _ => false,
    }
}

pub fn expand(appset: &Object, tree: &RepoTree, go_template: Option<TemplateFn>) -> Expansion {
    let mut exp = Expansion {
        apps: Vec::new(),
        issues: Vec::new(),
        placeholder: false,
    };
    let Some(spec) = appset.root.get("spec") else {
        return exp;
    };
    let Some(template) = spec.get("template") else {
        return exp;
    };
    let is_go = spec.get("goTemplate").and_then(Node::as_bool) == Some(true);
    let fast: &dyn Fn(&str, &J) -> Result<String, String> = &fasttemplate;
    let render: TemplateFn = if is_go {
        match go_template {
            Some(f) => f,
            None => fast,
        }
    } else {
        fast
    };
    let mut params: Vec<J> = Vec::new();
    for g in spec
        .get("generators")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        match generate(g, tree, 0) {
            Ok(p) => {
                if uses_placeholder_cluster(g, tree) {
                    exp.issues.push(RenderIssue {
                        kind: IssueKind::InCluster,
                        // One input for every ApplicationSet that lists them: one finding.
                        input: crate::render::MissingInput::vendor_only("Argo CD's cluster Secrets"),
                        span: g.span,
                        message: "the `clusters` generator lists Argo CD's cluster Secrets and none in the repository match; the template is expanded once, for a cluster named `clusters-generator`".into(),
                    });
                }
                params.extend(p)
            }
            Err((span, message)) => {
                exp.issues.push(RenderIssue {
                    kind: IssueKind::Unrenderable,
                    input: None,
                    span,
                    message,
                });
                exp.placeholder = true;
            }
        }
    }
    if params.len() > MAX_ELEMENTS {
        // Only part of the set would be linted: an error, so the cut cannot pass a
        // `--fail-on error` check unseen (a limit hostile input hits, not an offline input).
        let at = spec
            .get("generators")
            .map(|g| g.span)
            .unwrap_or(appset.span());
        exp.issues.push(RenderIssue {
            kind: IssueKind::Failed,
            input: None,
            span: at,
            message: format!(
                "the generators make more than {MAX_ELEMENTS} parameter sets; only the first {MAX_ELEMENTS} Applications are linted"
            ),
        });
        params.truncate(MAX_ELEMENTS);
    }
    if exp.placeholder && params.is_empty() {
        // Lint the template once as written: placeholders stay in names and paths.
        if let Some(app) = application(appset, template) {
            exp.apps.push((app, J::Object(JMap::new())));
        }
        return exp;
    }
    for p in params {
        match apply(template, &p, render) {
            Ok(t) => {
                if let Some(app) = application(appset, &t) {
                    exp.apps.push((app, p));
                }
            }
            Err(message) => exp.issues.push(RenderIssue {
                kind: IssueKind::Failed,
                input: None,
                span: template.span,
                message: format!("ApplicationSet template: {message}"),
            }),
        }
    }
    exp
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As Argo CD's filterApps: include and exclude patterns match one level per `*`, an
    /// exclude wins whatever its place in the list, hidden directories are never listed,
    /// and the directories come in the repository's order.
    #[test]
    fn git_directories_are_filtered_as_argo_cd_does() {
        let map = SourceMap::new();
        let paths = [
            "apps/web/kustomization.yaml",
            "apps/api/kustomization.yaml",
            "apps/api/v2/kustomization.yaml",
            "apps/legacy/kustomization.yaml",
            "apps/.hidden/kustomization.yaml",
        ];
        let files: Vec<(FileId, String)> = paths
            .iter()
            .map(|p| (map.add_text(*p, "kind: Kustomization\n"), p.to_string()))
            .collect();
        let tree = RepoTree {
            files: &files,
            map: &map,
            clusters: &[],
        };
        let gen_file = map.add_text(
            "appset.yaml",
            "git:\n  directories:\n    - path: apps/legacy\n      exclude: true\n    - path: apps/*\n",
        );
        let doc = parse_str(&map.get(gen_file).text, gen_file, &Limits::default());
        let generator = &doc.docs[0].root;
        let out = generate(generator, &tree, 0).expect("generates");
        let dirs: Vec<String> = out
            .iter()
            .map(|p| p["path"]["path"].as_str().unwrap_or("").to_string())
            .collect();
        assert_eq!(dirs, ["apps/api", "apps/web"]);
    }

    #[test]
    fn fasttemplate_params() {
        let mut m = JMap::new();
        m.insert("path".into(), path_params("apps/payments", None));
        m.insert("cluster".into(), J::String("prod".into()));
        let p = J::Object(m);
        assert_eq!(
            fasttemplate("{{path.basename}}-{{ cluster }}", &p)
                .ok()
                .as_deref(),
            Some("payments-prod")
        );
        assert_eq!(
            fasttemplate("{{path}} {{path[0]}} {{unknown}}", &p)
                .ok()
                .as_deref(),
            Some("apps/payments apps {{unknown}}")
        );
    }
}
