//! Entry points of the fuzz targets (`fuzz/fuzz_targets/*.rs`), kept in the library so the
//! regression tests (`tests/fuzz_regressions.rs`) run a saved input through exactly the code
//! the fuzzer ran. Each takes raw bytes, decodes them into the inputs of one stage and runs
//! it. Bad input must come back as diagnostics; a panic, hang or runaway allocation is a bug.
//! The only assertion here is a property that must hold for every input (the emitter's
//! round trip), so a failed one is a bug too.

use crate::lint::{LintError, LintResult, lint_memory};
use crate::render::RenderOutput;
use crate::render::gotmpl::funcs::{self, FuncEnv};
use crate::render::gotmpl::value::{Map, Value};
use crate::render::gotmpl::{ExecOptions, Output, Templates};
use crate::render::helm::values::node_to_value;
use crate::render::kustomize::{self, BuildOptions};
use crate::source::{FileId, MemFs, MemTree, SourceMap};
use crate::yaml::{Limits, Node, emit, parse_str};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

/// Fuzz inputs are small; files in them are capped like the walker caps repo files.
const MAX_FILE_BYTES: u64 = 1 << 20;

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// `path\0content\0path\0content…` → a tree (a trailing path without content is an empty
/// file). Paths are whatever the bytes say: MemTree drops those that climb above the root.
pub fn decode_tree(data: &[u8]) -> MemTree {
    let mut tree = MemTree::new();
    let mut parts = data.split(|&b| b == 0);
    while let Some(path) = parts.next() {
        let content = parts.next().unwrap_or_default();
        tree.insert(&text(path), content.to_vec());
    }
    tree
}

/// The first document of a YAML text, or null (also for invalid YAML: the target is
/// about what consumes the node, not about parse errors).
fn first_doc(text: &str) -> Node {
    let parsed = parse_str(text, FileId::default(), &Limits::default());
    parsed
        .docs
        .into_iter()
        .next()
        .map(|d| d.root)
        .unwrap_or_else(|| Node::new(crate::yaml::Value::Null, Default::default()))
}

/// `yaml_load`: parse with the default limits; print every document with the
/// kustomize-compatible emitter and check the printed YAML is a fixed point (it parses
/// without error and prints the same values again).
pub fn yaml_load(data: &[u8]) {
    let input = text(data);
    let parsed = parse_str(&input, FileId::default(), &Limits::default());
    for doc in &parsed.docs {
        let _ = doc.root.to_json();
        let printed = emit::to_yaml(&doc.root);
        let again = parse_str(&printed, FileId::default(), &Limits::default());
        if let Some(e) = &again.error {
            panic!(
                "emitted YAML does not parse ({} at {}):\n{printed}",
                e.message, e.span.start
            );
        }
        // Compared as JSON (maps ignore order): go-yaml's key order, which the emitter
        // copies, is not a total order, so the text may list keys differently each time.
        let reprinted = emit::to_yaml_stream(again.docs.iter().map(|d| &d.root));
        let third = parse_str(&reprinted, FileId::default(), &Limits::default());
        let json = |p: &crate::yaml::Parsed| -> Vec<serde_json::Value> {
            p.docs.iter().map(|d| d.root.to_json()).collect()
        };
        assert_eq!(
            json(&again),
            json(&third),
            "emitter output is not a fixed point:\n{printed}---\n{reprinted}"
        );
    }
}

/// Limits low enough that one execution of any template takes milliseconds.
pub fn gotmpl_options() -> ExecOptions {
    ExecOptions {
        max_include_depth: 50,
        max_steps: 20_000,
        max_output_bytes: 1 << 20,
        max_range_len: 10_000,
        ..ExecOptions::helm()
    }
}

/// `gotmpl`: `TEMPLATE\0VALUES-YAML`. Parses the template with Sprig and Helm's functions
/// and executes it with `.Values` from the YAML (Helm's values conversion) and `.Release`,
/// under [`gotmpl_options`].
pub fn gotmpl(data: &[u8]) -> Option<Output> {
    let (tmpl, values) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let values = node_to_value(&first_doc(&text(values)));
    let mut set = Templates::new(Rc::new(funcs::lookup));
    set.parse("chart/templates/t.yaml", &text(tmpl)).ok()?;
    let mut release = Map::new();
    release.insert("Name".to_string(), Value::str("release"));
    release.insert("Namespace".to_string(), Value::str("default"));
    // The values are also the dot itself, so templates written against `.` (Sprig's and
    // Go's own test vectors) see them too.
    let mut dot = match &values {
        Value::Map(m) => m.borrow().clone(),
        _ => Map::new(),
    };
    dot.insert("Values".to_string(), values);
    dot.insert("Release".to_string(), Value::map(release));
    set.execute(
        "chart/templates/t.yaml",
        Value::map(dot),
        &gotmpl_options(),
        &mut FuncEnv::default(),
    )
    .ok()
}

/// `kustomize_build`: `KUSTOMIZATION\0path\0content…`: the first part is the root
/// kustomization.yaml, the rest a file tree beside it; builds the root.
pub fn kustomize_build(data: &[u8]) -> (RenderOutput, Arc<SourceMap>) {
    let (kustomization, rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let mut tree = decode_tree(rest);
    tree.insert("kustomization.yaml", kustomization.to_vec());
    let map = Arc::new(SourceMap::new());
    let fs = MemFs::new(Arc::new(tree), map.clone(), MAX_FILE_BYTES);
    let opts = BuildOptions {
        max_resources: 2_000,
        ..BuildOptions::default()
    };
    let out = kustomize::build(&fs, "", &opts);
    let _ = kustomize::to_yaml_stream(&out.objects);
    (out, map)
}

/// `patch`: `FLAGS OBJECT-YAML\0PATCH-YAML`. The first byte's low bits say whether the
/// object is a builtin kind (schema merge keys) and whether lists of custom resources merge
/// by inferred keys; a sequence patch is JSON 6902, anything else a strategic merge.
pub fn patch(data: &[u8]) -> Option<Node> {
    let (&flags, rest) = data.split_first()?;
    let (object, patch) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let mut object = first_doc(&text(object));
    let patch = first_doc(&text(patch));
    let _ = kustomize::apply_patch(&mut object, &patch, flags & 1 != 0, flags & 2 != 0);
    let _ = emit::to_yaml(&object);
    Some(object)
}

/// `lint_repo`: the whole pipeline on a tree (`path\0content…`) with every rule at its
/// default; a `.gitops-lint.yaml` in the tree is the configuration.
pub fn lint_repo(data: &[u8]) -> Result<LintResult, LintError> {
    let tree = decode_tree(data);
    let config = tree.get(".gitops-lint.yaml").map(|b| text(b).into_owned());
    lint_memory(
        PathBuf::from("fuzz-repo"),
        Arc::new(tree),
        config.as_deref(),
    )
}
