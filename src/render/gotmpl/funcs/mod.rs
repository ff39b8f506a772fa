//! The function library: Sprig (v3.3.0, as Helm 3.18 exposes it) and Helm's pure functions.
//!
//! Contract with the executor: every function is a plain `Func` over evaluated arguments.
//! Functions that need the engine itself (`include`, `tpl`, `template`) live in the executor.
//! Failures return `Err(message)`; the executor wraps it as Go does
//! (`error calling NAME: message`).

use super::value::Value;

/// What a function may read besides its arguments: the clock and the random source. Kept
/// explicit so that a render can be repeated with another seed, clock and zone (the
/// render-twice non-determinism check) and so tests are reproducible.
pub struct FuncEnv {
    /// Seed of the random source used by rand*, uuidv4, shuffle, gen*, bcrypt salts.
    pub seed: u64,
    /// Unix time in nanoseconds that `now` returns.
    pub now_unix_nanos: i128,
    /// Offset east of UTC, in seconds, of the "local" time zone (`now`, `date`, `ago`).
    pub utc_offset_secs: i32,
}

pub type Func = fn(&mut FuncEnv, &[Value]) -> Result<Value, String>;
