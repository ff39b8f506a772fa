//! GitHub pull requests: one review with inline comments (and suggestion blocks) on the
//! changed lines, and one sticky summary comment updated in place.
//!
//! `event.rs` reads the Actions environment, `review.rs` builds the request bodies (pure,
//! tested without a network), `client.rs` sends them with octocrab (the `github` feature).
//! Failing to post never fails the job: the caller prints a warning and the annotations and
//! job summary still carry everything. The token is only ever handed to octocrab, and every
//! warning passes `scrub.rs` (token and credentials masked, control characters escaped).

pub mod event;
pub mod review;
pub mod scrub;

#[cfg(feature = "github")]
pub mod client;
