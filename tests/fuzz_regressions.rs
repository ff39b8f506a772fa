//! Inputs the fuzzers (fuzz/) once crashed, hung or exhausted memory on, run through the same
//! entry points (`gitops_lint::fuzzing`). Each must now finish without a panic, and whatever
//! it reports must be located inside the input it read.
//! Files: testdata/fuzz-regressions/<target>/<name> (raw fuzzer input, minimised), and
//! `seed-*` inputs from the target's fuzzing corpus, so every target runs something.

use gitops_lint::fuzzing;
use gitops_lint::source::{SourceMap, Span};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The hangs ran for minutes before their fix and take seconds of CPU after it; a minute of
/// wall time leaves room for a busy CI machine.
const TIME_LIMIT: Duration = Duration::from_secs(60);

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/fuzz-regressions")
        .join(target);
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn run_all(target: &str, f: impl Fn(&Path, &[u8])) {
    let inputs = inputs(target);
    // A target without inputs would pass without running anything: each keeps at least a
    // few seeds from its fuzzing corpus (`seed-*`) beside the inputs that once failed.
    assert!(
        !inputs.is_empty(),
        "testdata/fuzz-regressions/{target}/ holds no input"
    );
    for (path, data) in inputs {
        eprintln!("{target}: {}", path.display());
        let start = Instant::now();
        f(&path, &data);
        let took = start.elapsed();
        assert!(took < TIME_LIMIT, "{}: took {took:?}", path.display());
    }
}

/// A span points into a file the map holds, within its text.
fn assert_located(map: &SourceMap, span: Span, what: &str, input: &Path) {
    assert!(
        (span.file.0 as usize) < map.len(),
        "{}: {what} points at unknown file {:?}",
        input.display(),
        span.file
    );
    let len = map.get(span.file).text.len();
    assert!(
        span.start <= span.end && span.end as usize <= len,
        "{}: {what} span {}..{} outside its file of {len} bytes",
        input.display(),
        span.start,
        span.end
    );
}

#[test]
fn yaml_load() {
    // The entry point asserts the emitter's round trip itself.
    run_all("yaml_load", |_, data| fuzzing::yaml_load(data));
}

#[test]
fn gotmpl() {
    run_all("gotmpl", |_, data| {
        if let Some(out) = fuzzing::gotmpl(data) {
            assert!(out.text.len() <= fuzzing::gotmpl_options().max_output_bytes);
        }
    });
}

#[test]
fn kustomize_build() {
    run_all("kustomize_build", |path, data| {
        let (out, map) = fuzzing::kustomize_build(data);
        for issue in &out.issues {
            assert_located(&map, issue.span, &issue.message, path);
        }
    });
}

#[test]
fn patch() {
    run_all("patch", |_, data| {
        let _ = fuzzing::patch(data);
    });
}

#[test]
fn lint_repo() {
    run_all("lint_repo", |path, data| match fuzzing::lint_repo(data) {
        Ok(result) => {
            for f in &result.findings {
                assert_located(&result.map, f.primary.span, &f.message, path);
            }
        }
        Err(e) => assert!(!e.message.is_empty(), "{}: empty error", path.display()),
    });
}
