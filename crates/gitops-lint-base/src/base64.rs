//! Standard base64 (RFC 4648 §4, `+/`, padded), the one encoder of the project: Kubernetes
//! Secret data, kustomize generators, Helm's `.Files.AsSecrets` and Sprig's `b64enc`,
//! registry `Authorization: Basic` headers. Decoders stay with their readers, whose inputs
//! differ on purpose: Go's strict `StdEncoding` (Sprig `b64dec`), what Kubernetes accepts in
//! Secret data, Docker's config `auth`.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `bytes` in standard base64 with `=` padding.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let byte = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = (byte(0) << 16) | (byte(1) << 8) | byte(2);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::encode;

    /// RFC 4648 §10's test vectors, and the two characters only standard base64 uses.
    #[test]
    fn encodes_the_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), coded);
        }
        assert_eq!(encode(&[0xfb, 0xff]), "+/8=");
    }
}
