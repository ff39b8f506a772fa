//! The memory budget of one kustomize build (`limits.max-render-memory-bytes`, the same
//! figure a chart render gets). Resources are capped in number, but what the build adds to
//! them is decided by the input: generator data (hundreds of generators reading one
//! multi-megabyte file), the record each transformer entry leaves on every resource
//! (thousands of `replicas` entries times thousands of generated objects), a patch applied
//! to every target its selector picks. Each is charged here before it is built; past the
//! budget the step fails where it is written, and only this build stops.
//!
//! The budget is a thread-local for the duration of one build: a build runs on one thread,
//! and the steps that charge it need no builder passed through them. Outside a build
//! (unit tests of a single step) nothing is charged.

use std::cell::Cell;

thread_local! {
    /// (limit, bytes left) of the build running on this thread.
    static LEFT: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// What one resource costs besides its text: its tree's nodes and bookkeeping.
pub const RESOURCE_BYTES: usize = 512;
/// What one transformer record costs on one resource besides its strings.
pub const RECORD_BYTES: usize = 96;

/// Runs a build with `limit` bytes; a nested build (an included kustomization built on its
/// own) shares the outer one's budget.
pub fn within<T>(limit: usize, f: impl FnOnce() -> T) -> T {
    if LEFT.get().is_some() {
        return f();
    }
    LEFT.set(Some((limit, limit)));
    // Cleared on the way out, also when the build panics (a render job catches that and the
    // thread goes on to the next build).
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            LEFT.set(None);
        }
    }
    let _clear = Clear;
    f()
}

/// Takes `bytes` from the build's budget; `Err` with the message once it is spent.
pub fn charge(bytes: usize) -> Result<(), String> {
    let Some((limit, left)) = LEFT.get() else {
        return Ok(());
    };
    if bytes > left {
        LEFT.set(Some((limit, 0)));
        return Err(format!(
            "what this build creates exceeds the memory budget of {limit} bytes (limits.max-render-memory-bytes)"
        ));
    }
    LEFT.set(Some((limit, left - bytes)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_stops_at_its_budget_and_nothing_is_charged_outside_one() {
        assert!(charge(usize::MAX).is_ok());
        within(100, || {
            assert!(charge(60).is_ok());
            // A nested build shares the budget; it does not get a fresh one.
            within(1000, || assert!(charge(50).is_err()));
            let err = charge(1).unwrap_err();
            assert!(err.contains("limits.max-render-memory-bytes"), "{err}");
        });
        assert!(charge(usize::MAX).is_ok());
    }
}
