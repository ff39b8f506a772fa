//! Why a read through [`super::RepoFs`] was refused (outside the repo, missing, unreadable).

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsError {
    /// The path climbs above the repository root or resolves (through a symlink) outside it.
    OutsideRepo(String),
    NotFound(String),
    /// Unreadable, too large, binary or not UTF-8, with the reason.
    Unreadable(String, String),
}

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FsError::OutsideRepo(p) => write!(f, "`{p}` is outside the repository"),
            FsError::NotFound(p) => write!(f, "`{p}` does not exist"),
            FsError::Unreadable(p, why) => write!(f, "`{p}`: {why}"),
        }
    }
}
