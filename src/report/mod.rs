//! Output: the finding model and its renderers (human via miette, JSON, SARIF, JUnit, GitHub
//! annotations, the markdown summary).

pub mod escape;
pub mod github;
pub mod human;
pub mod json;
pub mod junit;
pub mod sarif;
pub mod summary;

pub use crate::finding::{Edit, Finding, Fix, Label, Severity};

/// A linted-root-relative path as the repository names it (GitHub-facing formats resolve
/// paths against the checkout root, while the linted directory may be a subdirectory).
pub fn repo_path(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_string()
    } else if path.is_empty() {
        prefix.to_string()
    } else {
        format!("{prefix}/{path}")
    }
}
