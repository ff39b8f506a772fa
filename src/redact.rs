//! Secret values never leave the process: findings, diffs and PR comments are read by people
//! (and CI logs by anyone who can see the pull request), while a rendered Secret may carry a
//! real password from a values file. Like Argo CD, which masks Secret data in its diffs, we
//! replace every value of a Secret's `data` and `stringData` with a short fingerprint: a
//! change is still visible, the value is not.

use crate::finding::Finding;
use crate::gitops::Model;
use crate::yaml::{Node, Value};
use sha2::{Digest, Sha256};

/// Shorter values are not scrubbed from free text: `true` or `80` would be redacted
/// everywhere, and a secret that short protects nothing anyway.
const MIN_SCRUBBED_CHARS: usize = 6;

/// What a Secret value is shown as: a fingerprint, so that a diff still shows it changed.
pub fn masked(value: &str) -> String {
    let digest = Sha256::digest(value.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("<redacted sha256:{hex}>")
}

fn is_secret(root: &Node) -> bool {
    root.get("kind").and_then(Node::as_str) == Some("Secret")
        && root
            .get("apiVersion")
            .and_then(Node::as_str)
            .is_some_and(|v| v == "v1")
}

fn secret_fields(root: &Node) -> impl Iterator<Item = &Node> {
    ["data", "stringData"]
        .into_iter()
        .filter_map(|k| root.get(k))
        .flat_map(|m| m.as_map().unwrap_or_default())
        .map(|e| &e.value)
}

/// A copy of `root` whose Secret values are masked (other objects are returned as they are).
pub fn mask_secret(root: &Node) -> Node {
    let mut out = root.clone();
    if !is_secret(root) {
        return out;
    }
    if let Value::Map(entries) = &mut out.value {
        for e in entries.iter_mut() {
            if !matches!(e.key.as_str(), Some("data" | "stringData")) {
                continue;
            }
            if let Value::Map(values) = &mut e.value.value {
                for v in values.iter_mut() {
                    if let Some(text) = v.value.scalar_text() {
                        let span = v.value.span;
                        v.value = Node::string(masked(&text), span);
                    }
                }
            }
        }
    }
    out
}

/// Every Secret value the model holds, as written and (for `data`) decoded, longest first so
/// that a value containing another is scrubbed whole.
pub fn secret_values(model: &Model) -> Vec<String> {
    let mut values = Vec::new();
    for mo in &model.objects {
        let root = &mo.object.root;
        if !is_secret(root) {
            continue;
        }
        for v in secret_fields(root) {
            let Some(text) = v.scalar_text() else {
                continue;
            };
            let decoded = crate::render::gotmpl::funcs::base64_decode(text.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok());
            // A Secret holding Helm values (a HelmRelease `valuesFrom`) reaches rendered
            // objects one value at a time: each of its values is a secret too.
            for t in std::iter::once(&text).chain(decoded.as_ref()) {
                values.extend(yaml_leaves(t));
            }
            values.push(text);
            values.extend(decoded);
        }
    }
    values.retain(|v| v.trim().chars().count() >= MIN_SCRUBBED_CHARS);
    values.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    values.dedup();
    values
}

/// The scalar values of a Secret value that is a YAML mapping or list (Helm values).
fn yaml_leaves(text: &str) -> Vec<String> {
    if !text.contains(['\n', ':']) {
        return Vec::new();
    }
    let parsed = crate::yaml::parse_str(text, Default::default(), &Default::default());
    let mut out = Vec::new();
    for doc in parsed.docs {
        if doc.root.as_map().is_none() && doc.root.as_seq().is_none() {
            continue;
        }
        doc.root.walk(|_, n| {
            if n.as_map().is_none() && n.as_seq().is_none() {
                out.extend(n.scalar_text());
            }
        });
    }
    out
}

/// Names a person needs to read a finding: object names, namespaces, kinds, app names, label
/// keys and values, and every map key of every object. A secret value that happens to be
/// spelled inside one of them (`onepassword` in `onepassword-connect-token`) is not masked
/// there: the name is public in Git, and masking it makes the finding unreadable.
pub fn public_words(model: &Model) -> std::collections::HashSet<String> {
    let mut words = std::collections::HashSet::new();
    for app in &model.apps {
        words.insert(app.name.clone());
    }
    for mo in &model.objects {
        let o = &mo.object;
        words.insert(o.name.clone());
        words.insert(o.kind.clone());
        words.insert(mo.namespace.clone());
        if let Some(labels) = o
            .root
            .get_path(&["metadata", "labels"])
            .and_then(Node::as_map)
        {
            for e in labels {
                words.extend(e.value.scalar_text());
            }
        }
        o.root.walk(|_, n| {
            for e in n.as_map().unwrap_or_default() {
                words.insert(e.key.key_str().into_owned());
            }
        });
    }
    words.retain(|w| !w.is_empty());
    words
}

/// Characters of one identifier in a message (`Secret/ns/name`, `app.kubernetes.io/name`).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':')
}

/// Is the occurrence `start..end` of a secret inside a public word of `text`?
fn inside_public_word(
    text: &str,
    start: usize,
    end: usize,
    public: &std::collections::HashSet<String>,
) -> bool {
    let left = text[..start]
        .char_indices()
        .rev()
        .find(|(_, c)| !is_word_char(*c))
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let right = text[end..]
        .char_indices()
        .find(|(_, c)| !is_word_char(*c))
        .map(|(i, _)| end + i)
        .unwrap_or(text.len());
    let token = &text[left..right];
    if public.contains(token) {
        return true;
    }
    // `Kind/namespace/name`, `key: value`: one of the parts around the occurrence.
    let mut at = left;
    for part in token.split(['/', ':']) {
        let (p_start, p_end) = (at, at + part.len());
        at = p_end + 1;
        if p_start <= start && end <= p_end && public.contains(part) {
            return true;
        }
    }
    false
}

/// `text` with every secret value replaced by its mask, except where it is spelled inside a
/// public name (see [`public_words`]).
pub fn scrub_keeping(
    text: &str,
    secrets: &[String],
    public: &std::collections::HashSet<String>,
) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if !out.contains(s.as_str()) {
            continue;
        }
        let mut next = String::with_capacity(out.len());
        let mut last = 0;
        for (i, _) in out.match_indices(s.as_str()) {
            if i < last {
                continue;
            }
            next.push_str(&out[last..i]);
            if inside_public_word(&out, i, i + s.len(), public) {
                next.push_str(s);
            } else {
                next.push_str(&masked(s));
            }
            last = i + s.len();
        }
        next.push_str(&out[last..]);
        out = next;
    }
    out
}

/// `text` with every secret value replaced by its mask.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    scrub_keeping(text, secrets, &Default::default())
}

/// Scrub the texts of findings a person will read (message, labels, help); names, keys and
/// labels stay as written.
pub fn scrub_findings(
    findings: &mut [Finding],
    secrets: &[String],
    public: &std::collections::HashSet<String>,
) {
    if secrets.is_empty() {
        return;
    }
    for f in findings {
        f.message = scrub_keeping(&f.message, secrets, public);
        f.primary.text = scrub_keeping(&f.primary.text, secrets, public);
        for l in &mut f.secondary {
            l.text = scrub_keeping(&l.text, secrets, public);
        }
        if let Some(h) = &f.help {
            f.help = Some(scrub_keeping(h, secrets, public));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::first_doc as node;

    #[test]
    fn secret_values_are_masked_and_other_fields_kept() {
        let secret = node(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: hunter2-long\ndata:\n  token: c2VjcmV0LXRva2Vu\n",
        );
        let text = crate::yaml::emit::to_yaml(&mask_secret(&secret));
        assert!(!text.contains("hunter2-long"), "{text}");
        assert!(!text.contains("c2VjcmV0LXRva2Vu"), "{text}");
        assert!(text.contains("name: db"), "{text}");
        assert!(text.contains(&masked("hunter2-long")), "{text}");
        // A ConfigMap is not a Secret.
        let cm = node("apiVersion: v1\nkind: ConfigMap\ndata:\n  password: visible\n");
        assert!(crate::yaml::emit::to_yaml(&mask_secret(&cm)).contains("visible"));
    }

    #[test]
    fn values_inside_a_secret_holding_helm_values_are_scrubbed_one_by_one() {
        let mut leaves =
            yaml_leaves("db:\n  password: hunter2-long\n  port: 5432\nhosts: [a.example.com]\n");
        leaves.sort();
        assert_eq!(leaves, ["5432", "a.example.com", "hunter2-long"]);
        assert!(yaml_leaves("just-a-token").is_empty());
    }

    #[test]
    fn names_keys_and_labels_are_never_masked() {
        let secrets = vec!["onepassword".to_string(), "hunter2-long".to_string()];
        let public: std::collections::HashSet<String> =
            ["onepassword-connect-token", "external-secrets", "Secret"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let out = scrub_keeping(
            "Secret/external-secrets/onepassword-connect-token holds onepassword and hunter2-long",
            &secrets,
            &public,
        );
        assert!(
            out.starts_with("Secret/external-secrets/onepassword-connect-token holds <redacted"),
            "{out}"
        );
        assert!(!out.contains(" onepassword "), "{out}");
        assert!(!out.contains("hunter2-long"), "{out}");
    }

    #[test]
    fn scrub_replaces_longest_values_first() {
        let secrets = vec!["hunter2-long".to_string(), "hunter2".to_string()];
        let out = scrub("value hunter2-long and hunter2", &secrets);
        assert!(!out.contains("hunter2"), "{out}");
        assert!(out.contains(&masked("hunter2-long")));
    }
}
