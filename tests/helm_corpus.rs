//! Native `helm template` against the recorded oracle (helm v3.18.0) in the shared corpus:
//! helm's own goldens (`helm-testdata/INDEX.tsv`) and 26 real charts × values
//! (`charts-expected/INDEX.tsv`). Every case either passes or is listed, with its reason,
//! in `testdata/helm/known-differences.tsv`; a listed case that starts passing fails the
//! test too, so the list stays true.
//!
//! The corpus is found through `GITOPS_LINT_CORPUS` (default `../shared/corpus`); when it
//! is absent the tests print why and pass.

use crate::common;
use gitops_lint::render::helm::{Run, cli_fs, parse_helm_template_args, run};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use common::{corpus, read_tsv, shell_words};
use std::path::Path;

/// Run `helm template ARGS` natively with `cwd` as the filesystem root.
fn native(cwd: &Path, args: &[String]) -> (String, String, i32) {
    let fs = match cli_fs(cwd) {
        Ok(fs) => fs,
        Err(e) => return (String::new(), format!("Error: {e}\n"), 1),
    };
    match parse_helm_template_args(args) {
        Err(e) => (String::new(), format!("Error: {e}\n"), 1),
        Ok((chart, mut opts)) => {
            opts.abs_root = Some(fs.root().display().to_string());
            let r: Run = run(&fs, &chart, &opts, false);
            (r.stdout.clone(), r.stderr(), r.exit_code())
        }
    }
}

fn known_differences() -> BTreeMap<(String, String), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/helm/known-differences.tsv");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut p = l.splitn(3, '\t');
            Some((
                (p.next()?.to_string(), p.next()?.to_string()),
                p.next().unwrap_or("").to_string(),
            ))
        })
        .collect()
}

/// Compare results with the known-differences list for one suite.
fn judge(suite: &str, results: &[(String, Result<(), String>)]) {
    let known = known_differences();
    let listed: BTreeSet<String> = known
        .keys()
        .filter(|(s, _)| s == suite)
        .map(|(_, c)| c.clone())
        .collect();
    let passed = results.iter().filter(|(_, r)| r.is_ok()).count();
    println!("{suite}: {passed}/{}", results.len());
    let mut problems = Vec::new();
    for (case, r) in results {
        match (r, listed.contains(case)) {
            (Ok(()), true) => problems.push(format!(
                "{suite} {case}: passes now; remove it from known-differences.tsv"
            )),
            (Err(why), false) => problems.push(format!("{suite} {case}: {why}")),
            _ => {}
        }
    }
    for l in &listed {
        if !results.iter().any(|(c, _)| c == l) {
            problems.push(format!("{suite} {l}: listed but not in the corpus"));
        }
    }
    if std::env::var("HELM_CORPUS_VERBOSE").is_ok() {
        for (case, r) in results {
            if let Err(why) = r {
                println!("FAIL {suite} {case}: {why}");
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} unexpected results:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn first_diff(exp: &str, got: &str, skip: &BTreeSet<usize>) -> Option<String> {
    let e: Vec<&str> = exp.split('\n').collect();
    let g: Vec<&str> = got.split('\n').collect();
    for (i, (x, y)) in e.iter().zip(g.iter()).enumerate() {
        if x != y && !skip.contains(&(i + 1)) {
            return Some(format!("line {}: want {:?}, got {:?}", i + 1, x, y));
        }
    }
    if e.len() != g.len() {
        return Some(format!("{} lines, want {}", g.len(), e.len()));
    }
    None
}

#[test]
fn helm_goldens() {
    let Some(root) = corpus() else { return };
    let dir = root.join("helm-testdata");
    let cwd_prefix = format!(
        "{}/",
        std::fs::canonicalize(&dir).unwrap_or(dir.clone()).display()
    );
    let mut results = Vec::new();
    for row in read_tsv(&dir.join("INDEX.tsv")) {
        let (name, cmd, golden, rc) = (&row[0], &row[1], &row[2], &row[4]);
        let oracle = row.get(6).cloned().unwrap_or_default();
        let expected_file = if oracle.is_empty() {
            golden.clone()
        } else {
            oracle
        };
        let expected = std::fs::read_to_string(dir.join(&expected_file)).unwrap_or_default();
        let args = shell_words(cmd);
        let (out, err, code) = native(&dir, &args);
        let got = format!("{out}{err}").replace(&cwd_prefix, "<CWD>/");
        let verdict = if code.to_string() != *rc {
            Err(format!(
                "exit {code}, want {rc}: {}",
                got.lines().next().unwrap_or("")
            ))
        } else if cmd.contains("--debug") {
            // Timestamps and a stack trace follow: compare the first line only.
            if got.lines().next() == expected.lines().next() {
                Ok(())
            } else {
                Err("first line differs".into())
            }
        } else {
            match first_diff(&expected, &got, &BTreeSet::new()) {
                None => Ok(()),
                Some(d) => Err(d),
            }
        };
        results.push((name.clone(), verdict));
    }
    judge("helm goldens", &results);
}

#[test]
fn helm_charts() {
    let Some(root) = corpus() else { return };
    let mut skip: HashMap<String, BTreeSet<usize>> = HashMap::new();
    for r in read_tsv(&root.join("charts-expected/NONDETERMINISTIC.tsv")) {
        if let Ok(n) = r[3].parse() {
            skip.entry(r[2].clone()).or_default().insert(n);
        }
    }
    let mut results = Vec::new();
    for row in read_tsv(&root.join("charts-expected/INDEX.tsv")) {
        let (chart, case, cmd, out_file, err_file, rc) =
            (&row[0], &row[1], &row[2], &row[4], &row[5], &row[6]);
        let args: Vec<String> = shell_words(cmd).into_iter().skip(1).collect();
        let (out, err, code) = native(&root, &args);
        let expected = std::fs::read_to_string(root.join(out_file)).unwrap_or_default();
        let expected_err = if err_file.is_empty() {
            String::new()
        } else {
            std::fs::read_to_string(root.join(err_file)).unwrap_or_default()
        };
        let no_skip = BTreeSet::new();
        let verdict = if code.to_string() != *rc {
            Err(format!(
                "exit {code}, want {rc}: {}",
                err.lines().find(|l| l.starts_with("Error")).unwrap_or("")
            ))
        } else if err.lines().next() != expected_err.lines().next() {
            Err(format!(
                "stderr {:?}, want {:?}",
                err.lines().next(),
                expected_err.lines().next()
            ))
        } else {
            match first_diff(&expected, &out, skip.get(out_file).unwrap_or(&no_skip)) {
                None => Ok(()),
                Some(d) => Err(d),
            }
        };
        results.push((format!("{chart}/{case}"), verdict));
    }
    judge("charts", &results);
}

/// The linter's path (objects with provenance) on every chart case: no panic, one object
/// per printed manifest, and every object's spans point into a template or values file.
#[test]
fn helm_charts_objects_with_provenance() {
    let Some(root) = corpus() else { return };
    let mut checked = 0;
    for row in read_tsv(&root.join("charts-expected/INDEX.tsv")) {
        let (cmd, rc, docs) = (&row[2], &row[6], &row[7]);
        if rc != "0" {
            continue;
        }
        let args: Vec<String> = shell_words(cmd).into_iter().skip(1).collect();
        let Ok(fs) = cli_fs(&root) else { continue };
        let Ok((chart, opts)) = parse_helm_template_args(&args) else {
            continue;
        };
        let r = run(&fs, &chart, &opts, true);
        if r.failure.is_some() {
            continue; // listed in known-differences
        }
        let want: usize = docs.parse().unwrap_or(0);
        // Comment-only documents are printed but are not objects.
        assert!(
            r.objects.len() <= want && r.objects.len() + 3 >= want,
            "{cmd}: {} objects, {want} documents",
            r.objects.len()
        );
        let map = fs.map();
        for o in &r.objects {
            let path = map.path(o.root.span.file);
            assert!(
                !path.ends_with("(rendered)"),
                "{cmd}: {} not mapped back ({path})",
                o.display_id()
            );
        }
        checked += 1;
    }
    println!("objects with provenance: {checked} chart cases");
}
