//! Render kustomizations natively: `kbuild ROOT DIR...` prints `kubectl kustomize ROOT/DIR`'s
//! output for each DIR (repo-relative to ROOT), or the issues on stderr.
//! `kbuild -q --batch FILE` builds every `ROOT|DIR` line of FILE in one process (as
//! gitops-lint renders all apps of a repository) and prints nothing. Used by
//! `bench/kustomize.sh` until `gitops-lint render` exists.

use gitops_lint::render::kustomize::{BuildOptions, build, to_yaml_stream};
use gitops_lint::source::{DiskFs, RepoFs, SourceMap};
use std::sync::Arc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quiet = args.iter().any(|a| a == "-q");
    let args: Vec<&String> = args.iter().filter(|a| *a != "-q").collect();
    if args.first().is_some_and(|a| *a == "--batch") {
        let list = args
            .get(1)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .unwrap_or_default();
        let mut failed = 0;
        for line in list.lines() {
            let Some((root, dir)) = line.split_once('|') else {
                continue;
            };
            let Ok(root) = std::fs::canonicalize(root) else {
                continue;
            };
            let fs = DiskFs::new(root, Arc::new(SourceMap::new()), 64 << 20);
            let out = build(&fs, dir, &BuildOptions::default());
            let _ = to_yaml_stream(&out.objects);
            failed += usize::from(!out.issues.is_empty());
        }
        eprintln!("kbuild: {} builds, {failed} failed", list.lines().count());
        return;
    }
    let Some((root, dirs)) = args.split_first() else {
        eprintln!("usage: kbuild [-q] ROOT DIR...");
        std::process::exit(2);
    };
    let Ok(root) = std::fs::canonicalize(root) else {
        eprintln!("kbuild: {root} does not exist");
        std::process::exit(2);
    };
    let fs = DiskFs::new(root, Arc::new(SourceMap::new()), 64 << 20);
    let mut code = 0;
    for dir in dirs {
        let out = build(&fs, dir, &BuildOptions::default());
        for issue in &out.issues {
            let map = fs.source_map();
            let lc = map.line_col(issue.span);
            eprintln!(
                "{}:{}:{}: {:?}: {}",
                map.path(issue.span.file),
                lc.line,
                lc.column,
                issue.kind,
                issue.message
            );
            code = 1;
        }
        if !quiet {
            print!("{}", to_yaml_stream(&out.objects));
        }
    }
    std::process::exit(code);
}
