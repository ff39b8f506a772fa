//! The chart model and loader, as Helm's `pkg/chart/loader`: a chart directory (with
//! `.helmignore`) or a `.tgz` archive becomes a [`Chart`]: metadata, values, schema,
//! templates, other files and subcharts (directories and archives under `charts/`).

use super::ignore::IgnoreRules;
use super::semver::Version;
use super::values::{ValuesDoc, load_values};
use crate::source::{EntryKind, FileId, LazyBytes, Origin, RepoFs, SourceFile, Span};
use crate::yaml::{Limits, Node, parse_str};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;

/// A file of the chart the loader reads (Chart.yaml, values, schema, templates), named
/// relative to the chart root (`templates/x.yaml`).
#[derive(Clone, Debug)]
pub struct ChartFile {
    pub name: String,
    pub data: Arc<[u8]>,
    /// The source-map file holding its text (repo file, or a virtual file for archives).
    pub file: Option<FileId>,
}

impl ChartFile {
    /// The file as text (borrowed: chart files are nearly always valid UTF-8 already).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        bytes_as_text(&self.data)
    }
}

/// One of the chart's other files (Helm's `Chart.Files`: READMEs, CRDs, config files):
/// read only when a template asks through `.Files` or CRDs are printed.
#[derive(Clone, Debug)]
pub struct MiscFile {
    pub name: String,
    bytes: LazyBytes,
}

impl MiscFile {
    pub fn new(name: String, bytes: LazyBytes) -> MiscFile {
        MiscFile { name, bytes }
    }

    /// The contents without a byte-order mark, as Helm's loader keeps them.
    pub fn bytes(&self) -> Result<&[u8], String> {
        let bytes = self.bytes.get().map_err(|e| e.to_string())?;
        Ok(bytes.strip_prefix(BOM).unwrap_or(bytes))
    }

    pub fn text(&self) -> Result<std::borrow::Cow<'_, str>, String> {
        self.bytes().map(bytes_as_text)
    }

    /// Why the file could not be read, when a template asked for it and it failed.
    pub fn failure(&self) -> Option<String> {
        self.bytes.failure().map(|e| e.to_string())
    }
}

const BOM: &[u8] = b"\xef\xbb\xbf";

fn bytes_as_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    // `from_utf8` checks valid text faster than the lossy decoder walks it.
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A chart file as listed, before the loader knows which part of the chart it is.
struct Listed {
    name: String,
    source: Source,
}

enum Source {
    /// A file of the repository at this repo path.
    Repo { path: String, bytes: LazyBytes },
    /// An archive member, its bytes as stored; `virtual_path` names it in the source map.
    Member {
        data: Arc<[u8]>,
        virtual_path: String,
    },
}

impl Listed {
    fn renamed(self, name: &str) -> Listed {
        Listed {
            name: name.to_string(),
            source: self.source,
        }
    }

    /// Read a part the loader needs. Text goes into the source map (the walk's copy of a
    /// repo file is reused, so spans agree across stages); a byte-order mark is dropped.
    fn load(self, fs: &dyn RepoFs) -> Result<ChartFile, String> {
        let (data, file) = match self.source {
            Source::Repo { path, bytes } => match fs.read(&path) {
                Ok(id) => {
                    let text = fs.source_map().get(id).text.clone();
                    // Shared with the source map; copied only to drop a byte-order mark.
                    let data: Arc<[u8]> = match text.strip_prefix('\u{feff}') {
                        Some(rest) => Arc::from(rest.as_bytes()),
                        None => Arc::from(text),
                    };
                    (data, Some(id))
                }
                // Not text (or not readable as text): the raw bytes, or why they cannot be read.
                Err(_) => {
                    let raw = bytes.get().map_err(|e| e.to_string())?;
                    (without_bom(raw), None)
                }
            },
            Source::Member { data, virtual_path } => {
                let data = without_bom(&data);
                // Text files get a virtual source file so spans can point into the archive.
                let file = std::str::from_utf8(&data)
                    .ok()
                    .filter(|t| !t.contains('\0'))
                    .map(|t| {
                        fs.source_map().add(SourceFile::new(
                            virtual_path,
                            t.to_string(),
                            Origin::Virtual,
                        ))
                    });
                (data, file)
            }
        };
        Ok(ChartFile {
            name: self.name,
            data,
            file,
        })
    }

    /// The bytes as stored (a subchart archive).
    fn raw(&self) -> Result<Arc<[u8]>, String> {
        match &self.source {
            Source::Repo { bytes, .. } => bytes.get().cloned().map_err(|e| e.to_string()),
            Source::Member { data, .. } => Ok(data.clone()),
        }
    }

    fn misc(self) -> MiscFile {
        let bytes = match self.source {
            Source::Repo { bytes, .. } => bytes,
            Source::Member { data, .. } => LazyBytes::loaded(data),
        };
        MiscFile::new(self.name, bytes)
    }
}

fn without_bom(data: &Arc<[u8]>) -> Arc<[u8]> {
    match data.strip_prefix(BOM) {
        Some(rest) => Arc::from(rest),
        None => data.clone(),
    }
}

#[derive(Clone, Debug, Default)]
pub struct Maintainer {
    pub name: String,
    pub email: String,
    pub url: String,
}

#[derive(Clone, Debug)]
pub enum ImportValue {
    /// `- child: a.b` / `parent: c`
    Map { child: String, parent: String },
    /// `- name` (meaning `exports.name` → the parent's root)
    Name(String),
}

#[derive(Clone, Debug, Default)]
pub struct Dependency {
    pub name: String,
    pub version: String,
    pub repository: String,
    pub condition: String,
    pub tags: Vec<String>,
    pub enabled: bool,
    pub import_values: Vec<ImportValue>,
    pub alias: String,
    /// The dependency entry in Chart.yaml / requirements.yaml.
    pub span: Span,
    /// Its `name:` value (the line a person edits to pick another chart), else the entry.
    pub name_span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct Metadata {
    pub name: String,
    pub home: String,
    pub sources: Vec<String>,
    pub version: String,
    pub description: String,
    pub keywords: Vec<String>,
    pub maintainers: Vec<Maintainer>,
    pub icon: String,
    pub api_version: String,
    pub condition: String,
    pub tags: String,
    pub app_version: String,
    pub deprecated: bool,
    pub annotations: BTreeMap<String, String>,
    pub kube_version: String,
    pub dependencies: Vec<Dependency>,
    pub chart_type: String,
}

#[derive(Clone, Debug)]
pub struct Chart {
    pub metadata: Metadata,
    pub chart_yaml: Option<FileId>,
    pub values: ValuesDoc,
    pub schema: Option<ChartFile>,
    pub templates: Vec<ChartFile>,
    pub files: Vec<MiscFile>,
    pub dependencies: Vec<Chart>,
    /// Where this chart came from (a repo path, or `archive.tgz` for archives), for messages.
    pub origin: String,
}

impl Chart {
    pub fn name(&self) -> &str {
        &self.metadata.name
    }
    pub fn is_library(&self) -> bool {
        self.metadata.chart_type == "library"
    }
    /// Files under `crds/` (Helm's `CRDObjects`: only `.yaml`/`.yml`/`.json` directly or
    /// deeper under `crds/`).
    pub fn crd_files(&self) -> impl Iterator<Item = &MiscFile> {
        self.files.iter().filter(|f| {
            f.name.starts_with("crds/")
                && (f.name.ends_with(".yaml")
                    || f.name.ends_with(".yml")
                    || f.name.ends_with(".json"))
        })
    }

    /// A file of this chart or a subchart that a template asked for and could not be read
    /// (unreadable or gone since the chart was listed): its path in the chart and why.
    pub fn unreadable_file(&self) -> Option<(String, String)> {
        self.files
            .iter()
            .find_map(|f| Some((f.name.clone(), f.failure()?)))
            .or_else(|| {
                self.dependencies.iter().find_map(|d| {
                    d.unreadable_file()
                        .map(|(name, why)| (format!("charts/{}/{name}", d.name()), why))
                })
            })
    }
}

/// Archives and charts bigger than this are refused (Helm's `MaxDecompressedChartSize`).
const MAX_CHART_BYTES: u64 = 100 * 1024 * 1024;
const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;

/// Load a chart from a repo path: a directory, or a `.tgz`/`.tar.gz` archive.
/// `display` is the path as messages name it.
pub fn load(fs: &dyn RepoFs, path: &str, display: &str) -> Result<Chart, String> {
    let path = path.trim_end_matches('/');
    if fs.is_dir(path) {
        return load_dir(fs, path);
    }
    if !fs.is_file(path) {
        return Err(format!("path \"{path}\" not found"));
    }
    let bytes = fs.read_bytes(path).map_err(|e| e.to_string())?;
    if bytes.len() < 2 || bytes[0] != 0x1f || bytes[1] != 0x8b {
        let kind = if std::str::from_utf8(&bytes).is_ok() {
            "text/plain; charset=utf-8"
        } else {
            "application/octet-stream"
        };
        return Err(format!(
            "file '{display}' does not appear to be a gzipped archive; got '{kind}'"
        ));
    }
    load_archive_at(fs, &bytes, path, 0, &mut Unpacked::default())
}

fn load_dir(fs: &dyn RepoFs, dir: &str) -> Result<Chart, String> {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let rules = match fs.read(&format!("{prefix}.helmignore")) {
        Ok(id) => IgnoreRules::parse(&fs.source_map().get(id).text)?,
        Err(_) => IgnoreRules::defaults(),
    };
    let mut files = Vec::new();
    let mut stack = vec![String::new()];
    let mut total: u64 = 0;
    while let Some(rel) = stack.pop() {
        let full = format!("{prefix}{rel}");
        let entries = fs
            .list_entries(full.trim_end_matches('/'))
            .map_err(|e| e.to_string())?;
        // Walk in lexical order, as filepath.Walk does.
        for entry in entries.into_iter().rev() {
            let child_rel = format!("{rel}{}", entry.name);
            // Ignored entries are skipped unread (directories by the rules for directories).
            if rules.ignored(&child_rel, matches!(entry.kind, EntryKind::Dir)) {
                continue;
            }
            let child_full = format!("{prefix}{child_rel}");
            match entry.kind {
                EntryKind::Dir => stack.push(format!("{child_rel}/")),
                EntryKind::File { size, bytes } => {
                    total += size;
                    if total > MAX_CHART_BYTES {
                        return Err(format!(
                            "chart {dir} is larger than {MAX_CHART_BYTES} bytes"
                        ));
                    }
                    files.push(Listed {
                        name: child_rel,
                        source: Source::Repo {
                            path: child_full,
                            bytes,
                        },
                    });
                }
                // Helm's loader refuses them too.
                EntryKind::Irregular => {
                    return Err(format!(
                        "cannot load irregular file {child_full} as it has file mode type bits set"
                    ));
                }
                EntryKind::Unreadable(e) => return Err(e.to_string()),
            }
        }
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    load_files(fs, files, dir, 0, &mut Unpacked::default())
}

/// Unpack a gzipped tar into chart files (the top directory stripped) and load them.
pub fn load_archive(fs: &dyn RepoFs, bytes: &[u8], origin: &str) -> Result<Chart, String> {
    load_archive_at(fs, bytes, origin, 0, &mut Unpacked::default())
}

/// What one chart load has unpacked so far, its nested archives included: each archive is
/// capped alone (as Helm caps it), and two subcharts per level nested 22 levels deep are
/// 4 million archives within that cap. The total is capped too.
#[derive(Default)]
struct Unpacked {
    bytes: u64,
    charts: usize,
}

/// Subcharts one chart may bring, at every level together (real umbrella charts have tens).
const MAX_SUBCHARTS: usize = 1000;

/// What all chart loads of one lint may unpack from archives together: a repository of many
/// charts each just under the per-chart cap must not decompress without end.
pub const MAX_LINT_ARCHIVE_BYTES: u64 = 1 << 30;
pub const MAX_LINT_SUBCHARTS: usize = 20_000;

/// Archive bytes and subcharts unpacked by every chart load of one lint (a clone shares
/// the count; `RenderBudget::archives`).
#[derive(Clone, Default)]
pub struct ArchiveTotal(
    std::sync::Arc<(std::sync::atomic::AtomicU64, std::sync::atomic::AtomicUsize)>,
);

// Constant, so a budget printed into a render job's key does not change as loads count.
impl std::fmt::Debug for ArchiveTotal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArchiveTotal")
    }
}

impl ArchiveTotal {
    pub fn bytes(&self) -> u64 {
        self.0.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn add(&self, bytes: u64, charts: usize, origin: &str) -> Result<(), String> {
        use std::sync::atomic::Ordering::Relaxed;
        let b = self.0.0.fetch_add(bytes, Relaxed) + bytes;
        let c = self.0.1.fetch_add(charts, Relaxed) + charts;
        if b > MAX_LINT_ARCHIVE_BYTES || c > MAX_LINT_SUBCHARTS {
            return Err(format!(
                "chart {origin}: the chart archives of this lint unpack to more than {MAX_LINT_ARCHIVE_BYTES} bytes or {MAX_LINT_SUBCHARTS} subcharts in all"
            ));
        }
        Ok(())
    }
}

thread_local! {
    /// The lint's total while a chart render runs on this thread (`with_lint_total`).
    static LINT_TOTAL: std::cell::RefCell<Option<ArchiveTotal>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` (one chart render, on this thread) with every archive it unpacks also counted
/// in `total`.
pub fn with_lint_total<T>(total: &ArchiveTotal, f: impl FnOnce() -> T) -> T {
    let saved = LINT_TOTAL.with(|t| t.replace(Some(total.clone())));
    let out = f();
    LINT_TOTAL.with(|t| *t.borrow_mut() = saved);
    out
}

fn charge_lint(bytes: u64, charts: usize, origin: &str) -> Result<(), String> {
    LINT_TOTAL.with(|t| match &*t.borrow() {
        Some(total) => total.add(bytes, charts, origin),
        None => Ok(()),
    })
}

impl Unpacked {
    fn add_bytes(&mut self, n: u64, origin: &str) -> Result<(), String> {
        charge_lint(n, 0, origin)?;
        self.bytes += n;
        if self.bytes > MAX_CHART_BYTES {
            return Err(format!(
                "chart {origin} and its nested archives are larger than {MAX_CHART_BYTES} bytes in total"
            ));
        }
        Ok(())
    }

    fn add_chart(&mut self, origin: &str) -> Result<(), String> {
        charge_lint(0, 1, origin)?;
        self.charts += 1;
        if self.charts > MAX_SUBCHARTS {
            return Err(format!(
                "more than {MAX_SUBCHARTS} subcharts in all at {origin}"
            ));
        }
        Ok(())
    }
}

fn load_archive_at(
    fs: &dyn RepoFs,
    bytes: &[u8],
    origin: &str,
    depth: usize,
    unpacked: &mut Unpacked,
) -> Result<Chart, String> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut archive = tar::Archive::new(gz.take(MAX_CHART_BYTES + 1));
    // A later member of the same name replaces an earlier one and moves to the end. Found
    // through an index, not by scanning the list: an archive of 100,000 empty members took
    // 13 s when each member scanned all the earlier ones.
    let mut files: Vec<Option<Listed>> = Vec::new();
    let mut position: crate::hash::FastMap<String, usize> = Default::default();
    let entries = archive.entries().map_err(|e| e.to_string())?;
    let mut total: u64 = 0;
    for entry in entries {
        let mut entry = entry.map_err(|e| e.to_string())?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let raw = entry
            .path()
            .map_err(|e| e.to_string())?
            .to_string_lossy()
            .replace('\\', "/");
        if raw == "pax_global_header" {
            continue;
        }
        if raw.starts_with('/') {
            return Err("chart illegally contains absolute paths".into());
        }
        let Some((_, inner)) = raw.split_once('/') else {
            return Err("chart illegally contains content outside the base directory".into());
        };
        if inner.split('/').any(|p| p == "..") {
            return Err("chart illegally references parent directory".into());
        }
        let inner = crate::source::normalize_relative(inner)
            .ok_or("chart illegally references parent directory")?;
        if entry.size() > MAX_FILE_BYTES {
            return Err(format!(
                "decompressed chart file \"{inner}\" is larger than the maximum file size {MAX_FILE_BYTES}"
            ));
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| e.to_string())?;
        total += data.len() as u64;
        if total > MAX_CHART_BYTES {
            return Err(format!(
                "chart archive {origin} is larger than {MAX_CHART_BYTES} bytes"
            ));
        }
        unpacked.add_bytes(data.len() as u64, origin)?;
        if let Some(earlier) = position.insert(inner.clone(), files.len()) {
            files[earlier] = None;
        }
        files.push(Some(Listed {
            source: Source::Member {
                data: Arc::from(data),
                virtual_path: format!("{origin}#{inner}"),
            },
            name: inner,
        }));
    }
    let files: Vec<Listed> = files.into_iter().flatten().collect();
    if files.is_empty() {
        return Err("no files in chart archive".into());
    }
    load_files(fs, files, origin, depth, unpacked)
}

/// Helm's `LoadFiles`: sort files into the chart's parts, then load subcharts.
/// Subcharts nested deeper than this are refused (an archive of archives must not exhaust
/// the stack; real charts nest two or three levels).
const MAX_SUBCHART_DEPTH: usize = 32;

fn load_files(
    fs: &dyn RepoFs,
    mut files: Vec<Listed>,
    origin: &str,
    depth: usize,
    unpacked: &mut Unpacked,
) -> Result<Chart, String> {
    if depth > MAX_SUBCHART_DEPTH {
        return Err(format!(
            "subcharts nested deeper than {MAX_SUBCHART_DEPTH} levels at {origin}"
        ));
    }
    if depth > 0 {
        unpacked.add_chart(origin)?;
    }
    let mut chart = Chart {
        metadata: Metadata::default(),
        chart_yaml: None,
        values: ValuesDoc::default(),
        schema: None,
        templates: Vec::new(),
        files: Vec::new(),
        dependencies: Vec::new(),
        origin: origin.to_string(),
    };
    let mut have_meta = false;
    // Chart.yaml first: requirements.yaml and the apiVersion checks depend on it.
    if let Some(at) = files.iter().position(|f| f.name == "Chart.yaml") {
        let f = files.remove(at).load(fs)?;
        chart.metadata = parse_metadata(&f).map_err(|e| format!("cannot load Chart.yaml: {e}"))?;
        if chart.metadata.api_version.is_empty() {
            chart.metadata.api_version = "v1".into();
        }
        chart.chart_yaml = f.file;
        have_meta = true;
    }
    let mut subcharts: BTreeMap<String, Vec<Listed>> = BTreeMap::new();
    for f in files {
        match f.name.as_str() {
            "Chart.lock" | "requirements.lock" => {}
            "requirements.yaml" => {
                if chart.metadata.api_version == "v1" {
                    let f = f.load(fs)?;
                    let (deps, _) = parse_yaml_doc(&f)
                        .map(|n| (parse_dependencies(n.get("dependencies")), ()))
                        .map_err(|e| format!("cannot load requirements.yaml: {e}"))?;
                    chart.metadata.dependencies = deps;
                    chart
                        .files
                        .push(MiscFile::new(f.name, LazyBytes::loaded(f.data)));
                }
            }
            "values.yaml" => {
                chart.values = load_values(&f.load(fs)?)
                    .map_err(|e| format!("cannot load values.yaml: {e}"))?;
            }
            "values.schema.json" => chart.schema = Some(f.load(fs)?),
            n if n.starts_with("templates/") => chart.templates.push(f.load(fs)?),
            n if n.starts_with("charts/") => {
                if n.ends_with(".prov") {
                    chart.files.push(f.misc());
                    continue;
                }
                let rest = n["charts/".len()..].to_string();
                let cname = rest.split('/').next().unwrap_or(&rest).to_string();
                subcharts.entry(cname).or_default().push(f.renamed(&rest));
            }
            _ => chart.files.push(f.misc()),
        }
    }
    if !have_meta {
        return Err("Chart.yaml file is missing".into());
    }
    validate_metadata(&chart.metadata)?;
    for (cname, files) in subcharts {
        if cname.starts_with('_') || cname.starts_with('.') {
            continue;
        }
        let loaded = if cname.ends_with(".tgz") {
            let Some(file) = files.first() else { continue };
            if file.name != cname {
                return Err(format!(
                    "error unpacking subchart tar in {}: expected {cname}, got {}",
                    chart.name(),
                    file.name
                ));
            }
            file.raw().and_then(|data| {
                load_archive_at(
                    fs,
                    &data,
                    &format!("{origin}/charts/{cname}"),
                    depth + 1,
                    unpacked,
                )
            })
        } else {
            let inner: Vec<Listed> = files
                .into_iter()
                .filter_map(|f| {
                    let rest = f.name.split_once('/')?.1.to_string();
                    Some(f.renamed(&rest))
                })
                .collect();
            load_files(
                fs,
                inner,
                &format!("{origin}/charts/{cname}"),
                depth + 1,
                unpacked,
            )
        };
        match loaded {
            Ok(sub) => chart.dependencies.push(sub),
            Err(e) => {
                return Err(format!(
                    "error unpacking subchart {cname} in {}: {e}",
                    chart.name()
                ));
            }
        }
    }
    Ok(chart)
}

fn parse_yaml_doc(f: &ChartFile) -> Result<Node, String> {
    let text = f.text();
    let parsed = parse_str(&text, f.file.unwrap_or_default(), &Limits::default());
    if let Some(err) = parsed.error {
        return Err(format!(
            "error converting YAML to JSON: {}",
            super::values::go_yaml_error(&err, &text)
        ));
    }
    Ok(parsed
        .docs
        .into_iter()
        .next()
        .map(|d| d.root)
        .unwrap_or_else(|| Node::new(crate::yaml::Value::Null, Span::default())))
}

/// A scalar as the string Go would read into a `string` field: the text as written
/// (`1.10` stays `1.10`, not the float).
fn scalar(node: Option<&Node>) -> String {
    match node {
        Some(n) => n.text_as_written().unwrap_or_default(),
        None => String::new(),
    }
}

fn strings(node: Option<&Node>) -> Vec<String> {
    node.and_then(Node::as_seq)
        .map(|items| items.iter().map(|n| scalar(Some(n))).collect())
        .unwrap_or_default()
}

fn parse_metadata(f: &ChartFile) -> Result<Metadata, String> {
    let root = parse_yaml_doc(f)?;
    if !root.is_null() && root.as_map().is_none() {
        return Err("error unmarshaling JSON: json: cannot unmarshal string into Go value of type chart.Metadata".into());
    }
    let get = |k: &str| root.get(k);
    let annotations = get("annotations")
        .and_then(Node::as_map)
        .map(|entries| {
            entries
                .iter()
                .map(|e| (e.key.key_str().into_owned(), scalar(Some(&e.value))))
                .collect()
        })
        .unwrap_or_default();
    let maintainers = get("maintainers")
        .and_then(Node::as_seq)
        .map(|items| {
            items
                .iter()
                .map(|m| Maintainer {
                    name: scalar(m.get("name")),
                    email: scalar(m.get("email")),
                    url: scalar(m.get("url")),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Metadata {
        name: scalar(get("name")),
        home: scalar(get("home")),
        sources: strings(get("sources")),
        version: scalar(get("version")),
        description: scalar(get("description")),
        keywords: strings(get("keywords")),
        maintainers,
        icon: scalar(get("icon")),
        api_version: scalar(get("apiVersion")),
        condition: scalar(get("condition")),
        tags: scalar(get("tags")),
        app_version: scalar(get("appVersion")),
        deprecated: get("deprecated").and_then(Node::as_bool).unwrap_or(false),
        annotations,
        kube_version: scalar(get("kubeVersion")),
        dependencies: parse_dependencies(get("dependencies")),
        chart_type: scalar(get("type")),
    })
}

fn parse_dependencies(node: Option<&Node>) -> Vec<Dependency> {
    let Some(items) = node.and_then(Node::as_seq) else {
        return Vec::new();
    };
    items
        .iter()
        .filter(|d| d.as_map().is_some())
        .map(|d| Dependency {
            name: scalar(d.get("name")),
            version: scalar(d.get("version")),
            repository: scalar(d.get("repository")),
            condition: scalar(d.get("condition")),
            tags: strings(d.get("tags")),
            enabled: d.get("enabled").and_then(Node::as_bool).unwrap_or(false),
            import_values: d
                .get("import-values")
                .and_then(Node::as_seq)
                .map(|ivs| {
                    ivs.iter()
                        .filter_map(|iv| {
                            if iv.as_map().is_some() {
                                Some(ImportValue::Map {
                                    child: scalar(iv.get("child")),
                                    parent: scalar(iv.get("parent")),
                                })
                            } else {
                                iv.as_str().map(|s| ImportValue::Name(s.to_string()))
                            }
                        })
                        .collect()
                })
                .unwrap_or_default(),
            alias: scalar(d.get("alias")),
            span: d.full_span(),
            name_span: d
                .get("name")
                .map(|n| n.span)
                .unwrap_or_else(|| d.full_span()),
        })
        .collect()
}

/// Helm's `Metadata.Validate`, with its messages.
fn validate_metadata(md: &Metadata) -> Result<(), String> {
    let fail = |m: String| Err(format!("validation: {m}"));
    if md.api_version.is_empty() {
        return fail("chart.metadata.apiVersion is required".into());
    }
    if md.name.is_empty() {
        return fail("chart.metadata.name is required".into());
    }
    if md.name.contains('/') || md.name.contains('\\') || md.name == "." || md.name == ".." {
        return fail(format!("chart.metadata.name {:?} is invalid", md.name));
    }
    if md.version.is_empty() {
        return fail("chart.metadata.version is required".into());
    }
    if Version::parse(&md.version).is_err() {
        return fail(format!(
            "chart.metadata.version {:?} is invalid",
            md.version
        ));
    }
    if !matches!(md.chart_type.as_str(), "" | "application" | "library") {
        return fail("chart.metadata.type must be application or library".into());
    }
    let mut seen = std::collections::HashSet::new();
    for d in &md.dependencies {
        if !d.alias.is_empty()
            && !d
                .alias
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return fail(format!(
                "dependency {:?} has disallowed characters in the alias",
                d.name
            ));
        }
        if d.name.is_empty() {
            return fail("dependencies must have a name".into());
        }
        let key = if d.alias.is_empty() {
            &d.name
        } else {
            &d.alias
        };
        if !seen.insert(key.clone()) {
            return fail(format!(
                "more than one dependency with name or alias {key:?}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{DiskFs, SourceMap};

    fn tgz(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            // Raw name bytes: the tar crate refuses `..` in `set_path`, a hostile archive does not.
            let raw = &mut header.as_old_mut().name;
            raw[..name.len()].copy_from_slice(name.as_bytes());
            header.set_cksum();
            let _ = builder.append(&header, *data);
        }
        let tar = builder.into_inner().unwrap_or_default();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let _ = std::io::Write::write_all(&mut gz, &tar);
        gz.finish().unwrap_or_default()
    }

    fn fs() -> DiskFs {
        DiskFs::new(
            std::env::temp_dir(),
            std::sync::Arc::new(SourceMap::new()),
            1 << 20,
        )
    }

    #[test]
    fn archives_load_and_refuse_parent_paths() {
        let ok = tgz(&[
            (
                "c/Chart.yaml",
                b"apiVersion: v2\nname: c\nversion: 1.0.0\n".as_slice(),
            ),
            ("c/values.yaml", b"a: 1\n".as_slice()),
            ("c/templates/x.yaml", b"kind: ConfigMap\n".as_slice()),
        ]);
        let chart = load_archive(&fs(), &ok, "c.tgz");
        assert!(
            chart
                .as_ref()
                .is_ok_and(|c| c.name() == "c" && c.templates.len() == 1),
            "{:?}",
            chart.err()
        );
        let bad = tgz(&[
            (
                "c/Chart.yaml",
                b"apiVersion: v2\nname: c\nversion: 1.0.0\n".as_slice(),
            ),
            ("c/../../etc/passwd", b"x".as_slice()),
        ]);
        let err = load_archive(&fs(), &bad, "bad.tgz")
            .err()
            .unwrap_or_default();
        assert_eq!(err, "chart illegally references parent directory");
    }

    /// A member that appears twice: the later one wins and takes the later place (Helm's
    /// loader keeps the last), found through an index so that many members stay linear.
    #[test]
    fn a_repeated_archive_member_is_the_later_one_in_the_later_place() {
        let archive = tgz(&[
            (
                "c/Chart.yaml",
                b"apiVersion: v2\nname: c\nversion: 1.0.0\n".as_slice(),
            ),
            ("c/templates/x.yaml", b"kind: First\n".as_slice()),
            ("c/files/a.txt", b"a1".as_slice()),
            ("c/files/b.txt", b"b".as_slice()),
            ("c/templates/x.yaml", b"kind: Second\n".as_slice()),
            ("c/files/a.txt", b"a2".as_slice()),
        ]);
        let chart = load_archive(&fs(), &archive, "c.tgz").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(chart.templates.len(), 1);
        assert_eq!(chart.templates[0].text(), "kind: Second\n");
        let files: Vec<(&str, String)> = chart
            .files
            .iter()
            .map(|f| {
                (
                    f.name.as_str(),
                    f.text().map(|t| t.into_owned()).unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            files,
            vec![
                ("files/b.txt", "b".to_string()),
                ("files/a.txt", "a2".to_string())
            ]
        );
    }

    /// A chart directory in a fresh repo root; `files` are (path, bytes) under the chart.
    fn chart_dir(files: &[(&str, &[u8])]) -> Option<(tempfile::TempDir, DiskFs)> {
        let dir = tempfile::tempdir().ok()?;
        let root = std::fs::canonicalize(dir.path()).ok()?;
        let chart = root.join("repo/c");
        let base: &[(&str, &[u8])] = &[
            ("Chart.yaml", b"apiVersion: v2\nname: c\nversion: 1.0.0\n"),
            ("templates/cm.yaml", b"kind: ConfigMap\n"),
        ];
        for (name, data) in base.iter().chain(files) {
            let path = chart.join(name);
            std::fs::create_dir_all(path.parent()?).ok()?;
            std::fs::write(&path, data).ok()?;
        }
        std::fs::write(root.join("outside.txt"), "host secret").ok()?;
        let fs = DiskFs::new(
            root.join("repo"),
            std::sync::Arc::new(SourceMap::new()),
            1 << 20,
        );
        Some((dir, fs))
    }

    #[test]
    fn other_files_are_read_on_first_use() {
        let Some((dir, fs)) = chart_dir(&[
            ("config/a.txt", b"\xef\xbb\xbfhello\n".as_slice()),
            ("docs/logo.png", b"\x89PNG\0\xff".as_slice()),
            ("README.md", b"# c\n".as_slice()),
        ]) else {
            return;
        };
        let chart = load(&fs, "c", "c");
        let Ok(chart) = chart else {
            panic!("{:?}", chart.err())
        };
        let names: Vec<&str> = chart.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["README.md", "config/a.txt", "docs/logo.png"]);
        // Listed, not read: only Chart.yaml and the template are in the source map.
        assert_eq!(fs.source_map().len(), 2);
        let a = &chart.files[1];
        assert_eq!(
            a.text().ok().as_deref(),
            Some("hello\n"),
            "byte-order mark dropped"
        );
        assert_eq!(
            chart.files[2].bytes().ok(),
            Some(b"\x89PNG\0\xff".as_slice())
        );
        // A file gone between listing and use fails where it is asked for, and is
        // remembered for the render to report.
        let root = dir.path().join("repo/c");
        std::fs::remove_file(root.join("README.md")).ok();
        assert!(chart.unreadable_file().is_none());
        assert!(chart.files[0].bytes().is_err());
        let (name, why) = chart.unreadable_file().unwrap_or_default();
        assert_eq!(name, "README.md");
        assert!(why.contains("c/README.md"), "{why}");
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_repo_and_irregular_files_are_refused_unless_ignored() {
        let Some((dir, fs)) = chart_dir(&[(".helmignore", b"ignored-*\n".as_slice())]) else {
            return;
        };
        let root = dir.path().join("repo/c");
        let outside = dir.path().join("outside.txt");
        std::os::unix::fs::symlink(&outside, root.join("ignored-link")).ok();
        std::os::unix::fs::symlink(root.join("Chart.yaml"), root.join("inside-link")).ok();
        let chart = load(&fs, "c", "c");
        assert!(
            chart.as_ref().is_ok_and(|c| c.files.len() == 2),
            "{:?}",
            chart.err()
        );
        // A lint reads the tree once (`DiskFs` keeps its listings): each change is a new lint.
        let relint = || {
            DiskFs::new(
                fs.root().to_path_buf(),
                std::sync::Arc::new(SourceMap::new()),
                1 << 20,
            )
        };
        std::os::unix::fs::symlink(&outside, root.join("escape")).ok();
        let err = load(&relint(), "c", "c").err().unwrap_or_default();
        assert_eq!(err, "`c/escape` is outside the repository");
        std::fs::remove_file(root.join("escape")).ok();
        let _socket = std::os::unix::net::UnixListener::bind(root.join("sock"));
        let err = load(&relint(), "c", "c").err().unwrap_or_default();
        assert!(
            err.starts_with("cannot load irregular file c/sock"),
            "{err}"
        );
    }

    #[test]
    fn the_archives_of_all_chart_loads_of_a_lint_count_together() {
        // Each load is far below its own cap; the lint's count sees all of them.
        let chart_yaml = b"apiVersion: v2\nname: c\nversion: 1.0.0\n".as_slice();
        let sub = tgz(&[("c/Chart.yaml", chart_yaml)]);
        let umbrella = tgz(&[
            ("c/Chart.yaml", chart_yaml),
            ("c/charts/a.tgz", sub.as_slice()),
        ]);
        let total = ArchiveTotal::default();
        for _ in 0..3 {
            with_lint_total(&total, || load_archive(&fs(), &umbrella, "u.tgz")).expect("loads");
        }
        let one = {
            let t = ArchiveTotal::default();
            with_lint_total(&t, || load_archive(&fs(), &umbrella, "u.tgz")).expect("loads");
            t.bytes()
        };
        assert!(
            one > 0 && total.bytes() == 3 * one,
            "{} vs {one}",
            total.bytes()
        );
        // Past the lint's total, the next load fails, naming it; outside a lint, nothing counts.
        let full = ArchiveTotal::default();
        assert!(full.add(MAX_LINT_ARCHIVE_BYTES, 0, "x").is_ok());
        let err = with_lint_total(&full, || load_archive(&fs(), &umbrella, "u.tgz"))
            .err()
            .unwrap_or_default();
        assert!(err.contains("archives of this lint"), "{err}");
        assert!(load_archive(&fs(), &umbrella, "u.tgz").is_ok());
    }

    #[test]
    fn nested_archives_stop_at_a_total() {
        // Two subcharts per level: 2^14 archives, each far below the per-archive cap.
        let chart_yaml = b"apiVersion: v2\nname: c\nversion: 1.0.0\n".as_slice();
        let mut inner = tgz(&[("c/Chart.yaml", chart_yaml)]);
        for _ in 0..14 {
            inner = tgz(&[
                ("c/Chart.yaml", chart_yaml),
                ("c/charts/a.tgz", inner.as_slice()),
                ("c/charts/b.tgz", inner.as_slice()),
            ]);
        }
        let started = std::time::Instant::now();
        let err = load_archive(&fs(), &inner, "fan.tgz")
            .err()
            .unwrap_or_default();
        assert!(err.contains("subcharts in all"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn nested_archives_stop_at_a_depth() {
        let mut inner = tgz(&[(
            "c/Chart.yaml",
            b"apiVersion: v2\nname: c\nversion: 1.0.0\n".as_slice(),
        )]);
        for _ in 0..40 {
            inner = tgz(&[
                (
                    "c/Chart.yaml",
                    b"apiVersion: v2\nname: c\nversion: 1.0.0\n".as_slice(),
                ),
                ("c/charts/d.tgz", inner.as_slice()),
            ]);
        }
        let err = load_archive(&fs(), &inner, "deep.tgz")
            .err()
            .unwrap_or_default();
        assert!(err.contains("nested deeper than"), "{err}");
    }
}
