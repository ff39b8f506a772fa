//! The pull-request review against a mock GitHub API on 127.0.0.1: the binary runs as the
//! Action would (pull_request event, GITHUB_TOKEN, GITHUB_API_URL pointing at the mock), and
//! the test asserts the exact requests: one review with inline comments and a suggestion
//! block, the sticky summary updated in place (or created), and a 403 that degrades to a
//! warning without failing the job for that reason. The token never appears in any output.

use super::common::*;
use serde_json::{Value, json};
use std::path::Path;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const TOKEN: &str = "ghs_TESTTOKEN_must_never_be_printed";

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    summary: String,
    output: String,
}

/// Run `gitops-lint diff` on the fixture as a pull_request workflow would.
async fn run_action(server: &MockServer, repo: &Path) -> Run {
    let work = tempfile::tempdir().expect("tmp");
    let event = work.path().join("event.json");
    std::fs::write(
        &event,
        json!({"pull_request": {"number": 7, "head": {"sha": "headsha"}, "base": {"sha": "basesha"}}}).to_string(),
    )
    .expect("event");
    let summary = work.path().join("summary.md");
    let output = work.path().join("output.txt");
    let mut cmd = bin();
    cmd.args(["diff", "--base", "HEAD~1", "--format", "github"])
        .arg(repo)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REPOSITORY", "acme/gitops")
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output);
    // The mock server lives on this runtime: wait for the child on a blocking thread.
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run"))
        .await
        .expect("join");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        output: std::fs::read_to_string(&output).unwrap_or_default(),
    }
}

/// The PR's existing review comments (for not posting the same inline comment twice).
async fn mount_review_comments(server: &MockServer, comments: Value) {
    Mock::given(method("GET"))
        .and(path("/repos/acme/gitops/pulls/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(comments))
        .mount(server)
        .await;
}

fn requests_of(reqs: &[Request]) -> Vec<String> {
    reqs.iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect()
}

fn assert_no_token(run: &Run) {
    assert!(
        !run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN) && !run.summary.contains(TOKEN)
    );
}

#[tokio::test]
async fn review_with_suggestions_and_sticky_comment_updated_in_place() {
    let server = MockServer::start().await;
    mount_review_comments(&server, json!([{"id": 5, "body": "a human's remark"}])).await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/gitops/pulls/7/reviews"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 1})))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/gitops/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"id": 41, "body": "LGTM"},
            {"id": 42, "body": "<!-- gitops-lint -->\n## gitops-lint: old"}
        ])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/acme/gitops/issues/comments/42"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 42})))
        .expect(1)
        .mount(&server)
        .await;

    let repo = fixture();
    let run = run_action(&server, repo.path()).await;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_no_token(&run);
    assert!(
        run.stderr
            .contains("review with 2 inline comment(s); summary comment updated"),
        "{}",
        run.stderr
    );

    let reqs = server.received_requests().await.expect("recorded");
    assert_eq!(
        requests_of(&reqs),
        [
            "GET /repos/acme/gitops/pulls/7/comments",
            "POST /repos/acme/gitops/pulls/7/reviews",
            "GET /repos/acme/gitops/issues/7/comments",
            "PATCH /repos/acme/gitops/issues/comments/42",
        ]
    );
    assert_eq!(
        reqs[0]
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok()),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let review: Value = serde_json::from_slice(&reqs[1].body).expect("json");
    assert_eq!(review["commit_id"], "headsha");
    assert_eq!(review["event"], "COMMENT");
    let comments = review["comments"].as_array().expect("comments");
    assert_eq!(comments.len(), 2);
    let hpa = &comments[0];
    assert_eq!(
        (
            hpa["path"].as_str(),
            hpa["line"].as_u64(),
            hpa["side"].as_str()
        ),
        (Some("apps/shop/deployment.yaml"), Some(6), Some("RIGHT"))
    );
    let body = hpa["body"].as_str().expect("body");
    assert!(body.contains("`hpa-replicas-conflict`"), "{body}");
    // Deleting the replicas line this PR adds: an empty suggestion removes the line.
    assert!(body.contains("```suggestion\n```"), "{body}");
    let broad = &comments[1];
    assert_eq!(
        (broad["path"].as_str(), broad["line"].as_u64()),
        (Some("argocd/shop.yaml"), Some(25))
    );
    assert!(
        !broad["body"]
            .as_str()
            .unwrap_or("")
            .contains("```suggestion")
    );
    assert!(broad.get("start_line").is_none());

    let sticky: Value = serde_json::from_slice(&reqs[3].body).expect("json");
    let text = sticky["body"].as_str().expect("body");
    assert!(text.starts_with("<!-- gitops-lint -->"), "{text}");
    assert!(text.contains("**2** new, **0** fixed"), "{text}");
    assert!(
        text.contains("<details><summary>Rendered changes: <code>shop</code>"),
        "{text}"
    );
    // The job summary carries the same report; annotations went to stdout.
    assert_eq!(run.summary, text);
    // The action's `findings` output.
    assert_eq!(run.output, "findings=2\n");
    assert!(
        run.stdout
            .contains("::error file=apps/shop/deployment.yaml,line=6,endLine=6"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn sticky_comment_is_created_when_missing() {
    let server = MockServer::start().await;
    mount_review_comments(&server, json!([])).await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/gitops/pulls/7/reviews"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 1})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/gitops/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/gitops/issues/7/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 43})))
        .expect(1)
        .mount(&server)
        .await;
    let repo = fixture();
    let run = run_action(&server, repo.path()).await;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let reqs = server.received_requests().await.expect("recorded");
    assert_eq!(
        requests_of(&reqs),
        [
            "GET /repos/acme/gitops/pulls/7/comments",
            "POST /repos/acme/gitops/pulls/7/reviews",
            "GET /repos/acme/gitops/issues/7/comments",
            "POST /repos/acme/gitops/issues/7/comments",
        ]
    );
    assert!(
        run.stderr.contains("summary comment created"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn read_only_token_degrades_to_annotations_and_summary() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({
            "message": "Resource not accessible by integration",
            "documentation_url": "https://docs.github.com/rest"
        })))
        .mount(&server)
        .await;
    let repo = fixture();
    let run = run_action(&server, repo.path()).await;
    // 1 because of the findings, not 2: posting failed but the job reports normally.
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_no_token(&run);
    assert!(
        run.stderr.contains(
            "warning: could not post the review: HTTP 403: Resource not accessible by integration"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout
            .contains("::warning title=gitops-lint::could not post the review"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("::error file=apps/shop/deployment.yaml"),
        "{}",
        run.stdout
    );
    assert!(
        run.summary.contains("## gitops-lint: 2 new findings"),
        "{}",
        run.summary
    );
    let reqs = server.received_requests().await.expect("recorded");
    // Each step tried once, nothing retried, nothing else attempted.
    assert_eq!(
        requests_of(&reqs),
        [
            "GET /repos/acme/gitops/pulls/7/comments",
            "POST /repos/acme/gitops/pulls/7/reviews",
            "GET /repos/acme/gitops/issues/7/comments",
        ]
    );
}

#[tokio::test]
async fn no_token_means_no_requests() {
    let server = MockServer::start().await;
    let repo = fixture();
    let work = tempfile::tempdir().expect("tmp");
    let event = work.path().join("event.json");
    std::fs::write(
        &event,
        r#"{"pull_request":{"number":7,"head":{"sha":"h"}}}"#,
    )
    .expect("event");
    let mut cmd = bin();
    cmd.args(["diff", "--base", "HEAD~1", "--format", "github"])
        .arg(repo.path())
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REPOSITORY", "acme/gitops")
        .env("GITHUB_API_URL", server.uri())
        .env_remove("GITHUB_TOKEN");
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run"))
        .await
        .expect("join");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without GITHUB_TOKEN"));
    assert!(
        server
            .received_requests()
            .await
            .unwrap_or_default()
            .is_empty()
    );
}

#[tokio::test]
async fn a_second_run_does_not_repeat_inline_comments() {
    let server = MockServer::start().await;
    // First run: capture the comments it posts.
    mount_review_comments(&server, json!([])).await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/gitops/pulls/7/reviews"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 1})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/gitops/issues/7/comments"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!([{"id": 42, "body": "<!-- gitops-lint -->"}])),
        )
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/acme/gitops/issues/comments/42"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 42})))
        .mount(&server)
        .await;
    let repo = fixture();
    run_action(&server, repo.path()).await;
    let reqs = server.received_requests().await.expect("recorded");
    let review: Value = serde_json::from_slice(&reqs[1].body).expect("json");
    let posted = review["comments"].clone();

    // Second run (a new push): GitHub now lists those comments; only the summary changes.
    server.reset().await;
    mount_review_comments(&server, posted).await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/gitops/issues/7/comments"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!([{"id": 42, "body": "<!-- gitops-lint -->"}])),
        )
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/acme/gitops/issues/comments/42"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 42})))
        .expect(1)
        .mount(&server)
        .await;
    let run = run_action(&server, repo.path()).await;
    assert_eq!(run.code, Some(1));
    let reqs = server.received_requests().await.expect("recorded");
    assert_eq!(
        requests_of(&reqs),
        [
            "GET /repos/acme/gitops/pulls/7/comments",
            "GET /repos/acme/gitops/issues/7/comments",
            "PATCH /repos/acme/gitops/issues/comments/42",
        ]
    );
}

#[tokio::test]
async fn a_quiet_pull_request_gets_no_new_comment() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/gitops/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&server)
        .await;
    let repo = fixture();
    // Nothing changed since HEAD~1's child: no findings, no rendered changes.
    git(
        repo.path(),
        &["commit", "-q", "--allow-empty", "-m", "empty"],
    );
    let work = tempfile::tempdir().expect("tmp");
    let event = work.path().join("event.json");
    std::fs::write(
        &event,
        r#"{"pull_request":{"number":7,"head":{"sha":"h"}}}"#,
    )
    .expect("event");
    let mut cmd = bin();
    cmd.args(["diff", "--base", "HEAD~1", "--format", "github"])
        .arg(repo.path())
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REPOSITORY", "acme/gitops")
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run"))
        .await
        .expect("join");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = server.received_requests().await.expect("recorded");
    assert_eq!(
        requests_of(&reqs),
        ["GET /repos/acme/gitops/issues/7/comments"]
    );
}

// The API client against GitHub's limits, called directly (a review of 200 findings, rate
// limits, a 5xx after a POST, a server that never answers or answers with gigabytes).

use gitops_lint::github::client::{Limits, Outcome, PublishOptions, publish};
use gitops_lint::github::event::PrContext;
use gitops_lint::github::review::{ReviewRequest, build};
use gitops_lint::report::{Finding, Severity};
use gitops_lint::source::{SourceMap, Span};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn context(api_url: String) -> PrContext {
    PrContext {
        api_url,
        token: TOKEN.to_string(),
        owner: "acme".into(),
        repo: "gitops".into(),
        number: 7,
        head_sha: "headsha".into(),
        from_fork: false,
    }
}

/// A review of `n` findings on lines the pull request adds (every tenth an error).
fn review_of(n: usize) -> ReviewRequest {
    let map = SourceMap::new();
    let line = "  replicas: 3\n";
    let file = map.add_text("apps/web.yaml", line.repeat(n));
    let findings: Vec<Finding> = (0..n)
        .map(|i| {
            let severity = if i % 10 == 9 {
                Severity::Error
            } else {
                Severity::Warning
            };
            let at = i * line.len() + 2;
            Finding::new(
                "hpa-replicas-conflict",
                severity,
                format!("Deployment web-{i} declares replicas under an autoscaler"),
                Span::new(file, at, at + 11),
            )
            .help("remove `replicas` once the scoped ignore is live")
            .app("web")
            .object(format!("Deployment/prod/web-{i}"))
            .field("spec.replicas")
        })
        .collect();
    let added: BTreeMap<String, Vec<(usize, usize)>> =
        [("apps/web.yaml".to_string(), vec![(1, n)])]
            .into_iter()
            .collect();
    build(&findings, &map, "", &added, &added, "headsha").expect("review")
}

async fn mount_json(server: &MockServer, verb: &str, route: &str, status: u16, body: Value) {
    Mock::given(method(verb))
        .and(path(route))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .mount(server)
        .await;
}

async fn publish_to(
    server: &MockServer,
    review: &ReviewRequest,
    options: &PublishOptions,
) -> Outcome {
    publish(
        &context(server.uri()),
        Some(review),
        "<!-- gitops-lint -->\nsummary",
        true,
        options,
    )
    .await
}

fn quick() -> PublishOptions {
    PublishOptions {
        limits: Limits {
            request: Duration::from_secs(5),
            run: Duration::from_secs(20),
            attempts: 3,
        },
        ..PublishOptions::default()
    }
}

#[tokio::test]
async fn two_hundred_findings_make_one_review_of_at_most_25_comments() {
    let server = MockServer::start().await;
    mount_review_comments(&server, json!([])).await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/pulls/7/reviews",
        200,
        json!({"id": 1}),
    )
    .await;
    mount_json(
        &server,
        "GET",
        "/repos/acme/gitops/issues/7/comments",
        200,
        json!([]),
    )
    .await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/issues/7/comments",
        201,
        json!({"id": 9}),
    )
    .await;
    let review = review_of(200);
    assert_eq!(review.comments.len(), 200);
    let outcome = publish_to(&server, &review, &quick()).await;
    assert_eq!(outcome.warnings, Vec::<String>::new());
    assert_eq!(
        (outcome.review_comments, outcome.summary_updated),
        (25, Some(false))
    );
    let reqs = server.received_requests().await.expect("recorded");
    assert_eq!(
        requests_of(&reqs),
        [
            "GET /repos/acme/gitops/pulls/7/comments",
            "POST /repos/acme/gitops/pulls/7/reviews",
            "GET /repos/acme/gitops/issues/7/comments",
            "POST /repos/acme/gitops/issues/7/comments",
        ]
    );
    let sent: Value = serde_json::from_slice(&reqs[1].body).expect("json");
    let comments = sent["comments"].as_array().expect("comments");
    assert_eq!(comments.len(), 25);
    // The 20 errors first, then warnings from the top of the file.
    let lines: Vec<u64> = comments.iter().filter_map(|c| c["line"].as_u64()).collect();
    assert_eq!(&lines[..3], [10, 20, 30]);
    assert_eq!(&lines[20..], [1, 2, 3, 4, 5]);
    assert!(reqs[1].body.len() < 40_000, "{} bytes", reqs[1].body.len());
    assert!(
        sent["body"].as_str().is_some_and(
            |b| b.contains("200 new finding(s)") && b.contains("25 have inline comments")
        ),
        "{}",
        sent["body"]
    );
    // A flag lowers the cap.
    let server = MockServer::start().await;
    mount_review_comments(&server, json!([])).await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/pulls/7/reviews",
        200,
        json!({"id": 1}),
    )
    .await;
    mount_json(
        &server,
        "GET",
        "/repos/acme/gitops/issues/7/comments",
        200,
        json!([]),
    )
    .await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/issues/7/comments",
        201,
        json!({"id": 9}),
    )
    .await;
    let options = PublishOptions {
        max_comments: 3,
        ..quick()
    };
    assert_eq!(
        publish_to(&server, &review, &options).await.review_comments,
        3
    );
}

#[tokio::test]
async fn a_429_waits_for_retry_after_and_sends_the_review_once_more() {
    let server = MockServer::start().await;
    mount_review_comments(&server, json!([])).await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/gitops/pulls/7/reviews"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "2")
                .set_body_json(json!({"message": "You have exceeded a secondary rate limit"})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/pulls/7/reviews",
        200,
        json!({"id": 1}),
    )
    .await;
    mount_json(
        &server,
        "GET",
        "/repos/acme/gitops/issues/7/comments",
        200,
        json!([]),
    )
    .await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/issues/7/comments",
        201,
        json!({"id": 9}),
    )
    .await;
    let started = Instant::now();
    let outcome = publish_to(&server, &review_of(3), &quick()).await;
    assert_eq!(outcome.warnings, Vec::<String>::new());
    assert_eq!(outcome.review_comments, 3);
    let reqs = server.received_requests().await.expect("recorded");
    let posts: Vec<&Request> = reqs
        .iter()
        .filter(|r| r.url.path() == "/repos/acme/gitops/pulls/7/reviews")
        .collect();
    assert_eq!(posts.len(), 2);
    // GitHub asked for two seconds between them.
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // A wait past the run's deadline is not waited for: one try, a rate-limit warning.
    let server = MockServer::start().await;
    mount_review_comments(&server, json!([])).await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/gitops/pulls/7/reviews"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", "4102444800")
                .set_body_json(json!({"message": "API rate limit exceeded for installation"})),
        )
        .mount(&server)
        .await;
    mount_json(
        &server,
        "GET",
        "/repos/acme/gitops/issues/7/comments",
        200,
        json!([]),
    )
    .await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/issues/7/comments",
        201,
        json!({"id": 9}),
    )
    .await;
    let started = Instant::now();
    let outcome = publish_to(&server, &review_of(3), &quick()).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let warning = outcome.warnings.join("\n");
    // A rate limit, not a fork's read-only token.
    assert!(
        warning.contains("could not post the review: HTTP 403: API rate limit exceeded"),
        "{warning}"
    );
    assert!(
        warning.contains("GitHub's rate limit") && !warning.contains("fork"),
        "{warning}"
    );
    let reqs = server.received_requests().await.expect("recorded");
    assert_eq!(
        reqs.iter()
            .filter(|r| r.method.as_str() == "POST" && r.url.path().ends_with("/reviews"))
            .count(),
        1
    );
}

#[tokio::test]
async fn a_502_after_the_review_post_is_not_posted_again_when_github_stored_it() {
    let review = review_of(3);
    let stored: Vec<Value> = review
        .comments
        .iter()
        .map(|c| json!({"id": 100, "body": c.body}))
        .collect();
    let server = MockServer::start().await;
    // Before the POST: nothing posted. After it: GitHub stored the review after all.
    Mock::given(method("GET"))
        .and(path("/repos/acme/gitops/pulls/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount_review_comments(&server, Value::Array(stored)).await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/pulls/7/reviews",
        502,
        json!({"message": "Server Error"}),
    )
    .await;
    mount_json(
        &server,
        "GET",
        "/repos/acme/gitops/issues/7/comments",
        200,
        json!([]),
    )
    .await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/issues/7/comments",
        201,
        json!({"id": 9}),
    )
    .await;
    let outcome = publish_to(&server, &review, &quick()).await;
    assert_eq!(outcome.warnings, Vec::<String>::new());
    assert_eq!(outcome.review_comments, 3);
    let reqs = server.received_requests().await.expect("recorded");
    assert_eq!(
        requests_of(&reqs),
        [
            "GET /repos/acme/gitops/pulls/7/comments",
            "POST /repos/acme/gitops/pulls/7/reviews",
            "GET /repos/acme/gitops/pulls/7/comments",
            "GET /repos/acme/gitops/issues/7/comments",
            "POST /repos/acme/gitops/issues/7/comments",
        ]
    );
    // Not stored: sent once more, and only once.
    let server = MockServer::start().await;
    mount_review_comments(&server, json!([])).await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/pulls/7/reviews",
        502,
        json!({"message": "Server Error"}),
    )
    .await;
    mount_json(
        &server,
        "GET",
        "/repos/acme/gitops/issues/7/comments",
        200,
        json!([]),
    )
    .await;
    mount_json(
        &server,
        "POST",
        "/repos/acme/gitops/issues/7/comments",
        201,
        json!({"id": 9}),
    )
    .await;
    let outcome = publish_to(&server, &review, &quick()).await;
    assert!(
        outcome
            .warnings
            .join("\n")
            .contains("could not post the review: HTTP 502"),
        "{:?}",
        outcome.warnings
    );
    let reqs = server.received_requests().await.expect("recorded");
    assert_eq!(
        reqs.iter()
            .filter(|r| r.url.path().ends_with("/reviews"))
            .count(),
        2
    );
}

#[tokio::test]
async fn an_api_that_never_answers_is_given_up_at_the_deadline() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(600)))
        .mount(&server)
        .await;
    let options = PublishOptions {
        limits: Limits {
            request: Duration::from_secs(1),
            run: Duration::from_secs(3),
            attempts: 3,
        },
        ..PublishOptions::default()
    };
    let started = Instant::now();
    let outcome = publish_to(&server, &review_of(3), &options).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(6), "{took:?}");
    assert_eq!(outcome.review_comments, 0);
    let warnings = outcome.warnings.join("\n");
    assert!(
        warnings.contains("no complete answer from the GitHub API within"),
        "{warnings}"
    );
    // The review POST that got no answer is not sent twice.
    let reqs = server.received_requests().await.unwrap_or_default();
    assert!(
        reqs.iter()
            .filter(|r| r.url.path().ends_with("/reviews"))
            .count()
            <= 1
    );
}

/// A server on 127.0.0.1 that answers every request `500` with a 3 GiB body of zeros, sent
/// until the client hangs up; the count of bytes it managed to send.
fn endless_error_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::atomic::Ordering;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = sent.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(mut stream) = stream else { continue };
            let counter = counter.clone();
            std::thread::spawn(move || {
                let _ = stream.set_write_timeout(Some(Duration::from_secs(20)));
                let Ok(read) = stream.try_clone() else { return };
                let mut reader = BufReader::new(read);
                let mut line = String::new();
                let mut length = 0usize;
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    line.clear();
                }
                let mut body = vec![0u8; length];
                let _ = std::io::Read::read_exact(&mut reader, &mut body);
                let head = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 3221225472\r\n\r\n";
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let chunk = vec![b'0'; 64 * 1024];
                let mut total = 0u64;
                while total < 3 << 30 {
                    match stream.write(&chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            total += n as u64;
                            counter.fetch_add(n as u64, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    (url, sent)
}

#[tokio::test]
async fn a_3_gib_error_body_is_not_read() {
    let (url, sent) = endless_error_server();
    let started = Instant::now();
    let outcome = publish(
        &context(url),
        Some(&review_of(3)),
        "<!-- gitops-lint -->\nsummary",
        true,
        &quick(),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let warnings = outcome.warnings.join("\n");
    assert!(warnings.contains("HTTP 500"), "{warnings}");
    // Give the server threads a moment to notice the closed connections.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let bytes = sent.load(std::sync::atomic::Ordering::Relaxed);
    // Each answer is cut after 64 KiB; what the sockets buffered besides stays far below.
    assert!(bytes < 256 << 20, "{bytes} bytes sent");
}

#[tokio::test]
async fn a_fork_pull_request_gets_no_writes() {
    let server = MockServer::start().await;
    let repo = fixture();
    let work = tempfile::tempdir().expect("tmp");
    let event = work.path().join("event.json");
    std::fs::write(
        &event,
        json!({"pull_request": {"number": 7,
            "head": {"sha": "headsha", "repo": {"full_name": "someone/gitops"}},
            "base": {"sha": "basesha", "repo": {"full_name": "acme/gitops"}}}})
        .to_string(),
    )
    .expect("event");
    let mut cmd = bin();
    cmd.args(["diff", "--base", "HEAD~1", "--format", "github"])
        .arg(repo.path())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REPOSITORY", "acme/gitops")
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT");
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run"))
        .await
        .expect("join");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("a pull request from a fork"), "{stderr}");
    assert!(
        server
            .received_requests()
            .await
            .unwrap_or_default()
            .is_empty()
    );
}
