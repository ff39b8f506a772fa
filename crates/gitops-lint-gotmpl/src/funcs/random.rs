//! Random strings, ints, bytes, UUIDs and shuffles, all drawn from `FuncEnv`'s seeded
//! source so that a render is reproducible for one seed and differs across seeds.

use super::super::value::Value;
use super::FuncEnv;
use super::args::{self, arity, check_alloc};
use super::encoding::base64_encode;

type R = Result<Value, String>;

const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const DIGITS: &[u8] = b"0123456789";

fn rand_from(env: &mut FuncEnv, name: &str, a: &[Value], pick: &dyn Fn(&mut FuncEnv) -> char) -> R {
    arity(name, a, 1)?;
    let n = args::int(&a[0])?;
    if n <= 0 {
        // goutils returns an error for negative counts, which Sprig drops: "".
        return Ok(Value::from(""));
    }
    check_alloc(name, n as usize)?;
    let s: String = (0..n).map(|_| pick(env)).collect();
    Ok(Value::from(s))
}

fn pick_of(set: &'static [u8]) -> impl Fn(&mut FuncEnv) -> char {
    move |env: &mut FuncEnv| set[env.below(set.len() as u64) as usize] as char
}

pub fn rand_alpha_num(env: &mut FuncEnv, a: &[Value]) -> R {
    rand_from(env, "randAlphaNum", a, &pick_of(ALNUM))
}

pub fn rand_alpha(env: &mut FuncEnv, a: &[Value]) -> R {
    rand_from(env, "randAlpha", a, &pick_of(ALPHA))
}

pub fn rand_numeric(env: &mut FuncEnv, a: &[Value]) -> R {
    rand_from(env, "randNumeric", a, &pick_of(DIGITS))
}

/// Printable ASCII (32..=126), as goutils' CryptoRandomAscii.
pub fn rand_ascii(env: &mut FuncEnv, a: &[Value]) -> R {
    rand_from(env, "randAscii", a, &|e: &mut FuncEnv| {
        (32 + e.below(95) as u8) as char
    })
}

pub fn rand_int(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("randInt", a, 2)?;
    let lo = args::int(&a[0])?;
    let hi = args::int(&a[1])?;
    let span = hi.wrapping_sub(lo);
    if span <= 0 {
        return Err("invalid argument to Intn".into());
    }
    Ok(Value::Int(lo + env.below(span as u64) as i64))
}

pub fn rand_bytes(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("randBytes", a, 1)?;
    let n = args::int(&a[0])?;
    if n < 0 {
        return Err("runtime error: makeslice: len out of range".into());
    }
    check_alloc("randBytes", n as usize)?;
    let mut buf = vec![0u8; n as usize];
    env.fill_bytes(&mut buf);
    Ok(Value::from(base64_encode(&buf)))
}

pub fn uuidv4(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("uuidv4", a, 0)?;
    let mut b = [0u8; 16];
    env.fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(Value::from(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )))
}

/// xstrings.Shuffle: Fisher-Yates over the runes.
pub fn shuffle(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("shuffle", a, 1)?;
    let s = args::string(&a[0])?;
    let mut r: Vec<char> = s.chars().collect();
    for i in (1..r.len()).rev() {
        let j = env.below(i as u64 + 1) as usize;
        r.swap(i, j);
    }
    Ok(Value::from(r.into_iter().collect::<String>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_shaped() {
        let mut e1 = FuncEnv::new(1, 0, 0);
        let mut e2 = FuncEnv::new(1, 0, 0);
        let mut e3 = FuncEnv::new(2, 0, 0);
        let a = rand_alpha_num(&mut e1, &[Value::Int(16)]).unwrap_or_default();
        let b = rand_alpha_num(&mut e2, &[Value::Int(16)]).unwrap_or_default();
        let c = rand_alpha_num(&mut e3, &[Value::Int(16)]).unwrap_or_default();
        assert_eq!(a.as_str(), b.as_str());
        assert_ne!(a.as_str(), c.as_str());
        assert_eq!(a.as_str().map(str::len), Some(16));
        assert!(rand_alpha_num(&mut e1, &[Value::Int(1 << 40)]).is_err());
        let u = uuidv4(&mut e1, &[]).unwrap_or_default();
        assert_eq!(u.as_str().map(|s| &s[14..15]), Some("4"));
    }
}
