//! Timing of native `helm template` over every chart case of the corpus (run by
//! `bench/helm.sh` in release mode; ignored in normal test runs).

use gitops_lint::render::helm::render::RenderClock;
use gitops_lint::render::helm::{cli_fs, parse_helm_template_args, run};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn corpus() -> Option<PathBuf> {
    let base = std::env::var("GITOPS_LINT_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    let helm = base.join("helm");
    helm.join("charts-expected/INDEX.tsv")
        .is_file()
        .then_some(helm)
}

#[test]
#[ignore = "benchmark: run through bench/helm.sh"]
fn bench_native_corpus() {
    let Some(root) = corpus() else {
        eprintln!("helm corpus not found; skipping");
        return;
    };
    let index = std::fs::read_to_string(root.join("charts-expected/INDEX.tsv")).unwrap_or_default();
    let rounds: usize = std::env::var("HELM_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    // HELM_BENCH_FILTER=text keeps the cases whose command contains it (for profiling one).
    let filter = std::env::var("HELM_BENCH_FILTER").unwrap_or_default();
    // HELM_BENCH_AS_LINT=1 renders each case as `lint` renders an app's chart: with lint's
    // fixed clock and seed (stand-in keys, whose output is never printed) and the objects
    // built with their provenance. Otherwise as `helm template`: real keys and randomness.
    let as_lint = std::env::var("HELM_BENCH_AS_LINT").is_ok_and(|v| v == "1");
    let cases: Vec<Vec<String>> = index
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(2))
        .filter(|cmd| cmd.contains(&filter))
        .map(|cmd| cmd.split_whitespace().skip(1).map(str::to_string).collect())
        .collect();
    // As the binary does at start-up.
    gitops_lint::alloc::keep_freed_pages();
    let start = Instant::now();
    let mut failures = 0;
    for _ in 0..rounds {
        for args in &cases {
            // A fresh filesystem per case: no file or chart is kept between renders. Parsed
            // templates are (per process, by text), as in a `lint` rendering many apps.
            let Ok(fs) = cli_fs(&root) else { continue };
            let Ok((chart, mut opts)) = parse_helm_template_args(args) else {
                continue;
            };
            if as_lint {
                opts.clock = Some(RenderClock {
                    seed: 1,
                    now_unix_nanos: 1_767_225_600_000_000_000,
                    utc_offset_secs: 0,
                });
            }
            let t = Instant::now();
            let r = run(&fs, &chart, &opts, as_lint);
            if std::env::var("HELM_BENCH_VERBOSE").is_ok() {
                let failed = r.failure.as_ref().map(|f| {
                    let first = f.message.lines().next().unwrap_or("");
                    format!("  FAILED: {}", first.chars().take(100).collect::<String>())
                });
                println!(
                    "{:>8.1} ms  {}{}",
                    t.elapsed().as_secs_f64() * 1e3,
                    args.join(" "),
                    failed.unwrap_or_default()
                );
            }
            if r.failure.is_some() {
                failures += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64() / rounds as f64;
    println!(
        "native{}: {} cases in {secs:.3} s per round ({rounds} rounds, {failures} failed renders)",
        if as_lint { " as lint renders" } else { "" },
        cases.len()
    );
}
