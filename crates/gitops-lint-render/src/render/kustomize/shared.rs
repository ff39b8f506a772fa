//! Kustomizations built once and shared by every build that includes them. In a monorepo,
//! 150 overlays over 20 bases build 20 bases, not 150: the base's accumulator (its resources
//! after its own generators and transformers, its configuration and vars) is the same
//! whichever overlay includes it, because kustomize builds each kustomization on its own and
//! only then hands the result up.
//!
//! What else a sub-build depends on is checked at each reuse, and a build that cannot be
//! shared is built as before:
//! - the directories it entered must not be on the including build's stack (a cycle), nor
//!   be the directory an Argo CD override rewrites;
//! - its nesting must fit under `max_depth` from where it is included, and its resources
//!   under `max_resources`;
//! - no `openapi:` choice may be in force when it is included or made inside it (the
//!   choice is one per build and carries across siblings).
//!
//! The cache lives as long as the `SharedBuilds` value (one model build, whose files do not
//! change), keyed by directory and load restrictions.

use super::LoadRestrictions;
use super::acc::Acc;
use crate::render::{RemoteUse, RenderIssue};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Sub-builds done so far, shared between the builds (and threads) of one model build.
#[derive(Default)]
pub struct SharedBuilds {
    done: Mutex<HashMap<(String, LoadRestrictions), Arc<SharedBuild>>>,
}

impl std::fmt::Debug for SharedBuilds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedBuilds")
    }
}

/// One kustomization's build as an included directory, and what the build did besides.
pub(super) struct SharedBuild {
    pub(super) acc: Acc,
    /// Every directory it entered (itself first).
    pub(super) entered: Vec<String>,
    /// How many levels it nested below the including build.
    pub(super) depth: usize,
    /// Resources it appended (the including build's resource limit counts them).
    pub(super) appended: usize,
    pub(super) remotes: Vec<RemoteUse>,
    pub(super) skipped: Vec<RenderIssue>,
}

impl SharedBuilds {
    pub(super) fn get(
        &self,
        dir: &str,
        restrictions: LoadRestrictions,
    ) -> Option<Arc<SharedBuild>> {
        let done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        done.get(&(dir.to_string(), restrictions)).cloned()
    }

    pub(super) fn insert(&self, dir: &str, restrictions: LoadRestrictions, build: SharedBuild) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        done.entry((dir.to_string(), restrictions))
            .or_insert_with(|| Arc::new(build));
    }

    /// How many sub-builds are kept (for tests).
    pub fn len(&self) -> usize {
        self.done.lock().map(|d| d.len()).unwrap_or_default()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
