//! Sending the review and the sticky comment with octocrab. Every failure becomes a warning
//! string for the caller; none is fatal and none contains the token (octocrab keeps it in a
//! `SecretString` and its errors carry GitHub's message, not the request).

use super::event::PrContext;
use super::review::ReviewRequest;
use crate::report::summary::MARKER;
use octocrab::Octocrab;
use octocrab::models::CommentId;
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

/// Find our comment by its hidden marker, following pages.
async fn find_sticky(crab: &Octocrab, ctx: &PrContext) -> octocrab::Result<Option<CommentId>> {
    let issues = crab.issues(&ctx.owner, &ctx.repo);
    let mut page = issues
        .list_comments(ctx.number)
        .per_page(100)
        .send()
        .await?;
    loop {
        if let Some(c) = page
            .items
            .iter()
            .find(|c| c.body.as_deref().is_some_and(|b| b.contains(MARKER)))
        {
            return Ok(Some(c.id));
        }
        match crab.get_page(&page.next).await? {
            Some(next) => page = next,
            None => return Ok(None),
        }
    }
}

pub async fn publish(ctx: &PrContext, review: Option<&ReviewRequest>, summary: &str) -> Outcome {
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
    if let Some(review) = review {
        let route = format!(
            "/repos/{}/{}/pulls/{}/reviews",
            ctx.owner, ctx.repo, ctx.number
        );
        match crab.post::<_, serde_json::Value>(route, Some(review)).await {
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
    let issues = crab.issues(&ctx.owner, &ctx.repo);
    let result = match sticky {
        Some(id) => issues.update_comment(id, summary).await.map(|_| true),
        None => issues
            .create_comment(ctx.number, summary)
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
pub fn publish_blocking(ctx: &PrContext, review: Option<&ReviewRequest>, summary: &str) -> Outcome {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(publish(ctx, review, summary)),
        Err(e) => Outcome {
            warnings: vec![format!("cannot start the HTTP client: {e}")],
            ..Outcome::default()
        },
    }
}
