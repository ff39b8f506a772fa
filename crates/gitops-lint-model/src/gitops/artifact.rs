//! A Flux artifact built from this repository: the files a controller sees, each mapped to
//! the repo file it was copied from, so rendered objects keep spans into the file to edit.
//! Two producers: a GitRepository artifact (the repo minus its ignore rules) and an
//! `ArtifactGenerator` output (source-watcher's copy operations over this repo's paths).

use super::sourceignore::IgnoreRules;
use crate::object::Object;
use crate::source::{FileId, FsError, RepoFs, SourceMap, Span, is_within};
use crate::yaml::Node;
use std::collections::BTreeMap;

/// Artifact path → repo path, files only (directories are implied).
#[derive(Clone, Debug, Default)]
pub struct ArtifactTree {
    pub files: BTreeMap<String, String>,
}

/// Every file of the repo (repo-relative), `.git` skipped, in walk order.
pub fn repo_files(fs: &dyn RepoFs) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        let mut subdirs = Vec::new();
        for name in fs.list_dir(&dir).unwrap_or_default() {
            if name == ".git" {
                continue;
            }
            let path = join(&dir, &name);
            if fs.is_dir(&path) {
                subdirs.push(path);
            } else {
                out.push(path);
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    out
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

impl ArtifactTree {
    /// A GitRepository's artifact: the repo minus what its ignore rules exclude.
    pub fn filtered(files: &[String], rules: &IgnoreRules) -> ArtifactTree {
        ArtifactTree {
            files: files
                .iter()
                .filter(|f| !rules.excludes(f))
                .map(|f| (f.clone(), f.clone()))
                .collect(),
        }
    }

    pub fn is_dir(&self, path: &str) -> bool {
        path.is_empty()
            || self
                .files
                .range(format!("{path}/")..)
                .next()
                .is_some_and(|(k, _)| k.starts_with(&format!("{path}/")))
    }

    /// The files at or below artifact path `dir`, in path order: a range of the map, not a
    /// scan of it (every Flux Kustomization over a tree asks, in every pass).
    fn entries_within<'a>(
        &'a self,
        dir: &str,
    ) -> Box<dyn Iterator<Item = (&'a String, &'a String)> + 'a> {
        if dir.is_empty() {
            return Box::new(self.files.iter());
        }
        // `dir` itself sorts before what is below it.
        let itself = self.files.get_key_value(dir);
        let below = self.files.range(crate::source::below_dir(dir));
        Box::new(itself.into_iter().chain(below))
    }

    /// Repo directories whose files the artifact takes below `dir` (artifact path).
    pub fn repo_dirs_under(&self, dir: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .entries_within(dir)
            .map(|(_, r)| r.rsplit_once('/').map(|(d, _)| d).unwrap_or("").to_string())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Does artifact directory `dir` hold a kustomization file?
    pub fn has_kustomization(&self, dir: &str) -> bool {
        ["kustomization.yaml", "kustomization.yml", "Kustomization"]
            .iter()
            .any(|name| match dir {
                "" => self.files.contains_key(*name),
                _ => self.files.contains_key(&format!("{dir}/{name}")),
            })
    }

    /// Artifact directories that hold a kustomization file.
    pub fn kustomization_dirs(&self) -> std::collections::BTreeSet<String> {
        self.files
            .keys()
            .filter_map(|f| {
                let (dir, name) = f.rsplit_once('/').unwrap_or(("", f));
                matches!(
                    name,
                    "kustomization.yaml" | "kustomization.yml" | "Kustomization"
                )
                .then(|| dir.to_string())
            })
            .collect()
    }

    /// The repo directory whose kustomization file the artifact has at directory `dir` (an
    /// `ArtifactGenerator` copies `apps/production/` to `production/`).
    pub fn repo_kustomization_dir(&self, dir: &str) -> Option<String> {
        ["kustomization.yaml", "kustomization.yml", "Kustomization"]
            .iter()
            .find_map(|name| match dir {
                "" => self.files.get(*name),
                _ => self.files.get(&format!("{dir}/{name}")),
            })
            .map(|repo| crate::source::dir_of(repo).to_string())
    }

    /// Repo files the artifact takes below `dir` (artifact path).
    pub fn repo_files_under(&self, dir: &str) -> Vec<&str> {
        self.entries_within(dir).map(|(_, r)| r.as_str()).collect()
    }
}

/// A [`RepoFs`] over an artifact: reads go to the repo file each artifact path came from.
pub struct ArtifactFs<'a> {
    pub inner: &'a dyn RepoFs,
    pub tree: &'a ArtifactTree,
}

impl RepoFs for ArtifactFs<'_> {
    fn read(&self, path: &str) -> Result<FileId, FsError> {
        match self.tree.files.get(path) {
            Some(repo) => self.inner.read(repo),
            None => Err(FsError::NotFound(path.into())),
        }
    }
    fn is_file(&self, path: &str) -> bool {
        self.tree.files.contains_key(path)
    }
    fn is_dir(&self, path: &str) -> bool {
        self.tree.is_dir(path)
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, FsError> {
        if !self.tree.is_dir(path) {
            return Err(FsError::NotFound(path.into()));
        }
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        let mut names: Vec<String> = self
            .tree
            .files
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter_map(|(k, _)| k[prefix.len()..].split('/').next().map(str::to_string))
            .collect();
        names.dedup();
        Ok(names)
    }
    fn source_map(&self) -> &SourceMap {
        self.inner.source_map()
    }
    fn read_bytes(&self, path: &str) -> Result<Vec<u8>, FsError> {
        match self.tree.files.get(path) {
            Some(repo) => self.inner.read_bytes(repo),
            None => Err(FsError::NotFound(path.into())),
        }
    }
}

pub fn is_artifact_generator(o: &Object) -> bool {
    o.group() == "source.extensions.fluxcd.io" && o.kind == "ArtifactGenerator"
}

/// One output artifact of an `ArtifactGenerator`, built from this repo.
pub struct Generated {
    pub name: String,
    pub namespace: String,
    pub tree: ArtifactTree,
    /// Copy operations that failed (source-watcher fails the artifact on them).
    pub problems: Vec<(Span, String)>,
    /// A source alias that is not this repository: the artifact is not built.
    pub external: Option<String>,
}

/// The artifacts an `ArtifactGenerator` produces. `alias_repo` tells, for a `spec.sources`
/// entry, the ignore rules of its artifact when it is this repository's GitRepository.
pub fn generate(
    generator: &Object,
    files: &[String],
    alias_repo: &dyn Fn(&Node) -> Result<ArtifactTree, String>,
) -> Vec<Generated> {
    let ns = generator
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let Some(spec) = generator.root.get("spec") else {
        return Vec::new();
    };
    let mut aliases: BTreeMap<String, Result<ArtifactTree, String>> = BTreeMap::new();
    for s in spec
        .get("sources")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        if let Some(alias) = s.get("alias").and_then(Node::scalar_text) {
            aliases.insert(alias, alias_repo(s));
        }
    }
    let _ = files;
    let mut out = Vec::new();
    for a in spec
        .get("artifacts")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let Some(name) = a.get("name").and_then(Node::scalar_text) else {
            continue;
        };
        let mut g = Generated {
            name,
            namespace: ns.clone(),
            tree: ArtifactTree::default(),
            problems: Vec::new(),
            external: None,
        };
        for op in a.get("copy").and_then(Node::as_seq).unwrap_or_default() {
            let from = op
                .get("from")
                .and_then(Node::scalar_text)
                .unwrap_or_default();
            let to = op.get("to").and_then(Node::scalar_text).unwrap_or_default();
            let span = op.get("from").map(|n| n.span).unwrap_or(op.span);
            let excludes: Vec<String> = op
                .get("exclude")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(Node::scalar_text)
                .collect();
            let Some((alias, pattern)) = from.strip_prefix('@').and_then(|f| f.split_once('/'))
            else {
                g.problems.push((
                    span,
                    format!("copy source `{from}` is not `@alias/pattern`"),
                ));
                continue;
            };
            let Some(dest) = to.strip_prefix("@artifact/") else {
                g.problems.push((
                    span,
                    format!("copy destination `{to}` does not start with `@artifact/`"),
                ));
                continue;
            };
            match aliases.get(alias) {
                None => g.problems.push((
                    span,
                    format!("source alias `{alias}` is not in spec.sources"),
                )),
                Some(Err(why)) => g.external = Some(why.clone()),
                Some(Ok(src)) => {
                    if let Err(m) = copy(
                        src,
                        pattern,
                        dest,
                        to.ends_with('/'),
                        &excludes,
                        &mut g.tree,
                    ) {
                        g.problems.push((span, m));
                    }
                }
            }
        }
        out.push(g);
    }
    out
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', ']'])
}

fn clean(p: &str) -> String {
    crate::source::normalize_relative(p).unwrap_or_default()
}

/// One copy operation with source-watcher's cp-like semantics: a literal file goes to
/// `dest` (or into it when `dest/`), a literal directory into `dest/<name>`, and a glob
/// (Go's `fs.Glob`: `*` and `**` stop at `/`) copies each match, `dir/**` relative to `dir`.
fn copy(
    src: &ArtifactTree,
    pattern: &str,
    dest: &str,
    dest_is_dir: bool,
    excludes: &[String],
    out: &mut ArtifactTree,
) -> Result<(), String> {
    let dest = clean(dest);
    let excluded = |path: &str, base: &str| -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        let rel = if base.is_empty() || base == "." {
            None
        } else {
            path.strip_prefix(&format!("{base}/"))
        };
        excludes.iter().any(|p| {
            let m = |t: &str| {
                globset::GlobBuilder::new(p)
                    .literal_separator(true)
                    .build()
                    .is_ok_and(|g| g.compile_matcher().is_match(t))
            };
            m(path) || rel.is_some_and(m) || (!p.contains('/') && m(name))
        })
    };
    let mut copied: Vec<(String, String)> = Vec::new();
    let mut put = |repo_src: &str, to: String| {
        if let Some(repo) = src.files.get(repo_src) {
            copied.push((to, repo.clone()));
        }
    };
    let copy_dir = |dir: &str, to: &str, base: &str, put: &mut dyn FnMut(&str, String)| {
        for f in src.files.keys().filter(|f| is_within(dir, f) && *f != dir) {
            if excluded(f, base) {
                continue;
            }
            let rel = f.strip_prefix(&format!("{dir}/")).unwrap_or(f);
            put(f, join(to, rel));
        }
    };
    if !has_glob(pattern) {
        let p = clean(pattern);
        if src.is_dir(&p) && !src.files.contains_key(&p) {
            let name = p.rsplit('/').next().unwrap_or(&p);
            copy_dir(&p, &join(&dest, name), &p, &mut put);
            out.files.extend(copied);
            return Ok(());
        }
        if !src.files.contains_key(&p) {
            return Err(format!("source `{pattern}` does not exist"));
        }
        if excluded(&p, ".") {
            return Ok(());
        }
        let into_dir = dest_is_dir || (!dest.is_empty() && out.is_dir(&dest));
        let name = p.rsplit('/').next().unwrap_or(&p);
        let to = if into_dir { join(&dest, name) } else { dest };
        put(&p, to);
        out.files.extend(copied);
        return Ok(());
    }
    // fs.Glob: the pattern matches entries exactly as deep as it has segments.
    let go_pattern = pattern.trim_end_matches('/').replace("**", "*");
    let depth = go_pattern.split('/').count();
    let Ok(glob) = globset::GlobBuilder::new(&go_pattern)
        .literal_separator(true)
        .build()
    else {
        return Err(format!("invalid glob pattern `{pattern}`"));
    };
    let glob = glob.compile_matcher();
    let mut entries: Vec<String> = src
        .files
        .keys()
        .filter_map(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            (parts.len() >= depth).then(|| parts[..depth].join("/"))
        })
        .collect();
    entries.dedup();
    let base = {
        let parts: Vec<&str> = pattern.split('/').take_while(|s| !has_glob(s)).collect();
        parts.join("/")
    };
    let matches: Vec<String> = entries
        .into_iter()
        .filter(|e| glob.is_match(e.as_str()) && !excluded(e, &base))
        .collect();
    if matches.is_empty() {
        return Err(format!("no files match pattern `{pattern}`"));
    }
    let strip = pattern.strip_suffix("/**");
    for m in matches {
        let rel = strip
            .and_then(|d| m.strip_prefix(&format!("{d}/")))
            .unwrap_or(&m)
            .to_string();
        let to = join(&dest, &rel);
        if src.files.contains_key(&m) {
            put(&m, to);
        } else {
            copy_dir(&m, &to, &base, &mut put);
        }
    }
    out.files.extend(copied);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(paths: &[&str]) -> ArtifactTree {
        ArtifactTree {
            files: paths
                .iter()
                .map(|p| (p.to_string(), p.to_string()))
                .collect(),
        }
    }

    #[test]
    fn lookups_below_a_directory_take_what_is_within_takes() {
        let t = tree(&[
            "apps",
            "apps/kustomization.yaml",
            "apps-x/kustomization.yml",
            "apps/base/Kustomization",
            "apps/base/deploy.yaml",
            "apps.d/x.yaml",
            "kustomization.yaml",
            "z.yaml",
        ]);
        for dir in ["", "apps", "apps/base", "apps-x", "apps.d", "missing"] {
            let scanned: Vec<&str> = t
                .files
                .iter()
                .filter(|(a, _)| is_within(dir, a))
                .map(|(_, r)| r.as_str())
                .collect();
            assert_eq!(t.repo_files_under(dir), scanned, "{dir}");
            assert_eq!(
                t.has_kustomization(dir),
                t.kustomization_dirs().contains(dir),
                "{dir}"
            );
        }
        assert_eq!(t.repo_dirs_under("apps"), ["", "apps", "apps/base"]);
    }

    #[test]
    fn copy_semantics_follow_source_watcher() {
        let src = tree(&[
            "apps/base/podinfo/release.yaml",
            "apps/base/podinfo/kustomization.yaml",
            "apps/production/kustomization.yaml",
            "apps/production/README.md",
            "infra/a.yaml",
        ]);
        let mut out = ArtifactTree::default();
        copy(&src, "apps/base/**", "base/", true, &[], &mut out).unwrap_or_else(|e| panic!("{e}"));
        copy(
            &src,
            "apps/production/**",
            "production/",
            true,
            &["*.md".into()],
            &mut out,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        copy(&src, "infra/a.yaml", "x.yaml", false, &[], &mut out)
            .unwrap_or_else(|e| panic!("{e}"));
        copy(&src, "apps/base", "", true, &[], &mut out).unwrap_or_else(|e| panic!("{e}"));
        let keys: Vec<&str> = out.files.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "base/podinfo/kustomization.yaml",
                "base/podinfo/release.yaml",
                "production/kustomization.yaml",
                "x.yaml",
            ]
        );
        assert_eq!(out.files["x.yaml"], "infra/a.yaml");
        assert!(copy(&src, "nope/*.yaml", "", true, &[], &mut out).is_err());
    }
}
