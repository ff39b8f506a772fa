//! The build: load a kustomization, accumulate its resources (files, nested kustomizations,
//! components), then run its generators and transformers in kustomize's order.

use super::fieldspec::TransformerConfig;
use super::generators;
use super::kustomization::{self, Item, Kustomization, display_dir, is_within, join};
use super::openapi::{self, CustomSchema, SchemaChoice};
use super::resource::Resource;
use super::transform;
use super::vars::VarDef;
use super::{BuildOptions, LoadRestrictions};
use crate::remote::RemoteRef;
use crate::render::remote::mount_of;
use crate::render::{Fetched, IssueKind, RemoteUse, RenderIssue};
use crate::source::{FileId, FsError, RepoFs, Span};
use crate::yaml::{Limits, Node, Value, parse_file};

/// Resources and configuration gathered so far.
pub struct Acc {
    pub resources: Vec<Resource>,
    /// kustomize's builtin field specs plus every `configurations:`/`crds:` file seen.
    pub config: TransformerConfig,
    pub vars: Vec<VarDef>,
    /// The build's `openapi:` choice as this kustomization's patches see it.
    pub openapi: SchemaChoice,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            resources: Vec::new(),
            config: TransformerConfig::defaults().clone(),
            vars: Vec::new(),
            openapi: SchemaChoice::default(),
        }
    }
}

/// A build stops at the first failure, as kustomize does; the issue says where.
pub type Fail = Box<RenderIssue>;

pub fn failed(span: Span, message: impl Into<String>) -> Fail {
    Box::new(RenderIssue {
        kind: IssueKind::Failed,
        span,
        message: message.into(),
    })
}

pub fn unrenderable(span: Span, message: impl Into<String>) -> Fail {
    Box::new(RenderIssue {
        kind: IssueKind::Unrenderable,
        span,
        message: message.into(),
    })
}

/// An unrenderable input that would be fetched at its latest version on every build.
pub fn floating(span: Span, message: impl Into<String>, why: impl Into<String>) -> Fail {
    Box::new(RenderIssue {
        kind: IssueKind::Floating(why.into()),
        span,
        message: message.into(),
    })
}

pub struct Builder<'a> {
    pub fs: &'a dyn RepoFs,
    pub opts: &'a BuildOptions,
    /// Directories being built, outermost first (cycle detection).
    stack: Vec<String>,
    pub resource_count: usize,
    /// In-memory replacement for a kustomization file (Argo CD overrides).
    pub overlay: Option<(String, Node)>,
    /// The schema chosen by `openapi:` fields so far (one for the whole build).
    openapi: std::cell::RefCell<SchemaChoice>,
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
            resource_count: 0,
            overlay: None,
            openapi: std::cell::RefCell::new(SchemaChoice::default()),
            remotes: Default::default(),
            skipped: Default::default(),
        }
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

    /// Build the kustomization in `dir` into a fresh accumulator.
    pub fn build_dir(&mut self, dir: &str, from: Span) -> Result<Acc, Fail> {
        let k = self.load_kustomization(dir, from)?;
        if k.is_component {
            return Err(failed(
                from,
                format!(
                    "expected kind 'Kustomization' for path '{}' but got 'Component'",
                    display_dir(dir)
                ),
            ));
        }
        let mut acc = Acc::default();
        self.run(&k, &mut acc, from)?;
        Ok(acc)
    }

    fn enter(&mut self, dir: &str, from: Span) -> Result<(), Fail> {
        if self.stack.iter().any(|d| d == dir) {
            let mut chain = self.stack.clone();
            chain.push(dir.to_string());
            return Err(failed(
                from,
                format!(
                    "cycle detected: kustomizations refer to each other: {}",
                    chain.join(" -> ")
                ),
            ));
        }
        if self.stack.len() >= self.opts.max_depth {
            return Err(failed(
                from,
                format!(
                    "kustomizations nest deeper than {} levels at '{}' (limits.max-kustomize-depth)",
                    self.opts.max_depth,
                    display_dir(dir)
                ),
            ));
        }
        self.check_deadline(from)?;
        self.stack.push(dir.to_string());
        Ok(())
    }

    /// Accumulate one kustomization (or component) into `acc`.
    pub fn run(&mut self, k: &Kustomization, acc: &mut Acc, from: Span) -> Result<(), Fail> {
        self.enter(&k.dir, from)?;
        let result = self.run_inner(k, acc);
        self.stack.pop();
        result
    }

    fn run_inner(&mut self, k: &Kustomization, acc: &mut Acc) -> Result<(), Fail> {
        // The outermost kustomization's `openapi:` wins; below it, the first one met.
        let outermost = self.stack.len() == 1 && !k.is_component;
        self.choose_openapi(k, outermost)?;
        let mut entries = k.items("resources");
        entries.extend(k.items("bases"));
        for item in &entries {
            self.accumulate_resource(k, item, acc)?;
        }
        for item in k.items("components") {
            self.accumulate_component(k, &item, acc)?;
        }
        acc.openapi = self.openapi.borrow().clone();
        for item in k.items("configurations") {
            let docs = self.load_docs(k, &item)?;
            for d in docs {
                acc.config.merge(&TransformerConfig::from_node(&d));
            }
        }
        for item in k.items("crds") {
            let docs = self.load_docs(k, &item)?;
            for d in docs {
                super::crds::add_crd_config(&d, &mut acc.config);
            }
        }
        generators::run(self, k, acc)?;
        transform::run_builtin(self, k, acc)?;
        transform::run_configured(self, k, acc)?;
        transform::run_validators(self, k, acc)?;
        super::vars::collect(k, acc)?;
        Ok(())
    }

    /// Apply a kustomization's `openapi:` field as kustomize does: a schema file is read (and
    /// must exist) whenever it is named, but only the first choice counts unless `outermost`.
    fn choose_openapi(&self, k: &Kustomization, outermost: bool) -> Result<(), Fail> {
        let field = k.get("openapi");
        let schema = match field.and_then(|f| f.get("path")) {
            Some(p) => {
                let item = Item {
                    text: super::tree::text(p).unwrap_or_default(),
                    span: p.span,
                };
                let file = self.read_file(k, &item)?;
                Some(CustomSchema::load(self.fs.source_map(), file))
            }
            None => None,
        };
        if self.openapi.borrow().chosen && !outermost {
            return Ok(());
        }
        let choice = match openapi::request(field).map_err(|(s, m)| failed(s, m))? {
            openapi::Request::None => return Ok(()),
            openapi::Request::Version(v) => {
                openapi::check_version(v).map_err(|(s, m)| failed(s, m))?;
                if super::tree::text(v).unwrap_or_default().is_empty() {
                    return Ok(());
                }
                SchemaChoice {
                    chosen: true,
                    custom: None,
                }
            }
            openapi::Request::Path => SchemaChoice {
                chosen: true,
                custom: schema.map(std::sync::Arc::new),
            },
        };
        *self.openapi.borrow_mut() = choice;
        Ok(())
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

    /// Read a file named by an entry (for patches, generators, configs).
    pub fn read_file(&self, k: &Kustomization, item: &Item) -> Result<FileId, Fail> {
        if looks_remote(&item.text) {
            return Err(unrenderable(
                item.span,
                format!(
                    "'{}' is a remote file; gitops-lint does not fetch remote inputs",
                    item.text
                ),
            ));
        }
        let path = self.resolve(k, item)?;
        self.check_file_restriction(k, &path, item)?;
        self.fs.read(&path).map_err(|e| fs_error(item, e))
    }

    /// Parse a YAML file named by an entry into its non-empty documents.
    pub fn load_docs(&self, k: &Kustomization, item: &Item) -> Result<Vec<Node>, Fail> {
        let file = self.read_file(k, item)?;
        parse_docs(self.fs, file)
    }

    fn accumulate_resource(
        &mut self,
        k: &Kustomization,
        item: &Item,
        acc: &mut Acc,
    ) -> Result<(), Fail> {
        let local =
            join(&k.dir, &item.text).is_some_and(|p| self.fs.is_dir(&p) || self.fs.is_file(&p));
        if looks_remote(&item.text) && !local {
            return match self.remote_dir(item, "resource")? {
                Some(dir) => self.accumulate_dir(item, &dir, acc),
                None => Ok(()),
            };
        }
        let path = self.resolve(k, item)?;
        if self.fs.is_dir(&path) {
            return self.accumulate_dir(item, &path, acc);
        }
        if self.fs.is_file(&path) {
            self.check_file_restriction(k, &path, item)?;
            let file = self.fs.read(&path).map_err(|e| fs_error(item, e))?;
            let docs = parse_docs(self.fs, file)?;
            for d in docs {
                for mut r in resources_from_doc(d, item.span)? {
                    r.source = Some(super::resource::SourceInfo::File(path.clone()));
                    self.append(acc, r, item.span)?;
                }
            }
            return Ok(());
        }
        match self.fs.read(&path) {
            Err(FsError::OutsideRepo(_)) => Err(failed(
                item.span,
                format!("'{}' is outside the repository", item.text),
            )),
            _ => Err(failed(
                item.span,
                format!(
                    "accumulating resources: '{}' does not exist (resource in '{}')",
                    item.text,
                    display_dir(&k.dir)
                ),
            )),
        }
    }

    /// A directory resource: its kustomization built and its resources appended.
    fn accumulate_dir(&mut self, item: &Item, path: &str, acc: &mut Acc) -> Result<(), Fail> {
        let path = path.to_string();
        if kustomization::find_file(self.fs, &path).is_ok_and(|f| f.is_none()) {
            return Err(failed(
                item.span,
                format!(
                    "accumulating resources from '{}': unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
                    item.text, path
                ),
            ));
        }
        let sub = self.load_kustomization(&path, item.span)?;
        if sub.is_component {
            return Err(failed(
                item.span,
                format!(
                    "accumulating resources from '{}': expected kind 'Kustomization' but got 'Component'",
                    item.text
                ),
            ));
        }
        let mut sub_acc = Acc::default();
        self.run(&sub, &mut sub_acc, item.span)?;
        acc.config.merge(&sub_acc.config);
        for v in sub_acc.vars {
            if acc.vars.iter().any(|x| x.name == v.name) {
                return Err(failed(
                    item.span,
                    format!("var '{}' already encountered", v.name),
                ));
            }
            acc.vars.push(v);
        }
        for r in sub_acc.resources {
            self.append(acc, r, item.span)?;
        }
        Ok(())
    }

    /// A remote entry of `resources:` / `components:`: a git base renders from the cache
    /// (`Some(dir)`: the fetched directory); one that is not fetched, or is not a repository,
    /// is left out with an issue and the build goes on (`None`).
    fn remote_dir(&self, item: &Item, what: &str) -> Result<Option<String>, Fail> {
        let spec = super::git_url::parse(&item.text)
            .filter(|_| !super::git_url::is_remote_file(&item.text));
        let Some(spec) = spec else {
            self.skipped.borrow_mut().push(*unrenderable(
                item.span,
                format!(
                    "remote {what} '{}' is not fetched: gitops-lint renders offline",
                    item.text
                ),
            ));
            return Ok(None);
        };
        let reference = RemoteRef::git(&spec.clone_url, &spec.reference);
        self.remotes.borrow_mut().push(RemoteUse {
            reference: reference.clone(),
            span: item.span,
        });
        match self.opts.remotes.git_tree(&reference) {
            Fetched::Ready { root } => {
                let dir = join(&root, &spec.subdir).unwrap_or(root);
                if !self.fs.is_dir(&dir) {
                    return Err(failed(
                        item.span,
                        format!(
                            "remote {what} '{}': {reference} has no directory '{}'",
                            item.text, spec.subdir
                        ),
                    ));
                }
                Ok(Some(dir))
            }
            Fetched::Missing(why) => {
                self.skipped.borrow_mut().push(*unrenderable(
                    item.span,
                    format!("remote {what} '{}': {why}", item.text),
                ));
                Ok(None)
            }
            Fetched::Broken(why) => Err(failed(
                item.span,
                format!("remote {what} '{}': {why}", item.text),
            )),
        }
    }

    fn accumulate_component(
        &mut self,
        k: &Kustomization,
        item: &Item,
        acc: &mut Acc,
    ) -> Result<(), Fail> {
        let path = if looks_remote(&item.text) {
            match self.remote_dir(item, "component")? {
                Some(dir) => dir,
                None => return Ok(()),
            }
        } else {
            self.resolve(k, item)?
        };
        if !self.fs.is_dir(&path) {
            return Err(failed(
                item.span,
                format!(
                    "accumulating components: '{}' is not a directory with a kustomization file",
                    item.text
                ),
            ));
        }
        let sub = self.load_kustomization(&path, item.span)?;
        if sub.is_component
            && let Some(av) = sub.root.get("apiVersion").and_then(super::tree::text)
            && av != "kustomize.config.k8s.io/v1alpha1"
        {
            return Err(failed(
                sub.root
                    .get("apiVersion")
                    .map(|n| n.span)
                    .unwrap_or(item.span),
                "apiVersion for Component should be kustomize.config.k8s.io/v1alpha1",
            ));
        }
        if !sub.is_component {
            return Err(failed(
                item.span,
                format!(
                    "accumulating components: expected kind 'Component' for path '{}' but got 'Kustomization'",
                    path
                ),
            ));
        }
        self.run(&sub, acc, item.span)
    }

    /// Stop a build that has run past `limits.max-render-seconds`.
    fn check_deadline(&self, at: Span) -> Result<(), Fail> {
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
    let text = fs.source_map().get(file).text.clone();
    let mut docs: Vec<Node> = parsed
        .docs
        .into_iter()
        .map(|d| d.root)
        .filter(|n| !n.is_null())
        .collect();
    if !text.ends_with('\n') {
        for d in &mut docs {
            clip_final_block(d, &text);
        }
    }
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

/// A clipped block scalar (`|`, `>`) that ends the file without a final newline has no
/// trailing line break (YAML's clip chomping); the parser adds one, so take it off again.
fn clip_final_block(node: &mut Node, text: &str) {
    use crate::yaml::Style;
    match &mut node.value {
        Value::Map(entries) => {
            if let Some(e) = entries.last_mut() {
                clip_final_block(&mut e.value, text);
            }
        }
        Value::Seq(items) => {
            if let Some(i) = items.last_mut() {
                clip_final_block(i, text);
            }
        }
        Value::String(s) if matches!(node.style, Style::Literal | Style::Folded) => {
            let header = text
                .get(node.span.start as usize..)
                .and_then(|t| t.lines().next())
                .unwrap_or("");
            let keep = header.split('#').next().unwrap_or("").contains('+');
            let at_end = text[(node.span.end as usize).min(text.len())..]
                .trim()
                .is_empty();
            if !keep && at_end && s.ends_with('\n') && !s.ends_with("\n\n") {
                s.pop();
            }
        }
        _ => {}
    }
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
    // kustomize rewrites annotations while building and drops the field when empty.
    if let Some(meta) = doc.get_mut("metadata")
        && meta.get("annotations").is_some_and(Node::is_empty_value)
    {
        super::tree::remove(meta, "annotations");
    }
    Ok(vec![Resource::new(doc, origin)])
}

/// Labels and annotations are string maps: kustomize reads `port: 8080` there as "8080".
fn stringify_metadata_maps(doc: &mut Node) {
    let Some(meta) = doc.get_mut("metadata") else {
        return;
    };
    for field in ["labels", "annotations"] {
        if let Some(Value::Map(entries)) = meta.get_mut(field).map(|m| &mut m.value) {
            for e in entries {
                let v = &mut e.value;
                if matches!(v.value, Value::Bool(_) | Value::Int(_) | Value::Float(_)) {
                    let text = v
                        .raw
                        .as_deref()
                        .map(str::to_string)
                        .or_else(|| v.scalar_text())
                        .unwrap_or_default();
                    v.value = Value::String(text);
                    v.raw = None;
                }
            }
        }
    }
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
