//! `gitops-lint fetch` against real servers on 127.0.0.1 that each test starts: a Helm
//! repository (a small HTTP server over the fixture charts, packaged here), an OCI registry
//! (the CNCF distribution registry, Debian's `docker-registry`, charts pushed with helm) and a
//! git remote (`git daemon`). A test whose server program is missing skips with the reason.

use gitops_lint::fetch::{FetchOptions, FetchReport, auth, fetch_all};
use gitops_lint::remote::{Cache, Lock, RemoteRef, archive, digest_of};
use gitops_lint::source::{FileId, Span};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fetch")
}

/// A `.tgz` of a fixture chart at `version`, as `helm package` lays it out (`<name>/…`).
fn package_chart(name: &str, version: &str) -> Vec<u8> {
    let dir = fixtures().join("charts").join(name);
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    files.sort();
    for path in files {
        let rel = path
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let mut bytes = std::fs::read(&path).unwrap();
        if rel == "Chart.yaml" {
            let text = String::from_utf8(bytes).unwrap();
            bytes = text
                .replace("version: 1.0.0", &format!("version: {version}"))
                .into_bytes();
        }
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        tar.append_data(&mut header, format!("{name}/{rel}"), &bytes[..])
            .unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// What the little HTTP server answers for a path: status, extra headers, body.
type Route = (u16, Vec<(String, String)>, Vec<u8>);
/// Each request's path and headers.
type Seen = Arc<Mutex<Vec<(String, HashMap<String, String>)>>>;

/// An HTTP/1.1 server on 127.0.0.1 (one request per connection), recording every request's
/// path and headers. Its thread lives until the test process ends.
struct Server {
    port: u16,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    seen: Seen,
    /// `user:password` the server asks for (401 with a Basic challenge without it).
    basic: Arc<Mutex<Option<String>>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let routes: Arc<Mutex<HashMap<String, Route>>> = Arc::default();
        let seen: Seen = Arc::default();
        let basic: Arc<Mutex<Option<String>>> = Arc::default();
        let (r, s, b) = (routes.clone(), seen.clone(), basic.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                let mut headers = HashMap::new();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                    }
                }
                s.lock().unwrap().push((path.clone(), headers.clone()));
                let want = b.lock().unwrap().clone();
                let authorised = want.as_ref().is_none_or(|w| {
                    headers.get("authorization").map(String::as_str)
                        == Some(&format!("Basic {}", auth::encode_base64(w.as_bytes())))
                });
                let (status, extra, body) = if !authorised {
                    (
                        401,
                        vec![("WWW-Authenticate".into(), "Basic realm=\"charts\"".into())],
                        Vec::new(),
                    )
                } else {
                    r.lock().unwrap().get(&path).cloned().unwrap_or((
                        404,
                        vec![],
                        b"not found".to_vec(),
                    ))
                };
                let mut out = reader.into_inner();
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                    body.len()
                );
                for (k, v) in extra {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                let _ = out.write_all(head.as_bytes());
                let _ = out.write_all(&body);
            }
        });
        Server {
            port,
            routes,
            seen,
            basic,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn serve(&self, path: &str, body: Vec<u8>) {
        self.routes
            .lock()
            .unwrap()
            .insert(path.to_string(), (200, vec![], body));
    }

    fn redirect(&self, path: &str, to: &str) {
        self.routes.lock().unwrap().insert(
            path.to_string(),
            (302, vec![("Location".into(), to.into())], vec![]),
        );
    }

    fn hits(&self, path: &str) -> usize {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == path)
            .count()
    }

    fn total_hits(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

/// A span per use, so each failure can be told apart by the "line" that named it.
fn span(n: u32) -> Span {
    Span::new(FileId(n), 0, 1)
}

fn options() -> FetchOptions {
    FetchOptions {
        request_timeout: Duration::from_secs(20),
        ..FetchOptions::default()
    }
}

fn failure<'a>(report: &'a FetchReport, r: &RemoteRef) -> &'a str {
    report
        .failures
        .iter()
        .find(|f| &f.reference == r)
        .map(|f| f.message.as_str())
        .unwrap_or_else(|| panic!("no failure for {r}: {report:?}"))
}

/// The Helm repository: one index.yaml, archives beside it (relative URLs).
fn helm_repo() -> (Server, HashMap<&'static str, Vec<u8>>) {
    let server = Server::start();
    let mut archives = HashMap::new();
    let mut index = String::from("apiVersion: v1\nentries:\n  web:\n");
    for v in ["1.0.0", "1.2.0", "2.0.0", "2.1.0-rc.1"] {
        let tgz = package_chart("web", v);
        let hex = &digest_of(&tgz)[7..];
        index.push_str(&format!(
            "    - name: web\n      version: {v}\n      digest: {hex}\n      urls: [web-{v}.tgz]\n"
        ));
        server.serve(&format!("/charts/web-{v}.tgz"), tgz.clone());
        archives.insert(v, tgz);
    }
    // Lies about its digest; is no chart at all; sends us to plain HTTP elsewhere.
    let lying = package_chart("web", "9.9.9");
    server.serve("/charts/lying-1.0.0.tgz", lying);
    let garbage = b"this is not a gzip stream".to_vec();
    server.serve("/charts/garbage-1.0.0.tgz", garbage.clone());
    server.redirect(
        "/charts/moved-1.0.0.tgz",
        "http://charts.example.com/moved-1.0.0.tgz",
    );
    index.push_str(&format!(
        "  lying:\n    - version: 1.0.0\n      digest: {}\n      urls: [lying-1.0.0.tgz]\n  garbage:\n    - version: 1.0.0\n      digest: {}\n      urls: [garbage-1.0.0.tgz]\n  moved:\n    - version: 1.0.0\n      urls: [moved-1.0.0.tgz]\n",
        "0".repeat(64),
        &digest_of(&garbage)[7..],
    ));
    server.serve("/charts/index.yaml", index.into_bytes());
    (server, archives)
}

#[test]
fn a_helm_repository_resolves_ranges_verifies_digests_and_locates_each_failure() {
    let (server, archives) = helm_repo();
    let repo = format!("{}/charts", server.url());
    let web_range = RemoteRef::helm(&repo, "web", "^1.0");
    let web_newest = RemoteRef::helm(&repo, "web", "");
    let lying = RemoteRef::helm(&repo, "lying", "1.0.0");
    let garbage = RemoteRef::helm(&repo, "garbage", "1.0.0");
    let moved = RemoteRef::helm(&repo, "moved", "1.0.0");
    let absent = RemoteRef::helm(&repo, "absent", "1.0.0");
    let uses = vec![
        (web_range.clone(), span(1)),
        (web_range.clone(), span(2)),
        (web_newest.clone(), span(3)),
        (lying.clone(), span(4)),
        (garbage.clone(), span(5)),
        (moved.clone(), span(6)),
        (absent.clone(), span(7)),
    ];
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path().join("cache"));
    let report = fetch_all(&uses, &Lock::default(), &cache, &options());
    assert_eq!(report.fetched, 2, "{report:?}");
    assert_eq!(report.cached, 0);
    assert_eq!(report.failures.len(), 4, "{report:?}");
    // The index is read once for all the charts of the repository.
    assert_eq!(server.hits("/charts/index.yaml"), 1);

    let locked = report.lock.find(&web_range).unwrap();
    assert_eq!(locked.resolved, "1.2.0");
    assert_eq!(locked.digest, digest_of(&archives["1.2.0"]));
    assert_eq!(locked.origin.as_deref(), Some(locked.digest.as_str()));
    // `*` and empty are the newest release, never the prerelease.
    assert_eq!(report.lock.find(&web_newest).unwrap().resolved, "2.0.0");
    assert_eq!(cache.read(&locked.digest).unwrap(), archives["1.2.0"]);

    assert!(
        failure(&report, &lying).contains("index.yaml says sha256:000"),
        "{}",
        failure(&report, &lying)
    );
    assert!(failure(&report, &garbage).contains("not a Helm chart"));
    assert!(failure(&report, &moved).contains("plain HTTP is refused"));
    assert!(failure(&report, &absent).contains("chart `absent` is not in"));
    // A failure carries every line that named it; here one each.
    let spans: Vec<u32> = report
        .failures
        .iter()
        .flat_map(|f| f.spans.iter().map(|s| s.file.0))
        .collect();
    assert_eq!(spans.len(), 4);
    assert!(server.hits("/moved-1.0.0.tgz") == 0);

    // The lock pins what was resolved: a second run is served from the cache, no request.
    let before = server.total_hits();
    let good: Vec<_> = uses[..3].to_vec();
    let again = fetch_all(&good, &report.lock, &cache, &options());
    assert_eq!(
        (again.fetched, again.cached, again.failures.len()),
        (0, 2, 0),
        "{again:?}"
    );
    assert_eq!(again.requests, 0);
    assert_eq!(server.total_hits(), before);
    assert_eq!(again.lock, {
        let mut l = report.lock.clone();
        l.retain(|e| e.reference == web_range || e.reference == web_newest);
        l
    });

    // A corrupted cache entry is detected and replaced by the locked version, not re-resolved.
    let blob = dir
        .path()
        .join("cache/blobs/sha256")
        .join(&locked.digest[7..]);
    std::fs::write(&blob, b"tampered").unwrap();
    let repaired = fetch_all(&good, &again.lock, &cache, &options());
    assert_eq!((repaired.fetched, repaired.cached), (1, 1), "{repaired:?}");
    assert!(
        repaired.notes.iter().any(|n| n.contains("corrupt")),
        "{:?}",
        repaired.notes
    );
    assert_eq!(std::fs::read(&blob).unwrap(), archives["1.2.0"]);
    assert_eq!(repaired.lock.find(&web_range).unwrap().resolved, "1.2.0");

    // Content that changed on the server since it was locked is refused.
    let mut stale = repaired.lock.clone();
    let mut entry = stale.find(&web_range).unwrap().clone();
    entry.digest = digest_of(b"what was locked once");
    stale.insert(entry);
    let changed = fetch_all(&good[..1], &stale, &cache, &options());
    assert!(
        failure(&changed, &web_range).contains("content changed"),
        "{changed:?}"
    );
}

#[test]
fn credentials_go_only_to_their_host_and_archives_elsewhere_get_none() {
    let repo_server = Server::start();
    let files = Server::start();
    *repo_server.basic.lock().unwrap() = Some("reader:pa55".into());
    let tgz = package_chart("web", "1.0.0");
    files.serve("/dl/web-1.0.0.tgz", tgz.clone());
    repo_server.serve(
        "/index.yaml",
        format!(
            "apiVersion: v1\nentries:\n  web:\n    - version: 1.0.0\n      urls: ['{}/dl/web-1.0.0.tgz']\n",
            files.url()
        )
        .into_bytes(),
    );
    let r = RemoteRef::helm(&repo_server.url(), "web", "1.0.0");
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path());

    // Without credentials: the 401 is the located failure.
    let anon = fetch_all(
        &[(r.clone(), span(1))],
        &Lock::default(),
        &cache,
        &options(),
    );
    assert!(failure(&anon, &r).contains("HTTP 401"), "{anon:?}");

    let (credentials, notes) = auth::Credentials::load(&auth::Sources {
        env: Some(format!("127.0.0.1:{}=reader:pa55", repo_server.port)),
        ..auth::Sources::default()
    });
    assert!(notes.is_empty());
    let opts = FetchOptions {
        credentials,
        ..options()
    };
    let report = fetch_all(&[(r.clone(), span(1))], &Lock::default(), &cache, &opts);
    assert_eq!(report.fetched, 1, "{report:?}");
    let auth_of = |s: &Server| {
        s.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(p, h)| (p.clone(), h.contains_key("authorization")))
            .collect::<Vec<_>>()
    };
    assert!(auth_of(&repo_server).contains(&("/index.yaml".to_string(), true)));
    // Same IP, another port: another host, so no credentials.
    assert_eq!(
        auth_of(&files),
        vec![("/dl/web-1.0.0.tgz".to_string(), false)]
    );
}

/// Is a program on PATH (or at this path)?
fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16) -> bool {
    let until = Instant::now() + Duration::from_secs(15);
    while Instant::now() < until {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// A child process killed when the test ends, however it ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const HELM: &str = "/usr/local/bin/helm";

/// The distribution registry on a free loopback port with its storage in `dir`.
fn registry(dir: &Path) -> Option<(Child, u16)> {
    let Some(registry_bin) = ["docker-registry", "registry"]
        .into_iter()
        .find(|b| have(b))
    else {
        println!("skipped: no docker-registry (apt-get install docker-registry)");
        return None;
    };
    if !Path::new(HELM).exists() {
        println!("skipped: no helm at {HELM} (the oracle helm pushes the charts)");
        return None;
    }
    let port = free_port();
    let config = dir.join("registry.yml");
    std::fs::write(
        &config,
        format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.join("registry-data").display()
        ),
    )
    .unwrap();
    let child = Child(
        Command::new(registry_bin)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    assert!(wait_for_port(port), "the registry did not listen on {port}");
    Some((child, port))
}

/// `helm push --plain-http` of a fixture chart at `version` to `oci://127.0.0.1:<port>/charts`.
fn push(dir: &Path, port: u16, name: &str, version: &str) {
    let helm_home = dir.join("helm");
    let tgz = dir.join(format!("{name}-{version}.tgz"));
    std::fs::write(&tgz, package_chart(name, version)).unwrap();
    let out = Command::new(HELM)
        .args(["push", "--plain-http"])
        .arg(&tgz)
        .arg(format!("oci://127.0.0.1:{port}/charts"))
        .env("HELM_CONFIG_HOME", &helm_home)
        .env("HELM_CACHE_HOME", &helm_home)
        .env("HELM_DATA_HOME", &helm_home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "helm push: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_oci_registry_serves_charts_by_tag_range_and_digest() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_registry, port)) = registry(dir.path()) else {
        return;
    };
    // (`1.1.1+build.7` would be the `+`→`_` tag case, but this registry answers helm's push
    // of such a tag with "not found".)
    for v in ["1.0.0", "1.1.0", "1.1.3", "2.0.0-rc.1"] {
        push(dir.path(), port, "api", v);
    }
    let source = format!("oci://127.0.0.1:{port}/charts/api");
    let range = RemoteRef::oci(&source, "", "~1.1.0");
    let newest = RemoteRef::oci(&format!("127.0.0.1:{port}/charts"), "api", "");
    let exact = RemoteRef::oci(&source, "", "2.0.0-rc.1");
    let plus = RemoteRef::oci(&source, "", "1.1.x");
    let missing = RemoteRef::oci(&source, "", "3.0.0");
    let wrong_digest = RemoteRef::oci(&source, "", &format!("1.0.0@sha256:{}", "0".repeat(64)));
    let uses: Vec<_> = [&range, &newest, &exact, &plus, &missing, &wrong_digest]
        .iter()
        .enumerate()
        .map(|(i, r)| ((*r).clone(), span(i as u32)))
        .collect();
    let cache = Cache::new(dir.path().join("cache"));
    let report = fetch_all(&uses, &Lock::default(), &cache, &options());
    assert_eq!(report.fetched, 4, "{report:?}");
    assert_eq!(report.lock.find(&range).unwrap().resolved, "1.1.3");
    assert_eq!(report.lock.find(&plus).unwrap().resolved, "1.1.3");
    // Empty is the newest release, not the prerelease.
    assert_eq!(report.lock.find(&newest).unwrap().resolved, "1.1.3");
    assert_eq!(report.lock.find(&exact).unwrap().resolved, "2.0.0-rc.1");
    assert!(failure(&report, &missing).contains("no tag or manifest `3.0.0`"));
    assert!(failure(&report, &wrong_digest).contains("no tag or manifest `sha256:000"));
    let entry = report.lock.find(&exact).unwrap();
    let manifest_digest = entry.origin.clone().unwrap();
    assert!(manifest_digest.starts_with("sha256:"));
    assert_eq!(
        cache.read(&entry.digest).unwrap(),
        package_chart("api", "2.0.0-rc.1")
    );

    // The manifest digest pins the chart too.
    let by_digest = RemoteRef::oci(&source, "", &format!("2.0.0-rc.1@{manifest_digest}"));
    let pinned = fetch_all(
        &[(by_digest.clone(), span(9))],
        &Lock::default(),
        &cache,
        &options(),
    );
    assert_eq!(pinned.fetched, 1, "{pinned:?}");
    assert_eq!(pinned.lock.find(&by_digest).unwrap().digest, entry.digest);
}

/// `git` with a fixed identity and no user or system configuration.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A bases repository: `v1.0.0` tagged, then a change on main; served by `git daemon`.
fn git_remote(dir: &Path) -> Option<(Child, u16, String, String)> {
    if !have("git") {
        println!(
            "skipped: no git (the test builds the remote with it and serves it with git daemon)"
        );
        return None;
    }
    let work = dir.join("work");
    std::fs::create_dir_all(work.join("base")).unwrap();
    for f in ["kustomization.yaml", "configmap.yaml", "deployment.yaml"] {
        std::fs::copy(
            fixtures().join("bases/base").join(f),
            work.join("base").join(f),
        )
        .unwrap();
    }
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-qm", "base v1"]);
    git(&work, &["tag", "v1.0.0"]);
    let v1 = git(&work, &["rev-parse", "HEAD"]);
    std::fs::write(work.join("base/configmap.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared-settings\ndata:\n  log-level: debug\n").unwrap();
    git(&work, &["commit", "-qam", "base v2"]);
    let main = git(&work, &["rev-parse", "HEAD"]);
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    git(
        dir,
        &[
            "clone",
            "-q",
            "--bare",
            work.to_str().unwrap(),
            served.join("bases.git").to_str().unwrap(),
        ],
    );
    let port = free_port();
    // git-daemon itself, not `git daemon`: the wrapper forks it, and killing the wrapper
    // would leave the daemon running after the test.
    let exec_path = git(dir, &["--exec-path"]);
    let daemon = Command::new(Path::new(&exec_path).join("git-daemon"))
        .args(["--reuseaddr", "--export-all", "--listen=127.0.0.1"])
        .arg(format!("--port={port}"))
        .arg(format!("--base-path={}", served.display()))
        .arg(&served)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let daemon = match daemon {
        Ok(d) => Child(d),
        Err(e) => {
            println!("skipped: git daemon does not start: {e}");
            return None;
        }
    };
    if !wait_for_port(port) {
        println!("skipped: git daemon did not listen on {port}");
        return None;
    }
    Some((daemon, port, v1, main))
}

#[test]
fn a_git_remote_is_fetched_at_a_tag_a_branch_or_a_commit_into_a_tree_archive() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_daemon, port, v1, main)) = git_remote(dir.path()) else {
        return;
    };
    let url = format!("git://127.0.0.1:{port}/bases.git");
    let tag = RemoteRef::git(&url, "v1.0.0");
    let branch = RemoteRef::git(&url, "main");
    let default = RemoteRef::git(&url, "");
    let commit = RemoteRef::git(&url, &v1);
    let absent = RemoteRef::git(&url, "v9.9.9");
    let uses: Vec<_> = [&tag, &branch, &default, &commit, &absent]
        .iter()
        .enumerate()
        .map(|(i, r)| ((*r).clone(), span(i as u32)))
        .collect();
    let cache = Cache::new(dir.path().join("cache"));
    let report = fetch_all(&uses, &Lock::default(), &cache, &options());
    assert_eq!(report.fetched, 4, "{report:?}");
    assert_eq!(report.lock.find(&tag).unwrap().resolved, v1);
    assert_eq!(report.lock.find(&commit).unwrap().resolved, v1);
    assert_eq!(report.lock.find(&branch).unwrap().resolved, main);
    assert_eq!(report.lock.find(&default).unwrap().resolved, main);
    assert!(failure(&report, &absent).contains("v9.9.9"), "{report:?}");
    // The same commit packs to the same blob; its tree is the checkout's files.
    let t = report.lock.find(&tag).unwrap();
    assert_eq!(t.digest, report.lock.find(&commit).unwrap().digest);
    let tree = archive::unpack_tree(&cache.read(&t.digest).unwrap()).unwrap();
    assert_eq!(
        tree.get("base/configmap.yaml")
            .map(|b| String::from_utf8_lossy(b).contains("log-level: info")),
        Some(true)
    );
    assert_eq!(tree.len(), 3);
    // Nothing is left beside the blobs: the clone was made inside the cache and removed.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("cache/tmp"))
        .unwrap()
        .flatten()
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Run this test binary's `child` test under `strace -f`, returning the trace.
fn strace_child(name: &str, env: &[(&str, &Path)], trace: &str) -> Option<String> {
    if Command::new("strace").arg("-V").output().is_err() {
        println!("skipped: strace is not installed (apt-get install strace)");
        return None;
    }
    let out_file = tempfile::NamedTempFile::new().unwrap();
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-qq", "-e", &format!("trace={trace}"), "-o"])
        .arg(out_file.path())
        .arg(std::env::current_exe().unwrap())
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let trace_text = std::fs::read_to_string(out_file.path()).unwrap_or_default();
    if !out.status.success() {
        if trace_text.contains("PTRACE") || String::from_utf8_lossy(&out.stderr).contains("ptrace")
        {
            println!("skipped: strace could not trace here");
            return None;
        }
        panic!(
            "child failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "the child test did not run: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    Some(trace_text)
}

#[test]
#[ignore = "run under strace by a_second_fetch_connects_to_nothing"]
fn child_fetch_from_the_lock() {
    let dir = PathBuf::from(std::env::var_os("FETCH_CHILD_DIR").expect("set by the parent"));
    let uses_text = std::fs::read_to_string(dir.join("uses")).unwrap();
    let (lock, errors) = Lock::parse(
        &std::fs::read_to_string(dir.join("lock")).unwrap(),
        FileId(0),
    );
    assert!(errors.is_empty());
    let uses: Vec<_> = uses_text
        .lines()
        .map(|l| {
            let (repo, chart) = l.split_once(' ').unwrap();
            (RemoteRef::helm(repo, chart, "^1.0"), span(0))
        })
        .collect();
    let report = fetch_all(&uses, &lock, &Cache::new(dir.join("cache")), &options());
    assert_eq!(
        (report.fetched, report.cached, report.failures.len()),
        (0, 1, 0),
        "{report:?}"
    );
}

#[test]
fn a_second_fetch_connects_to_nothing() {
    let (server, _) = helm_repo();
    let repo = format!("{}/charts", server.url());
    let r = RemoteRef::helm(&repo, "web", "^1.0");
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path().join("cache"));
    let first = fetch_all(&[(r, span(0))], &Lock::default(), &cache, &options());
    assert_eq!(first.fetched, 1, "{first:?}");
    std::fs::write(dir.path().join("lock"), first.lock.to_yaml()).unwrap();
    std::fs::write(dir.path().join("uses"), format!("{repo} web\n")).unwrap();
    let Some(trace) = strace_child(
        "child_fetch_from_the_lock",
        &[("FETCH_CHILD_DIR", dir.path())],
        "connect",
    ) else {
        return;
    };
    let connects: Vec<&str> = trace.lines().filter(|l| l.contains("connect(")).collect();
    assert!(
        connects.is_empty(),
        "the cached fetch connected: {connects:?}"
    );
}

#[test]
#[ignore = "run under strace by a_git_fetch_runs_no_program"]
fn child_git_fetch() {
    let dir = PathBuf::from(std::env::var_os("FETCH_CHILD_DIR").expect("set by the parent"));
    let url = std::fs::read_to_string(dir.join("url")).unwrap();
    let report = fetch_all(
        &[(RemoteRef::git(url.trim(), "v1.0.0"), span(0))],
        &Lock::default(),
        &Cache::new(dir.join("cache")),
        &options(),
    );
    assert_eq!(report.fetched, 1, "{report:?}");
}

#[test]
fn a_git_fetch_runs_no_program() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_daemon, port, _, _)) = git_remote(dir.path()) else {
        return;
    };
    std::fs::write(
        dir.path().join("url"),
        format!("git://127.0.0.1:{port}/bases.git"),
    )
    .unwrap();
    let Some(trace) = strace_child(
        "child_git_fetch",
        &[("FETCH_CHILD_DIR", dir.path())],
        "execve",
    ) else {
        return;
    };
    let execs: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("execve(") && !l.contains("resumed"))
        .collect();
    // The test binary itself, once; no git, no ssh, no credential helper.
    assert_eq!(execs.len(), 1, "{execs:#?}");
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
}

#[test]
fn the_command_on_a_repository_without_remote_inputs_writes_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("apps/web")).unwrap();
    std::fs::write(
        dir.path().join("apps/web/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: b\n",
    )
    .unwrap();
    let out = bin()
        .arg("fetch")
        .arg(dir.path())
        .env_remove("GITOPS_LINT_CACHE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("fetched 0, cached 0, failed 0"), "{stderr}");
    assert!(!dir.path().join(".gitops-lint.lock").exists());
    assert!(!dir.path().join(".gitops-lint").exists());

    let missing = bin()
        .arg("fetch")
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    let mut s = String::new();
    let _ = (&missing.stderr[..]).read_to_string(&mut s);
    assert!(s.contains("nope"), "{s}");
}

/// The fixture repository with the servers' addresses in place of its placeholders.
fn fixture_repo(dest: &Path, helm: &str, oci: &str, git: &str) {
    let src = fixtures().join("repo");
    for entry in walkdir::WalkDir::new(&src).into_iter().flatten() {
        let rel = entry.path().strip_prefix(&src).unwrap();
        let to = dest.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let text = text
                .replace("@HELM_REPO@", helm)
                .replace("@OCI_REGISTRY@", oci)
                .replace("@GIT_BASES@", git);
            std::fs::write(&to, text).unwrap();
        }
    }
}

/// All three servers with the fixture charts and bases; `None` (reason printed) when a
/// server program is missing.
struct Servers {
    helm: Server,
    _registry: Child,
    oci: String,
    _daemon: Child,
    git: String,
}

fn servers(dir: &Path) -> Option<Servers> {
    let (helm, _) = helm_repo();
    let (registry, port) = registry(dir)?;
    for v in ["1.0.0", "1.2.0"] {
        push(dir, port, "api", v);
    }
    let (daemon, _, _, _) = git_remote(dir)?;
    Some(Servers {
        helm,
        _registry: registry,
        oci: format!("127.0.0.1:{port}"),
        _daemon: daemon,
        git: format!("git::file://{}", dir.join("served/bases.git").display()),
    })
}

fn run_fetch(repo: &Path, cache: &Path) -> (bool, String) {
    let out = bin()
        .arg("fetch")
        .arg("--allow-file-remotes")
        .arg("--cache")
        .arg(cache)
        .arg(repo)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn after_fetch_lint_reports_each_remote_app_on_the_line_a_person_edits() {
    let dir = tempfile::tempdir().unwrap();
    let Some(s) = servers(dir.path()) else {
        return;
    };
    let repo = dir.path().join("repo");
    fixture_repo(&repo, &format!("{}/charts", s.helm.url()), &s.oci, &s.git);
    let cache = dir.path().join("cache");
    let (ok, stderr) = run_fetch(&repo, &cache);
    assert!(ok, "{stderr}");
    let lock_text = std::fs::read_to_string(repo.join(".gitops-lint.lock")).unwrap_or_default();
    assert!(
        stderr.contains("fetched 3, cached 0, failed 0"),
        "{stderr}\n{lock_text}"
    );
    let lock = std::fs::read_to_string(repo.join(".gitops-lint.lock")).unwrap();
    assert!(lock.contains("resolved: \"1.2.0\""), "{lock}");
    let (ok, stderr) = run_fetch(&repo, &cache);
    assert!(
        ok && stderr.contains("fetched 0, cached 3, failed 0"),
        "{stderr}"
    );

    let out = bin()
        .args(["--format", "json", "--comment", "off"])
        .arg(&repo)
        .env("GITOPS_LINT_CACHE", &cache)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = json["findings"].as_array().unwrap();
    // Lint reads the cache, never the network: with no network at all (a user and network
    // namespace whose only interface is a downed loopback) the report is the same, byte for byte.
    if Command::new("unshare")
        .args(["-rn", "true"])
        .status()
        .is_ok_and(|s| s.success())
    {
        let offline = Command::new("unshare")
            .arg("-rn")
            .arg(env!("CARGO_BIN_EXE_gitops-lint"))
            .args(["--format", "json", "--comment", "off"])
            .arg(&repo)
            .env("GITOPS_LINT_CACHE", &cache)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), offline.status.code());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&offline.stdout),
            "lint without a network differs from lint with one"
        );
    } else {
        println!("skipped (the offline half): unshare -rn is not permitted here");
    }
    // Each finding is on a repo line and names the fetched file as related.
    let find = |rule: &str, file: &str, related: &str| {
        findings
            .iter()
            .find(|f| {
                f["rule"] == rule
                    && f["file"] == file
                    && f["related"].as_array().is_some_and(|r| {
                        r.iter()
                            .any(|l| l["file"].as_str().is_some_and(|p| p.ends_with(related)))
                    })
            })
            .and_then(|f| f["line"].as_u64())
            .unwrap_or_else(|| panic!("no {rule} on {file} with {related} related: {findings:#?}"))
    };
    // The Argo app: replicaCount under an enabled HPA, reported on the `valuesObject` line
    // that sets it (the line a person edits).
    let web = std::fs::read_to_string(repo.join("apps/web.yaml")).unwrap();
    let values_line = web
        .lines()
        .position(|l| l.trim_start().starts_with("replicaCount:"))
        .map(|i| i as u64 + 1);
    assert_eq!(
        Some(find(
            "hpa-replicas-conflict",
            "apps/web.yaml",
            "templates/deployment.yaml"
        )),
        values_line
    );
    // The Flux HelmRelease on the OCI chart: randAlphaNum in the chart's Secret.
    assert!(
        find(
            "helm-nondeterministic-function",
            "flux/api.yaml",
            "templates/secret.yaml"
        ) > 0
    );
    // The remote base's replicas beside the overlay's HPA: on the `resources:` entry.
    assert_eq!(
        find(
            "hpa-replicas-conflict",
            "workers/kustomization.yaml",
            "base/deployment.yaml"
        ),
        5
    );
}

/// `bench/fetch.sh`: the fixture set (4 Helm charts, 2 OCI charts, 2 git refs) fetched cold
/// into an empty cache, then warm from the lock.
#[test]
#[ignore = "a benchmark: bench/fetch.sh runs it"]
fn bench_fetch_cold_and_warm() {
    let dir = tempfile::tempdir().unwrap();
    let Some(s) = servers(dir.path()) else {
        return;
    };
    let repo = format!("{}/charts", s.helm.url());
    let oci = format!("oci://{}/charts/api", s.oci);
    let git = dir.path().join("served/bases.git");
    let uses: Vec<(RemoteRef, Span)> = [
        RemoteRef::helm(&repo, "web", "1.0.0"),
        RemoteRef::helm(&repo, "web", "1.2.0"),
        RemoteRef::helm(&repo, "web", "2.0.0"),
        RemoteRef::helm(&repo, "web", "^1"),
        RemoteRef::oci(&oci, "", "1.0.0"),
        RemoteRef::oci(&oci, "", "1.x"),
        RemoteRef::git(&format!("file://{}", git.display()), "v1.0.0"),
        RemoteRef::git(&format!("file://{}", git.display()), "main"),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, r)| (r, span(i as u32)))
    .collect();
    let opts = FetchOptions {
        allow_local_git: true,
        ..options()
    };
    let runs = 5;
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for n in 0..runs {
        let cache = Cache::new(dir.path().join(format!("cache-{n}")));
        let t = Instant::now();
        let first = fetch_all(&uses, &Lock::default(), &cache, &opts);
        cold.push(t.elapsed());
        assert_eq!(first.fetched, uses.len(), "{first:?}");
        let t = Instant::now();
        let second = fetch_all(&uses, &first.lock, &cache, &opts);
        warm.push(t.elapsed());
        assert_eq!(second.cached, uses.len());
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "fetch_all of {} inputs: cold median {:.1} ms, warm median {:.2} ms ({runs} runs each)",
        uses.len(),
        ms(median(&mut cold)),
        ms(median(&mut warm))
    );

    // The command on the fixture repository, then lint with the cache and without it.
    let repo = dir.path().join("repo");
    fixture_repo(&repo, &repo_url_of(&s), &s.oci, &s.git);
    let timed = |cmd: &mut Command| {
        let t = Instant::now();
        let out = cmd.output().unwrap();
        (
            t.elapsed(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or_default()
                .to_string(),
        )
    };
    let cache = dir.path().join("cli-cache");
    let fetch = |cache: &Path| {
        let mut c = bin();
        c.args(["fetch", "--allow-file-remotes", "--cache"])
            .arg(cache)
            .arg(&repo);
        c
    };
    let (cold_cli, cold_line) = timed(&mut fetch(&cache));
    let (warm_cli, warm_line) = timed(&mut fetch(&cache));
    println!(
        "gitops-lint fetch: cold {:.0} ms ({cold_line}), warm {:.0} ms ({warm_line})",
        ms(cold_cli),
        ms(warm_cli)
    );
    let empty = dir.path().join("empty-cache");
    let lint = |cache: &Path| {
        let mut c = bin();
        c.args(["--quiet", "--comment", "off"])
            .arg(&repo)
            .env("GITOPS_LINT_CACHE", cache);
        c
    };
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        with.push(timed(&mut lint(&cache)).0);
        without.push(timed(&mut lint(&empty)).0);
    }
    println!(
        "gitops-lint on the fixture repo: with the cache median {:.0} ms, without {:.0} ms ({runs} runs each)",
        ms(median(&mut with)),
        ms(median(&mut without))
    );
}

fn repo_url_of(s: &Servers) -> String {
    format!("{}/charts", s.helm.url())
}

/// A kustomization whose resource and patch are files at URLs: offline, both are left out
/// and named; `fetch` downloads them over HTTP(S), locks each by digest, and lint then
/// renders them with the local patch applied; a server that later serves other bytes makes
/// a fresh fetch fail instead of moving the lint.
#[test]
fn remote_files_are_fetched_locked_by_digest_and_rendered_with_the_local_patches() {
    let server = Server::start();
    let install = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n        - name: web\n          image: ghcr.io/example/web:1.4.2\n";
    server.serve("/org/web/v1.4.2/install.yaml", install.as_bytes().to_vec());
    let remote_patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          resources:\n            requests: {cpu: 100m}\n";
    server.serve("/org/patches/v2/web.yaml", remote_patch.as_bytes().to_vec());
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let app = repo.join("apps/web");
    std::fs::create_dir_all(&app).unwrap();
    let base = server.url();
    std::fs::write(
        app.join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {base}/org/web/v1.4.2/install.yaml\n  - hpa.yaml\npatches:\n  - path: {base}/org/patches/v2/web.yaml\n  - path: replicas.yaml\n"
        ),
    )
    .unwrap();
    std::fs::write(
        app.join("hpa.yaml"),
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 6\n",
    )
    .unwrap();
    std::fs::write(
        app.join("replicas.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  replicas: 3\n",
    )
    .unwrap();
    std::fs::create_dir_all(repo.join("argocd")).unwrap();
    std::fs::write(
        repo.join("argocd/web.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/example/platform.git\n    targetRevision: main\n    path: apps/web\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: shop\n  syncPolicy:\n    automated: {selfHeal: true}\n",
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let lint_json = |cache: &Path| -> Vec<serde_json::Value> {
        let out = bin()
            .args(["--format", "json", "--comment", "off"])
            .arg(&repo)
            .env("GITOPS_LINT_CACHE", cache)
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        json["findings"].as_array().cloned().unwrap_or_default()
    };
    let rules = |findings: &[serde_json::Value]| -> Vec<(String, String, u64)> {
        let mut r: Vec<_> = findings
            .iter()
            .filter(|f| f["severity"] != "info")
            .map(|f| {
                (
                    f["rule"].as_str().unwrap_or("").to_string(),
                    f["file"].as_str().unwrap_or("").to_string(),
                    f["line"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        r.sort();
        r
    };

    // Offline: both URLs are named, each on its line, as inputs `fetch` downloads.
    let offline = lint_json(&cache);
    let missing: Vec<_> = offline
        .iter()
        .filter(|f| f["rule"] == "offline-unrenderable-input")
        .collect();
    assert_eq!(missing.len(), 2, "{offline:#?}");
    assert!(
        missing.iter().all(|f| f["message"]
            .as_str()
            .is_some_and(|m| m.contains("gitops-lint fetch"))),
        "{missing:#?}"
    );

    let (ok, stderr) = run_fetch(&repo, &cache);
    assert!(
        ok && stderr.contains("fetched 2, cached 0, failed 0"),
        "{stderr}"
    );
    let lock = std::fs::read_to_string(repo.join(".gitops-lint.lock")).unwrap();
    assert_eq!(lock.matches("kind: url").count(), 2, "{lock}");
    assert!(
        lock.contains(&digest_of(install.as_bytes())),
        "the lock pins the file's content: {lock}"
    );

    // Rendered from the cache: the local patch found its target in the fetched file, and the
    // HPA conflict is on the line a person edits; nothing is offline any more.
    let online = lint_json(&cache);
    assert_eq!(
        rules(&online)
            .into_iter()
            .filter(|(r, _, _)| r != "unpinned-source")
            .collect::<Vec<_>>(),
        vec![(
            "hpa-replicas-conflict".to_string(),
            "apps/web/replicas.yaml".to_string(),
            7
        )],
        "{online:#?}"
    );

    // A second fetch is served from the lock and the cache.
    let hits = server.total_hits();
    let (ok, stderr) = run_fetch(&repo, &cache);
    assert!(
        ok && stderr.contains("fetched 0, cached 2, failed 0"),
        "{stderr}"
    );
    assert_eq!(
        server.total_hits(),
        hits,
        "a locked, cached file is not downloaded again"
    );

    // The server changes the file: a fetch into an empty cache downloads it again and refuses
    // the new bytes, naming the line; the lock keeps the old digest.
    server.serve(
        "/org/web/v1.4.2/install.yaml",
        install.replace("1.4.2", "1.5.0").into_bytes(),
    );
    let fresh = dir.path().join("fresh-cache");
    let summary = dir.path().join("summary.md");
    let out = bin()
        .arg("fetch")
        .arg("--cache")
        .arg(&fresh)
        .arg(&repo)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let (ok, stderr) = (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    assert!(!ok, "{stderr}");
    // The job summary: the failure first, on its line; the patch downloaded and shown by
    // its digest; and the lint's view after the fetch, with the file it still goes without.
    let summary = std::fs::read_to_string(&summary).unwrap();
    let rows: Vec<&str> = summary.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 2, "{summary}");
    assert!(
        rows[0].contains("install.yaml`")
            && rows[0].contains("**failed**")
            && rows[0].contains("`apps/web/kustomization.yaml:4`"),
        "{summary}"
    );
    assert!(
        rows[1].contains(&format!(
            "downloaded {}",
            &digest_of(remote_patch.as_bytes())[..19]
        )),
        "{summary}"
    );
    assert!(
        summary.contains("After the fetch, coverage: 2 apps, 1 rendered, 1 partly rendered (1 remote-file), 0 not rendered. Kustomization directories: 1, 0 linted, 1 only in partly rendered apps.\n")
            && summary.contains("- `apps/web/kustomization.yaml:4`: "),
        "{summary}"
    );
    assert!(
        stderr.contains("apps/web/kustomization.yaml:4") && stderr.contains("content changed"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".gitops-lint.lock")).unwrap(),
        lock
    );
}

/// A git server that answers a byte every 200 ms keeps gix blocked in one read, where it
/// never looks at its interrupt flag: the fetch is abandoned at its deadline, as an HTTP
/// download is, and fails naming the time (before, it ran for as long as the server did).
#[test]
fn a_trickling_git_server_is_cut_off_at_the_deadline() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let mut out = reader.into_inner();
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\nContent-Length: 100000\r\n\r\n";
                if out.write_all(head.as_bytes()).is_err() {
                    return;
                }
                // 001e# service=git-upload-pack\n, one byte at a time, for ever.
                for b in b"001e# service=git-upload-pack\n".iter().cycle() {
                    if out.write_all(&[*b]).and_then(|_| out.flush()).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
        }
    });
    let r = RemoteRef::git(&format!("http://127.0.0.1:{port}/org/bases.git"), "v1.0.0");
    let cache = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let report = fetch_all(
        &[(r.clone(), span(1))],
        &Lock::default(),
        &Cache::new(cache.path()),
        &FetchOptions {
            request_timeout: Duration::from_secs(2),
            ..FetchOptions::default()
        },
    );
    let message = failure(&report, &r);
    assert!(message.contains("took longer than 2 s"), "{message}");
    println!("cut off after {:?}", started.elapsed());
}
