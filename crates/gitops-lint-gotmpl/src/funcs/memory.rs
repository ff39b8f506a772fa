//! The memory budget of one render (`limits.max-render-memory-bytes`): bytes of values the
//! templates create. The step and output limits do not bound memory: 40 doublings of a
//! string in a variable, or `toYaml` of a map that holds itself twice per level, allocate
//! gigabytes without writing a byte of output.
//!
//! The count is of bytes created, not of bytes live: a temporary made in a loop counts on
//! every pass. That bounds memory without tracking frees; real charts stay far below.
//!
//! Two halves:
//! - the executor charges every function result to [`MemoryBudget`] by the bytes that are
//!   new in it ([`fresh_bytes`]: values only the result holds; a container shared with an
//!   argument or a variable was charged when it was made);
//! - while a function runs, [`within`] gives it the room left, and builders whose output can
//!   outgrow their input (the YAML/JSON/TOML encoders, the `%v` formatters, `deepCopy`,
//!   `repeat`, `until`) check it as they emit ([`spend`], [`fits`]) and stop at the budget
//!   instead of allocating first. The formatters have no `FuncEnv`, so the room is a
//!   thread-local for the duration of one call; a render runs on one thread.

use std::cell::Cell;
use std::rc::Rc;

use super::super::value::Value;

/// Default budget per render: 100 times what real charts create (the 180 renders of the
/// helm corpus peak at 1.3 MB), and, with a builder's string doubling its buffer past the
/// budget, two renders at a time stay well under 1 GiB.
pub const DEFAULT_MAX_RENDER_MEMORY_BYTES: usize = 128 << 20;

/// Bytes charged per list element or map entry besides its key and its own content.
pub const SLOT_BYTES: usize = std::mem::size_of::<Value>();
pub const ENTRY_BYTES: usize = SLOT_BYTES + std::mem::size_of::<String>();
/// A map's own allocations besides its entries (`Rc<RefCell<BTreeMap>>` and a B-tree node).
pub const MAP_BYTES: usize = 640;
/// A list's own allocation besides its elements.
pub const LIST_BYTES: usize = 48;

/// What one container costs without its elements' content: for copies (`deepCopy`).
pub fn container_bytes(v: &Value) -> usize {
    match v {
        Value::List(l) => LIST_BYTES + l.len() * SLOT_BYTES,
        Value::Map(m) => MAP_BYTES + m.try_borrow().map(|m| m.len()).unwrap_or(0) * ENTRY_BYTES,
        _ => 0,
    }
}

#[derive(Clone, Debug)]
pub struct MemoryBudget {
    pub limit: usize,
    used: usize,
}

impl MemoryBudget {
    pub fn new(limit: usize) -> MemoryBudget {
        MemoryBudget { limit, used: 0 }
    }

    pub fn used(&self) -> usize {
        self.used
    }

    pub fn room(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }

    /// Adds `bytes`; `Err` with the located message's text once the budget is exceeded.
    pub fn charge(&mut self, bytes: usize) -> Result<(), String> {
        self.used = self.used.saturating_add(bytes);
        if self.used > self.limit {
            return Err(exceeded(self.limit));
        }
        Ok(())
    }
}

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::new(DEFAULT_MAX_RENDER_MEMORY_BYTES)
    }
}

/// The message of a render stopped by its memory budget.
pub fn exceeded(limit: usize) -> String {
    format!(
        "values created by this render exceed the memory budget of {limit} bytes (limits.max-render-memory-bytes)"
    )
}

thread_local! {
    static ROOM: Cell<usize> = const { Cell::new(usize::MAX) };
    static OVERFLOWED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with `room` bytes for what it builds; also says whether it ran out (then its
/// result is cut short and must not be used, even when `f` swallowed the error, as
/// `toYaml` swallows every marshalling error).
pub fn within<T>(room: usize, f: impl FnOnce() -> T) -> (T, bool) {
    let saved = (ROOM.get(), OVERFLOWED.get());
    ROOM.set(room);
    OVERFLOWED.set(false);
    let out = f();
    let overflowed = OVERFLOWED.get();
    ROOM.set(saved.0);
    OVERFLOWED.set(saved.1 || overflowed);
    (out, overflowed)
}

/// Takes `bytes` of the current call's room; `Err` (and the overflow noted) when none is left.
pub fn spend(bytes: usize) -> Result<(), String> {
    let room = ROOM.get();
    if bytes > room {
        OVERFLOWED.set(true);
        ROOM.set(0);
        return Err(exceeded_room());
    }
    ROOM.set(room - bytes);
    Ok(())
}

/// Whether a result of `len` bytes still fits the current call's room (notes the overflow
/// when not). For emitters that check their growing output.
pub fn fits(len: usize) -> bool {
    if len > ROOM.get() {
        OVERFLOWED.set(true);
        return false;
    }
    true
}

fn exceeded_room() -> String {
    "result exceeds the render's memory budget (limits.max-render-memory-bytes)".into()
}

/// Bytes of `v` that nothing but `v` holds: strings, lists and maps whose only owner is
/// this value (reference count 1), walked down through such owners only. Stops counting
/// past `cap`.
pub fn fresh_bytes(v: &Value, cap: usize) -> usize {
    let mut total = 0usize;
    let mut stack: Vec<&Value> = vec![v];
    while let Some(v) = stack.pop() {
        if total > cap {
            break;
        }
        match v {
            Value::String(s) if Rc::strong_count(s) == 1 => total += s.len(),
            Value::Bytes(b) if Rc::strong_count(b) == 1 => total += b.len(),
            Value::List(l) if Rc::strong_count(l) == 1 => {
                total += LIST_BYTES + l.len() * SLOT_BYTES;
                stack.extend(l.iter());
            }
            Value::Map(m) if Rc::strong_count(m) == 1 => {
                // A map only this value holds is not borrowed elsewhere.
                total += MAP_BYTES;
                if let Ok(m) = m.try_borrow() {
                    for (k, x) in m.iter() {
                        total += ENTRY_BYTES + k.len();
                        total += fresh_bytes(x, cap.saturating_sub(total));
                    }
                }
            }
            _ => {}
        }
    }
    total
}

/// Length (elements or entries) of a list or map, with its identity, to charge what a
/// function added in place (`set`, `merge`).
pub fn container_len(v: &Value) -> Option<(usize, usize)> {
    match v {
        Value::List(l) => Some((Rc::as_ptr(l) as *const u8 as usize, l.len())),
        Value::Map(m) => Some((
            Rc::as_ptr(m) as *const u8 as usize,
            m.try_borrow().map(|m| m.len()).unwrap_or(0),
        )),
        _ => None,
    }
}

/// Bytes a function added to a container it was given and returned (`set $d "k" $v`).
pub fn growth_bytes(result: &Value, before: &[(usize, usize)]) -> Option<usize> {
    let (addr, len) = container_len(result)?;
    let (_, old) = before.iter().find(|(a, _)| *a == addr)?;
    Some(len.saturating_sub(*old) * ENTRY_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Map;

    #[test]
    fn only_what_the_result_alone_holds_is_new() {
        let shared = Value::str("x".repeat(100));
        let mut m = Map::new();
        m.insert("l".into(), shared.clone());
        m.insert("r".into(), shared.clone());
        let d = Value::map(m);
        // The map is new; the string is held by `shared` too, so it was charged before.
        assert_eq!(
            fresh_bytes(&d, usize::MAX),
            MAP_BYTES + 2 * (ENTRY_BYTES + 1)
        );
        drop(shared);
        let fresh = Value::list(vec![Value::str("abc"), Value::str("de")]);
        assert_eq!(
            fresh_bytes(&fresh, usize::MAX),
            LIST_BYTES + 2 * SLOT_BYTES + 5
        );
    }

    #[test]
    fn builders_stop_at_the_room_they_are_given() {
        let ((), over) = within(10, || {
            assert!(spend(6).is_ok());
            assert!(spend(6).is_err());
        });
        assert!(over);
        let (ok, over) = within(10, || fits(10));
        assert!(ok && !over);
        let mut b = MemoryBudget::new(10);
        assert!(b.charge(10).is_ok());
        assert!(
            b.charge(1)
                .unwrap_err()
                .contains("limits.max-render-memory-bytes")
        );
    }
}
