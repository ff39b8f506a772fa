//! The engine step of `helm template` (Helm's `pkg/engine`): gather the templates of the
//! chart and its subcharts with each chart's scoped data, parse them into one set in Helm's
//! order, execute every non-partial template, and report failures with Helm's texts.

use super::builtins::{Capabilities, ChartObject, Files, template_info};
use super::chart::Chart;
use super::values::{get, set, table};
use super::yamlout::lookup_func;
use crate::render::gotmpl::value::{Map, Value};
use crate::render::gotmpl::{ExecOptions, Output, Templates};
use crate::source::FileId;
use std::rc::Rc;

/// One template of the set.
pub struct TemplateEntry {
    /// Full name: `chart/templates/x.yaml`, `chart/charts/sub/templates/y.yaml`.
    pub name: String,
    pub text: String,
    pub file: Option<FileId>,
    pub base_path: String,
    /// The chart's data (`.Values`, `.Chart`, ...), shared by its templates as in Helm.
    pub data: Value,
    /// Values path of the chart's scope (`[]` for the root, `["sub"]` for a subchart).
    pub scope: Vec<String>,
}

/// A render failure: Helm's message and where it points.
#[derive(Debug, Clone)]
pub struct EngineFailure {
    pub message: String,
    /// Template name and byte offset in it, when known.
    pub at: Option<(String, usize)>,
}

/// Helm's `recAllTpls`: walk the chart tree building each chart's data and its templates.
pub fn all_templates(
    chart: &Chart,
    top: &Value,
    caps: &Rc<Capabilities>,
    out: &mut Vec<TemplateEntry>,
) {
    rec_all(chart, top, caps, out, &[], None);
}

fn rec_all(
    chart: &Chart,
    parent: &Value,
    caps: &Rc<Capabilities>,
    out: &mut Vec<TemplateEntry>,
    scope: &[String],
    parent_path: Option<&str>,
) -> Value {
    let is_root = parent_path.is_none();
    let subcharts = Value::map(Map::new());
    let mut next = Map::new();
    next.insert(
        "Chart".into(),
        Value::Object(Rc::new(ChartObject {
            meta: chart.metadata.clone(),
            is_root,
        })),
    );
    next.insert(
        "Files".into(),
        Value::Object(Rc::new(Files::from_chart(chart))),
    );
    next.insert("Release".into(), get(parent, "Release").unwrap_or_default());
    next.insert("Capabilities".into(), Value::Object(caps.clone()));
    let values = if is_root {
        get(parent, "Values").unwrap_or_else(|| Value::map(Map::new()))
    } else {
        table(parent, &format!("Values.{}", chart.name())).unwrap_or_else(|| Value::map(Map::new()))
    };
    next.insert("Values".into(), values);
    next.insert("Subcharts".into(), subcharts.clone());
    let next = Value::map(next);
    let full_path = match parent_path {
        None => chart.name().to_string(),
        Some(p) => format!("{p}/charts/{}", chart.name()),
    };
    for dep in &chart.dependencies {
        let mut sub_scope = scope.to_vec();
        sub_scope.push(dep.name().to_string());
        let sub = rec_all(dep, &next, caps, out, &sub_scope, Some(&full_path));
        set(&subcharts, dep.name(), sub);
    }
    for t in &chart.templates {
        let base = t.name.rsplit('/').next().unwrap_or(&t.name);
        // Library charts contribute only their partials.
        if chart.is_library() && !base.starts_with('_') {
            continue;
        }
        out.push(TemplateEntry {
            name: format!("{full_path}/{}", t.name),
            text: t.text().into_owned(),
            file: t.file,
            base_path: format!("{full_path}/templates"),
            data: next.clone(),
            scope: scope.to_vec(),
        });
    }
    next
}

/// Helm's `sortTemplates`: deeper paths first, then reverse lexical order. Later parses
/// win for duplicate `define`s, so the root chart's definitions take precedence.
pub fn sort_templates(entries: &mut [TemplateEntry]) {
    entries.sort_by(|a, b| {
        let (ca, cb) = (a.name.matches('/').count(), b.name.matches('/').count());
        cb.cmp(&ca).then_with(|| b.name.cmp(&a.name))
    });
}

pub fn is_partial(name: &str) -> bool {
    name.rsplit('/').next().unwrap_or(name).starts_with('_')
}

/// Render limits for one chart render.
#[derive(Clone, Debug)]
pub struct RenderLimits {
    pub max_steps: u64,
    pub max_output_bytes: usize,
    pub max_range_len: usize,
    pub max_include_depth: usize,
    /// Bytes of values the render may create (`limits.max-render-memory-bytes`).
    pub max_memory_bytes: usize,
    pub deadline: Option<std::time::Instant>,
    /// Random seed, clock and zone of the render (`None`: seed 0 and the real clock).
    pub clock: Option<RenderClock>,
}

/// What a render's random and time functions see; a second render with another clock
/// shows what is not a pure function of Git (`render-nondeterministic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderClock {
    pub seed: u64,
    pub now_unix_nanos: i128,
    pub utc_offset_secs: i32,
}

impl Default for RenderLimits {
    fn default() -> Self {
        RenderLimits::from_budget(&crate::render::RenderBudget::default())
    }
}

impl RenderLimits {
    /// The engine's share of a render budget, with the clock left to the caller.
    pub fn from_budget(b: &crate::render::RenderBudget) -> Self {
        RenderLimits {
            max_steps: b.max_template_steps,
            max_output_bytes: b.max_template_output_bytes,
            max_range_len: b.max_range_length,
            max_include_depth: b.max_include_depth,
            max_memory_bytes: b.max_render_memory_bytes,
            deadline: Some(b.deadline()),
            clock: None,
        }
    }
}

/// What the templates printed, in `entries` order.
pub struct Rendered {
    pub outputs: Vec<(usize, Output)>,
    /// A function read the seed, the clock or the zone: with another [`RenderClock`] the
    /// output may differ. Otherwise it cannot.
    pub clock_read: bool,
}

/// Parse every template, then execute the non-partials in order. The first failure stops
/// the render, as in Helm.
pub fn render_templates(
    entries: &[TemplateEntry],
    limits: &RenderLimits,
    record_segments: bool,
) -> Result<Rendered, EngineFailure> {
    let mut set = Templates::new(Rc::new(lookup_func));
    for e in entries {
        if let Err(err) = super::parse_cache::parse_into(&mut set, &e.name, &e.text) {
            return Err(EngineFailure {
                message: cleanup_parse_error(&e.name, &err.message),
                at: Some((err.file.clone(), line_offset(entries, &err.file, err.line))),
            });
        }
    }
    let mut opts = ExecOptions::helm();
    opts.max_steps = limits.max_steps;
    opts.max_output_bytes = limits.max_output_bytes;
    opts.max_range_len = limits.max_range_len;
    opts.max_include_depth = limits.max_include_depth;
    opts.deadline = limits.deadline;
    opts.record_segments = record_segments;
    let mut env = match limits.clock {
        Some(c) => {
            crate::render::gotmpl::funcs::FuncEnv::new(c.seed, c.now_unix_nanos, c.utc_offset_secs)
        }
        // No clock given: `helm template` / `render`, whose output is printed and may be
        // applied, so passwords and keys must not be reproducible (as in helm).
        None => {
            let mut env = super::yamlout::func_env();
            env.entropy = crate::render::gotmpl::funcs::Entropy::Os;
            env
        }
    };
    env.memory = crate::render::gotmpl::funcs::memory::MemoryBudget::new(limits.max_memory_bytes);
    env.deadline = limits.deadline;
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if is_partial(&e.name) {
            continue;
        }
        set_key(&e.data, "Template", template_info(&e.name, &e.base_path));
        match set.execute(&e.name, e.data.clone(), &opts, &mut env) {
            Ok(output) => out.push((i, output)),
            Err(err) => {
                let at = err.pos.as_ref().map(|p| (p.file.to_string(), p.offset));
                return Err(EngineFailure {
                    message: reformat_exec_error(&e.name, &err.message),
                    at: at.or_else(|| Some((e.name.clone(), 0))),
                });
            }
        }
    }
    Ok(Rendered {
        outputs: out,
        clock_read: env.clock_was_read(),
    })
}

fn set_key(data: &Value, key: &str, v: Value) {
    if let Value::Map(m) = data {
        m.borrow_mut().insert(key.to_string(), v);
    }
}

fn line_offset(entries: &[TemplateEntry], name: &str, line: usize) -> usize {
    let Some(e) = entries.iter().find(|e| e.name == name) else {
        return 0;
    };
    let mut offset = 0;
    for (i, l) in e.text.split_inclusive('\n').enumerate() {
        if i + 1 >= line {
            break;
        }
        offset += l.len();
    }
    offset
}

/// Helm's `cleanupParseError`: `parse error at (FILE:LINE): MESSAGE`.
pub fn cleanup_parse_error(filename: &str, err: &str) -> String {
    let tokens: Vec<&str> = err.split(": ").collect();
    if tokens.len() == 1 {
        return format!("parse error in ({filename}): {err}");
    }
    let location = tokens[1];
    let msg = tokens[tokens.len() - 1];
    format!("parse error at ({location}): {msg}")
}

/// Helm's `reformatExecErrorMsg`: `fail`/`required` messages become
/// `execution error at (FILE:LINE:COL): MESSAGE`; other errors stay as Go prints them.
pub fn reformat_exec_error(filename: &str, err: &str) -> String {
    let tokens: Vec<&str> = err.splitn(3, ": ").collect();
    if tokens.len() != 3 {
        return format!("execution error in ({filename}): {err}");
    }
    let location = tokens[1];
    if let Some(start) = tokens[2].find("HELM_ERR_START")
        && let Some(end) = tokens[2].rfind("HELM_ERR_END")
        && end >= start + "HELM_ERR_START".len()
    {
        let msg = &tokens[2][start + "HELM_ERR_START".len()..end];
        return format!("execution error at ({location}): {msg}");
    }
    // `fail` always carries Helm's markers; accept a library that leaves them out.
    if let Some(i) = tokens[2].find("error calling fail: ") {
        let msg = &tokens[2][i + "error calling fail: ".len()..];
        return format!("execution error at ({location}): {msg}");
    }
    err.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_error_texts() {
        assert_eq!(
            cleanup_parse_error(
                "c/templates/a.yaml",
                "template: c/templates/a.yaml:3: function \"nope\" not defined"
            ),
            "parse error at (c/templates/a.yaml:3): function \"nope\" not defined"
        );
        assert_eq!(
            reformat_exec_error(
                "c/templates/a.yaml",
                "template: c/templates/a.yaml:3:4: executing \"c/templates/a.yaml\" at <fail \"x\">: error calling fail: HELM_ERR_STARTboomHELM_ERR_END"
            ),
            "execution error at (c/templates/a.yaml:3:4): boom"
        );
    }

    #[test]
    fn partials_and_order() {
        assert!(is_partial("c/templates/_helpers.tpl"));
        assert!(!is_partial("c/templates/a.yaml"));
        let mk = |n: &str| TemplateEntry {
            name: n.into(),
            text: String::new(),
            file: None,
            base_path: String::new(),
            data: Value::Nil,
            scope: vec![],
        };
        let mut v = vec![
            mk("c/templates/a.yaml"),
            mk("c/charts/s/templates/b.yaml"),
            mk("c/templates/b.yaml"),
        ];
        sort_templates(&mut v);
        let names: Vec<&str> = v.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "c/charts/s/templates/b.yaml",
                "c/templates/b.yaml",
                "c/templates/a.yaml"
            ]
        );
    }
}
