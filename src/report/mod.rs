//! Output: the finding model and its renderers (human via miette, JSON).

pub mod finding;
pub mod human;
pub mod json;

pub use finding::{Edit, Finding, Fix, Label, Severity};
