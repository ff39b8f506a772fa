//! Keys and certificates (genPrivateKey, genCA*, genSelfSignedCert*, genSignedCert*,
//! buildCustomCert), as Sprig's crypto.go.
//!
//! Certificates are built the way Go's x509.CreateCertificate lays them out (v3, 128-bit
//! random serial, CN-only subject, key usage, server+client auth, basic constraints, SKID
//! for CAs, AKID from the issuer, SANs), with a small DER writer. All randomness (keys,
//! serials) and the validity window come from `FuncEnv`.

use std::net::IpAddr;
use std::rc::Rc;

use sha1::Sha1;
use sha2::{Digest, Sha256};

use super::super::value::{GoObject, Value};
use super::args::{self, arity};
use super::encoding::{base64_decode, base64_encode};
use super::standin_primes;
use super::{Entropy, FuncEnv};

type R = Result<Value, String>;

// ---- randomness adapter for the RSA/EC crates ----

struct EnvRng<'a>(&'a mut FuncEnv);

impl rand_core::RngCore for EnvRng<'_> {
    fn next_u32(&mut self) -> u32 {
        self.0.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.fill_bytes(dest);
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.0.fill_bytes(dest);
        Ok(())
    }
}

impl rand_core::CryptoRng for EnvRng<'_> {}

// ---- DER ----

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes: Vec<u8> = n
            .to_be_bytes()
            .iter()
            .copied()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

fn uint(bytes: &[u8]) -> Vec<u8> {
    let mut b: Vec<u8> = bytes.iter().copied().skip_while(|x| *x == 0).collect();
    if b.is_empty() || b[0] & 0x80 != 0 {
        b.insert(0, 0);
    }
    tlv(0x02, &b)
}

fn oid(arcs: &[u64]) -> Vec<u8> {
    let mut body = Vec::new();
    let mut push = |mut v: u64| {
        let mut tmp = vec![(v & 0x7f) as u8];
        v >>= 7;
        while v > 0 {
            tmp.push(0x80 | (v & 0x7f) as u8);
            v >>= 7;
        }
        tmp.reverse();
        body.extend(tmp);
    };
    push(arcs[0] * 40 + arcs[1]);
    for a in &arcs[2..] {
        push(*a);
    }
    tlv(0x06, &body)
}

fn bit_string(unused: u8, bytes: &[u8]) -> Vec<u8> {
    let mut b = vec![unused];
    b.extend_from_slice(bytes);
    tlv(0x03, &b)
}

/// Minimal DER reader: (tag, content, rest).
fn read_tlv(d: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let tag = *d.first()?;
    let l0 = *d.get(1)?;
    let (len, hdr) = if l0 < 0x80 {
        (l0 as usize, 2)
    } else {
        let n = (l0 & 0x7f) as usize;
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | *d.get(2 + i)? as usize;
        }
        (len, 2 + n)
    };
    let end = hdr.checked_add(len)?;
    Some((tag, d.get(hdr..end)?, d.get(end..)?))
}

// ---- PEM ----

fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = base64_encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The first PEM block: (label, DER bytes).
fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + 11..];
    let label_end = rest.find("-----")?;
    let label = rest[..label_end].to_string();
    let body_start = &rest[label_end + 5..];
    let end = body_start.find(&format!("-----END {label}-----"))?;
    let body: String = body_start[..end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    Some((label, base64_decode(&body).ok()?))
}

// ---- keys ----

enum Key {
    Rsa(Box<rsa::RsaPrivateKey>),
    Ec(p256::SecretKey),
    Ed25519([u8; 32]),
}

const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// An RSA key of `bits` bits with e = 65537. Printed output (`Entropy::Os`) gets a real
/// key from the rsa crate's generator and the OS random source. Lint gets a stand-in: a
/// valid key of the right size built from two of a few fixed primes chosen by the seed, in
/// microseconds instead of 0.1–2 s (lint never shows it: the call taints what it feeds).
fn gen_rsa(env: &mut FuncEnv, bits: usize) -> Result<Key, String> {
    const E: u64 = 65_537;
    let fail = |e: String| format!("error generating rsa key: {e}");
    if env.entropy == Entropy::Os {
        return rsa::RsaPrivateKey::new(&mut rand_core::OsRng, bits)
            .map(|k| Key::Rsa(Box::new(k)))
            .map_err(|e| fail(e.to_string()));
    }
    let pool = if bits > 2048 {
        standin_primes::PRIMES_4096
    } else {
        standin_primes::PRIMES_2048
    };
    let n = pool.len() as u64;
    let i = env.below(n) as usize;
    let j = (i + 1 + env.below(n - 1) as usize) % pool.len();
    let prime =
        |hex: &str| rsa::BigUint::parse_bytes(hex.as_bytes(), 16).ok_or("bad stand-in prime");
    let (p, q) = (
        prime(pool[i]).map_err(|e| fail(e.into()))?,
        prime(pool[j]).map_err(|e| fail(e.into()))?,
    );
    rsa::RsaPrivateKey::from_primes(vec![p, q], E.into())
        .map(|k| Key::Rsa(Box::new(k)))
        .map_err(|e| fail(e.to_string()))
}

fn key_pem(k: &Key) -> Result<String, String> {
    match k {
        Key::Rsa(k) => {
            use rsa::pkcs1::EncodeRsaPrivateKey;
            let der = k.to_pkcs1_der().map_err(|e| e.to_string())?;
            Ok(pem_encode("RSA PRIVATE KEY", der.as_bytes()))
        }
        Key::Ec(k) => {
            // Go's MarshalECPrivateKey: version, key, [0] curve OID, [1] public point.
            use p256::elliptic_curve::sec1::ToEncodedPoint;
            let point = k.public_key().to_encoded_point(false);
            let der = seq(&[
                vec![0x02, 0x01, 0x01],
                tlv(0x04, &k.to_bytes()),
                tlv(0xa0, &oid(&[1, 2, 840, 10_045, 3, 1, 7])),
                tlv(0xa1, &bit_string(0, point.as_bytes())),
            ]);
            Ok(pem_encode("EC PRIVATE KEY", &der))
        }
        Key::Ed25519(seed) => {
            let mut der = ED25519_PKCS8_PREFIX.to_vec();
            der.extend_from_slice(seed);
            Ok(pem_encode("PRIVATE KEY", &der))
        }
    }
}

/// Sprig's parsePrivateKeyPEM.
fn parse_key_pem(text: &str) -> Result<Key, String> {
    let (label, der) = pem_decode(text).ok_or("no PEM data in input")?;
    if label == "PRIVATE KEY" {
        if der.len() == 48 && der[..16] == ED25519_PKCS8_PREFIX {
            let mut seed = [0u8; 32];
            seed.copy_from_slice(&der[16..]);
            return Ok(Key::Ed25519(seed));
        }
        use rsa::pkcs8::DecodePrivateKey;
        if let Ok(k) = rsa::RsaPrivateKey::from_pkcs8_der(&der) {
            return Ok(Key::Rsa(Box::new(k)));
        }
        if let Ok(k) = p256::SecretKey::from_pkcs8_der(&der) {
            return Ok(Key::Ec(k));
        }
        return Err("decoding PEM as PKCS#8: x509: failed to parse private key".into());
    }
    let Some(kind) = label.strip_suffix(" PRIVATE KEY") else {
        return Err(format!("no private key data in PEM block of type {label}"));
    };
    match kind {
        "RSA" => {
            use rsa::pkcs1::DecodeRsaPrivateKey;
            rsa::RsaPrivateKey::from_pkcs1_der(&der)
                .map(|k| Key::Rsa(Box::new(k)))
                .map_err(|e| format!("parsing RSA private key from PEM: {e}"))
        }
        "EC" => p256::SecretKey::from_sec1_der(&der)
            .map(Key::Ec)
            .map_err(|e| format!("parsing EC private key from PEM: {e}")),
        _ => Err(format!("invalid private key type {label}")),
    }
}

/// SubjectPublicKeyInfo DER and the raw public key bytes (for the SKID).
fn public_key_info(k: &Key) -> Result<(Vec<u8>, Vec<u8>), String> {
    match k {
        Key::Rsa(k) => {
            use rsa::pkcs1::EncodeRsaPublicKey;
            let pk = k.to_public_key();
            let raw = pk
                .to_pkcs1_der()
                .map_err(|e| e.to_string())?
                .as_bytes()
                .to_vec();
            let alg = seq(&[oid(&[1, 2, 840, 113_549, 1, 1, 1]), vec![0x05, 0x00]]);
            Ok((seq(&[alg, bit_string(0, &raw)]), raw))
        }
        Key::Ec(k) => {
            use p256::elliptic_curve::sec1::ToEncodedPoint;
            let raw = k.public_key().to_encoded_point(false).as_bytes().to_vec();
            let alg = seq(&[
                oid(&[1, 2, 840, 10_045, 2, 1]),
                oid(&[1, 2, 840, 10_045, 3, 1, 7]),
            ]);
            Ok((seq(&[alg, bit_string(0, &raw)]), raw))
        }
        Key::Ed25519(_) => Err("x509: unsupported public key type: ed25519.PublicKey".into()),
    }
}

/// (signatureAlgorithm DER, signature bytes) over `tbs`.
fn sign(k: &Key, tbs: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    match k {
        Key::Rsa(k) => {
            // DigestInfo prefix for SHA-256, then PKCS#1 v1.5 over the prefixed digest.
            let mut info = vec![
                0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
                0x01, 0x05, 0x00, 0x04, 0x20,
            ];
            info.extend_from_slice(&Sha256::digest(tbs));
            let sig = k
                .sign(rsa::Pkcs1v15Sign::new_unprefixed(), &info)
                .map_err(|e| e.to_string())?;
            Ok((
                seq(&[oid(&[1, 2, 840, 113_549, 1, 1, 11]), vec![0x05, 0x00]]),
                sig,
            ))
        }
        Key::Ec(k) => {
            use p256::ecdsa::signature::Signer;
            let sk = p256::ecdsa::SigningKey::from(k.clone());
            let sig: p256::ecdsa::Signature = sk.sign(tbs);
            Ok((
                seq(&[oid(&[1, 2, 840, 10_045, 4, 3, 2])]),
                sig.to_der().as_bytes().to_vec(),
            ))
        }
        Key::Ed25519(_) => Err("x509: unsupported signing key type".into()),
    }
}

// ---- certificates ----

/// Sprig's `certificate` struct (fields Cert and Key).
#[derive(Clone)]
pub struct Certificate {
    pub cert: String,
    pub key: String,
}

impl GoObject for Certificate {
    fn type_name(&self) -> &str {
        "sprig.certificate"
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Cert" => Some(Value::from(self.cert.as_str())),
            "Key" => Some(Value::from(self.key.as_str())),
            _ => None,
        }
    }
    fn format(&self) -> String {
        format!("{{{} {}}}", self.cert, self.key)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn cert_value(c: Certificate) -> Value {
    Value::Object(Rc::new(c))
}

fn cert_arg(v: &Value) -> Result<Certificate, String> {
    match v {
        Value::Object(o) => o
            .as_any()
            .downcast_ref::<Certificate>()
            .cloned()
            .ok_or_else(|| {
                args::unwrapped(format!(
                    "wrong type for value; expected sprig.certificate; got {}",
                    o.type_name()
                ))
            }),
        Value::Nil => Err(args::unwrapped("invalid value; expected sprig.certificate")),
        other => Err(args::unwrapped(format!(
            "wrong type for value; expected sprig.certificate; got {}",
            other.type_name()
        ))),
    }
}

/// A Go `[]interface{}` parameter (nil allowed).
fn list_arg(v: &Value) -> Result<Vec<Value>, String> {
    match v {
        Value::Nil => Ok(Vec::new()),
        Value::List(l) => Ok(l.as_ref().clone()),
        other => Err(args::unwrapped(format!(
            "wrong type for value; expected []interface {{}}; got {}",
            other.type_name()
        ))),
    }
}

fn name_der(cn: &str) -> Vec<u8> {
    if cn.is_empty() {
        return seq(&[]);
    }
    let printable = cn
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b" '()+,-./:=?".contains(&c));
    let val = tlv(if printable { 0x13 } else { 0x0c }, cn.as_bytes());
    seq(&[tlv(0x31, &seq(&[oid(&[2, 5, 4, 3]), val]))])
}

fn time_der(unix: i64) -> Vec<u8> {
    let days = unix.div_euclid(86_400);
    let rem = unix.rem_euclid(86_400);
    let (y, m, d) = super::gofmt_time::civil_from_days(days);
    let hms = format!("{:02}{:02}{:02}Z", rem / 3600, rem / 60 % 60, rem % 60);
    if (1950..2050).contains(&y) {
        tlv(0x17, format!("{:02}{m:02}{d:02}{hms}", y % 100).as_bytes())
    } else {
        tlv(0x18, format!("{y:04}{m:02}{d:02}{hms}").as_bytes())
    }
}

fn ext(id: &[u64], critical: bool, value: Vec<u8>) -> Vec<u8> {
    let mut parts = vec![oid(id)];
    if critical {
        parts.push(vec![0x01, 0x01, 0xff]);
    }
    parts.push(tlv(0x04, &value));
    seq(&parts)
}

struct Template {
    cn: String,
    ips: Vec<IpAddr>,
    dns: Vec<String>,
    days: i64,
    is_ca: bool,
}

fn base_template(cn: &str, ips: &[Value], dns: &[Value], days: i64) -> Result<Template, String> {
    let mut ip_out = Vec::new();
    for ip in ips {
        let Value::String(s) = ip else {
            return Err(format!(
                "error parsing ip: {} is not a string",
                super::gofmt::format_v(ip)
            ));
        };
        ip_out.push(
            s.parse::<IpAddr>()
                .map_err(|_| format!("error parsing ip: {s}"))?,
        );
    }
    let mut dns_out = Vec::new();
    for d in dns {
        let Value::String(s) = d else {
            return Err(format!(
                "error processing alternate dns name: {} is not a string",
                super::gofmt::format_v(d)
            ));
        };
        dns_out.push(s.to_string());
    }
    Ok(Template {
        cn: cn.to_string(),
        ips: ip_out,
        dns: dns_out,
        days,
        is_ca: false,
    })
}

/// The issuer side: its subject Name DER, its SKID, and its key.
struct Issuer<'a> {
    name: Vec<u8>,
    skid: Option<Vec<u8>>,
    key: &'a Key,
}

fn create_cert(
    env: &mut FuncEnv,
    t: &Template,
    key: &Key,
    issuer: Option<Issuer<'_>>,
) -> Result<String, String> {
    let (spki, raw_pub) = public_key_info(key)?;
    let mut serial = [0u8; 16];
    env.fill_bytes(&mut serial);
    let subject = name_der(&t.cn);
    let now = env.now_unix_nanos().div_euclid(1_000_000_000) as i64;
    let not_after = now.saturating_add(t.days.saturating_mul(86_400));
    let skid = t.is_ca.then(|| Sha1::digest(&raw_pub).to_vec());

    let mut exts = Vec::new();
    let ku: &[u8] = if t.is_ca {
        &[0x02, 0xa4]
    } else {
        &[0x05, 0xa0]
    };
    exts.push(ext(&[2, 5, 29, 15], true, bit_string(ku[0], &ku[1..])));
    exts.push(ext(
        &[2, 5, 29, 37],
        false,
        seq(&[
            oid(&[1, 3, 6, 1, 5, 5, 7, 3, 1]),
            oid(&[1, 3, 6, 1, 5, 5, 7, 3, 2]),
        ]),
    ));
    let bc = if t.is_ca {
        seq(&[vec![0x01, 0x01, 0xff]])
    } else {
        seq(&[])
    };
    exts.push(ext(&[2, 5, 29, 19], true, bc));
    if let Some(s) = &skid {
        exts.push(ext(&[2, 5, 29, 14], false, tlv(0x04, s)));
    }
    let (issuer_name, signer, akid) = match &issuer {
        Some(i) => (
            i.name.clone(),
            i.key,
            if i.name != subject {
                i.skid.clone()
            } else {
                None
            },
        ),
        None => (subject.clone(), key, None),
    };
    if let Some(a) = akid {
        exts.push(ext(&[2, 5, 29, 35], false, seq(&[tlv(0x80, &a)])));
    }
    if !t.dns.is_empty() || !t.ips.is_empty() {
        let mut names = Vec::new();
        for d in &t.dns {
            names.push(tlv(0x82, d.as_bytes()));
        }
        for ip in &t.ips {
            let bytes = match ip {
                IpAddr::V4(v) => v.octets().to_vec(),
                IpAddr::V6(v) => v.octets().to_vec(),
            };
            names.push(tlv(0x87, &bytes));
        }
        exts.push(ext(&[2, 5, 29, 17], false, seq(&names)));
    }

    let (sig_alg_probe, _) = match signer {
        Key::Rsa(_) => (
            seq(&[oid(&[1, 2, 840, 113_549, 1, 1, 11]), vec![0x05, 0x00]]),
            (),
        ),
        Key::Ec(_) => (seq(&[oid(&[1, 2, 840, 10_045, 4, 3, 2])]), ()),
        Key::Ed25519(_) => {
            return Err("error creating certificate: x509: unsupported signing key type".into());
        }
    };
    let tbs = seq(&[
        tlv(0xa0, &[0x02, 0x01, 0x02]),
        uint(&serial),
        sig_alg_probe,
        issuer_name,
        seq(&[time_der(now), time_der(not_after)]),
        subject,
        spki,
        tlv(0xa3, &seq(&exts)),
    ]);
    let (sig_alg, sig) =
        sign(signer, &tbs).map_err(|e| format!("error creating certificate: {e}"))?;
    let cert = seq(&[tbs, sig_alg, bit_string(0, &sig)]);
    Ok(pem_encode("CERTIFICATE", &cert))
}

/// Subject Name DER and SKID of a PEM certificate (Go's x509.ParseCertificate, minimally).
fn parse_cert(pem: &str) -> Result<(Vec<u8>, Option<Vec<u8>>), String> {
    let (_, der) = pem_decode(pem).ok_or("unable to decode certificate")?;
    let bad = || {
        "error parsing certificate: decodedSignerCert.Bytes: x509: malformed certificate"
            .to_string()
    };
    let (_, cert, _) = read_tlv(&der).ok_or_else(bad)?;
    let (_, tbs, _) = read_tlv(cert).ok_or_else(bad)?;
    let mut rest = tbs;
    let mut fields: Vec<(u8, &[u8], &[u8])> = Vec::new(); // (tag, content, whole)
    while !rest.is_empty() {
        let (tag, content, r) = read_tlv(rest).ok_or_else(bad)?;
        let whole = &rest[..rest.len() - r.len()];
        fields.push((tag, content, whole));
        rest = r;
    }
    let off = usize::from(fields.first().is_some_and(|f| f.0 == 0xa0));
    // serial, sigalg, issuer, validity, subject
    let subject = fields.get(off + 4).ok_or_else(bad)?.2.to_vec();
    let mut skid = None;
    if let Some((_, exts, _)) = fields.iter().find(|f| f.0 == 0xa3) {
        let (_, mut list, _) = read_tlv(exts).ok_or_else(bad)?;
        let skid_oid = oid(&[2, 5, 29, 14]);
        while !list.is_empty() {
            let (_, e, r) = read_tlv(list).ok_or_else(bad)?;
            list = r;
            let (_, id, after) = read_tlv(e).ok_or_else(bad)?;
            if tlv(0x06, id) == skid_oid {
                let mut a = after;
                let (mut tag, mut c, mut r2) = read_tlv(a).ok_or_else(bad)?;
                if tag == 0x01 {
                    a = r2;
                    (tag, c, r2) = read_tlv(a).ok_or_else(bad)?;
                }
                let _ = (tag, r2);
                if let Some((_, inner, _)) = read_tlv(c) {
                    skid = Some(inner.to_vec());
                }
            }
        }
    }
    Ok((subject, skid))
}

fn cert_with(env: &mut FuncEnv, t: &Template, key: Key, issuer: Option<Issuer<'_>>) -> R {
    let cert = create_cert(env, t, &key, issuer)?;
    Ok(cert_value(Certificate {
        cert,
        key: key_pem(&key)?,
    }))
}

pub fn gen_private_key(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("genPrivateKey", a, 1)?;
    env.spend_heavy("genPrivateKey")?;
    let typ = args::string(&a[0])?;
    let key = match &*typ {
        "" | "rsa" => gen_rsa(env, 4096),
        "ecdsa" => {
            let k = p256::SecretKey::random(&mut EnvRng(env));
            Ok(Key::Ec(k))
        }
        "ed25519" => {
            let mut seed = [0u8; 32];
            env.fill_bytes(&mut seed);
            Ok(Key::Ed25519(seed))
        }
        "dsa" => return Err("genPrivateKey: dsa keys are not supported by this renderer".into()),
        other => return Ok(Value::from(format!("Unknown type {other}"))),
    };
    match key {
        Ok(k) => Ok(Value::from(key_pem(&k)?)),
        Err(e) => Ok(Value::from(format!("failed to generate private key: {e}"))),
    }
}

pub fn gen_ca(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("genCA", a, 2)?;
    env.spend_heavy("genCA")?;
    let cn = args::string(&a[0])?;
    let days = args::int(&a[1])?;
    let key = gen_rsa(env, 2048)?;
    let mut t = base_template(&cn, &[], &[], days)?;
    t.is_ca = true;
    cert_with(env, &t, key, None)
}

pub fn gen_ca_with_key(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("genCAWithKey", a, 3)?;
    let cn = args::string(&a[0])?;
    let days = args::int(&a[1])?;
    let key =
        parse_key_pem(&args::string(&a[2])?).map_err(|e| format!("parsing private key: {e}"))?;
    let mut t = base_template(&cn, &[], &[], days)?;
    t.is_ca = true;
    cert_with(env, &t, key, None)
}

pub fn gen_self_signed_cert(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("genSelfSignedCert", a, 4)?;
    env.spend_heavy("genSelfSignedCert")?;
    let cn = args::string(&a[0])?;
    let (ips, dns) = (list_arg(&a[1])?, list_arg(&a[2])?);
    let days = args::int(&a[3])?;
    let key = gen_rsa(env, 2048)?;
    let t = base_template(&cn, &ips, &dns, days)?;
    cert_with(env, &t, key, None)
}

pub fn gen_self_signed_cert_with_key(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("genSelfSignedCertWithKey", a, 5)?;
    let cn = args::string(&a[0])?;
    let (ips, dns) = (list_arg(&a[1])?, list_arg(&a[2])?);
    let days = args::int(&a[3])?;
    let key =
        parse_key_pem(&args::string(&a[4])?).map_err(|e| format!("parsing private key: {e}"))?;
    let t = base_template(&cn, &ips, &dns, days)?;
    cert_with(env, &t, key, None)
}

fn signed(env: &mut FuncEnv, a: &[Value], key: Key) -> R {
    let cn = args::string(&a[0])?;
    let (ips, dns) = (list_arg(&a[1])?, list_arg(&a[2])?);
    let days = args::int(&a[3])?;
    let ca = cert_arg(&a[4])?;
    let (name, skid) = parse_cert(&ca.cert)?;
    let ca_key = parse_key_pem(&ca.key).map_err(|e| format!("error parsing private key: {e}"))?;
    let t = base_template(&cn, &ips, &dns, days)?;
    cert_with(
        env,
        &t,
        key,
        Some(Issuer {
            name,
            skid,
            key: &ca_key,
        }),
    )
}

pub fn gen_signed_cert(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("genSignedCert", a, 5)?;
    env.spend_heavy("genSignedCert")?;
    // Check the arguments' types before the (slow) key generation, as Go does.
    args::string(&a[0])?;
    list_arg(&a[1])?;
    list_arg(&a[2])?;
    args::int(&a[3])?;
    cert_arg(&a[4])?;
    let key = gen_rsa(env, 2048)?;
    signed(env, a, key)
}

pub fn gen_signed_cert_with_key(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("genSignedCertWithKey", a, 6)?;
    let key =
        parse_key_pem(&args::string(&a[5])?).map_err(|e| format!("parsing private key: {e}"))?;
    signed(env, a, key)
}

pub fn build_custom_cert(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("buildCustomCert", a, 2)?;
    let cert =
        base64_decode(&args::string(&a[0])?).map_err(|_| "unable to decode base64 certificate")?;
    let key =
        base64_decode(&args::string(&a[1])?).map_err(|_| "unable to decode base64 private key")?;
    let cert = String::from_utf8_lossy(&cert).into_owned();
    let key = String::from_utf8_lossy(&key).into_owned();
    parse_cert(&cert).map_err(|e| e.replace("decodedSignerCert", "decodedCert"))?;
    parse_key_pem(&key).map_err(|e| format!("error parsing private key: {e}"))?;
    Ok(cert_value(Certificate { cert, key }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lint_gets_valid_stand_in_keys_of_the_right_size_and_output_gets_real_ones() {
        use rsa::traits::PublicKeyParts;
        let mut env = FuncEnv::new(2026, 0, 0);
        let start = std::time::Instant::now();
        for bits in [2048, 4096] {
            let Ok(Key::Rsa(k)) = gen_rsa(&mut env, bits) else {
                panic!("no stand-in key of {bits} bits");
            };
            assert_eq!(k.n().bits(), bits);
            assert!(k.validate().is_ok());
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        // Another seed, another stand-in: the render-twice check still sees keys vary.
        let pem = |seed| {
            let mut env = FuncEnv::new(seed, 0, 0);
            gen_private_key(&mut env, &[Value::from("rsa")]).unwrap_or_default()
        };
        let keys: std::collections::BTreeSet<String> = (0..8)
            .map(|s| pem(s).as_str().unwrap_or_default().to_string())
            .collect();
        assert!(keys.len() > 1);
        assert!(
            keys.iter()
                .all(|k| k.starts_with("-----BEGIN RSA PRIVATE KEY-----"))
        );
        let mut os = FuncEnv::new(1, 0, 0);
        os.entropy = Entropy::Os;
        let (Ok(Key::Rsa(a)), Ok(Key::Rsa(b))) = (gen_rsa(&mut os, 2048), gen_rsa(&mut os, 2048))
        else {
            panic!("no real key");
        };
        assert_eq!(a.n().bits(), 2048);
        assert!(a.n() != b.n(), "real keys differ");
    }

    #[test]
    fn key_generation_stops_at_the_render_deadline() {
        let mut env = FuncEnv::new(1, 0, 0);
        env.deadline = Some(std::time::Instant::now());
        std::thread::sleep(std::time::Duration::from_millis(2));
        let e = gen_private_key(&mut env, &[Value::from("rsa")]).unwrap_err();
        assert!(e.contains("limits.max-render-seconds"), "{e}");
    }

    #[test]
    fn ca_and_signed_cert() {
        let mut e = FuncEnv::new(7, 1_700_000_000_000_000_000, 0);
        let ca = gen_ca(&mut e, &[Value::from("my-ca"), Value::Int(365)]).unwrap_or_default();
        let Value::Object(o) = &ca else {
            panic!("genCA returned {ca:?}");
        };
        let cert = o.field("Cert").unwrap_or_default();
        assert!(
            cert.as_str()
                .is_some_and(|c| c.starts_with("-----BEGIN CERTIFICATE-----\n"))
        );
        let key = o.field("Key").unwrap_or_default();
        assert!(
            key.as_str()
                .is_some_and(|k| k.starts_with("-----BEGIN RSA PRIVATE KEY-----\n"))
        );
        let sans = Value::list(vec![Value::from("a.example.com")]);
        let ips = Value::list(vec![Value::from("10.0.0.1")]);
        let leaf = gen_signed_cert(
            &mut e,
            &[Value::from("leaf"), ips, sans, Value::Int(30), ca.clone()],
        );
        assert!(matches!(leaf, Ok(Value::Object(_))), "{leaf:?}");
        let bad_ip = Value::list(vec![Value::Int(1)]);
        let r = gen_self_signed_cert(
            &mut e,
            &[Value::from("x"), bad_ip, Value::Nil, Value::Int(1)],
        );
        assert_eq!(
            r.err().as_deref(),
            Some("error parsing ip: 1 is not a string")
        );
        let far = gen_ca(&mut e, &[Value::from(""), Value::Int(i64::MAX)]);
        assert!(far.is_ok());
        let (subject, skid) = parse_cert(cert.as_str().unwrap_or("")).unwrap_or_default();
        assert_eq!(subject, name_der("my-ca"));
        assert_eq!(skid.map(|s| s.len()), Some(20));
    }

    #[test]
    fn generated_rsa_keys_are_valid_and_differ() {
        use rsa::traits::PublicKeyParts;
        let mut e = FuncEnv::new(11, 0, 0);
        let Ok(Key::Rsa(a)) = gen_rsa(&mut e, 2048) else {
            panic!("no RSA key");
        };
        let Ok(Key::Rsa(b)) = gen_rsa(&mut e, 2048) else {
            panic!("no RSA key");
        };
        assert_eq!(a.n().bits(), 2048);
        assert_eq!(a.e(), &rsa::BigUint::from(65_537u32));
        assert_ne!(a.n(), b.n());
        assert!(a.validate().is_ok());
        // A signature verifies with the public key, and the PEM reads back to the same key.
        let digest = Sha256::digest(b"helm");
        let sig = a
            .sign(rsa::Pkcs1v15Sign::new_unprefixed(), &digest)
            .unwrap();
        assert!(
            a.to_public_key()
                .verify(rsa::Pkcs1v15Sign::new_unprefixed(), &digest, &sig)
                .is_ok()
        );
        let pem = key_pem(&Key::Rsa(a.clone())).unwrap();
        let Ok(Key::Rsa(back)) = parse_key_pem(&pem) else {
            panic!("PEM does not parse back");
        };
        assert_eq!(back.n(), a.n());
    }
}
