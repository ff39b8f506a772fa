//! The pull-request review against a mock GitHub API on 127.0.0.1: the binary runs as the
//! Action would (pull_request event, GITHUB_TOKEN, GITHUB_API_URL pointing at the mock), and
//! the test asserts the exact requests: one review with inline comments and a suggestion
//! block, the sticky summary updated in place (or created), and a 403 that degrades to a
//! warning without failing the job for that reason. The token never appears in any output.

use crate::common::*;
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
