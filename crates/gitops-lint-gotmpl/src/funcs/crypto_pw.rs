//! derivePassword (the Master Password algorithm: scrypt + HMAC-SHA256, deterministic) and
//! encryptAES/decryptAES (AES-256-CBC, PKCS#7 padding, random IV from `FuncEnv`), as
//! Sprig's crypto.go.

use sha2::{Digest, Sha256};

use super::super::value::Value;
use super::FuncEnv;
use super::args::{self, arity};
use super::encoding::{base64_decode, base64_encode};

type R = Result<Value, String>;

// ---- derivePassword (Master Password algorithm) ----

const TEMPLATES: &[(&str, &[&str])] = &[
    ("maximum", &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"]),
    (
        "long",
        &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
    ),
    ("medium", &["CvcnoCvc", "CvcCvcno"]),
    ("short", &["Cvcn"]),
    ("basic", &["aaanaaan", "aannaaan", "aaannaaa"]),
    ("pin", &["nnnn"]),
];

fn template_chars(c: u8) -> &'static str {
    match c {
        b'V' => "AEIOU",
        b'C' => "BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => "aeiou",
        b'c' => "bcdfghjklmnpqrstvwxyz",
        b'A' => "AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => "0123456789",
        b'o' => "@&%?,=[]_:-+*$#!'^~;()/.",
        _ => "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
    }
}

fn hmac_sha256(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut k = if key.len() > 64 {
        Sha256::digest(key).to_vec()
    } else {
        key.to_vec()
    };
    k.resize(64, 0);
    let ipad: Vec<u8> = k.iter().map(|b| b ^ 0x36).collect();
    let opad: Vec<u8> = k.iter().map(|b| b ^ 0x5c).collect();
    let inner = Sha256::digest([ipad.as_slice(), msg].concat());
    Sha256::digest([opad.as_slice(), inner.as_slice()].concat()).to_vec()
}

pub fn derive_password(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("derivePassword", a, 5)?;
    env.spend_heavy("derivePassword")?;
    let counter = match &a[0] {
        Value::Int(i) if (0..=i64::from(u32::MAX)).contains(i) => *i as u32,
        other => {
            return Err(args::unwrapped(format!(
                "wrong type for value; expected uint32; got {}",
                other.type_name()
            )));
        }
    };
    let (ptype, password, user, site) = (
        args::string(&a[1])?,
        args::string(&a[2])?,
        args::string(&a[3])?,
        args::string(&a[4])?,
    );
    let Some((_, templates)) = TEMPLATES.iter().find(|(n, _)| **n == *ptype) else {
        return Ok(Value::from(format!(
            "cannot find password template {ptype}"
        )));
    };
    const SEED: &[u8] = b"com.lyndir.masterpassword";
    let mut salt = SEED.to_vec();
    salt.extend((user.len() as u32).to_be_bytes());
    salt.extend(user.as_bytes());
    let params = scrypt::Params::new(15, 8, 2, 64).map_err(|e| e.to_string())?;
    let mut key = [0u8; 64];
    scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key).map_err(|e| e.to_string())?;
    let mut msg = SEED.to_vec();
    msg.extend((site.len() as u32).to_be_bytes());
    msg.extend(site.as_bytes());
    msg.extend(counter.to_be_bytes());
    let seed = hmac_sha256(&key, &msg);
    let temp = templates[seed[0] as usize % templates.len()].as_bytes();
    let out: String = temp
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let chars = template_chars(*c).as_bytes();
            chars[seed[i + 1] as usize % chars.len()] as char
        })
        .collect();
    Ok(Value::from(out))
}

// ---- AES-256-CBC with the password zero-padded to 32 bytes ----

fn aes_key(password: &str) -> aes::Aes256 {
    use aes::cipher::KeyInit;
    let mut key = [0u8; 32];
    let n = password.len().min(32);
    key[..n].copy_from_slice(&password.as_bytes()[..n]);
    aes::Aes256::new(&key.into())
}

pub fn encrypt_aes(env: &mut FuncEnv, a: &[Value]) -> R {
    use aes::cipher::BlockEncrypt;
    arity("encryptAES", a, 2)?;
    let password = args::string(&a[0])?;
    let plain = args::string(&a[1])?;
    if plain.is_empty() {
        return Ok(Value::from(""));
    }
    let cipher = aes_key(&password);
    let mut content = plain.as_bytes().to_vec();
    let pad = 16 - content.len() % 16;
    content.extend(std::iter::repeat_n(pad as u8, pad));
    let mut iv = [0u8; 16];
    env.fill_bytes(&mut iv);
    let mut out = iv.to_vec();
    let mut prev = iv;
    for chunk in content.chunks(16) {
        let mut block = [0u8; 16];
        for i in 0..16 {
            block[i] = chunk[i] ^ prev[i];
        }
        let mut b = block.into();
        cipher.encrypt_block(&mut b);
        prev.copy_from_slice(&b);
        out.extend_from_slice(&prev);
    }
    Ok(Value::from(base64_encode(&out)))
}

pub fn decrypt_aes(_: &mut FuncEnv, a: &[Value]) -> R {
    use aes::cipher::BlockDecrypt;
    arity("decryptAES", a, 2)?;
    let password = args::string(&a[0])?;
    let crypt64 = args::string(&a[1])?;
    if crypt64.is_empty() {
        return Ok(Value::from(""));
    }
    let crypt = base64_decode(&crypt64)?;
    if crypt.len() < 16 {
        return Err("runtime error: slice bounds out of range [:16]".into());
    }
    if crypt.len() % 16 != 0 {
        return Err("crypto/cipher: input not full blocks".into());
    }
    let cipher = aes_key(&password);
    let mut prev: [u8; 16] = [0; 16];
    prev.copy_from_slice(&crypt[..16]);
    let mut out = Vec::with_capacity(crypt.len() - 16);
    for chunk in crypt[16..].chunks(16) {
        let mut b = aes::Block::clone_from_slice(chunk);
        cipher.decrypt_block(&mut b);
        for i in 0..16 {
            out.push(b[i] ^ prev[i]);
        }
        prev.copy_from_slice(chunk);
    }
    let Some(&pad) = out.last() else {
        return Err("runtime error: index out of range [-1]".into());
    };
    let keep = out.len().checked_sub(pad as usize).ok_or_else(|| {
        format!(
            "runtime error: slice bounds out of range [:{}]",
            out.len() as i64 - i64::from(pad)
        )
    })?;
    Ok(Value::from(
        String::from_utf8_lossy(&out[..keep]).into_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aes_round_trip() {
        let mut e = FuncEnv::new(3, 0, 0);
        let c = encrypt_aes(
            &mut e,
            &[Value::from("secretkey"), Value::from("plaintext")],
        )
        .unwrap_or_default();
        let p = decrypt_aes(&mut e, &[Value::from("secretkey"), c]).unwrap_or_default();
        assert_eq!(p.as_str(), Some("plaintext"));
    }

    #[test]
    fn master_password_vectors() {
        // Sprig's TestDerivePassword expectations.
        let mut e = FuncEnv::default();
        for (counter, kind, want) in [
            (1, "long", "ZedaFaxcZaso9*"),
            (2, "long", "Fovi2@JifpTupx"),
            (1, "maximum", "pf4zS1LjCg&LjhsZ7T2~"),
            (1, "medium", "ZedJuz8$"),
            (1, "basic", "pIS54PLs"),
            (1, "short", "Zed5"),
            (1, "pin", "6685"),
        ] {
            let args = [
                Value::Int(counter),
                Value::from(kind),
                Value::from("password"),
                Value::from("user"),
                Value::from("example.com"),
            ];
            let got = derive_password(&mut e, &args).unwrap_or_default();
            assert_eq!(got.as_str(), Some(want), "{kind} {counter}");
        }
    }
}
