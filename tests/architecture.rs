//! The architecture invariants of ARCHITECTURE.md, held by reading the source: each test
//! fails when a change breaks the rule it names (an upward import, a rule reading files,
//! `unsafe` outside its one module, a new import cycle inside a folder).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stages in data-flow order. A module may import its own stage and earlier ones, never
/// a later one. Modules on one line are peers that must not import each other.
const LAYERS: &[&[&str]] = &[
    &["alloc", "base64", "glob", "hash"],
    &["source"],
    &["yaml", "finding"],
    &["remote"],
    &["object"],
    &["render"],
    &["config"],
    &["gitops"],
    &["ownership"],
    &["rules"],
    &["report"],
    &["baseline", "fix", "redact", "same_cause", "manifest_files"],
    &["lint", "github"],
    &["diff", "fetch"],
    &["fuzzing"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A crate's directory name, its place in the module tree (`render/gotmpl/`), and the path
/// renames that make its text read as if it were there.
type SplitCrate = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// The crates split out of src/ (crates/<name>/src), with where their files sit in the module
/// tree the main crate re-exports them at, and how their text names that tree.
const SPLIT_CRATES: &[SplitCrate] = &[
    ("gitops-lint-base", "", &[("gitops_lint_base::", "crate::")]),
    (
        "gitops-lint-gotmpl",
        "render/gotmpl/",
        &[
            ("crate::", "crate::render::gotmpl::"),
            ("gitops_lint_base::", "crate::"),
        ],
    ),
    (
        "gitops-lint-render",
        "",
        &[
            ("gitops_lint_base::", "crate::"),
            ("gitops_lint_gotmpl::", "crate::render::gotmpl::"),
        ],
    ),
    (
        "gitops-lint-model",
        "",
        &[
            ("gitops_lint_base::", "crate::"),
            ("gitops_lint_render::", "crate::"),
        ],
    ),
];

/// Every `.rs` file of the module tree (src/, and the split crates at their re-exported
/// place, e.g. crates/gitops-lint-gotmpl/src/exec.rs as `render/gotmpl/exec.rs`, their
/// `lib.rs` as the folder's `mod.rs`), but the binary's root and the main `lib.rs`, with
/// its text minus the unit-test module: tests may reach anywhere to set things up.
fn sources() -> Vec<(String, String)> {
    let mut out = files_under(&src_dir(), "", &[]);
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    for (name, at, renames) in SPLIT_CRATES {
        let found = files_under(&crates.join(name).join("src"), at, renames);
        assert!(!found.is_empty(), "crates/{name}/src has no sources");
        out.extend(found);
    }
    out.sort();
    out
}

fn files_under(root: &Path, at: &str, renames: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(root)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                if at.is_empty() && (rel == "main.rs" || rel == "lib.rs") {
                    continue;
                }
                let rel = match rel.as_str() {
                    "lib.rs" if at.is_empty() => continue,
                    "lib.rs" => format!("{at}mod.rs"),
                    _ => format!("{at}{rel}"),
                };
                let mut text =
                    without_tests(&std::fs::read_to_string(&path).unwrap_or_default()).to_string();
                // One pass per rename, through a marker, so `crate::` → `crate::render::…`
                // is not renamed again by a later pair.
                for (i, (from, _)) in renames.iter().enumerate() {
                    text = text.replace(from, &format!("\u{1}{i}\u{1}"));
                }
                for (i, (_, to)) in renames.iter().enumerate() {
                    text = text.replace(&format!("\u{1}{i}\u{1}"), to);
                }
                out.push((rel, text));
            }
        }
    }
    out.sort();
    out
}

fn without_tests(text: &str) -> &str {
    match text.find("\n#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    }
}

fn top_module(rel: &str) -> String {
    rel.split('/')
        .next()
        .unwrap_or_default()
        .trim_end_matches(".rs")
        .to_string()
}

/// `crate::name` references in code (comments dropped).
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
            rest = after;
        }
    }
    out
}

/// Modules of the binary (`mod x;` in main.rs): the top of the order, whose `crate::` paths
/// name the binary's own items.
fn binary_modules() -> Vec<String> {
    let main = std::fs::read_to_string(src_dir().join("main.rs")).unwrap_or_default();
    main.lines()
        .filter_map(|l| l.trim().strip_prefix("mod "))
        .filter_map(|l| l.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// The forbidden imports of `files`: (file, module it imports).
fn upward_imports(files: &[(String, String)]) -> Vec<(String, String)> {
    let mut bad = Vec::new();
    let binary = binary_modules();
    for (rel, text) in files {
        let me = top_module(rel);
        if binary.contains(&me) {
            continue;
        }
        let Some(mine) = layer_of(&me) else {
            bad.push((rel.clone(), format!("{me} (module not in LAYERS)")));
            continue;
        };
        for target in crate_refs(text) {
            if target == me {
                continue;
            }
            match layer_of(&target) {
                Some(theirs) if theirs < mine => {}
                _ => bad.push((rel.clone(), target)),
            }
        }
    }
    bad
}

#[test]
fn no_stage_imports_a_later_stage() {
    let bad = upward_imports(&sources());
    assert!(
        bad.is_empty(),
        "imports against the layer order of ARCHITECTURE.md (file → module):\n{}",
        bad.iter()
            .map(|(f, m)| format!("  src/{f} → crate::{m}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_layer_check_catches_a_forbidden_import() {
    // A renderer that reads the rules: the scratch change the invariant exists for.
    let scratch = vec![(
        "render/helm/scratch.rs".to_string(),
        "use crate::rules::registry;\nuse crate::yaml::Node;\n".to_string(),
    )];
    assert_eq!(
        upward_imports(&scratch),
        vec![("render/helm/scratch.rs".to_string(), "rules".to_string())]
    );
}

/// Rules are pure functions over the model: no file reads, no parsing (what a rule needs
/// from a file, the model gives: e.g. `Model::kustomization_files`).
fn rules_reading_files(files: &[(String, String)]) -> Vec<String> {
    let needles = [
        "std::fs",
        "RepoFs",
        "read_to_string",
        "parse_str(",
        "parse_file(",
    ];
    files
        .iter()
        .filter(|(rel, text)| rel.starts_with("rules/") && needles.iter().any(|n| text.contains(n)))
        .map(|(rel, _)| rel.clone())
        .collect()
}

#[test]
fn no_rule_reads_or_parses_files() {
    assert_eq!(
        rules_reading_files(&sources()),
        Vec::<String>::new(),
        "rules that read or parse files"
    );
}

#[test]
fn the_file_check_catches_a_rule_that_parses() {
    let scratch = vec![
        (
            "rules/scratch.rs".to_string(),
            "let parsed = parse_str(&file.text, id, &Limits::default());".to_string(),
        ),
        (
            "gitops/scratch.rs".to_string(),
            "let parsed = parse_str(&file.text, id, &Limits::default());".to_string(),
        ),
    ];
    assert_eq!(
        rules_reading_files(&scratch),
        vec!["rules/scratch.rs".to_string()]
    );
}

/// Rules that declare their kinds (`kinds: Kinds::Of(...)`) but walk `model.objects`
/// themselves instead of `model.in_scope()` (lookups through an app, `objects_of`, are free).
fn rules_filtering_kinds_by_hand(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(rel, text)| {
            let code: String = text
                .lines()
                .map(|l| l.split("//").next().unwrap_or_default())
                .collect::<String>()
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            rel.starts_with("rules/")
                && code.contains("kinds:Kinds::Of(")
                && code.match_indices("model.objects").any(|(i, m)| {
                    !code[i + m.len()..]
                        .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
        })
        .map(|(rel, _)| rel.clone())
        .collect()
}

#[test]
fn rules_with_kinds_read_their_objects_from_the_runner() {
    assert_eq!(
        rules_filtering_kinds_by_hand(&sources()),
        Vec::<String>::new(),
        "rules declaring Kinds::Of that iterate model.objects themselves"
    );
}

#[test]
fn the_kinds_check_catches_a_hand_filter() {
    let rule = |body: &str| {
        (
            "rules/scratch.rs".to_string(),
            format!(
                "pub const META: RuleMeta = RuleMeta {{ kinds: Kinds::Of(&[\"batch/Job\"]) }};\n{body}"
            ),
        )
    };
    let scratch = vec![
        rule("for mo in &model\n        .objects {\n if mo.object.kind != \"Job\" { continue; } }"),
        rule("for mo in model.in_scope() {}\nlet w = model.objects_of(app);"),
    ];
    assert_eq!(
        rules_filtering_kinds_by_hand(&scratch),
        vec!["rules/scratch.rs".to_string()]
    );
    assert_eq!(
        rules_filtering_kinds_by_hand(&scratch[1..]),
        Vec::<String>::new()
    );
}

#[test]
fn unsafe_code_is_denied_but_in_the_allocator_setting() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let libs = std::iter::once(src_dir().join("lib.rs")).chain(
        SPLIT_CRATES
            .iter()
            .map(|(name, ..)| crates.join(name).join("src/lib.rs")),
    );
    for lib_path in libs {
        let lib = std::fs::read_to_string(&lib_path).unwrap_or_default();
        assert!(
            lib.contains("#![deny(unsafe_code)]"),
            "{} must deny unsafe_code",
            lib_path.display()
        );
    }
    let main = std::fs::read_to_string(src_dir().join("main.rs")).unwrap_or_default();
    assert!(
        main.contains("#![forbid(unsafe_code)]"),
        "main.rs must forbid unsafe_code"
    );
    let allowed: Vec<String> = sources()
        .into_iter()
        .filter(|(_, t)| t.contains("allow(unsafe_code)"))
        .map(|(f, _)| f)
        .collect();
    assert_eq!(allowed, vec!["alloc.rs".to_string()]);
}

/// Import cycles between files of one folder (each a set of files). Known ones are debt;
/// the test fails on a new cycle and when a known one is gone (so the list shrinks).
const KNOWN_CYCLES: &[&[&str]] = &[
    &["render/gotmpl/exec.rs", "render/gotmpl/template.rs"],
    &["render/helm/builtins.rs", "render/helm/yamlout.rs"],
    &["render/helm/chart.rs", "render/helm/values.rs"],
];

fn folder_cycles(files: &[(String, String)]) -> Vec<BTreeSet<String>> {
    // Edges between sibling files: `super::x`, `crate::<folder path>::x`.
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let names: BTreeSet<String> = files.iter().map(|(f, _)| f.clone()).collect();
    for (rel, text) in files {
        let Some((folder, _)) = rel.rsplit_once('/') else {
            continue;
        };
        let module_path = folder.replace('/', "::");
        let parent_of = |f: &str| f.rsplit_once('/').map(|(d, _)| d.to_string());
        let mut targets = BTreeSet::new();
        for prefix in [format!("crate::{module_path}::"), "super::".to_string()] {
            let mut rest = text.as_str();
            while let Some(i) = rest.find(&prefix) {
                let after = &rest[i + prefix.len()..];
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // `super::` from a folder's mod.rs is the folder's parent: skip it.
                let folder_of_ref = if prefix == "super::" && rel.ends_with("/mod.rs") {
                    None
                } else {
                    Some(folder.to_string())
                };
                if let Some(dir) = folder_of_ref {
                    for cand in [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")] {
                        if names.contains(&cand) && cand != *rel {
                            targets.insert(cand);
                        }
                    }
                }
                rest = after;
            }
        }
        // mod.rs files are the folder itself: edges into them count like any file.
        let _ = parent_of;
        graph.entry(rel.clone()).or_default().extend(targets);
    }
    strongly_connected(&graph)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect()
}

/// Tarjan's algorithm, iterative enough for a few hundred files.
fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(edges) = s.graph.get(v) {
            for w in edges {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(lw));
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(iw));
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            s.out.push(comp);
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v.as_str());
        }
    }
    s.out
}

#[test]
fn no_import_cycles_inside_a_folder() {
    let found = folder_cycles(&sources());
    let known: Vec<BTreeSet<String>> = KNOWN_CYCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let mut found_sorted = found.clone();
    found_sorted.sort();
    let mut known_sorted = known.clone();
    known_sorted.sort();
    assert_eq!(
        found_sorted, known_sorted,
        "import cycles between files of one folder (left) vs the known list (right)"
    );
}

#[test]
fn the_cycle_check_catches_a_cycle() {
    let scratch = vec![
        ("gitops/a.rs".to_string(), "use super::b::X;".to_string()),
        (
            "gitops/b.rs".to_string(),
            "use crate::gitops::a::Y;".to_string(),
        ),
        ("gitops/c.rs".to_string(), "use super::a::Z;".to_string()),
    ];
    let cycles = folder_cycles(&scratch);
    assert_eq!(cycles.len(), 1);
    assert!(cycles[0].contains("gitops/a.rs") && cycles[0].contains("gitops/b.rs"));
}

/// Citations of the rules catalog, a document outside this repository: `catalog §5`,
/// `Catalog §15`, `catalog A4.1`, `catalog Part A`, `rules-catalog A5`, or a bare `§4`.
/// A comment states the fact itself or links upstream. Returns `file:line: text`.
fn catalog_citations(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (rel, text) in files {
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let cites_catalog = lower.match_indices("catalog").any(|(i, _)| {
                let after = lower[i + "catalog".len()..].trim_start_matches([' ', '\'', 's']);
                after.starts_with('§')
                    || after.starts_with("part ")
                    || (after.starts_with('a')
                        && after[1..].starts_with(|c: char| c.is_ascii_digit()))
            });
            let bare_section = line.match_indices('§').any(|(i, s)| {
                line[i + s.len()..]
                    .trim_start()
                    .starts_with(|c: char| c.is_ascii_digit())
            });
            if cites_catalog || bare_section {
                out.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    out
}

/// Every `.rs` file under src/, unit tests included (a citation is as lost there).
fn all_sources() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![src_dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(src_dir())
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                out.push((rel, std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn no_source_cites_the_rules_catalog() {
    let found = catalog_citations(&all_sources());
    assert!(
        found.is_empty(),
        "src/ cites the rules catalog, which is not in this repository; state the fact or link \
         upstream instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_catalog_check_catches_a_citation() {
    let scratch = vec![(
        "rules/scratch.rs".to_string(),
        "//! Catalog §15: a Job.\n// before 3.0 (catalog A1.4).\n/// rule §4 reports it\n\
         // the ctx.catalog field and the catalog's false positives are fine\n"
            .to_string(),
    )];
    assert_eq!(
        catalog_citations(&scratch),
        vec![
            "src/rules/scratch.rs:1: //! Catalog §15: a Job.".to_string(),
            "src/rules/scratch.rs:2: // before 3.0 (catalog A1.4).".to_string(),
            "src/rules/scratch.rs:3: /// rule §4 reports it".to_string(),
        ]
    );
}

/// The modules of `gitops/` the app model (`gitops/model/`) may name besides its own files:
/// each reads no declaration and names no other module of `gitops/`. The readers (argo, flux,
/// discover, …) build the model and import it; the model never imports them back.
const MODEL_LEAVES: &[&str] = &["ignore", "envsubst", "remotes"];

/// The `gitops/` modules `text` names: `crate::gitops::x`, `crate::gitops::{x, y::z}`, and
/// `parent::x` where `parent` is the path that means `gitops` from the file (`super` from
/// `model/mod.rs`, `super::super` from `model/x.rs`, `super` from a leaf).
fn gitops_refs(text: &str, parent: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    // Code only (comments dropped); `sources()` has already left the unit tests out.
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    for prefix in ["crate::gitops::".to_string(), format!("{parent}::")] {
        let mut rest = code.as_str();
        while let Some(i) = rest.find(&prefix) {
            // `super::super::x` is not `super::x` followed by `super`.
            let before = &rest[..i];
            let after = &rest[i + prefix.len()..];
            rest = after;
            if before.ends_with("::") || (prefix == "super::" && after.starts_with("super::")) {
                continue;
            }
            if let Some(group) = after.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or_default();
                out.extend(inner.split(',').map(ident).filter(|n| !n.is_empty()));
            } else {
                let name = ident(after);
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// What the model and its leaves name in `gitops/` that they may not, as `file: module`.
fn model_reaching_readers(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, text) in files {
        let (parent, allowed): (&str, Vec<&str>) = if rel == "gitops/model/mod.rs" {
            ("super", [&["model"][..], MODEL_LEAVES].concat())
        } else if rel.starts_with("gitops/model/") {
            ("super::super", [&["model"][..], MODEL_LEAVES].concat())
        } else if MODEL_LEAVES
            .iter()
            .any(|l| *rel == format!("gitops/{l}.rs"))
        {
            ("super", MODEL_LEAVES.to_vec())
        } else {
            continue;
        };
        for name in gitops_refs(text, parent) {
            // Leaves name their own items as `super::x` only inside tests (dropped above).
            if !allowed.contains(&name.as_str()) && name != "*" {
                bad.push(format!("{rel}: {name}"));
            }
        }
    }
    bad
}

#[test]
fn the_app_model_imports_no_reader() {
    let files = sources();
    assert!(
        files.iter().any(|(f, _)| f == "gitops/model/mod.rs"),
        "gitops/model/mod.rs not found"
    );
    let bad = model_reaching_readers(&files);
    assert!(
        bad.is_empty(),
        "the app model (gitops/model/) and its leaves may name only {MODEL_LEAVES:?} in gitops/; \
         found:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_model_check_catches_a_reader_import() {
    let scratch = |rel: &str, body: &str| vec![(rel.to_string(), body.to_string())];
    assert_eq!(
        model_reaching_readers(&scratch(
            "gitops/model/flux.rs",
            "use super::super::flux::post_build_vars;\nuse super::kinds::x;\n"
        )),
        vec!["gitops/model/flux.rs: flux"]
    );
    assert_eq!(
        model_reaching_readers(&scratch(
            "gitops/model/mod.rs",
            "use super::{argo, ignore::IgnoreEntry};\nuse crate::gitops::remotes::J;\n"
        )),
        vec!["gitops/model/mod.rs: argo"]
    );
    assert_eq!(
        model_reaching_readers(&scratch(
            "gitops/ignore.rs",
            "use crate::gitops::{App, envsubst};\n// super::discover in a comment\n"
        )),
        vec!["gitops/ignore.rs: App"]
    );
    assert!(
        model_reaching_readers(&scratch("gitops/argo.rs", "use super::discover::x;\n")).is_empty(),
        "a reader may import anything below it"
    );
}
