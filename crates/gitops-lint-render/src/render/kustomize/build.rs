//! The build: load a kustomization, accumulate its resources (files, nested kustomizations,
//! components), then run its generators and transformers in kustomize's order.

use super::acc::{
    Acc, Builder, Fail, failed, fs_error, looks_remote, parse_docs, resources_from_doc,
    unrenderable,
};
use super::fieldspec::TransformerConfig;
use super::generators;
use super::helm_charts;
use super::kustomization::{self, Item, Kustomization, display_dir, join};
use super::openapi::{self, CustomSchema, SchemaChoice};
use super::remote_file::RemoteFile;
use super::shared::SharedBuild;
use super::transform;
use crate::remote::RemoteRef;
use crate::render::{Fetched, RemoteUse};
use crate::source::{FsError, Span};

/// Where a remote `resources:` / `components:` entry leads.
enum RemoteDir {
    /// The fetched directory in the cache.
    Ready(String),
    /// Not fetched: left out, with an issue naming this input.
    LeftOut(Option<crate::render::MissingInput>),
}

impl Builder<'_> {
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
        self.entered.push(dir.to_string());
        self.deepest = self.deepest.max(self.stack.len());
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
                std::sync::Arc::make_mut(&mut acc.config).merge(&TransformerConfig::from_node(&d));
            }
        }
        for item in k.items("crds") {
            let docs = self.load_docs(k, &item)?;
            for d in docs {
                super::crds::add_crd_config(&d, std::sync::Arc::make_mut(&mut acc.config));
            }
        }
        generators::run_builtin(self, k, acc)?;
        helm_charts::run(self, k, acc)?;
        generators::run_configured(self, k, acc)?;
        transform::run_builtin(self, k, acc)?;
        transform::run_configured(self, k, acc)?;
        transform::run_validators(self, k, acc)?;
        super::vars::collect(self, k, acc)?;
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

    fn accumulate_resource(
        &mut self,
        k: &Kustomization,
        item: &Item,
        acc: &mut Acc,
    ) -> Result<(), Fail> {
        let local =
            join(&k.dir, &item.text).is_some_and(|p| self.fs.is_dir(&p) || self.fs.is_file(&p));
        if super::git_url::is_remote_file(&item.text) && !local {
            return match self.remote_file(item, "resource")? {
                RemoteFile::Ready(path) => {
                    let file = self.fs.read(&path).map_err(|e| fs_error(item, e))?;
                    for d in parse_docs(self.fs, file)? {
                        for mut r in resources_from_doc(d, item.span)? {
                            r.source = Some(super::resource::SourceInfo::File(path.clone()));
                            self.append(acc, r, item.span)?;
                        }
                    }
                    Ok(())
                }
                RemoteFile::Missing(issue) => {
                    acc.left_out.extend(issue.input.clone());
                    self.skipped.borrow_mut().push(*issue);
                    Ok(())
                }
            };
        }
        if looks_remote(&item.text) && !local {
            return match self.remote_dir(item, "resource")? {
                RemoteDir::Ready(dir) => self.accumulate_dir(item, &dir, acc),
                RemoteDir::LeftOut(input) => {
                    acc.left_out.extend(input);
                    Ok(())
                }
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
        let sub_acc = self.build_included(&sub, &path, item.span)?;
        TransformerConfig::merge_shared(&mut acc.config, &sub_acc.config);
        acc.left_out.extend(sub_acc.left_out);
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

    /// The accumulator of an included kustomization (`sub`, in `dir`): shared with the
    /// other builds of this model build when its conditions hold (`shared.rs`), else built.
    fn build_included(&mut self, sub: &Kustomization, dir: &str, from: Span) -> Result<Acc, Fail> {
        let Some(shared) = self.opts.shared.clone() else {
            return self.build_fresh(sub, from);
        };
        let restrictions = self.opts.load_restrictions;
        // An `openapi:` choice in force changes what the sub-build's patches see.
        let no_openapi = !self.openapi.borrow().chosen;
        if no_openapi
            && let Some(done) = shared.get(dir, restrictions)
            && self.can_reuse(&done)
        {
            self.check_deadline(from)?;
            self.resource_count += done.appended;
            // What the shared build entered, this one entered too (the coverage counts it,
            // and an including build's own sharing checks must see it).
            self.entered.extend(done.entered.iter().cloned());
            self.remotes
                .borrow_mut()
                .extend(done.remotes.iter().cloned());
            self.skipped
                .borrow_mut()
                .extend(done.skipped.iter().cloned());
            return Ok(done.acc.clone());
        }
        let entered_from = self.entered.len();
        let deepest_before = std::mem::replace(&mut self.deepest, self.stack.len());
        let (count, remotes, skipped) = (
            self.resource_count,
            self.remotes.borrow().len(),
            self.skipped.borrow().len(),
        );
        let built = self.build_fresh(sub, from);
        let depth = self.deepest - self.stack.len();
        self.deepest = self.deepest.max(deepest_before);
        let entered = self.entered[entered_from..].to_vec();
        let rewritten = |d: &String| self.overlay.as_ref().is_some_and(|(o, _)| o == d);
        if let Ok(acc) = &built
            && no_openapi
            && !self.openapi.borrow().chosen
            && !entered.iter().any(rewritten)
        {
            shared.insert(
                dir,
                restrictions,
                SharedBuild {
                    acc: acc.clone(),
                    entered,
                    depth,
                    appended: self.resource_count - count,
                    remotes: self.remotes.borrow()[remotes..].to_vec(),
                    skipped: self.skipped.borrow()[skipped..].to_vec(),
                },
            );
        }
        built
    }

    fn build_fresh(&mut self, sub: &Kustomization, from: Span) -> Result<Acc, Fail> {
        let mut acc = Acc::default();
        self.run(sub, &mut acc, from)?;
        Ok(acc)
    }

    /// Does a shared sub-build hold here? Not if it would close a cycle, nest too deep,
    /// hold too many resources, or read the file an Argo CD override rewrites: building it
    /// then reports (or applies) exactly that.
    fn can_reuse(&self, done: &SharedBuild) -> bool {
        let on_stack = done.entered.iter().any(|d| self.stack.contains(d));
        let rewritten = self
            .overlay
            .as_ref()
            .is_some_and(|(o, _)| done.entered.contains(o));
        !on_stack
            && !rewritten
            && self.stack.len() + done.depth <= self.opts.max_depth
            && self.resource_count + done.appended <= self.opts.max_resources
    }

    /// A remote entry of `resources:` / `components:`: a git base renders from the cache
    /// (the fetched directory); one that is not fetched, or is not a repository, is left out
    /// with an issue naming the input and the build goes on.
    fn remote_dir(&self, item: &Item, what: &str) -> Result<RemoteDir, Fail> {
        let spec = super::git_url::parse(&item.text)
            .filter(|_| !super::git_url::is_remote_file(&item.text));
        let Some(spec) = spec else {
            let mut issue = *unrenderable(
                item.span,
                format!("remote {what} '{}' is not fetched", item.text),
            );
            issue.input = crate::render::MissingInput::vendor_only(item.text.clone());
            let input = issue.input.clone();
            self.skipped.borrow_mut().push(issue);
            return Ok(RemoteDir::LeftOut(input));
        };
        let reference = RemoteRef::git(&spec.clone_url, &spec.reference);
        self.remotes.borrow_mut().push(RemoteUse {
            reference: reference.clone(),
            span: item.span,
            floats: false,
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
                Ok(RemoteDir::Ready(dir))
            }
            Fetched::Missing(why) => {
                let mut issue =
                    *unrenderable(item.span, format!("remote {what} '{}': {why}", item.text));
                let input = crate::render::MissingInput::fetchable(reference.to_string());
                issue.input = input.clone();
                self.skipped.borrow_mut().push(issue);
                Ok(RemoteDir::LeftOut(input))
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
                RemoteDir::Ready(dir) => dir,
                RemoteDir::LeftOut(input) => {
                    acc.left_out.extend(input);
                    return Ok(());
                }
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
}
