//! Sending the review and the sticky comment. octocrab carries the requests (TLS, the
//! token, the API's base URL) with its own retries off; the conversation is ours, because
//! it has to keep GitHub's rules and our limits:
//! - every answer is read up to a size (an error body to `MAX_ERROR_BODY`: a server sending
//!   gigabytes is cut off), every request has a deadline, and so has the whole publication
//!   (an API that never answers cannot keep the job);
//! - a rate limit (429, or 403 with the rate-limit headers) waits what GitHub asks
//!   (`retry-after`, else `x-ratelimit-reset`) when that fits the deadline, and is reported
//!   as a rate limit, not as the read-only token of a fork;
//! - a POST is never sent again when it may have been stored (a 5xx or no answer after it):
//!   first the pull request is read to see whether it is there.
//!
//! Every failure becomes a warning string for the caller; none is fatal and none contains
//! the token: octocrab keeps it in a `SecretString`, and GitHub's messages, which could echo
//! it, pass `scrub` first.

use super::event::PrContext;
use super::review::{DEFAULT_MAX_COMMENTS, ReviewRequest, marker_of};
use crate::report::summary::MARKER;
use http_body_util::BodyExt;
use octocrab::Octocrab;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What was posted, for the log line; warnings for what could not be.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    pub review_comments: usize,
    /// `Some(true)` updated in place, `Some(false)` created.
    pub summary_updated: Option<bool>,
    pub warnings: Vec<String>,
}

/// Time and attempts the API conversation may take.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// One request, from sending it to the last byte of its answer.
    pub request: Duration,
    /// Everything: every request and every wait a rate limit asks for.
    pub run: Duration,
    /// Tries of one request (the first included).
    pub attempts: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            request: Duration::from_secs(30),
            run: Duration::from_secs(120),
            attempts: 3,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct PublishOptions {
    pub limits: Limits,
    /// Inline comments in one review (errors first; the summary has the rest).
    pub max_comments: usize,
}

impl Default for PublishOptions {
    fn default() -> PublishOptions {
        PublishOptions {
            limits: Limits::default(),
            max_comments: DEFAULT_MAX_COMMENTS,
        }
    }
}

/// Bytes of an error answer read: GitHub's message is a small JSON object.
pub const MAX_ERROR_BODY: usize = 64 * 1024;
/// Bytes of a successful answer read (a page of 100 comments of up to 65,536 characters).
pub const MAX_BODY: usize = 32 << 20;
/// Pages of comments read when looking for ours.
const MAX_PAGES: usize = 50;
/// GitHub's advice when a rate limit names no time: wait at least a minute.
const RATE_LIMIT_DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// Why a request did not succeed.
#[derive(Debug)]
enum Failure {
    /// GitHub's rate limit: the request was refused before it was processed.
    RateLimited {
        status: u16,
        message: String,
        wait: Duration,
    },
    /// Any other HTTP status (403 permissions, 404, 422, 5xx).
    Status { status: u16, message: String },
    /// No complete answer: connection, TLS, a body cut off.
    Transport(String),
    /// The request or the run ran out of time.
    Deadline(String),
}

impl Failure {
    fn describe(&self) -> String {
        match self {
            Failure::RateLimited {
                status,
                message,
                wait,
            } => format!(
                "HTTP {status}: {message} (GitHub's rate limit; it allows the next try in {} s, past this run's attempts or deadline)",
                wait.as_secs()
            ),
            Failure::Status { status, message } if *status == 403 => format!(
                "HTTP 403: {message} (the token may not write here; a fork's pull request gets a read-only token: annotations and the job summary carry the findings)"
            ),
            Failure::Status { status, message } => format!("HTTP {status}: {message}"),
            Failure::Transport(m) | Failure::Deadline(m) => m.clone(),
        }
    }

    /// A write that failed this way may still have been stored.
    fn maybe_stored(&self) -> bool {
        match self {
            Failure::Status { status, .. } => *status >= 500,
            Failure::Transport(_) | Failure::Deadline(_) => true,
            Failure::RateLimited { .. } => false,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Method {
    Get,
    Post,
    Patch,
}

/// A successful answer: its JSON and the next page's URL (the `Link` header).
struct Reply {
    body: Value,
    next: Option<String>,
}

struct Api {
    crab: Octocrab,
    limits: Limits,
    deadline: Instant,
}

fn client(ctx: &PrContext, limits: &Limits) -> octocrab::Result<Octocrab> {
    Octocrab::builder()
        .base_uri(ctx.api_url.as_str())?
        .personal_token(ctx.token.clone())
        // Retries are decided here, where a POST is known to be one.
        .add_retry_config(octocrab::service::middleware::retry::RetryConfig::None)
        .set_connect_timeout(Some(limits.request.min(Duration::from_secs(10))))
        .set_read_timeout(Some(limits.request))
        .build()
}

/// At most `cap` bytes of `body`; `true` when it had more (the rest is not read: dropping
/// the body closes the connection).
async fn read_capped<B>(mut body: B, cap: usize) -> Result<(Vec<u8>, bool), String>
where
    B: http_body::Body<Data = bytes::Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("reading the answer: {e}"))?;
        if let Ok(data) = frame.into_data() {
            let room = cap - out.len();
            if data.len() > room {
                out.extend_from_slice(&data[..room]);
                return Ok((out, true));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok((out, false))
}

fn header<'a>(headers: &'a http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// The wait a rate-limited answer asks for: `retry-after` seconds, else until
/// `x-ratelimit-reset` when none is left; `None` when this is no rate limit.
fn rate_limit_wait(status: u16, headers: &http::HeaderMap, message: &str) -> Option<Duration> {
    let retry_after = header(headers, "retry-after").and_then(|v| v.parse::<u64>().ok());
    let exhausted = header(headers, "x-ratelimit-remaining") == Some("0");
    let reset = header(headers, "x-ratelimit-reset").and_then(|v| v.parse::<u64>().ok());
    let mentions = message.to_ascii_lowercase().contains("rate limit");
    if status != 429 && !(status == 403 && (retry_after.is_some() || exhausted || mentions)) {
        return None;
    }
    if let Some(secs) = retry_after {
        return Some(Duration::from_secs(secs));
    }
    if exhausted && let Some(reset) = reset {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        return Some(Duration::from_secs(reset.saturating_sub(now).max(1)));
    }
    Some(RATE_LIMIT_DEFAULT_WAIT)
}

/// `<https://…?page=2>; rel="next"` from a `Link` header.
fn next_link(headers: &http::HeaderMap) -> Option<String> {
    header(headers, "link")?.split(',').find_map(|part| {
        let (url, rel) = part.split_once(';')?;
        rel.contains("rel=\"next\"").then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

impl Api {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// One request within its deadline (the request's, or what is left of the run's).
    async fn once(
        &self,
        method: Method,
        uri: &str,
        body: Option<&Value>,
    ) -> Result<Reply, Failure> {
        let left = self.left();
        if left.is_zero() {
            return Err(Failure::Deadline(format!(
                "gave up: the GitHub API took the whole {} s this run allows",
                self.limits.run.as_secs()
            )));
        }
        let limit = self.limits.request.min(left);
        match tokio::time::timeout(limit, self.exchange(method, uri, body)).await {
            Ok(result) => result,
            Err(_) => Err(Failure::Deadline(format!(
                "no complete answer from the GitHub API within {:.1} s",
                limit.as_secs_f64()
            ))),
        }
    }

    async fn exchange(
        &self,
        method: Method,
        uri: &str,
        body: Option<&Value>,
    ) -> Result<Reply, Failure> {
        let sent = match method {
            Method::Get => self.crab._get(uri).await,
            Method::Post => self.crab._post(uri, body).await,
            Method::Patch => self.crab._patch(uri, body).await,
        };
        let response = sent.map_err(|e| Failure::Transport(e.to_string()))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let ok = (200..300).contains(&status);
        let cap = if ok { MAX_BODY } else { MAX_ERROR_BODY };
        let (bytes, cut) = read_capped(response.into_body(), cap)
            .await
            .map_err(Failure::Transport)?;
        if ok {
            if cut {
                return Err(Failure::Transport(format!(
                    "the GitHub API's answer is over {MAX_BODY} bytes; not read"
                )));
            }
            return Ok(Reply {
                body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                next: next_link(&headers),
            });
        }
        let message = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| {
                let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
                let text = text.trim();
                if text.is_empty() {
                    "no message".to_string()
                } else {
                    text.to_string()
                }
            });
        Err(match rate_limit_wait(status, &headers, &message) {
            Some(wait) => Failure::RateLimited {
                status,
                message,
                wait,
            },
            None => Failure::Status { status, message },
        })
    }

    /// A request with GitHub's retry rules: after a rate limit, the wait it asks for (any
    /// method: GitHub refused the request unprocessed); after a 5xx or no answer, a short
    /// backoff, for GET and PATCH only (they can be repeated). Never past the attempts or
    /// the run's deadline.
    async fn call(
        &self,
        method: Method,
        uri: &str,
        body: Option<&Value>,
    ) -> Result<Reply, Failure> {
        let mut attempt = 1;
        loop {
            let err = match self.once(method, uri, body).await {
                Ok(reply) => return Ok(reply),
                Err(e) => e,
            };
            if attempt >= self.limits.attempts {
                return Err(err);
            }
            let wait = match &err {
                Failure::RateLimited { wait, .. } => *wait,
                Failure::Status { status, .. } if *status >= 500 && method != Method::Post => {
                    Duration::from_secs(1 << (attempt - 1))
                }
                Failure::Transport(_) | Failure::Deadline(_) if method != Method::Post => {
                    Duration::from_secs(1 << (attempt - 1))
                }
                _ => return Err(err),
            };
            if wait >= self.left() {
                return Err(err);
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Every item of a paginated list, page by page (at most `MAX_PAGES`), until `stop`
    /// says an item is the one sought.
    async fn each_item(
        &self,
        route: &str,
        mut stop: impl FnMut(&Value) -> bool,
    ) -> Result<(), Failure> {
        let mut uri = format!("{route}?per_page=100");
        for _ in 0..MAX_PAGES {
            let reply = self.call(Method::Get, &uri, None).await?;
            if let Some(items) = reply.body.as_array()
                && items.iter().any(&mut stop)
            {
                return Ok(());
            }
            match reply.next {
                Some(next) => uri = next,
                None => return Ok(()),
            }
        }
        Ok(())
    }

    /// Our sticky comment, by its hidden marker. Comments are read as plain JSON: only
    /// `id` and `body` matter, and a strict model would break on API additions.
    async fn find_sticky(&self, ctx: &PrContext) -> Result<Option<u64>, Failure> {
        let route = format!(
            "/repos/{}/{}/issues/{}/comments",
            ctx.owner, ctx.repo, ctx.number
        );
        let mut found = None;
        self.each_item(&route, |c| {
            if c["body"].as_str().is_some_and(|b| b.contains(MARKER)) {
                found = c["id"].as_u64();
            }
            found.is_some()
        })
        .await?;
        Ok(found)
    }

    /// Fingerprints of the inline comments on this pull request (earlier runs', or a review
    /// this run sent that GitHub stored before failing to answer).
    async fn posted_findings(&self, ctx: &PrContext) -> Result<HashSet<String>, Failure> {
        let route = format!(
            "/repos/{}/{}/pulls/{}/comments",
            ctx.owner, ctx.repo, ctx.number
        );
        let mut out = HashSet::new();
        self.each_item(&route, |c| {
            if let Some(m) = c["body"].as_str().and_then(marker_of) {
                out.insert(m.to_string());
            }
            false
        })
        .await?;
        Ok(out)
    }

    /// POST once; when the answer leaves open whether GitHub stored it, `stored` looks, and
    /// only a write that is not there is sent again (once).
    async fn post_once<F>(&self, route: &str, body: &Value, stored: F) -> Result<(), Failure>
    where
        F: AsyncFn() -> Result<bool, Failure>,
    {
        let err = match self.call(Method::Post, route, Some(body)).await {
            Ok(_) => return Ok(()),
            Err(e) if e.maybe_stored() => e,
            Err(e) => return Err(e),
        };
        match stored().await {
            Ok(true) => Ok(()),
            Ok(false) => self.call(Method::Post, route, Some(body)).await.map(|_| ()),
            // Cannot tell: better no write than the same one twice.
            Err(_) => Err(err),
        }
    }
}

/// Post the review (only comments not posted before, at most `options.max_comments`) and the
/// sticky summary. The summary comment is updated when it exists; it is created only when
/// `create_summary` (something to say), so a clean pull request gets no comment at all.
pub async fn publish(
    ctx: &PrContext,
    review: Option<&ReviewRequest>,
    summary: &str,
    create_summary: bool,
    options: &PublishOptions,
) -> Outcome {
    let run = options.limits.run;
    let mut outcome = match tokio::time::timeout(
        // The run's deadline is also checked before each request and wait; this bounds
        // anything between them.
        run + Duration::from_secs(1),
        publish_unscrubbed(ctx, review, summary, create_summary, options),
    )
    .await
    {
        Ok(outcome) => outcome,
        Err(_) => Outcome {
            warnings: vec![format!(
                "gave up: the GitHub API took the whole {} s this run allows",
                run.as_secs()
            )],
            ..Outcome::default()
        },
    };
    // Server messages are passed on: they may echo the request's Authorization header.
    for w in &mut outcome.warnings {
        *w = super::scrub::scrub(w, &ctx.token);
    }
    outcome
}

async fn publish_unscrubbed(
    ctx: &PrContext,
    review: Option<&ReviewRequest>,
    summary: &str,
    create_summary: bool,
    options: &PublishOptions,
) -> Outcome {
    let mut outcome = Outcome::default();
    let api = match client(ctx, &options.limits) {
        Ok(crab) => Api {
            crab,
            limits: options.limits,
            deadline: Instant::now() + options.limits.run,
        },
        Err(e) => {
            outcome
                .warnings
                .push(format!("cannot reach the GitHub API: {e}"));
            return outcome;
        }
    };
    let repo = format!("/repos/{}/{}", ctx.owner, ctx.repo);
    let review = match review {
        Some(r) => match api.posted_findings(ctx).await {
            Ok(posted) => r.clone().without_posted(&posted, options.max_comments),
            Err(e) => {
                outcome.warnings.push(format!(
                    "could not read earlier review comments: {}",
                    e.describe()
                ));
                r.clone()
                    .without_posted(&HashSet::new(), options.max_comments)
            }
        },
        None => None,
    };
    if let Some(review) = &review {
        let route = format!("{repo}/pulls/{}/reviews", ctx.number);
        let body = serde_json::to_value(review).unwrap_or(Value::Null);
        let ours: Vec<&str> = review
            .comments
            .iter()
            .filter_map(|c| marker_of(&c.body))
            .collect();
        let stored = async || {
            let posted = api.posted_findings(ctx).await?;
            Ok(ours.iter().any(|m| posted.contains(*m)))
        };
        match api.post_once(&route, &body, stored).await {
            Ok(()) => outcome.review_comments = review.comments.len(),
            Err(e) => outcome
                .warnings
                .push(format!("could not post the review: {}", e.describe())),
        }
    }
    let sticky = match api.find_sticky(ctx).await {
        Ok(found) => found,
        Err(e) => {
            outcome.warnings.push(format!(
                "could not read the pull request's comments: {}",
                e.describe()
            ));
            return outcome;
        }
    };
    if sticky.is_none() && !create_summary {
        return outcome;
    }
    let body = json!({ "body": summary });
    let result = match sticky {
        // PATCH is the documented update.
        Some(id) => api
            .call(
                Method::Patch,
                &format!("{repo}/issues/comments/{id}"),
                Some(&body),
            )
            .await
            .map(|_| true),
        None => {
            let stored = async || Ok(api.find_sticky(ctx).await?.is_some());
            api.post_once(
                &format!("{repo}/issues/{}/comments", ctx.number),
                &body,
                stored,
            )
            .await
            .map(|()| false)
        }
    };
    match result {
        Ok(updated) => outcome.summary_updated = Some(updated),
        Err(e) => outcome.warnings.push(format!(
            "could not post the summary comment: {}",
            e.describe()
        )),
    }
    outcome
}

/// [`publish`] from synchronous code (the CLI).
pub fn publish_blocking(
    ctx: &PrContext,
    review: Option<&ReviewRequest>,
    summary: &str,
    create_summary: bool,
    options: &PublishOptions,
) -> Outcome {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(publish(ctx, review, summary, create_summary, options)),
        Err(e) => Outcome {
            warnings: vec![format!("cannot start the HTTP client: {e}")],
            ..Outcome::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            if let Ok(v) = v.parse() {
                h.insert(*k, v);
            }
        }
        h
    }

    #[test]
    fn rate_limits_are_told_from_permissions() {
        // A plain 403 is a permission problem.
        assert_eq!(
            rate_limit_wait(403, &headers(&[]), "Resource not accessible by integration"),
            None
        );
        // 429 and 403 with retry-after: that wait.
        assert_eq!(
            rate_limit_wait(429, &headers(&[("retry-after", "7")]), "x"),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            rate_limit_wait(403, &headers(&[("retry-after", "3")]), "x"),
            Some(Duration::from_secs(3))
        );
        // The primary limit spent: until the reset.
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let reset = (now + 42).to_string();
        let wait = rate_limit_wait(
            403,
            &headers(&[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", &reset),
            ]),
            "API rate limit exceeded",
        )
        .expect("a rate limit");
        assert!((40..=42).contains(&wait.as_secs()), "{wait:?}");
        // A secondary limit without headers: GitHub's minute.
        assert_eq!(
            rate_limit_wait(
                403,
                &headers(&[]),
                "You have exceeded a secondary rate limit"
            ),
            Some(RATE_LIMIT_DEFAULT_WAIT)
        );
    }

    #[test]
    fn the_next_page_comes_from_the_link_header() {
        let h = headers(&[(
            "link",
            "<https://api.github.com/x?page=2>; rel=\"next\", <https://api.github.com/x?page=9>; rel=\"last\"",
        )]);
        assert_eq!(
            next_link(&h).as_deref(),
            Some("https://api.github.com/x?page=2")
        );
        assert_eq!(next_link(&headers(&[])), None);
    }
}
