//! Walking a repository: which files are read, and the guarantees that hold while doing it
//! (nothing outside the root, no symlink loops, bounded sizes, every skipped file reported).

use super::{Origin, SourceFile, SourceMap, relative_path};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

pub struct WalkOptions {
    /// Largest file read, in bytes; larger files are reported, not read.
    pub max_file_bytes: u64,
    /// Most files read in one repo.
    pub max_files: usize,
    /// Repo-relative glob patterns not to read (from `.gitops-lint.yaml` `exclude`).
    pub exclude: globset::GlobSet,
    /// Honour the `.gitignore` and `.ignore` files inside the root, as git and ripgrep do
    /// (`--no-ignore` turns it off).
    pub ignore_files: bool,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            max_file_bytes: 8 * 1024 * 1024,
            max_files: 100_000,
            exclude: globset::GlobSet::empty(),
            ignore_files: true,
        }
    }
}

/// A file that could not be read as text, with the reason (reported as `yaml-syntax`).
#[derive(Debug, Clone)]
pub struct WalkIssue {
    pub path: String,
    pub message: String,
}

pub struct WalkedRepo {
    pub root: PathBuf,
    /// Files read, in path order.
    pub files: Vec<super::FileId>,
    pub issues: Vec<WalkIssue>,
    /// Candidate files `exclude` kept out (to say so when it keeps out every one).
    pub excluded: usize,
}

/// Scripts, build files and Terraform that can write to clusters (read as text by
/// `second-writer`, never parsed as YAML).
pub fn is_script(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".sh")
        || lower.ends_with(".bash")
        || lower.ends_with(".tf")
        || matches!(
            name,
            "Makefile" | "makefile" | "GNUmakefile" | "Jenkinsfile"
        )
}

/// Files the linter reads: YAML and JSON manifests, Helm templates and helpers, and the
/// scripts CI runs. Everything else (binaries, images) is not the linter's business.
pub(super) fn is_candidate(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let lower = name.to_ascii_lowercase();
    is_script(rel)
        || lower.ends_with(".yaml")
        || lower.ends_with(".yml")
        || lower.ends_with(".json")
        || lower.ends_with(".tpl")
        || (rel.contains("templates/") && !lower.ends_with(".md"))
        || lower == "kustomization"
}

pub fn walk_repo(root: &Path, opts: &WalkOptions, map: &SourceMap) -> std::io::Result<WalkedRepo> {
    let root = fs::canonicalize(root)?;
    let mut files = Vec::new();
    let mut issues = Vec::new();
    let mut paths: Vec<(String, PathBuf)> = Vec::new();
    let mut excluded = 0usize;

    // The `ignore` crate's walker (ripgrep's) decides only which entries are visited; the
    // containment, symlink and candidate checks below are the walk's own. Its git modes read
    // the `.gitignore` of every parent directory up to `/`, so they stay off: `.gitignore`
    // and `.ignore` are read as ignore files (gitignore syntax) of the directories inside the
    // root only — nothing outside the root is opened, and a lint does not depend on the
    // machine (no global gitignore). Hidden files are visited (`.github/workflows` matters to
    // `second-writer`).
    let mut builder = ignore::WalkBuilder::new(&root);
    builder
        .standard_filters(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        // `.gitops-lint/` holds the fetch cache, not the repository's content.
        .filter_entry(|e| {
            e.depth() == 0 || (e.file_name() != ".git" && e.file_name() != ".gitops-lint")
        });
    if opts.ignore_files {
        builder
            .add_custom_ignore_filename(".gitignore")
            .add_custom_ignore_filename(".ignore");
    }
    let walker = builder.build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                let path = error_path(&err)
                    .and_then(|p| relative_path(&root, p))
                    .unwrap_or_default();
                issues.push(WalkIssue {
                    path,
                    message: format!("cannot read: {err}"),
                });
                continue;
            }
        };
        let Some(rel) = relative_path(&root, entry.path()) else {
            continue;
        };
        if rel.is_empty() {
            continue;
        }
        if opts.exclude.is_match(&rel) {
            if entry.file_type().is_some_and(|t| !t.is_dir()) && is_candidate(&rel) {
                excluded += 1;
            }
            continue;
        }
        // Only the root (stdin is never walked) has no file type.
        let Some(ft) = entry.file_type() else {
            continue;
        };
        if ft.is_symlink() {
            match fs::canonicalize(entry.path()) {
                Err(_) => {
                    if is_candidate(&rel) {
                        issues.push(WalkIssue {
                            path: rel,
                            message: "symlink cannot be resolved (dangling or a loop); not read"
                                .into(),
                        });
                    }
                }
                Ok(target) if !target.starts_with(&root) => issues.push(WalkIssue {
                    path: rel,
                    message: "symlink points outside the repository; not read".into(),
                }),
                // A link to a file inside the repo is read under its own name; a link to a
                // directory is not descended (its files are reached by their real path).
                Ok(target) if target.is_file() && is_candidate(&rel) => paths.push((rel, target)),
                Ok(_) => {}
            }
            continue;
        }
        if ft.is_file() && is_candidate(&rel) {
            paths.push((rel, entry.path().to_path_buf()));
        }
    }

    if paths.len() > opts.max_files {
        issues.push(WalkIssue {
            path: String::new(),
            message: format!(
                "repository has {} candidate files; only the first {} are read (limit `limits.max-files`)",
                paths.len(),
                opts.max_files
            ),
        });
        paths.truncate(opts.max_files);
    }

    // Read on all cores; files enter the map in walk order, so ids do not depend on timing.
    let read: Vec<(String, Result<String, String>)> = {
        use rayon::prelude::*;
        paths
            .into_par_iter()
            .map(|(rel, path)| {
                let text = read_text(&path, opts.max_file_bytes);
                (rel, text)
            })
            .collect()
    };
    for (rel, text) in read {
        match text {
            Ok(text) => files.push(map.add(SourceFile::new(rel, text, Origin::Repo))),
            Err(message) => issues.push(WalkIssue { path: rel, message }),
        }
    }
    Ok(WalkedRepo {
        root,
        files,
        issues,
        excluded,
    })
}

/// The path an `ignore` walk error is about, if it names one.
fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        _ => None,
    }
}

/// Read a file as UTF-8 text within the size limit; binary and non-UTF-8 files are refused
/// with a reason that says where.
pub fn read_text(path: &Path, max_bytes: u64) -> Result<String, String> {
    let file = fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > max_bytes {
        return Err(format!(
            "file is {len} bytes, over the {max_bytes}-byte limit (`limits.max-file-bytes`); not parsed"
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    text_from_bytes(bytes, max_bytes)
}

/// The checks of [`read_text`] on bytes already in memory (a blob at a git revision).
pub fn text_from_bytes(bytes: Vec<u8>, max_bytes: u64) -> Result<String, String> {
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "file is over the {max_bytes}-byte limit (`limits.max-file-bytes`); not parsed"
        ));
    }
    // `contains` on bytes is a memchr; the position is looked up only for the message.
    if bytes.contains(&0)
        && let Some(pos) = bytes.iter().position(|&b| b == 0)
    {
        return Err(format!(
            "binary file (NUL byte at offset {pos}); not parsed"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        format!("not valid UTF-8 (invalid byte at offset {at}); not parsed")
    })
}
