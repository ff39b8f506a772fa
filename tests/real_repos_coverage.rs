//! Coverage of the app model on real repositories (../shared/corpus/real-repos, located by
//! `GITOPS_LINT_SHARED`; skipped with a printed reason when absent). For each repo, every
//! Flux Kustomization, HelmRelease and Argo CD Application / ApplicationSet its YAML files
//! declare (counted here from the text, independently of the tool) must appear in
//! `gitops-lint apps --format json`; no app may be `rendered` with 0 objects, and every
//! `partial` / `not-rendered` app must carry a reason. The per-repo table is printed.
//!
//! The corpus copies have no git remote: each repo is copied to a temporary directory with
//! its origin URL (from the corpus README) written as the `origin` remote.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// `| dir | repository | commit | date | origin URL | …` rows of the corpus README.
fn origins(readme: &str) -> Vec<(String, String)> {
    readme
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells.len() > 6 && cells[5].starts_with("https://"))
                .then(|| (cells[1].to_string(), cells[5].to_string()))
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let Ok(entry) = entry else { continue };
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            copy_dir(&src, &dst);
        } else if ft.is_file() {
            std::fs::copy(&src, &dst).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        }
    }
}

/// One declared object: (kind, name), and whether its name is written as a template.
#[derive(Debug)]
struct Declared {
    kind: &'static str,
    name: String,
    file: String,
}

fn kind_of(api_version: &str, kind: &str) -> Option<&'static str> {
    let group = api_version.split('/').next().unwrap_or("");
    match (group, kind) {
        ("kustomize.toolkit.fluxcd.io", "Kustomization") => Some("Kustomization"),
        ("helm.toolkit.fluxcd.io", "HelmRelease") => Some("HelmRelease"),
        ("argoproj.io", "Application") => Some("Application"),
        ("argoproj.io", "ApplicationSet") => Some("ApplicationSet"),
        _ => None,
    }
}

/// Top-level `apiVersion`, `kind` and `metadata.name` of each document, read as text.
fn declared_in(text: &str, file: &str, out: &mut Vec<Declared>) {
    for doc in text.split("\n---") {
        let (mut api, mut kind, mut name, mut in_meta) = (None, None, None, false);
        for line in doc.lines() {
            let unquote = |v: &str| {
                let v = v.split(" #").next().unwrap_or(v).trim();
                let v = v
                    .trim_start_matches(['&'])
                    .split_whitespace()
                    .last()
                    .unwrap_or("");
                v.trim_matches(['"', '\'']).to_string()
            };
            let top = !line.is_empty() && !line.starts_with([' ', '\t', '#', '-']);
            if top {
                in_meta = line.starts_with("metadata:");
                if let Some(v) = line.strip_prefix("apiVersion:") {
                    api = Some(unquote(v));
                } else if let Some(v) = line.strip_prefix("kind:") {
                    kind = Some(unquote(v));
                }
            } else if in_meta && name.is_none() {
                let t = line.trim_start();
                if let Some(v) = t.strip_prefix("name:")
                    && line.len() - t.len() <= 4
                {
                    name = Some(unquote(v));
                }
            }
        }
        if let (Some(a), Some(k), Some(n)) = (api, kind, name)
            && let Some(k) = kind_of(&a, &k)
        {
            out.push(Declared {
                kind: k,
                name: n,
                file: file.to_string(),
            });
        }
    }
}

fn declared(root: &Path) -> Vec<Declared> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name == ".git" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                let rel = p
                    .strip_prefix(root)
                    .map(|r| r.to_string_lossy().into_owned())
                    .unwrap_or_default();
                // Chart templates are Go templates, not declarations (their apps are checked
                // through the parent that renders them).
                if rel.split('/').any(|s| s == "templates") {
                    continue;
                }
                if let Ok(text) = std::fs::read_to_string(&p) {
                    declared_in(&text, &rel, &mut out);
                }
            }
        }
    }
    out
}

fn apps_json(root: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["apps", "--format", "json"])
        .arg(root)
        .output()
        .unwrap_or_else(|e| panic!("run: {e}"));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{}: apps --format json is not JSON ({e}): {}",
            root.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Apps a multi-cluster repo deploys to each of its clusters, read from its layout by hand:
/// (repo, kind in `apps`, name, the clusters each copy is listed for).
const PER_CLUSTER: &[(&str, &str, &str, &[&str])] = &[
    (
        "fluxcd__flux2-kustomize-helm-example",
        "flux-helmrelease",
        "podinfo",
        &["clusters/production", "clusters/staging"],
    ),
    (
        "fluxcd__flux2-kustomize-helm-example",
        "flux-helmrelease",
        "cert-manager",
        &["clusters/production", "clusters/staging"],
    ),
    (
        "fluxcd__flux2-kustomize-helm-example",
        "flux-kustomization",
        "apps",
        &["clusters/production", "clusters/staging"],
    ),
    (
        "fluxcd__flux2-kustomize-helm-example",
        "flux-kustomization",
        "infra-configs",
        &["clusters/production", "clusters/staging"],
    ),
];

#[test]
fn every_declared_app_is_listed_with_a_status() {
    let Some(base) = common::shared_corpus("corpus/real-repos", "README.md") else {
        return;
    };
    let readme = std::fs::read_to_string(base.join("README.md"))
        .unwrap_or_else(|e| panic!("{}: {e}", base.display()));
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    let mut table = String::from(
        "repo                                      declared  apps  clusters  rendered  partial  not-rendered (by reason)\n",
    );
    for (dir, url) in origins(&readme) {
        let src = base.join(&dir);
        if !src.is_dir() {
            continue;
        }
        let root = tmp.path().join(&dir);
        copy_dir(&src, &root);
        std::fs::create_dir_all(root.join(".git")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            root.join(".git/config"),
            format!("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = {url}\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let decl = declared(&root);
        let json = apps_json(&root);
        let apps = json["apps"].as_array().cloned().unwrap_or_default();
        let listed = |d: &Declared| {
            // A name written with a substitution or template is matched by kind alone.
            let templated = d.name.contains("${") || d.name.contains("{{");
            apps.iter().any(|a| {
                let kind = a["kind"].as_str().unwrap_or("");
                let name_ok = templated || a["name"].as_str() == Some(d.name.as_str());
                match d.kind {
                    "Kustomization" => kind == "flux-kustomization" && name_ok,
                    "HelmRelease" => kind == "flux-helmrelease" && name_ok,
                    "Application" => (kind == "argo" || kind == "argo-appset") && name_ok,
                    _ => {
                        kind == "argo-appset"
                            && (templated || a["generated-by"].as_str() == Some(d.name.as_str()))
                    }
                }
            })
        };
        for d in &decl {
            if !listed(d) {
                problems.push(format!(
                    "{dir}: {} {} ({}) is not listed",
                    d.kind, d.name, d.file
                ));
            }
        }
        // Apps deployed to several clusters are listed once per cluster.
        for (repo, kind, name, clusters) in PER_CLUSTER {
            if *repo != dir {
                continue;
            }
            let mut seen: Vec<&str> = apps
                .iter()
                .filter(|a| a["kind"].as_str() == Some(*kind) && a["name"].as_str() == Some(*name))
                .filter_map(|a| a["cluster"].as_str())
                .collect();
            seen.sort();
            if seen != *clusters {
                problems.push(format!(
                    "{dir}: {kind} {name} is listed for clusters {seen:?}, not {clusters:?}"
                ));
            }
        }
        let cluster_count = apps
            .iter()
            .filter_map(|a| a["cluster"].as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let (mut rendered, mut partial, mut not) = (0, 0, 0);
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        for a in &apps {
            let name = a["name"].as_str().unwrap_or("?");
            let objects = a["objects"].as_u64().unwrap_or(0);
            let reason = a["reason"].as_str();
            match a["status"].as_str() {
                Some("rendered") => {
                    rendered += 1;
                    if objects == 0 {
                        problems.push(format!("{dir}: {name} is rendered with 0 objects"));
                    }
                }
                Some(s @ ("partial" | "not-rendered")) => {
                    if s == "partial" {
                        partial += 1;
                    } else {
                        not += 1;
                        *reasons
                            .entry(reason.unwrap_or("?").to_string())
                            .or_default() += 1;
                    }
                    if reason.is_none() {
                        problems.push(format!("{dir}: {name} is {s} without a reason"));
                    }
                }
                other => problems.push(format!("{dir}: {name} has status {other:?}")),
            }
        }
        let by_reason: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        table.push_str(&format!(
            "{dir:<42} {:>8}  {:>4}  {cluster_count:>8}  {rendered:>8}  {partial:>7}  {not} ({})\n",
            decl.len(),
            apps.len(),
            by_reason.join(", ")
        ));
    }
    println!("{table}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
