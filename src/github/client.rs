//! Sending the review and the sticky comment with octocrab. Every failure becomes a warning
//! string for the caller; none is fatal and none contains the token: octocrab keeps it in a
//! `SecretString`, and GitHub's messages, which could echo it, pass `scrub` first.

use super::event::PrContext;
use super::review::{ReviewRequest, marker_of};
use crate::report::summary::MARKER;
use octocrab::{Octocrab, Page};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;

/// What was posted, for the log line; warnings for what could not be.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    pub review_comments: usize,
    /// `Some(true)` updated in place, `Some(false)` created.
    pub summary_updated: Option<bool>,
    pub warnings: Vec<String>,
}

fn describe(e: &octocrab::Error) -> String {
    match e {
        octocrab::Error::GitHub { source, .. } => {
            let hint = if source.status_code.as_u16() == 403 {
                " (a fork's pull request gets a read-only token: annotations and the job summary carry the findings)"
            } else {
                ""
            };
            format!(
                "HTTP {}: {}{hint}",
                source.status_code.as_u16(),
                source.message
            )
        }
        other => other.to_string(),
    }
}

fn client(ctx: &PrContext) -> octocrab::Result<Octocrab> {
    Octocrab::builder()
        .base_uri(ctx.api_url.as_str())?
        .personal_token(ctx.token.clone())
        .set_connect_timeout(Some(Duration::from_secs(10)))
        .set_read_timeout(Some(Duration::from_secs(30)))
        .build()
}

/// Find our comment by its hidden marker, following pages. Comments are read as plain JSON:
/// only `id` and `body` matter, and a strict model would break on API additions.
async fn find_sticky(crab: &Octocrab, ctx: &PrContext) -> octocrab::Result<Option<u64>> {
    let route = format!(
        "/repos/{}/{}/issues/{}/comments",
        ctx.owner, ctx.repo, ctx.number
    );
    let mut page: Page<Value> = crab.get(route, Some(&[("per_page", "100")])).await?;
    loop {
        let found = page
            .items
            .iter()
            .find(|c| c["body"].as_str().is_some_and(|b| b.contains(MARKER)));
        if let Some(id) = found.and_then(|c| c["id"].as_u64()) {
            return Ok(Some(id));
        }
        match crab.get_page::<Value>(&page.next).await? {
            Some(next) => page = next,
            None => return Ok(None),
        }
    }
}

/// Fingerprints of the inline comments earlier runs posted on this pull request.
async fn posted_findings(crab: &Octocrab, ctx: &PrContext) -> octocrab::Result<HashSet<String>> {
    let route = format!(
        "/repos/{}/{}/pulls/{}/comments",
        ctx.owner, ctx.repo, ctx.number
    );
    let mut page: Page<Value> = crab.get(route, Some(&[("per_page", "100")])).await?;
    let mut out = HashSet::new();
    loop {
        for c in &page.items {
            if let Some(m) = c["body"].as_str().and_then(marker_of) {
                out.insert(m.to_string());
            }
        }
        match crab.get_page::<Value>(&page.next).await? {
            Some(next) => page = next,
            None => return Ok(out),
        }
    }
}

/// Post the review (only comments not posted before) and the sticky summary. The summary
/// comment is updated when it exists; it is created only when `create_summary` (something
/// to say), so a clean pull request gets no comment at all.
pub async fn publish(
    ctx: &PrContext,
    review: Option<&ReviewRequest>,
    summary: &str,
    create_summary: bool,
) -> Outcome {
    let mut outcome = publish_unscrubbed(ctx, review, summary, create_summary).await;
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
) -> Outcome {
    let mut outcome = Outcome::default();
    let crab = match client(ctx) {
        Ok(c) => c,
        Err(e) => {
            outcome
                .warnings
                .push(format!("cannot reach the GitHub API: {}", describe(&e)));
            return outcome;
        }
    };
    let repo = format!("/repos/{}/{}", ctx.owner, ctx.repo);
    let review = match review {
        Some(r) => match posted_findings(&crab, ctx).await {
            Ok(posted) => r.clone().without_posted(&posted),
            Err(e) => {
                outcome.warnings.push(format!(
                    "could not read earlier review comments: {}",
                    describe(&e)
                ));
                Some(r.clone())
            }
        },
        None => None,
    };
    if let Some(review) = &review {
        let route = format!("{repo}/pulls/{}/reviews", ctx.number);
        match crab.post::<_, Value>(route, Some(review)).await {
            Ok(_) => outcome.review_comments = review.comments.len(),
            Err(e) => outcome
                .warnings
                .push(format!("could not post the review: {}", describe(&e))),
        }
    }
    let sticky = match find_sticky(&crab, ctx).await {
        Ok(found) => found,
        Err(e) => {
            outcome.warnings.push(format!(
                "could not read the pull request's comments: {}",
                describe(&e)
            ));
            return outcome;
        }
    };
    if sticky.is_none() && !create_summary {
        return outcome;
    }
    let body = json!({ "body": summary });
    let result = match sticky {
        // PATCH is the documented update (octocrab's update_comment sends POST).
        Some(id) => crab
            .patch::<Value, _, _>(format!("{repo}/issues/comments/{id}"), Some(&body))
            .await
            .map(|_| true),
        None => crab
            .post::<_, Value>(
                format!("{repo}/issues/{}/comments", ctx.number),
                Some(&body),
            )
            .await
            .map(|_| false),
    };
    match result {
        Ok(updated) => outcome.summary_updated = Some(updated),
        Err(e) => outcome.warnings.push(format!(
            "could not post the summary comment: {}",
            describe(&e)
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
) -> Outcome {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(publish(ctx, review, summary, create_summary)),
        Err(e) => Outcome {
            warnings: vec![format!("cannot start the HTTP client: {e}")],
            ..Outcome::default()
        },
    }
}
