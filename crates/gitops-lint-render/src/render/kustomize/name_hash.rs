//! kustomize's content hash of a generated ConfigMap or Secret: the name suffix
//! (`web-config-7h9k2m6bt4`) that changes whenever the data does.

use super::resource::Resource;
use super::tree;
use crate::yaml::{Entry, Node};
use sha2::{Digest, Sha256};

/// Go's `json.Marshal` string escaping (HTML-safe, as the hasher sees it).
fn go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A data field as kustomize's hasher encodes it: a missing field is the empty string, a
/// map (empty too) is its sorted JSON object.
fn go_json_string_map(pairs: Option<Vec<(String, String)>>, out: &mut String) {
    let Some(mut pairs) = pairs else {
        out.push_str("\"\"");
        return;
    };
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    out.push('{');
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        go_json_string(k, out);
        out.push(':');
        go_json_string(v, out);
    }
    out.push('}');
}

/// The string pairs of a map field; `None` when the field is missing or not a map.
fn string_pairs_of(n: Option<&Node>) -> Option<Vec<(String, String)>> {
    let m = n.and_then(Node::as_map)?;
    Some(
        m.iter()
            .map(|e: &Entry| {
                (
                    e.key.key_str().into_owned(),
                    tree::text(&e.value).unwrap_or_default(),
                )
            })
            .collect(),
    )
}

/// kustomize's content hash of a ConfigMap or Secret (10 characters, some letters swapped
/// so the suffix never looks like a number or a bad word).
pub fn hash_suffix(r: &Resource) -> String {
    let kind = r.kind();
    let mut enc = String::new();
    let data = string_pairs_of(r.root.get("data"));
    if kind == "ConfigMap" {
        let bin = string_pairs_of(r.root.get("binaryData"));
        enc.push('{');
        if bin.is_some() {
            enc.push_str("\"binaryData\":");
            go_json_string_map(bin, &mut enc);
            enc.push(',');
        }
        enc.push_str("\"data\":");
        go_json_string_map(data, &mut enc);
        enc.push_str(",\"kind\":\"ConfigMap\",\"name\":");
        go_json_string("", &mut enc);
        enc.push('}');
    } else if kind == "Secret" {
        let sd = string_pairs_of(r.root.get("stringData"));
        enc.push_str("{\"data\":");
        go_json_string_map(data, &mut enc);
        enc.push_str(",\"kind\":\"Secret\",\"name\":");
        go_json_string("", &mut enc);
        if sd.is_some() {
            enc.push_str(",\"stringData\":");
            go_json_string_map(sd, &mut enc);
        }
        enc.push_str(",\"type\":");
        go_json_string(
            &r.root.get("type").and_then(tree::text).unwrap_or_default(),
            &mut enc,
        );
        enc.push('}');
    } else {
        enc = serde_json::to_string(&r.root.to_json()).unwrap_or_default();
    }
    let digest = Sha256::digest(enc.as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    hex.chars()
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            c => c,
        })
        .collect()
}
