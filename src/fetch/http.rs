//! One blocking HTTP client for every download: redirects followed by hand (each hop checked
//! by [`policy`](super::policy), credentials attached only on hops to their host), bodies read
//! up to a cap, and a budget of bytes and time for the whole run.

use super::policy::{MAX_REDIRECTS, check_redirect, check_url, host_key};
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderValue};
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// An `Authorization` header value and the one host it may be sent to.
#[derive(Clone)]
pub struct Auth {
    pub host: String,
    pub header: String,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Auth({}, ***)", self.host)
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The URL that answered (after redirects).
    pub url: Url,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// What the whole run may spend.
pub struct Budget {
    pub max_total_bytes: u64,
    pub deadline: Instant,
    spent: AtomicU64,
}

impl Budget {
    pub fn new(max_total_bytes: u64, time: Duration) -> Budget {
        Budget {
            max_total_bytes,
            deadline: Instant::now() + time,
            spent: AtomicU64::new(0),
        }
    }

    pub fn spent(&self) -> u64 {
        self.spent.load(Ordering::Relaxed)
    }
    /// Time left of the run.
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
}

pub struct Http {
    client: reqwest::blocking::Client,
    budget: Budget,
    requests: AtomicU64,
    /// Wall time of one `get`, redirects and body included. reqwest's own timeout restarts
    /// on every read of a blocking body, so a server sending a byte every few seconds
    /// would never meet it: the body is read against this deadline too.
    request_time: Duration,
}

/// rustls needs a process-wide crypto provider; ours is ring (the one octocrab builds too).
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl Http {
    pub fn new(budget: Budget, request_timeout: Duration) -> Result<Http, String> {
        install_crypto_provider();
        let client = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(15).min(request_timeout))
            .timeout(request_timeout)
            .user_agent(concat!("gitops-lint/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot set up HTTPS: {e}"))?;
        Ok(Http {
            client,
            budget,
            requests: AtomicU64::new(0),
            request_time: request_timeout,
        })
    }

    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Requests sent so far (each redirect hop counts).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// GET `url`, following redirects, reading at most `max_bytes` of the final body. Any
    /// status is returned (callers decide what 401 or 404 mean); only transport failures,
    /// refused URLs and oversize bodies are errors.
    pub fn get(
        &self,
        url: &Url,
        accept: &[&str],
        auth: Option<&Auth>,
        max_bytes: u64,
    ) -> Result<Response, String> {
        let mut current = url.clone();
        check_url(&current)?;
        let deadline = (Instant::now() + self.request_time).min(self.budget.deadline);
        for _ in 0..=MAX_REDIRECTS {
            if Instant::now() > self.budget.deadline {
                return Err(format!("{current}: the fetch ran out of time"));
            }
            let mut req = self.client.get(current.clone());
            if !accept.is_empty() {
                req = req.header(reqwest::header::ACCEPT, accept.join(", "));
            }
            if let Some(a) = auth
                && host_key(&current).as_deref() == Some(a.host.as_str())
            {
                let mut value = HeaderValue::from_str(&a.header).map_err(|_| {
                    format!("{current}: credentials hold characters a header cannot")
                })?;
                value.set_sensitive(true);
                req = req.header(reqwest::header::AUTHORIZATION, value);
            }
            self.requests.fetch_add(1, Ordering::Relaxed);
            let resp = req.send().map_err(|e| describe(&current, &e))?;
            let status = resp.status().as_u16();
            if (300..400).contains(&status) && status != 304 {
                let location = resp
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| format!("{current}: redirect {status} without a Location"))?;
                let next = current
                    .join(location)
                    .map_err(|e| format!("{current}: redirect to `{location}`: {e}"))?;
                check_redirect(&current, &next)?;
                current = next;
                continue;
            }
            return self.read(current, resp, max_bytes, deadline);
        }
        Err(format!("{url}: more than {MAX_REDIRECTS} redirects"))
    }

    fn read(
        &self,
        url: Url,
        mut resp: reqwest::blocking::Response,
        max_bytes: u64,
        deadline: Instant,
    ) -> Result<Response, String> {
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        if let Some(len) = resp.content_length()
            && len > max_bytes
        {
            return Err(format!(
                "{url}: {len} bytes, over the {max_bytes}-byte limit"
            ));
        }
        // Read in chunks, each followed by a look at the clock (a read returns as soon as
        // any byte arrives, and waits at most reqwest's per-read timeout).
        let mut body = Vec::new();
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            let n = resp
                .read(&mut chunk)
                .map_err(|e| format!("{url}: reading the response: {e}"))?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
            if body.len() as u64 > max_bytes {
                return Err(format!("{url}: over the {max_bytes}-byte limit"));
            }
            if Instant::now() > deadline {
                return Err(if deadline >= self.budget.deadline {
                    format!("{url}: the fetch ran out of time")
                } else {
                    format!(
                        "{url}: the response took longer than {} s (the time limit of one request)",
                        self.request_time.as_secs_f64()
                    )
                });
            }
        }
        let spent = self
            .budget
            .spent
            .fetch_add(body.len() as u64, Ordering::Relaxed)
            + body.len() as u64;
        if spent > self.budget.max_total_bytes {
            return Err(format!(
                "{url}: the fetch has downloaded more than its {}-byte total limit",
                self.budget.max_total_bytes
            ));
        }
        Ok(Response {
            status,
            headers,
            body,
            url,
        })
    }
}

trait WithoutUrl {
    fn without_url_ref(&self) -> String;
}

impl WithoutUrl for reqwest::Error {
    /// The error's own words without the URL (which the message already starts with).
    fn without_url_ref(&self) -> String {
        let text = self.to_string();
        match self.url() {
            Some(u) => text
                .replace(&format!(" ({u})"), "")
                .replace(&format!(" for url ({u})"), ""),
            None => text,
        }
    }
}

/// reqwest's error with its causes (the TLS or connect reason is in the chain).
fn describe(url: &Url, e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("{url}: timed out");
    }
    let mut out = format!("{url}: {}", e.without_url_ref());
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::sync::{Arc, Mutex};

    /// Each request's path and whether it carried credentials.
    type Seen = Arc<Mutex<Vec<(String, bool)>>>;

    /// A loopback server answering each request with `answer(path)`; records whether each
    /// request carried an Authorization header.
    fn server(answer: fn(&str, u16) -> String) -> (u16, Seen) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen: Seen = Arc::default();
        let s = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(20).flatten() {
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                let mut auth = false;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                    auth |= h.to_ascii_lowercase().starts_with("authorization:");
                }
                s.lock().unwrap().push((path.clone(), auth));
                let _ = reader
                    .into_inner()
                    .write_all(answer(&path, port).as_bytes());
            }
        });
        (port, seen)
    }

    fn http() -> Http {
        Http::new(
            Budget::new(1 << 20, Duration::from_secs(30)),
            Duration::from_secs(10),
        )
        .unwrap()
    }

    fn ok(body: &str) -> String {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    #[test]
    fn credentials_stay_on_their_host_across_a_redirect() {
        let (other, other_seen) = server(|_, _| ok("archive"));
        // The first server redirects to the second (same IP, another port: another host).
        static OTHER: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
        OTHER.set(other).unwrap();
        let (port, seen) = server(|path, _| match path {
            "/index.yaml" => format!(
                "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{}/a.tgz\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                OTHER.get().unwrap()
            ),
            _ => ok(""),
        });
        let auth = Auth {
            host: format!("127.0.0.1:{port}"),
            header: "Basic dTpw".into(),
        };
        let url = Url::parse(&format!("http://127.0.0.1:{port}/index.yaml")).unwrap();
        let resp = http().get(&url, &[], Some(&auth), 100).unwrap();
        assert_eq!(resp.body, b"archive");
        assert_eq!(resp.url.port(), Some(other));
        assert_eq!(
            seen.lock().unwrap().as_slice(),
            [("/index.yaml".to_string(), true)]
        );
        assert_eq!(
            other_seen.lock().unwrap().as_slice(),
            [("/a.tgz".to_string(), false)]
        );
    }

    /// Headers at once, then one byte every 200 ms for a minute.
    fn trickling_server() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(4).flatten() {
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream);
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                            break;
                        }
                    }
                    let mut out = reader.into_inner();
                    let _ = out.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 300\r\nConnection: close\r\n\r\n",
                    );
                    for _ in 0..300 {
                        if out.write_all(b"x").and_then(|()| out.flush()).is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(200));
                    }
                });
            }
        });
        port
    }

    #[test]
    fn a_trickling_body_is_cut_at_the_request_and_the_run_deadline() {
        let port = trickling_server();
        let url = Url::parse(&format!("http://127.0.0.1:{port}/slow.tgz")).unwrap();
        // The request's own limit: 1 s, though every read returns within 200 ms.
        let h = Http::new(
            Budget::new(1 << 20, Duration::from_secs(600)),
            Duration::from_secs(1),
        )
        .unwrap();
        let started = Instant::now();
        let err = h.get(&url, &[], None, 1000).unwrap_err();
        assert!(err.contains("time limit of one request"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        // The run's deadline, before the request's.
        let h = Http::new(
            Budget::new(1 << 20, Duration::from_secs(1)),
            Duration::from_secs(600),
        )
        .unwrap();
        let started = Instant::now();
        let err = h.get(&url, &[], None, 1000).unwrap_err();
        assert!(err.contains("ran out of time"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn bodies_redirect_chains_and_the_run_are_capped() {
        let (port, _) = server(|path, port| match path {
            "/big" => ok(&"x".repeat(500)),
            // Declares nothing, sends too much: the read stops at the cap.
            "/unsized" => format!(
                "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{}",
                "y".repeat(500)
            ),
            p => {
                let n: u32 = p.trim_start_matches("/loop").parse().unwrap_or(0);
                format!(
                    "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{port}/loop{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    n + 1
                )
            }
        });
        let url = |p: &str| Url::parse(&format!("http://127.0.0.1:{port}{p}")).unwrap();
        let h = http();
        assert!(
            h.get(&url("/big"), &[], None, 100)
                .unwrap_err()
                .contains("over the 100-byte limit")
        );
        assert!(
            h.get(&url("/unsized"), &[], None, 100)
                .unwrap_err()
                .contains("over the 100-byte limit")
        );
        assert!(
            h.get(&url("/loop0"), &[], None, 100)
                .unwrap_err()
                .contains("more than 5 redirects")
        );
        let small = Http::new(
            Budget::new(600, Duration::from_secs(30)),
            Duration::from_secs(10),
        )
        .unwrap();
        assert!(small.get(&url("/big"), &[], None, 1000).is_ok());
        assert!(
            small
                .get(&url("/big"), &[], None, 1000)
                .unwrap_err()
                .contains("total limit")
        );
        assert!(
            h.get(&Url::parse("http://example.com/x").unwrap(), &[], None, 10)
                .is_err()
        );
    }
}
