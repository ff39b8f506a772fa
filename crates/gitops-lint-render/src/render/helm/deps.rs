//! Dependencies as Helm processes them before rendering (`pkg/chartutil/dependencies.go`):
//! missing vendored charts, aliases, enabling by tags and conditions, import-values.

use super::chart::{Chart, Dependency, ImportValue};
use super::coalesce::{coalesce_tables, coalesce_values, merge_values, trim_nil_values};
use super::semver::is_compatible_range;
use super::values::{deep_copy, path_to_map, path_value, table};
use super::{Failure, TemplateOptions};
use crate::remote::RemoteRef;
use crate::render::gotmpl::value::{Map, Value};
use crate::render::{Fetched, IssueKind, RemoteUse, RenderIssue};
use crate::source::RepoFs;

/// The remote input a Chart.yaml dependency names, when `helm dependency build` would
/// download it: a chart repository URL or an `oci://` registry. `file://` paths are local;
/// `@name` / `alias:name` name a repository added with `helm repo add`, which the repo does
/// not describe.
pub fn remote_reference(d: &Dependency) -> Option<RemoteRef> {
    let repo = d.repository.trim();
    if repo.starts_with("oci://") {
        return Some(RemoteRef::oci(repo, &d.name, &d.version));
    }
    (repo.starts_with("https://") || repo.starts_with("http://"))
        .then(|| RemoteRef::helm(repo, &d.name, &d.version))
}

/// The Chart.yaml dependencies that `charts/` does not hold (by name), as `helm dependency
/// build` would look for them.
fn not_vendored(chart: &Chart) -> Vec<Dependency> {
    chart
        .metadata
        .dependencies
        .iter()
        .filter(|d| !chart.dependencies.iter().any(|c| c.name() == d.name))
        .cloned()
        .collect()
}

/// Dependencies missing from `charts/` that name a remote chart: each is recorded in `uses`,
/// and loaded from the cache when `fetch` put it there (as `helm dependency build` would have
/// unpacked it into `charts/`). One that is not fetched is an unrenderable input saying so
/// (in a partial render, one issue each in `left_out`, and the chart renders without it);
/// a broken cache entry fails the render.
pub(super) fn fetched_dependencies(
    fs: &dyn RepoFs,
    chart: &mut Chart,
    opts: &TemplateOptions,
    uses: &mut Vec<RemoteUse>,
    left_out: &mut Vec<RenderIssue>,
) -> Result<(), Failure> {
    let mut missing = Vec::new();
    let wanted = not_vendored(chart);
    for d in wanted {
        let Some(reference) = remote_reference(&d) else {
            continue;
        };
        uses.push(RemoteUse {
            reference: reference.clone(),
            span: d.name_span,
            floats: false,
        });
        if opts.remotes.store().is_none() {
            // `helm template` itself (no lock, no cache): helm's own message follows.
            continue;
        }
        match opts.remotes.chart(&reference) {
            Fetched::Ready { root } => {
                let sub = super::chart::load(fs, &root, &root).map_err(|e| {
                    Failure::new(format!("dependency {}: {reference}: {e}", d.name))
                        .at(Some(d.name_span))
                })?;
                chart.dependencies.push(sub);
            }
            Fetched::Missing(why) if opts.partial_dependencies => {
                chart.metadata.dependencies.retain(|m| m.name != d.name);
                left_out.push(RenderIssue {
                    kind: IssueKind::Unrenderable,
                    span: d.name_span,
                    message: format!(
                        "dependency `{}`: {why}; the chart is rendered without it",
                        d.name
                    ),
                    input: crate::render::MissingInput::fetchable(reference.to_string()),
                });
            }
            Fetched::Missing(why) => {
                missing.push((d.name_span, format!("dependency `{}`: {why}", d.name)))
            }
            Fetched::Broken(why) => {
                return Err(
                    Failure::new(format!("dependency `{}`: {why}", d.name)).at(Some(d.name_span))
                );
            }
        }
    }
    if let Some((span, _)) = missing.first() {
        let text: Vec<String> = missing.iter().map(|(_, m)| m.clone()).collect();
        return Err(Failure {
            kind: IssueKind::Unrenderable,
            ..Failure::new(format!(
                "chart dependencies are not vendored in charts/: {}",
                text.join("; ")
            ))
            .at(Some(*span))
        });
    }
    Ok(())
}

/// Missing dependencies with a `file://` repository, loaded from that directory of the repo:
/// `helm dependency build`, which Argo CD and Flux's source-controller run before
/// rendering, copies them into `charts/` from there. A path that leaves the repository or
/// holds no chart stays missing.
pub(super) fn local_file_dependencies(fs: &dyn RepoFs, chart: &mut Chart, chart_dir: &str) {
    let wanted = not_vendored(chart);
    for d in wanted {
        let Some(rel) = d.repository.trim().strip_prefix("file://") else {
            continue;
        };
        let Some(dir) = crate::source::normalize_relative(&format!("{chart_dir}/{rel}")) else {
            continue;
        };
        if !fs.is_file(&format!("{dir}/Chart.yaml")) {
            continue;
        }
        if let Ok(sub) = super::chart::load(fs, &dir, &dir)
            && sub.name() == d.name
        {
            chart.dependencies.push(sub);
        }
    }
}

/// A partial render's answer to missing dependencies: each is left out of the chart (so the
/// parent's own templates render, as they would with the subchart's disabled by a
/// condition) and becomes one issue naming it, on its Chart.yaml entry.
pub(super) fn leave_out_missing(
    chart: &mut Chart,
    missing: &[String],
    fallback: Option<crate::source::Span>,
) -> Vec<RenderIssue> {
    let mut issues = Vec::new();
    for d in chart
        .metadata
        .dependencies
        .iter()
        .filter(|d| missing.contains(&d.name))
    {
        let source = if d.repository.trim().is_empty() {
            String::new()
        } else {
            format!(" from {}", d.repository.trim())
        };
        issues.push(RenderIssue {
            kind: IssueKind::Unrenderable,
            span: fallback.filter(|_| d.name_span.is_empty()).unwrap_or(d.name_span),
            message: format!(
                "dependency `{}`{source} is not vendored in charts/ (`helm dependency build` downloads it); the chart is rendered without it",
                d.name
            ),
            input: match remote_reference(d) {
                Some(r) => crate::render::MissingInput::fetchable(r.to_string()),
                // `file://` or a repository added by name: nothing says where it comes from.
                None => crate::render::MissingInput::vendor_only(format!(
                    "dependency {}{source}",
                    d.name
                )),
            },
        });
    }
    chart
        .metadata
        .dependencies
        .retain(|d| !missing.contains(&d.name));
    issues
}

/// `action.CheckDependencies`: every dependency in Chart.yaml must be vendored under
/// `charts/` (by name).
pub fn check_dependencies(chart: &Chart) -> Result<(), Vec<String>> {
    let missing: Vec<String> = chart
        .metadata
        .dependencies
        .iter()
        .filter(|d| !chart.dependencies.iter().any(|c| c.name() == d.name))
        .map(|d| d.name.clone())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing)
    }
}

/// `ProcessDependenciesWithMerge`.
pub fn process_dependencies(chart: &mut Chart, vals: &Map) -> Result<(), String> {
    process_enabled(chart, vals, "")?;
    process_import_values(chart, true)
}

fn alias_dependency(charts: &[Chart], name: &str, version: &str, alias: &str) -> Option<Chart> {
    let c = charts
        .iter()
        .find(|c| c.name() == name && is_compatible_range(version, &c.metadata.version))?;
    let mut out = c.clone();
    if !alias.is_empty() {
        out.metadata.name = alias.to_string();
    }
    Some(out)
}

fn process_enabled(chart: &mut Chart, vals: &Map, path: &str) -> Result<(), String> {
    if chart.metadata.dependencies.is_empty() {
        return Ok(());
    }
    let mut deps: Vec<Chart> = Vec::new();
    // Vendored charts not listed (by name and version) stay as they are.
    for existing in &chart.dependencies {
        let listed = chart.metadata.dependencies.iter().any(|req| {
            existing.name() == req.name
                && is_compatible_range(&req.version, &existing.metadata.version)
        });
        if !listed {
            deps.push(existing.clone());
        }
    }
    for req in chart.metadata.dependencies.iter_mut() {
        if let Some(c) = alias_dependency(&chart.dependencies, &req.name, &req.version, &req.alias)
        {
            deps.push(c);
        }
        if !req.alias.is_empty() {
            req.name = req.alias.clone();
        }
    }
    chart.dependencies = deps;
    for req in chart.metadata.dependencies.iter_mut() {
        req.enabled = true;
    }
    let cvals = coalesce_values(chart, vals)?;
    // tags
    if let Some(tags) = table(&cvals, "tags") {
        for req in chart.metadata.dependencies.iter_mut() {
            let (mut has_true, mut has_false) = (false, false);
            for t in &req.tags {
                if let Some(Value::Bool(b)) = super::values::get(&tags, t) {
                    if b {
                        has_true = true;
                    } else {
                        has_false = true;
                    }
                }
            }
            if !has_true && has_false {
                req.enabled = false;
            } else if has_true || !has_false {
                req.enabled = true;
            }
        }
    }
    // conditions: the first path that holds a bool decides
    for req in chart.metadata.dependencies.iter_mut() {
        for c in req.condition.trim().split(',') {
            if c.is_empty() {
                continue;
            }
            if let Some(Value::Bool(b)) = path_value(&cvals, &format!("{path}{c}")) {
                req.enabled = b;
                break;
            }
        }
    }
    let disabled: Vec<String> = chart
        .metadata
        .dependencies
        .iter()
        .filter(|r| !r.enabled)
        .map(|r| r.name.clone())
        .collect();
    chart
        .dependencies
        .retain(|c| !disabled.contains(&c.metadata.name));
    chart
        .metadata
        .dependencies
        .retain(|r| !disabled.contains(&r.name));
    let cvals_map = match &cvals {
        Value::Map(m) => m.borrow().clone(),
        _ => Map::new(),
    };
    for sub in chart.dependencies.iter_mut() {
        let subpath = format!("{path}{}.", sub.metadata.name);
        process_enabled(sub, &cvals_map, &subpath)?;
    }
    Ok(())
}

fn process_import_values(chart: &mut Chart, merge: bool) -> Result<(), String> {
    for sub in chart.dependencies.iter_mut() {
        process_import_values(sub, merge)?;
    }
    if chart.metadata.dependencies.is_empty() {
        return Ok(());
    }
    let cvals = if merge {
        merge_values(chart, &Map::new())?
    } else {
        coalesce_values(chart, &Map::new())?
    };
    let mut b = Value::map(Map::new());
    for req in chart.metadata.dependencies.iter_mut() {
        let mut out = Vec::new();
        for iv in &req.import_values {
            let (child, parent) = match iv {
                ImportValue::Map { child, parent } => (child.clone(), parent.clone()),
                ImportValue::Name(n) => (format!("exports.{n}"), ".".to_string()),
            };
            out.push(ImportValue::Map {
                child: child.clone(),
                parent: parent.clone(),
            });
            let Some(vv) = table(&cvals, &format!("{}.{}", req.name, child)) else {
                continue;
            };
            let data = if parent == "." {
                vv
            } else {
                path_to_map(&parent, vv)
            };
            b = coalesce_tables(&b, &data, merge);
        }
        req.import_values = out;
    }
    let result = if merge {
        coalesce_tables(&deep_copy(&cvals), &b, true)
    } else {
        coalesce_tables(&trim_nil_values(&cvals), &b, false)
    };
    if let Value::Map(m) = result {
        chart.values.map = m.borrow().clone();
    }
    Ok(())
}
