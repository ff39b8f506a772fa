//! `gitops-lint fetch`: the one command that uses the network. It builds the app model as
//! `lint` does, resolves every remote input the apps name (charts in Helm repositories and
//! OCI registries, remote kustomize bases over git), downloads and verifies each, stores it
//! in the content-addressed cache and records the resolution in `.gitops-lint.lock`; then
//! builds the model again with the new lock, since a fetched chart or base can name more,
//! until nothing new appears. A locked input is not re-resolved: it is served from the cache,
//! or downloaded again at its locked version and checked against its locked digest.

pub mod auth;
mod git;
mod helm_repo;
mod http;
mod oci;
pub mod policy;
pub mod summary;
pub mod versions;

pub use helm_repo::{parse_index, resolve_chart_url};

use crate::remote::{
    Cache, CacheError, LOCK_FILE, Lock, LockEntry, MAX_ARTIFACT_BYTES, RemoteKind, RemoteRef,
};
use crate::source::{MemFs, MemTree, SourceMap, Span};
use std::collections::{BTreeMap, HashSet};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What one download produced.
pub struct Fetched {
    /// The version (git: the commit id) the request resolved to.
    pub resolved: String,
    /// The blob to cache: the chart archive as served, or the packed git tree.
    pub bytes: Vec<u8>,
    /// The server's name for it (index digest, manifest digest, commit).
    pub origin: Option<String>,
}

/// Most rounds of "fetch, rebuild the model, fetch what it names anew".
pub const MAX_ROUNDS: usize = 5;
/// Most bytes one run downloads in all.
pub const MAX_TOTAL_BYTES: u64 = 2 << 30;
/// Downloads in flight at once.
const WORKERS: usize = 4;

pub struct FetchOptions {
    /// Credentials by host (see [`auth`]).
    pub credentials: auth::Credentials,
    /// Time for one HTTP request or one git fetch.
    pub request_timeout: Duration,
    /// Time for the whole run.
    pub total_timeout: Duration,
    pub max_total_bytes: u64,
    /// Accept `file://` git remotes (tests; a repo never gets to read the machine's disk).
    pub allow_local_git: bool,
    /// Inputs handled in an earlier round: kept as they are, neither fetched nor counted.
    pub skip: HashSet<RemoteRef>,
    /// Print one line per input on stderr.
    pub progress: bool,
}

impl Default for FetchOptions {
    fn default() -> FetchOptions {
        FetchOptions {
            credentials: auth::Credentials::default(),
            request_timeout: Duration::from_secs(120),
            total_timeout: Duration::from_secs(30 * 60),
            max_total_bytes: MAX_TOTAL_BYTES,
            allow_local_git: false,
            skip: HashSet::new(),
            progress: false,
        }
    }
}

/// One input that could not be fetched, with every line that names it.
#[derive(Clone, Debug)]
pub struct Failure {
    pub reference: RemoteRef,
    pub spans: Vec<Span>,
    pub message: String,
}

/// What became of one input in a run (for the job summary).
#[derive(Clone, Debug)]
pub enum Resolved {
    /// Downloaded, verified and cached now.
    Downloaded(LockEntry),
    /// Locked and already in the cache: no connection made.
    Cached(LockEntry),
    /// Not fetched, and why.
    Failed(String),
}

/// One distinct input of a run, every line that names it, and what became of it.
#[derive(Clone, Debug)]
pub struct Resolution {
    pub reference: RemoteRef,
    pub spans: Vec<Span>,
    pub result: Resolved,
}

#[derive(Debug, Default)]
pub struct FetchReport {
    /// The lock after this run: new resolutions added, entries no use names dropped.
    pub lock: Lock,
    /// Inputs downloaded.
    pub fetched: usize,
    /// Inputs the cache already held (no connection made for them).
    pub cached: usize,
    pub failures: Vec<Failure>,
    /// Things worth saying that are not failures (a corrupt cache entry replaced).
    pub notes: Vec<String>,
    /// Every input handled (not the skipped ones), in reference order.
    pub resolutions: Vec<Resolution>,
    /// HTTP requests sent (every redirect hop counts); git fetches are not counted.
    pub requests: u64,
    pub bytes: u64,
}

enum Outcome {
    Cached,
    Fetched(LockEntry, Option<String>),
    Failed(String),
}

/// Resolve, download, verify and cache every distinct input of `uses`; `lock` is honoured.
pub fn fetch_all(
    uses: &[(RemoteRef, Span)],
    lock: &Lock,
    cache: &Cache,
    options: &FetchOptions,
) -> FetchReport {
    let mut by_ref: BTreeMap<&RemoteRef, Vec<Span>> = BTreeMap::new();
    for (r, span) in uses {
        let spans = by_ref.entry(r).or_default();
        if !spans.contains(span) {
            spans.push(*span);
        }
    }
    let mut report = FetchReport {
        lock: lock.clone(),
        ..FetchReport::default()
    };
    let named: HashSet<&RemoteRef> = by_ref.keys().copied().collect();
    report.lock.retain(|e| named.contains(&e.reference));
    let mut work: Vec<&RemoteRef> = by_ref
        .keys()
        .copied()
        .filter(|r| !options.skip.contains(*r))
        .collect();
    // Locked and intact in the cache: nothing to do, and no HTTP client is even set up.
    work.retain(|r| {
        let cached = lock.find(r).filter(|e| cache.read(&e.digest).is_ok());
        if let Some(entry) = cached {
            report.cached += 1;
            report.resolutions.push(Resolution {
                reference: (*r).clone(),
                spans: by_ref[r].clone(),
                result: Resolved::Cached(entry.clone()),
            });
        }
        cached.is_none()
    });
    if work.is_empty() {
        return report;
    }
    let http = match http::Http::new(
        http::Budget::new(options.max_total_bytes, options.total_timeout),
        options.request_timeout,
    ) {
        Ok(h) => h,
        Err(e) => {
            report.failures = work
                .iter()
                .map(|r| Failure {
                    reference: (*r).clone(),
                    spans: by_ref[r].clone(),
                    message: e.clone(),
                })
                .collect();
            report
                .resolutions
                .extend(report.failures.iter().map(|f| Resolution {
                    reference: f.reference.clone(),
                    spans: f.spans.clone(),
                    result: Resolved::Failed(f.message.clone()),
                }));
            return report;
        }
    };
    let fetcher = Fetcher {
        http: &http,
        helm: helm_repo::HelmRepos::new(&http, &options.credentials),
        oci: oci::Registries::new(&http, &options.credentials),
        cache,
        options,
        writing: Mutex::new(()),
    };
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..WORKERS.min(work.len()) {
            s.spawn(|| {
                loop {
                    let i = {
                        let Ok(mut n) = next.lock() else { return };
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(r) = work.get(i) else { return };
                    let outcome = fetcher.one(r, lock.find(r));
                    if options.progress {
                        let word = match &outcome {
                            Outcome::Cached => "cached",
                            Outcome::Fetched(..) => "fetched",
                            Outcome::Failed(_) => "failed",
                        };
                        eprintln!("[{}/{}] {word} {r}", i + 1, work.len());
                    }
                    if let Ok(mut out) = results.lock() {
                        out.push((i, outcome));
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, _)| *i);
    for (i, outcome) in results {
        let r = work[i];
        let result = match outcome {
            Outcome::Cached => {
                report.cached += 1;
                match lock.find(r) {
                    Some(e) => Resolved::Cached(e.clone()),
                    None => continue,
                }
            }
            Outcome::Fetched(entry, note) => {
                report.fetched += 1;
                report.notes.extend(note);
                report.lock.insert(entry.clone());
                Resolved::Downloaded(entry)
            }
            Outcome::Failed(message) => {
                report.failures.push(Failure {
                    reference: r.clone(),
                    spans: by_ref[r].clone(),
                    message: message.clone(),
                });
                Resolved::Failed(message)
            }
        };
        report.resolutions.push(Resolution {
            reference: r.clone(),
            spans: by_ref[r].clone(),
            result,
        });
    }
    report
        .resolutions
        .sort_by(|a, b| a.reference.cmp(&b.reference));
    report.requests = http.requests();
    report.bytes = http.budget().spent();
    report
}

struct Fetcher<'a> {
    http: &'a http::Http,
    helm: helm_repo::HelmRepos<'a>,
    oci: oci::Registries<'a>,
    cache: &'a Cache,
    options: &'a FetchOptions,
    /// Two inputs can resolve to one blob; their writes take turns (the cache's temporary
    /// file is named per process and digest).
    writing: Mutex<()>,
}

impl Fetcher<'_> {
    fn one(&self, r: &RemoteRef, locked: Option<&LockEntry>) -> Outcome {
        let mut note = None;
        if let Some(entry) = locked {
            match self.cache.read(&entry.digest) {
                Ok(_) => return Outcome::Cached,
                Err(CacheError::Missing { .. }) => {}
                Err(e) => note = Some(format!("{e}; fetched again")),
            }
        }
        // A locked input is downloaded at its locked version, never re-resolved.
        let request = match locked {
            Some(e) if r.kind != RemoteKind::Oci || !r.requested.contains("sha256:") => {
                e.resolved.clone()
            }
            _ => r.requested.clone(),
        };
        let fetched = match self.download(r, &request) {
            Ok(f) => f,
            Err(e) => return Outcome::Failed(e),
        };
        if let Err(e) = check_content(r, &fetched.bytes) {
            return Outcome::Failed(e);
        }
        let digest = crate::remote::digest_of(&fetched.bytes);
        if let Some(entry) = locked
            && entry.digest != digest
        {
            // A URL is its own version: name it once.
            let what = match r.kind {
                RemoteKind::Url => r.to_string(),
                _ => format!("{r}: {}", entry.resolved),
            };
            return Outcome::Failed(format!(
                "{what} now downloads as {digest}, but {LOCK_FILE} locked {}; the server's content changed (remove the entry from {LOCK_FILE} to accept the new content)",
                entry.digest
            ));
        }
        let stored = {
            let _turn = self.writing.lock();
            self.cache.put(&fetched.bytes)
        };
        match stored {
            Ok(d) => Outcome::Fetched(
                LockEntry {
                    reference: r.clone(),
                    resolved: fetched.resolved,
                    digest: d,
                    origin: fetched.origin,
                    span: None,
                },
                note,
            ),
            Err(e) => Outcome::Failed(format!("{r}: {e}")),
        }
    }

    fn download(&self, r: &RemoteRef, request: &str) -> Result<Fetched, String> {
        match r.kind {
            RemoteKind::Helm => self.helm.fetch(&r.source, &r.chart, request),
            RemoteKind::Oci => self.oci.fetch(&r.source, request),
            RemoteKind::Url => self.url_file(&r.source),
            RemoteKind::Git => {
                let work = self.scratch_dir()?;
                let result = git::fetch(
                    &r.source,
                    request,
                    &work,
                    self.options.allow_local_git,
                    // The run's deadline holds for git as for HTTP.
                    self.options
                        .request_timeout
                        .min(self.http.budget().remaining()),
                );
                let _ = std::fs::remove_dir_all(&work);
                result
            }
        }
    }

    /// One file over HTTPS, as kustomize's loader reads a remote resource or patch. It has no
    /// version: the lock records the URL and pins the content by digest, so a later fetch
    /// that gets other bytes fails instead of moving the lint under the repo's feet.
    fn url_file(&self, source: &str) -> Result<Fetched, String> {
        // The scheme is checked by `get` (HTTPS, or HTTP to a loopback address).
        let url = url::Url::parse(source).map_err(|e| format!("{source}: {e}"))?;
        let auth = policy::host_key(&url).and_then(|host| {
            let b = self.options.credentials.for_host(&host)?;
            Some(http::Auth {
                header: format!(
                    "Basic {}",
                    auth::encode_base64(format!("{}:{}", b.username, b.password).as_bytes())
                ),
                host,
            })
        });
        let resp = self
            .http
            .get(&url, &[], auth.as_ref(), MAX_ARTIFACT_BYTES)?;
        if resp.status != 200 {
            return Err(format!("{source}: HTTP {}", resp.status));
        }
        Ok(Fetched {
            resolved: source.to_string(),
            bytes: resp.body,
            origin: None,
        })
    }

    /// A fresh directory inside the cache for one git fetch (nothing is written elsewhere).
    fn scratch_dir(&self) -> Result<PathBuf, String> {
        let base = self.cache.dir().join("tmp");
        std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
        for n in 0..1000u32 {
            let dir = base.join(format!("git-{}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("{}: {e}", dir.display())),
            }
        }
        Err(format!("{}: no free scratch directory", base.display()))
    }
}

/// A chart must unpack as a chart and a tree as a tree before it is cached, so garbage
/// is a fetch error on the line that named it, not a render failure later.
fn check_content(r: &RemoteRef, bytes: &[u8]) -> Result<(), String> {
    if bytes.len() as u64 > MAX_ARTIFACT_BYTES {
        return Err(format!(
            "{r}: {} bytes, over the {MAX_ARTIFACT_BYTES}-byte limit",
            bytes.len()
        ));
    }
    match r.kind {
        RemoteKind::Helm | RemoteKind::Oci => {
            let map = Arc::new(SourceMap::new());
            let fs = MemFs::new(Arc::new(MemTree::new()), map, MAX_ARTIFACT_BYTES);
            crate::render::helm::chart::load_archive(&fs, bytes, &r.to_string())
                .map(|_| ())
                .map_err(|e| format!("{r}: the archive is not a Helm chart: {e}"))
        }
        RemoteKind::Git => crate::remote::archive::unpack_tree(bytes)
            .map(|_| ())
            .map_err(|e| format!("{r}: {e}")),
        // kustomize reads it as YAML text: an HTML error page or a binary is refused here.
        RemoteKind::Url => match std::str::from_utf8(bytes) {
            Ok(text) if !text.contains('\0') => Ok(()),
            _ => Err(format!("{r}: the file is not UTF-8 text")),
        },
    }
}

/// Where a span is, as `path:line`.
pub fn location(map: &SourceMap, span: Span) -> String {
    let lc = map.line_col(span);
    format!("{}:{}", map.path(span.file), lc.line)
}

/// The cache directory: `--cache`, else `GITOPS_LINT_CACHE`, else `.gitops-lint/cache` under
/// the repository root.
pub fn cache_dir(root: &Path, flag: Option<&Path>, env: Option<&std::ffi::OsStr>) -> PathBuf {
    match (flag, env.filter(|e| !e.is_empty())) {
        (Some(f), _) => f.to_path_buf(),
        (None, Some(e)) => PathBuf::from(e),
        (None, None) => root.join(crate::remote::DEFAULT_CACHE_DIR),
    }
}

/// The command's options.
pub struct RunOptions {
    /// The lint that plans the fetch: the same options as `lint` (limits, ignore files), so
    /// fetch downloads what that lint would render. Its `cache` is replaced by `cache`.
    pub lint: crate::lint::LintOptions,
    pub cache: PathBuf,
    pub fetch: FetchOptions,
}

/// What the command did, for its summary and exit code.
pub struct RunReport {
    pub fetched: usize,
    pub cached: usize,
    /// `path:line: message` per line that names a failed input.
    pub failures: Vec<String>,
    pub notes: Vec<String>,
    pub rounds: usize,
    pub lock_written: bool,
    /// Every input of the run, with where it is named and what became of it.
    pub inputs: Vec<summary::InputLine>,
    /// After the fetch: the coverage line of the model the lint will see, and the inputs
    /// still missing from it (`path:line` and the `offline-unrenderable-input` message).
    pub coverage: String,
    pub still_missing: Vec<(String, String)>,
}

/// `gitops-lint fetch`: rounds of model → fetch → lock until nothing new is named.
pub fn run(mut opts: RunOptions) -> Result<RunReport, crate::lint::LintError> {
    let cache = Cache::new(&opts.cache);
    let started = std::time::Instant::now();
    let mut out = RunReport {
        fetched: 0,
        cached: 0,
        failures: Vec::new(),
        notes: Vec::new(),
        rounds: 0,
        lock_written: false,
        inputs: Vec::new(),
        coverage: String::new(),
        still_missing: Vec::new(),
    };
    let lint_opts = crate::lint::LintOptions {
        cache: Some(opts.cache.clone()),
        ..opts.lint.clone()
    };
    for round in 1..=MAX_ROUNDS {
        out.rounds = round;
        // The model is built with this run's cache, so a chart or base fetched in the last
        // round is rendered and what it names is seen.
        let linted = crate::lint::lint(&lint_opts)?;
        let root = linted.root.clone();
        let lock_path = root.join(LOCK_FILE);
        let (lock, existing_text) = read_lock(&lock_path, &linted.map, &mut out.notes);
        let mut uses: Vec<(RemoteRef, Span)> = linted
            .model
            .apps
            .iter()
            .flat_map(|a| a.remotes.iter().map(|u| (u.reference.clone(), u.span)))
            .collect();
        uses.sort_by(|a, b| a.0.cmp(&b.0));
        let new_work = uses.iter().any(|(r, _)| !opts.fetch.skip.contains(r));
        let report = fetch_all(&uses, &lock, &cache, &opts.fetch);
        // The byte and time budgets are the run's, not each round's.
        opts.fetch.max_total_bytes = opts.fetch.max_total_bytes.saturating_sub(report.bytes);
        opts.fetch.total_timeout = opts.fetch.total_timeout.saturating_sub(started.elapsed());
        out.fetched += report.fetched;
        out.cached += report.cached;
        out.inputs.extend(
            report
                .resolutions
                .iter()
                .map(|r| summary::InputLine::of(r, &linted.map)),
        );
        // What stays unrendered is read from the last model that saw every download.
        if report.fetched == 0 {
            summary::after_fetch(&linted, &mut out.coverage, &mut out.still_missing);
        } else {
            out.coverage.clear();
        }
        out.notes.extend(report.notes);
        for f in &report.failures {
            for span in &f.spans {
                out.failures
                    .push(format!("{}: {}", location(&linted.map, *span), f.message));
            }
        }
        let text = report.lock.to_yaml();
        let unchanged = match &existing_text {
            Some(t) => *t == text,
            None => report.lock.entries().is_empty(),
        };
        if !unchanged {
            write_atomic(&lock_path, text.as_bytes()).map_err(|e| crate::lint::LintError {
                message: format!("{}: {e}", lock_path.display()),
            })?;
            out.lock_written = true;
        }
        opts.fetch.skip.extend(uses.into_iter().map(|(r, _)| r));
        if !new_work || (unchanged && round > 1) {
            break;
        }
    }
    if out.coverage.is_empty() {
        let linted = crate::lint::lint(&lint_opts)?;
        summary::after_fetch(&linted, &mut out.coverage, &mut out.still_missing);
    }
    Ok(out)
}

/// The lock file's entries and text (problems become notes: the good entries are kept, and
/// the rewritten file drops the broken ones).
fn read_lock(path: &Path, map: &SourceMap, notes: &mut Vec<String>) -> (Lock, Option<String>) {
    let Ok(text) = crate::source::read_text(path, 16 << 20) else {
        return (Lock::default(), None);
    };
    let id = map.add(crate::source::SourceFile::new(
        LOCK_FILE,
        text.clone(),
        crate::source::Origin::Virtual,
    ));
    let (lock, errors) = Lock::parse(&text, id);
    for e in errors {
        let at = e
            .span
            .map(|s| location(map, s))
            .unwrap_or_else(|| LOCK_FILE.to_string());
        notes.push(format!(
            "{at}: {} (the entry is dropped and fetched anew)",
            e.message
        ));
    }
    (lock, Some(text))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("lock.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Is stderr a terminal (progress lines are for people)?
pub fn stderr_is_tty() -> bool {
    std::io::stderr().is_terminal()
}
