//! SOPS-encrypted objects, prepared before the rules run. kustomize-controller decrypts every
//! object carrying SOPS metadata when the Flux Kustomization sets
//! `spec.decryption.provider: sops`, and what it applies has no `sops:` block (the decryptor
//! returns the plain document). The rules must judge what reaches the API server, so the
//! pipeline drops the block (`strip_decrypted`) before they run.
//!
//! Without `decryption`, kustomize-controller refuses an encrypted Secret ("is SOPS
//! encrypted, configuring decryption is required"): there the block stays, and a rule may
//! say so. Objects no app deploys are decrypted by whatever applies them (`sops -d`, ksops,
//! helm-secrets), so they lose the block too. `ENC[…]` values stay opaque: no rule can read
//! a quantity, an empty value or a name out of ciphertext.

use super::{AppKind, Model};
use crate::yaml::{Node, Value};

/// A `sops:` block as SOPS writes it: a map with its message authentication code and
/// timestamp (not any field that happens to be named `sops`).
fn is_sops_metadata(node: &Node) -> bool {
    node.get("mac").is_some() && node.get("lastmodified").is_some()
}

/// Does the app that deploys objects decrypt them before applying?
fn decrypts(model: &Model, app: usize) -> bool {
    let Some(app) = model.apps.get(app) else {
        return false;
    };
    if app.kind == AppKind::Standalone {
        return true;
    }
    app.flux.as_ref().is_some_and(|f| {
        f.decl
            .root
            .get_path(&["spec", "decryption", "provider"])
            .and_then(Node::as_str)
            == Some("sops")
    })
}

/// Drop the `sops:` block of every object its app decrypts.
pub fn strip_decrypted(model: &mut Model) {
    let decrypting: Vec<bool> = (0..model.apps.len()).map(|i| decrypts(model, i)).collect();
    for mo in &mut model.objects {
        if !decrypting.get(mo.app).copied().unwrap_or(false) {
            continue;
        }
        if let Value::Map(entries) = &mut mo.object.root.value {
            entries.retain(|e| !(e.key.as_str() == Some("sops") && is_sops_metadata(&e.value)));
        }
    }
}

/// A SOPS ciphertext (`ENC[AES256_GCM,data:…,type:str]`): its plain value is unknown here.
pub fn is_ciphertext(node: &Node) -> bool {
    node.as_str()
        .is_some_and(|s| s.starts_with("ENC[") && s.ends_with(']'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;
    use crate::yaml::{Limits, parse_str};

    fn node(text: &str) -> Node {
        let parsed = parse_str(text, FileId::default(), &Limits::default());
        parsed
            .docs
            .into_iter()
            .next()
            .map(|d| d.root)
            .unwrap_or_else(|| Node::string("", Default::default()))
    }

    #[test]
    fn sops_metadata_and_ciphertext() {
        let meta =
            node("mac: ENC[AES256_GCM,data:x,type:str]\nlastmodified: \"2024-01-01T00:00:00Z\"\n");
        assert!(is_sops_metadata(&meta));
        assert!(!is_sops_metadata(&node("enabled: true\n")));
        assert!(is_ciphertext(&node(
            "ENC[AES256_GCM,data:abc,iv:x,tag:y,type:str]"
        )));
        assert!(!is_ciphertext(&node("ENCODED")));
    }
}
