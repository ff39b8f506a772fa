//! Hashes, bcrypt/htpasswd, and the certificate/key/AES family (Sprig crypto.go).
//!
//! Randomness (salts, keys, serials, IVs) comes from `FuncEnv` only.

use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

use super::super::value::Value;
use super::FuncEnv;
use super::args::{self, arity};

type R = Result<Value, String>;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn sha1sum(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("sha1sum", a, 1)?;
    Ok(Value::from(hex(&Sha1::digest(
        args::string(&a[0])?.as_bytes(),
    ))))
}

pub fn sha256sum(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("sha256sum", a, 1)?;
    Ok(Value::from(hex(&Sha256::digest(
        args::string(&a[0])?.as_bytes(),
    ))))
}

pub fn sha512sum(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("sha512sum", a, 1)?;
    Ok(Value::from(hex(&Sha512::digest(
        args::string(&a[0])?.as_bytes(),
    ))))
}

/// adler32sum prints the checksum in decimal (`fmt.Sprintf("%d", ...)`).
pub fn adler32sum(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("adler32sum", a, 1)?;
    let s = args::string(&a[0])?;
    let (mut x, mut y) = (1u32, 0u32);
    for &b in s.as_bytes() {
        x = (x + u32::from(b)) % 65521;
        y = (y + x) % 65521;
    }
    Ok(Value::from(((y << 16) | x).to_string()))
}

/// bcrypt with Go's default cost (10) and `$2a$` prefix, salt from the env. Like Sprig, a
/// failure is returned as the result text (x/crypto rejects passwords over 72 bytes).
fn bcrypt_hash(env: &mut FuncEnv, password: &str) -> String {
    if password.len() > 72 {
        return "failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes"
            .into();
    }
    let mut salt = [0u8; 16];
    env.fill_bytes(&mut salt);
    match bcrypt::hash_with_salt(password.as_bytes(), 10, salt) {
        Ok(h) => h.format_for_version(bcrypt::Version::TwoA),
        Err(e) => format!("failed to encrypt string with bcrypt: {e}"),
    }
}

pub fn bcrypt_fn(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("bcrypt", a, 1)?;
    env.spend_heavy("bcrypt")?;
    let s = args::string(&a[0])?;
    Ok(Value::from(bcrypt_hash(env, &s)))
}

pub fn htpasswd(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("htpasswd", a, 2)?;
    env.spend_heavy("htpasswd")?;
    let user = args::string(&a[0])?;
    let pw = args::string(&a[1])?;
    if user.contains(':') {
        return Ok(Value::from(format!("invalid username: {user}")));
    }
    Ok(Value::from(format!("{user}:{}", bcrypt_hash(env, &pw))))
}

pub use super::crypto_certs::{
    build_custom_cert, gen_ca, gen_ca_with_key, gen_private_key, gen_self_signed_cert,
    gen_self_signed_cert_with_key, gen_signed_cert, gen_signed_cert_with_key,
};
pub use super::crypto_pw::{decrypt_aes, derive_password, encrypt_aes};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes() {
        let mut e = FuncEnv::default();
        let v = adler32sum(&mut e, &[Value::from("abc")]).unwrap_or_default();
        assert_eq!(v.as_str(), Some("38600999"));
        let h = htpasswd(&mut e, &[Value::from("admin"), Value::from("pw")]).unwrap_or_default();
        assert!(
            h.as_str()
                .is_some_and(|h| h.starts_with("admin:$2a$10$") && h.len() == 66)
        );
        let long = "x".repeat(73);
        let b = bcrypt_fn(&mut e, &[Value::from(long)]).unwrap_or_default();
        assert!(b.as_str().is_some_and(|m| m.ends_with("exceeds 72 bytes")));
    }
}
