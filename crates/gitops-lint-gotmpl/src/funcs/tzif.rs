//! Time zones by IANA name, read from the system's zoneinfo (TZif) files the way Go's
//! time.LoadLocation does. The zone in effect is the last transition at or before the
//! instant; before the first transition, the first standard-time type.

use std::cell::RefCell;
use std::collections::HashMap;

struct Zone {
    /// (transition time, index into `types`), ascending.
    transitions: Vec<(i64, usize)>,
    /// (UTC offset in seconds, is DST, abbreviation).
    types: Vec<(i32, bool, String)>,
}

const ZONEINFO_DIRS: &[&str] = &[
    "/usr/share/zoneinfo/",
    "/usr/share/lib/zoneinfo/",
    "/usr/lib/locale/TZ/",
];
const MAX_FILE: u64 = 1 << 20;

thread_local! {
    static CACHE: RefCell<HashMap<String, Option<std::rc::Rc<Zone>>>> = RefCell::new(HashMap::new());
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn parse(b: &[u8]) -> Option<Zone> {
    if b.get(..4)? != b"TZif" {
        return None;
    }
    let version = *b.get(4)?;
    let counts = |at: usize| -> Option<[usize; 6]> {
        let mut c = [0usize; 6];
        for (i, x) in c.iter_mut().enumerate() {
            *x = be_u32(b, at + 20 + 4 * i)? as usize;
        }
        Some(c)
    };
    let [isut, isstd, leap, timecnt, typecnt, charcnt] = counts(0)?;
    let (mut at, time_size, [_, _, _, timecnt, typecnt, charcnt]) = if version >= b'2' {
        // Skip the 32-bit block; use the 64-bit one that follows.
        let v1 = 44 + timecnt * 4 + timecnt + typecnt * 6 + charcnt + leap * 8 + isstd + isut;
        (v1 + 44, 8, counts(v1)?)
    } else {
        (44, 4, [isut, isstd, leap, timecnt, typecnt, charcnt])
    };
    let mut times = Vec::with_capacity(timecnt);
    for i in 0..timecnt {
        let p = at + i * time_size;
        let t = if time_size == 8 {
            i64::from_be_bytes(b.get(p..p + 8)?.try_into().ok()?)
        } else {
            i64::from(i32::from_be_bytes(b.get(p..p + 4)?.try_into().ok()?))
        };
        times.push(t);
    }
    at += timecnt * time_size;
    let idx = b.get(at..at + timecnt)?.to_vec();
    at += timecnt;
    let mut raw_types = Vec::with_capacity(typecnt);
    for i in 0..typecnt {
        let p = at + i * 6;
        let off = i32::from_be_bytes(b.get(p..p + 4)?.try_into().ok()?);
        raw_types.push((off, *b.get(p + 4)? != 0, *b.get(p + 5)? as usize));
    }
    at += typecnt * 6;
    let chars = b.get(at..at + charcnt)?;
    let types = raw_types
        .into_iter()
        .map(|(off, dst, ai)| {
            let s = chars.get(ai..).unwrap_or(&[]);
            let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
            (off, dst, String::from_utf8_lossy(&s[..end]).into_owned())
        })
        .collect::<Vec<_>>();
    let transitions = times
        .into_iter()
        .zip(idx)
        .filter(|(_, i)| (*i as usize) < types.len())
        .map(|(t, i)| (t, i as usize))
        .collect();
    (!types.is_empty()).then_some(Zone { transitions, types })
}

fn load(name: &str) -> Option<std::rc::Rc<Zone>> {
    // Go rejects names that could escape the zoneinfo directory.
    if name.contains("..") || name.starts_with('/') || name.contains('\\') || name.is_empty() {
        return None;
    }
    CACHE.with(|c| {
        if let Some(z) = c.borrow().get(name) {
            return z.clone();
        }
        let zone = ZONEINFO_DIRS.iter().find_map(|dir| {
            let path = format!("{dir}{name}");
            let meta = std::fs::metadata(&path).ok()?;
            if !meta.is_file() || meta.len() > MAX_FILE {
                return None;
            }
            parse(&std::fs::read(&path).ok()?)
        });
        let zone = zone.map(std::rc::Rc::new);
        c.borrow_mut().insert(name.to_string(), zone.clone());
        zone
    })
}

/// (offset, abbreviation) of zone `name` at Unix time `secs`.
pub fn lookup(name: &str, secs: i64) -> Option<(i32, String)> {
    let z = load(name)?;
    let ty = match z.transitions.iter().rposition(|(t, _)| *t <= secs) {
        Some(i) => z.transitions[i].1,
        None => z.types.iter().position(|t| !t.1).unwrap_or(0),
    };
    let (off, _, abbr) = z.types.get(ty)?;
    Some((*off, abbr.clone()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn new_york_if_installed() {
        if let Some((off, abbr)) = super::lookup("America/New_York", 1_560_458_379) {
            assert_eq!((off, abbr.as_str()), (-4 * 3600, "EDT"));
        }
        assert!(super::lookup("../etc/passwd", 0).is_none());
    }
}
