//! `gitops-lint helm template ARGS…`: helm's command line, rendered natively, printing what
//! helm prints (stdout, stderr, exit code). This module decides which directory the render
//! may read (paths relative to the cwd or absolute, as helm takes them) and reads
//! `--set-file` files; parsing is `render::helm::args`, rendering `render::helm::run`.

use crate::print;
use gitops_lint::render::helm as nhelm;
use gitops_lint::source::{DiskFs, RepoFs, SourceMap, relative_path};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Wall time of one `helm template` / `render` of a chart whose output is printed.
const PRINTED_RENDER_TIME: std::time::Duration = std::time::Duration::from_secs(300);

pub fn run(args: Vec<String>) -> ExitCode {
    let args: Vec<String> = match args.split_first() {
        Some((first, rest)) if first == "template" => rest.to_vec(),
        Some((first, _)) if first == "-h" || first == "--help" => {
            return print(nhelm::TEMPLATE_HELP);
        }
        _ => {
            eprintln!("Error: only `gitops-lint helm template ARGS...` is supported");
            return ExitCode::from(1);
        }
    };
    let cli = match nhelm::parse_helm_cli(&args) {
        Ok(c) => c,
        Err(e) => return error(e),
    };
    if cli.help {
        return print(nhelm::TEMPLATE_HELP);
    }
    let cwd = match std::env::current_dir().and_then(std::fs::canonicalize) {
        Ok(d) => d,
        Err(e) => return error(format!("working directory: {e}")),
    };
    let mut set_files = Vec::new();
    for v in &cli.set_file {
        match nhelm::set_file_pairs(v) {
            Ok(pairs) => set_files.extend(pairs),
            Err(e) => return error(e),
        }
    }
    let mut named: Vec<&str> = cli.opts.value_files.iter().map(String::as_str).collect();
    named.extend(set_files.iter().map(|(_, p)| p.as_str()));
    let root = read_root(&cwd, &cli.chart, &named);
    let fs = DiskFs::new(root.clone(), Arc::new(SourceMap::new()), 64 << 20);
    let place = |p: &str| placed(&cwd, &root, p);

    let chart = place(&cli.chart);
    let mut opts = cli.opts;
    opts.value_files = opts.value_files.iter().map(|f| place(f)).collect();
    // helm applies --set-file after --set-string and before --set-literal, and a file's
    // content is a plain string: the literal parser's `key=rest-of-text`, placed first.
    let mut from_files = Vec::new();
    for (key, path) in &set_files {
        match fs.read(&place(path)) {
            Ok(id) => from_files.push(format!("{key}={}", fs.source_map().get(id).text)),
            Err(_) => {
                return error(format!(
                    "failed parsing --set-file data: open {path}: no such file or directory"
                ));
            }
        }
    }
    from_files.append(&mut opts.set_literal);
    opts.set_literal = from_files;
    opts.abs_root = Some(root.display().to_string());
    // The printed output carries real keys, made by the rsa crate from the OS random source
    // (about 0.1–2 s per 2048-bit key): a chart that a person chose to render gets minutes,
    // not the ten seconds lint allows each render of a repository under review.
    opts.budget.max_render_time = PRINTED_RENDER_TIME;
    let run = nhelm::run(&fs, &chart, &opts, false);
    print(&run.stdout);
    eprint!("{}", run.stderr());
    ExitCode::from(run.exit_code() as u8)
}

fn error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(1)
}

/// Not a local path: helm fetches these (refused offline by the renderer).
fn is_url(p: &str) -> bool {
    p.contains("://")
}

/// `p` as an absolute path: joined onto the cwd, `.`/`..` resolved, symlinks resolved when it
/// exists (so containment is judged on the real location, as the renderer's reads are).
fn absolute(cwd: &Path, p: &str) -> PathBuf {
    let joined = cwd.join(p);
    if let Ok(real) = std::fs::canonicalize(&joined) {
        return real;
    }
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The nearest ancestor of `dir` (itself included) that is a git work tree.
fn git_checkout(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|d| d.join(".git").exists())
}

/// The directory the render may read: the cwd when the chart is below it (helm's relative
/// paths then read exactly as before), else the chart's git checkout, else the chart's own
/// directory — widened to hold each file named with `-f` / `--set-file`, since the user
/// named those. Containment is relative to what was given, never to where the command runs.
fn read_root(cwd: &Path, chart: &str, named: &[&str]) -> PathBuf {
    let chart_abs = absolute(cwd, chart);
    let base = if chart_abs.starts_with(cwd) || !chart_abs.exists() {
        cwd.to_path_buf()
    } else {
        let dir = if chart_abs.is_dir() {
            chart_abs.as_path()
        } else {
            chart_abs.parent().unwrap_or(&chart_abs)
        };
        git_checkout(dir).unwrap_or(dir).to_path_buf()
    };
    named
        .iter()
        .filter(|p| !is_url(p))
        .map(|p| absolute(cwd, p))
        .fold(base, |root, file| {
            let dir = file.parent().unwrap_or(&file);
            common_ancestor(&root, dir)
        })
}

fn common_ancestor(a: &Path, b: &Path) -> PathBuf {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

/// A path of the command line as the renderer reads it: relative to `root`. A relative path
/// is kept as written when the root is the cwd (helm's messages quote it so).
fn placed(cwd: &Path, root: &Path, p: &str) -> String {
    if is_url(p) || (root == cwd && Path::new(p).is_relative()) {
        return p.to_string();
    }
    let rel = relative_path(root, &absolute(cwd, p)).unwrap_or_else(|| p.to_string());
    if rel.is_empty() { ".".into() } else { rel }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_follows_the_chart_not_the_cwd() {
        let Ok(guard) = tempfile::tempdir() else {
            return;
        };
        let tmp = std::fs::canonicalize(guard.path()).unwrap_or_default();
        let chart = tmp.join("repo/charts/web");
        let cwd = tmp.join("elsewhere");
        for d in [&chart, &cwd, &tmp.join("repo/.git")] {
            std::fs::create_dir_all(d).unwrap_or_default();
        }
        let chart_s = chart.display().to_string();
        // Outside the cwd: the chart's git checkout.
        assert_eq!(read_root(&cwd, &chart_s, &[]), tmp.join("repo"));
        assert_eq!(placed(&cwd, &tmp.join("repo"), &chart_s), "charts/web");
        // A values file elsewhere widens the root to hold it.
        let values = cwd.join("v.yaml").display().to_string();
        assert_eq!(read_root(&cwd, &chart_s, &[&values]), tmp);
        // Below the cwd: the cwd, relative paths kept as written.
        let repo = tmp.join("repo");
        assert_eq!(read_root(&repo, "charts/web", &[]), repo);
        assert_eq!(placed(&repo, &repo, "charts/web"), "charts/web");
        assert_eq!(placed(&repo, &repo, &chart_s), "charts/web");
    }
}
