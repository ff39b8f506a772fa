//! b64enc/b64dec/b32enc/b32dec with Go's StdEncoding rules (padding required, CR/LF
//! ignored when decoding, errors returned *as the result string*, as Sprig does).

use super::super::value::Value;
use super::FuncEnv;
use super::args::{self, arity};

type R = Result<Value, String>;

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

pub use gitops_lint_base::base64::encode as base64_encode;

/// Generic Go-style decoder for base64 (6 bits, quanta of 4) and base32 (5 bits, of 8).
fn decode(
    input: &str,
    alphabet: &[u8],
    bits: u32,
    quantum: usize,
    name: &str,
) -> Result<Vec<u8>, String> {
    let err = |pos: usize| format!("illegal {name} data at input byte {pos}");
    // Positions refer to the input with CR/LF removed, as Go's decoder strips them first.
    let chars: Vec<u8> = input
        .bytes()
        .filter(|&b| b != b'\r' && b != b'\n')
        .collect();
    let mut out = Vec::with_capacity(chars.len() * bits as usize / 8);
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        let mut acc: u64 = 0;
        let mut n = 0usize;
        let mut padded = false;
        while n < quantum {
            let Some(&c) = chars.get(i) else {
                return Err(err(start));
            };
            if c == b'=' {
                // Padding: the rest of the quantum must be '=' and nothing may follow.
                let valid_counts: &[usize] = if quantum == 4 { &[2, 3] } else { &[2, 4, 5, 7] };
                if !valid_counts.contains(&n) {
                    return Err(err(i));
                }
                for k in n..quantum {
                    if chars.get(start + k) != Some(&b'=') {
                        return Err(err(start + k.min(chars.len())));
                    }
                }
                if start + quantum < chars.len() {
                    return Err(err(start + quantum));
                }
                padded = true;
                break;
            }
            let Some(v) = alphabet.iter().position(|&a| a == c) else {
                return Err(err(i));
            };
            acc = (acc << bits) | v as u64;
            n += 1;
            i += 1;
        }
        let total_bits = n as u32 * bits;
        let nbytes = (total_bits / 8) as usize;
        let acc = acc >> (total_bits - nbytes as u32 * 8);
        for k in (0..nbytes).rev() {
            out.push((acc >> (8 * k)) as u8);
        }
        if padded {
            break;
        }
    }
    Ok(out)
}

pub fn b64enc(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("b64enc", a, 1)?;
    Ok(Value::from(base64_encode(args::string(&a[0])?.as_bytes())))
}

pub fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    decode(s, B64, 6, 4, "base64")
}

pub fn b64dec(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("b64dec", a, 1)?;
    let out = match base64_decode(&args::string(&a[0])?) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => e,
    };
    Ok(Value::from(out))
}

pub fn b32enc(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("b32enc", a, 1)?;
    let data = args::string(&a[0])?;
    let mut out = String::new();
    for c in data.as_bytes().chunks(5) {
        let mut n: u64 = 0;
        for k in 0..5 {
            n = (n << 8) | u64::from(*c.get(k).unwrap_or(&0));
        }
        let chars = (c.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(B32[((n >> (35 - 5 * i)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    Ok(Value::from(out))
}

pub fn b32dec(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("b32dec", a, 1)?;
    let out = match decode(&args::string(&a[0])?, B32, 5, 8, "base32") {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => e,
    };
    Ok(Value::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut e = FuncEnv::default();
        for s in ["", "a", "ab", "abc", "abcd", "Hello World!"] {
            let enc = b64enc(&mut e, &[Value::from(s)]).unwrap_or_default();
            let dec = b64dec(&mut e, &[enc]).unwrap_or_default();
            assert_eq!(dec.as_str(), Some(s));
            let enc = b32enc(&mut e, &[Value::from(s)]).unwrap_or_default();
            let dec = b32dec(&mut e, &[enc]).unwrap_or_default();
            assert_eq!(dec.as_str(), Some(s));
        }
        assert_eq!(base64_encode(b"abcd"), "YWJjZA==");
        let bad = b64dec(&mut e, &[Value::from("YW!j")]).unwrap_or_default();
        assert_eq!(bad.as_str(), Some("illegal base64 data at input byte 2"));
    }
}
