//! The accumulator every build step writes into: `Acc` (resources, transformer config,
//! vars, the openapi choice), the `Builder` services the steps share (resolving and
//! reading entries under load restrictions, appending resources, the deadline), and `Fail`.
//! It imports none of the steps (generators, transformers, vars, Helm charts) that use it;
//! `build.rs` drives the steps.

use super::fieldspec::TransformerConfig;
use super::kustomization::{self, Item, Kustomization, display_dir, join};
use super::openapi::SchemaChoice;
use super::resource::Resource;
use super::tree;
use super::{BuildOptions, LoadRestrictions};
use crate::render::remote::mount_of;
use crate::render::{IssueKind, RemoteUse, RenderIssue};
use crate::source::is_within;
use crate::source::{FileId, FsError, RepoFs, Span};
use crate::yaml::{Limits, Node, Value, parse_file};

/// A `vars:` entry as declared, bound to the object it names.
#[derive(Clone, Debug)]
pub struct VarDef {
    pub name: String,
    pub kind: String,
    pub obj_name: String,
    pub api_version: String,
    pub namespace: String,
    pub field_path: String,
    pub span: Span,
    /// The object the var was bound to where it was declared.
    pub bound: u64,
}

/// Resources and configuration gathered so far.
#[derive(Clone)]
pub struct Acc {
    pub resources: Vec<Resource>,
    /// kustomize's builtin field specs plus every `configurations:`/`crds:` file seen.
    pub config: std::sync::Arc<TransformerConfig>,
    pub vars: Vec<VarDef>,
    /// The build's `openapi:` choice as this kustomization's patches see it.
    pub openapi: SchemaChoice,
    /// Remote inputs left out of this accumulation because they are not fetched (their
    /// [`RenderIssue::input`] names), here or in what it includes: a step that finds no target
    /// may be missing one of theirs ([`Builder::target_absent`]).
    pub left_out: Vec<crate::render::MissingInput>,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            resources: Vec::new(),
            config: TransformerConfig::shared_defaults().clone(),
            vars: Vec::new(),
            openapi: SchemaChoice::default(),
            left_out: Vec::new(),
        }
    }
}

/// A build stops at the first failure, as kustomize does; the issue says where.
pub type Fail = Box<RenderIssue>;

pub fn failed(span: Span, message: impl Into<String>) -> Fail {
    Box::new(RenderIssue {
        kind: IssueKind::Failed,
        input: None,
        span,
        message: message.into(),
    })
}

pub fn unrenderable(span: Span, message: impl Into<String>) -> Fail {
    Box::new(RenderIssue {
        kind: IssueKind::Unrenderable,
        input: None,
        span,
        message: message.into(),
    })
}

pub struct Builder<'a> {
    pub fs: &'a dyn RepoFs,
    pub opts: &'a BuildOptions,
    /// Directories being built, outermost first (cycle detection).
    pub(super) stack: Vec<String>,
    /// Every directory entered so far, in order, and the deepest the stack has been (what a
    /// shared sub-build records: `shared.rs`).
    pub(super) entered: Vec<String>,
    pub(super) deepest: usize,
    pub resource_count: usize,
    /// In-memory replacement for a kustomization file (Argo CD overrides).
    pub overlay: Option<(String, Node)>,
    /// The schema chosen by `openapi:` fields so far (one for the whole build).
    pub(super) openapi: std::cell::RefCell<SchemaChoice>,
    /// Remote inputs met so far (fetched or not), where each is named.
    pub remotes: std::cell::RefCell<Vec<RemoteUse>>,
    /// Remote entries left out because they are not fetched: the build goes on without them.
    pub skipped: std::cell::RefCell<Vec<RenderIssue>>,
}

/// Does an entry name a remote target kustomize would fetch?
pub fn looks_remote(s: &str) -> bool {
    s.contains("://")
        || s.starts_with("git@")
        || s.starts_with("github.com/")
        || s.starts_with("gitlab.com/")
        || s.starts_with("bitbucket.org/")
        || s.contains("?ref=")
        || s.contains(".git//")
        || s.ends_with(".git")
}

impl<'a> Builder<'a> {
    pub fn new(fs: &'a dyn RepoFs, opts: &'a BuildOptions) -> Builder<'a> {
        Builder {
            fs,
            opts,
            stack: Vec::new(),
            entered: Vec::new(),
            deepest: 0,
            resource_count: 0,
            overlay: None,
            openapi: std::cell::RefCell::new(SchemaChoice::default()),
            remotes: Default::default(),
            skipped: Default::default(),
        }
    }

    /// A step (patch, replacement source, replicas entry) that found no target. When remote
    /// inputs were left out of the accumulation the target may be one of theirs, and kustomize
    /// with the network would find it: the step is recorded against the input and skipped, the
    /// build goes on. Otherwise it fails, as kustomize does.
    pub fn target_absent(&self, acc: &Acc, fail: Fail) -> Result<(), Fail> {
        let Some(input) = acc.left_out.first() else {
            return Err(fail);
        };
        let mut issue = *fail;
        issue.kind = IssueKind::NotApplied;
        issue.message = format!(
            "{}: not applied offline, its target may come from {} (not fetched)",
            issue.message,
            acc.left_out
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        issue.input = Some(input.clone());
        self.skipped.borrow_mut().push(issue);
        Ok(())
    }

    /// Load and check the kustomization in `dir`; `from` is the entry that referred to it.
    pub fn load_kustomization(&self, dir: &str, from: Span) -> Result<Kustomization, Fail> {
        if let Some((odir, node)) = &self.overlay
            && odir == dir
            && let Ok(Some(path)) = kustomization::find_file(self.fs, dir)
            && let Ok(file) = self.fs.read(&path)
        {
            let is_component = node.get_str("kind") == Some("Component");
            return Ok(Kustomization {
                dir: dir.to_string(),
                file,
                root: node.clone(),
                is_component,
            });
        }
        let path = match kustomization::find_file(self.fs, dir) {
            Ok(Some(p)) => p,
            Ok(None) => {
                return Err(failed(
                    from,
                    format!(
                        "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
                        display_dir(dir)
                    ),
                ));
            }
            Err(m) => return Err(failed(from, m)),
        };
        kustomization::load(self.fs, dir, &path)
            .map_err(|(span, m)| failed(span.unwrap_or(from), m))
    }

    /// Resolve an entry to a repo path, checking that it stays inside the repository.
    pub fn resolve(&self, k: &Kustomization, item: &Item) -> Result<String, Fail> {
        let path = join(&k.dir, &item.text).ok_or_else(|| {
            failed(
                item.span,
                format!(
                    "'{}' is outside the repository (kustomization in '{}')",
                    item.text,
                    display_dir(&k.dir)
                ),
            )
        })?;
        // What a fetched base names stays inside its clone, as kustomize requires; and a
        // repository path never reaches into fetched content by a relative path.
        let (from, to) = (mount_of(&k.dir), mount_of(&path));
        if from != to {
            return Err(failed(
                item.span,
                match from {
                    Some(_) => format!(
                        "security; bases in kustomizations found in cloned git repos must be within the repo, but '{}' leaves it",
                        item.text
                    ),
                    None => format!("'{}' does not exist", item.text),
                },
            ));
        }
        Ok(path)
    }

    /// Files (not kustomizations) must sit in or below the kustomization's directory unless
    /// load restrictions are off.
    pub fn check_file_restriction(
        &self,
        k: &Kustomization,
        path: &str,
        item: &Item,
    ) -> Result<(), Fail> {
        if self.opts.load_restrictions == LoadRestrictions::RootOnly && !is_within(&k.dir, path) {
            return Err(failed(
                item.span,
                format!(
                    "security; file '{}' is not in or below '{}' (load restrictions: rootOnly)",
                    path,
                    display_dir(&k.dir)
                ),
            ));
        }
        Ok(())
    }

    /// Stop a build that has run past `limits.max-render-seconds`.
    pub(super) fn check_deadline(&self, at: Span) -> Result<(), Fail> {
        match self.opts.deadline {
            Some(d) if std::time::Instant::now() > d => Err(failed(
                at,
                "the build took longer than the time limit (limits.max-render-seconds)",
            )),
            _ => Ok(()),
        }
    }

    /// Add a resource, refusing a second one with the same id.
    pub fn append(&mut self, acc: &mut Acc, r: Resource, span: Span) -> Result<(), Fail> {
        self.resource_count += 1;
        if self.resource_count > self.opts.max_resources {
            return Err(failed(
                span,
                format!(
                    "the build has more than {} resources (limits.max-kustomize-resources)",
                    self.opts.max_resources
                ),
            ));
        }
        if self.resource_count.is_multiple_of(256) {
            self.check_deadline(span)?;
        }
        super::budget::charge(r.root.span.len() + super::budget::RESOURCE_BYTES)
            .map_err(|m| failed(span, m))?;
        if let Some(existing) = acc.resources.iter().find(|x| same_id(x, &r)) {
            return Err(failed(
                span,
                format!(
                    "may not add resource with an already registered id: {}",
                    existing.id_string()
                ),
            ));
        }
        acc.resources.push(r);
        Ok(())
    }
}

pub fn same_id(a: &Resource, b: &Resource) -> bool {
    a.kind() == b.kind()
        && a.group() == b.group()
        && a.version() == b.version()
        && a.name() == b.name()
        && a.effective_namespace() == b.effective_namespace()
}

pub fn fs_error(item: &Item, e: FsError) -> Fail {
    match e {
        FsError::OutsideRepo(_) => failed(
            item.span,
            format!("'{}' is outside the repository", item.text),
        ),
        FsError::NotFound(p) => failed(item.span, format!("'{}' does not exist ({p})", item.text)),
        FsError::Unreadable(p, why) => failed(
            item.span,
            format!("'{}' cannot be read ({p}: {why})", item.text),
        ),
    }
}

pub fn parse_docs(fs: &dyn RepoFs, file: FileId) -> Result<Vec<Node>, Fail> {
    let parsed = parse_file(fs.source_map(), file, &Limits::default());
    if let Some(err) = parsed.error {
        return Err(failed(
            err.span,
            format!(
                "invalid YAML in {}: {}",
                fs.source_map().path(file),
                err.message
            ),
        ));
    }
    if let Some(w) = parsed
        .warnings
        .iter()
        .find(|w| w.message.contains("duplicate"))
    {
        return Err(failed(
            w.span,
            format!(
                "invalid YAML in {}: {}",
                fs.source_map().path(file),
                w.message
            ),
        ));
    }
    let mut docs: Vec<Node> = parsed
        .docs
        .into_iter()
        .map(|d| d.root)
        .filter(|n| !n.is_null())
        .collect();
    for d in &mut docs {
        fold_like_go_yaml_v3(d);
    }
    Ok(docs)
}

/// kustomize reads resources with go-yaml v3, whose folded scalars (`>`) keep one line break
/// too many before a more-indented line that follows a line that is not: `a\n  b` reads as
/// `a\n\n  b` there (measured with kubectl kustomize v5.5; Helm's go-yaml v2 reads the spec's
/// value, which is what our parser gives).
fn fold_like_go_yaml_v3(node: &mut Node) {
    use crate::yaml::Style;
    match &mut node.value {
        Value::Map(entries) => entries
            .iter_mut()
            .for_each(|e| fold_like_go_yaml_v3(&mut e.value)),
        Value::Seq(items) => items.iter_mut().for_each(fold_like_go_yaml_v3),
        Value::String(s) if node.style == Style::Folded && s.contains("\n ") => {
            *s = v3_folded(s);
        }
        _ => {}
    }
}

fn v3_folded(value: &str) -> String {
    let indented = |l: &str| l.starts_with([' ', '\t']);
    let mut out = String::with_capacity(value.len() + 8);
    let mut prev: Option<&str> = None;
    for (i, line) in value.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            if indented(line) && prev.is_some_and(|p| !indented(p)) {
                out.push('\n');
            }
        }
        out.push_str(line);
        prev = Some(line);
    }
    out
}

/// Resources in one document (a `List` expands to its items).
pub fn resources_from_doc(doc: Node, origin: Span) -> Result<Vec<Resource>, Fail> {
    if doc.as_map().is_none() {
        return Err(failed(doc.span, "a resource must be a YAML map"));
    }
    let kind = doc
        .get("kind")
        .and_then(super::tree::text)
        .unwrap_or_default();
    if kind.ends_with("List")
        && let Some(items) = doc.get("items")
    {
        let mut out = Vec::new();
        if let Value::Seq(items) = &items.value {
            for i in items {
                out.extend(resources_from_doc(i.clone(), origin)?);
            }
        }
        return Ok(out);
    }
    if kind.is_empty() {
        return Err(failed(
            doc.span,
            "missing Resource metadata: the document has no 'kind'",
        ));
    }
    let mut doc = doc;
    stringify_metadata_maps(&mut doc);
    drop_empty_annotations(&mut doc);
    Ok(vec![Resource::new(doc, origin)])
}

/// kustomize keeps its own bookkeeping in an object's annotations while it builds and
/// drops the field when nothing else is left there, so an empty (or null) `annotations`
/// never reaches the output: not from a file, not from a patch.
pub fn drop_empty_annotations(doc: &mut Node) {
    if let Some(meta) = doc.get_mut("metadata")
        && meta.get("annotations").is_some_and(Node::is_empty_value)
    {
        super::tree::remove(meta, "annotations");
    }
}

/// Labels and annotations are string maps: kustomize reads `port: 8080` there as "8080".
fn stringify_metadata_maps(doc: &mut Node) {
    for field in ["labels", "annotations"] {
        stringify_metadata_map(doc, field);
    }
}

/// Read the scalars of `metadata.<field>` as the strings they were written as.
pub fn stringify_metadata_map(doc: &mut Node, field: &str) {
    let Some(meta) = doc.get_mut("metadata") else {
        return;
    };
    if let Some(Value::Map(entries)) = meta.get_mut(field).map(|m| &mut m.value) {
        for e in entries {
            let v = &mut e.value;
            if matches!(v.value, Value::Bool(_) | Value::Int(_) | Value::Float(_)) {
                let text = v.text_as_written().unwrap_or_default();
                v.value = Value::String(text);
                v.set_raw(None);
            }
        }
    }
}

/// The documents of an inline entry (`patches`, `generators`, `transformers` written as YAML
/// text or as a node in the kustomization), parsed as a virtual file named after it.
pub fn inline_docs(b: &Builder, k: &Kustomization, p: &Node) -> Result<Vec<Node>, Fail> {
    if p.as_seq().is_some() || p.as_map().is_some() {
        return Ok(vec![p.clone()]);
    }
    let text = tree::text(p).unwrap_or_default();
    let map = b.fs.source_map();
    let file = map.add(crate::source::SourceFile::new(
        format!("{}#inline", map.path(k.file)),
        text.clone(),
        crate::source::Origin::Virtual,
    ));
    let parsed = crate::yaml::parse_str(&text, file, &crate::yaml::Limits::default());
    if let Some(e) = parsed.error {
        return Err(failed(
            p.span,
            format!("invalid inline patch: {}", e.message),
        ));
    }
    let mut docs: Vec<Node> = parsed
        .docs
        .into_iter()
        .map(|d| d.root)
        .filter(|d| !d.is_null())
        .collect();
    for d in &mut docs {
        tree::set_spans(d, p.span);
    }
    Ok(docs)
}

#[cfg(test)]
mod fold_tests {
    #[test]
    fn more_indented_lines_of_folded_scalars_read_as_go_yaml_v3_reads_them() {
        // values kubectl kustomize v5.5 printed for these folded scalars
        assert_eq!(super::v3_folded("a\n  b\nc\n"), "a\n\n  b\nc\n");
        assert_eq!(super::v3_folded("a\n\n  b\nc\n"), "a\n\n\n  b\nc\n");
        assert_eq!(
            super::v3_folded("p\n  q\n  r\ns\n  t"),
            "p\n\n  q\n  r\ns\n\n  t"
        );
        assert_eq!(super::v3_folded("m n\no\n"), "m n\no\n");
    }
}
