//! Secrets the repository makes without writing them out, as Flux `postBuild.substituteFrom`
//! and HelmRelease `valuesFrom` read them: the Secret an ExternalSecret
//! (https://external-secrets.io/latest/api/externalsecret/) or a SealedSecret
//! (https://github.com/bitnami-labs/sealed-secrets) makes in the cluster, and a SOPS-encrypted
//! Secret (https://fluxcd.io/flux/guides/mozilla-sops/). Their keys are known here, their values
//! are not.
//!
//! An unknown value is written as SOPS writes ciphertext, `ENC[…]`: every reader that already
//! treats ciphertext as opaque (`sops::is_ciphertext`: value rules, substitution, `valuesFrom`)
//! treats a made value alike, so there is one representation of "a value only the cluster
//! knows".

use super::model::flux::SourceKeys;
use crate::object::Object;
use crate::yaml::{Entry, Node, Value};

/// Does an object of this kind make a Secret in the cluster?
pub fn makes_secret(api_version: &str, kind: &str) -> bool {
    let group = api_version.split_once('/').map(|(g, _)| g).unwrap_or("");
    matches!(
        (group, kind),
        ("external-secrets.io", "ExternalSecret") | ("bitnami.com", "SealedSecret")
    )
}

/// The Secret one object makes: its name, the nodes naming its keys, and whether keys
/// this object does not list may be in it too.
#[derive(Debug)]
struct Made {
    name: String,
    keys: Vec<Node>,
    open: bool,
}

fn made_by(o: &Object) -> Option<Made> {
    if !makes_secret(&o.api_version, &o.kind) {
        return None;
    }
    let spec = o.root.get("spec")?;
    if o.kind == "ExternalSecret" {
        external_secret(o, spec)
    } else {
        Some(sealed_secret(o, spec))
    }
}

/// external-secrets' reconciler: the target is `spec.target.name` (default: the
/// ExternalSecret's name) in its namespace. Without a template the Secret holds the fetched
/// data (`spec.data[].secretKey`, and whatever `spec.dataFrom` finds); a template with `data`
/// or `templateFrom` replaces it (`mergePolicy: Merge` keeps the fetched keys too); a template
/// with neither falls back to the fetched data. `creationPolicy: None` makes no Secret, and
/// `Merge` writes into a Secret made elsewhere, whose other keys are unknown.
fn external_secret(o: &Object, spec: &Node) -> Option<Made> {
    let target = spec.get("target");
    let creation = target
        .and_then(|t| t.get_str("creationPolicy"))
        .unwrap_or("Owner");
    if creation == "None" {
        return None;
    }
    let name = target
        .and_then(|t| t.get_str("name"))
        .filter(|n| !n.is_empty())
        .unwrap_or(&o.name)
        .to_string();
    let fetched: Vec<Node> = seq(spec.get("data"))
        .iter()
        .filter_map(|d| d.get("secretKey").cloned())
        .collect();
    let fetched_open = !seq(spec.get("dataFrom")).is_empty();
    let template = target.and_then(|t| t.get("template"));
    let template_keys = map_keys(template.and_then(|t| t.get("data")));
    let template_from = !seq(template.and_then(|t| t.get("templateFrom"))).is_empty();
    let (mut keys, mut open) = if template_keys.is_empty() && !template_from {
        (fetched, fetched_open)
    } else if template.and_then(|t| t.get_str("mergePolicy")) == Some("Merge") {
        let mut keys = template_keys;
        keys.extend(fetched);
        (keys, template_from || fetched_open)
    } else {
        (template_keys, template_from)
    };
    open |= creation == "Merge";
    // A key both templated and fetched is one key: the template's line names it.
    let mut seen = std::collections::BTreeSet::new();
    keys.retain(|k| seen.insert(k.key_str().into_owned()));
    Some(Made { name, keys, open })
}

/// The sealed-secrets controller's unseal: the Secret takes the SealedSecret's own name and
/// namespace (whatever the template's metadata says: the ciphertext is bound to them), with
/// the `encryptedData` keys and the `spec.template.data` keys (a `null` there removes a key).
/// The deprecated `spec.data` holds a whole encrypted Secret, keys included.
fn sealed_secret(o: &Object, spec: &Node) -> Made {
    let mut keys = map_keys(spec.get("encryptedData"));
    if let Some(entries) = spec.get_path(&["template", "data"]).and_then(Node::as_map) {
        for e in entries {
            let key = e.key.key_str();
            keys.retain(|k| k.key_str() != key);
            if !e.value.is_null() {
                keys.push(e.key.clone());
            }
        }
    }
    let open = spec.get("data").is_some_and(|d| !d.is_null()) && keys.is_empty();
    Made {
        name: o.name.clone(),
        keys,
        open,
    }
}

fn seq(n: Option<&Node>) -> &[Node] {
    n.and_then(Node::as_seq).unwrap_or_default()
}

fn map_keys(n: Option<&Node>) -> Vec<Node> {
    n.and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .map(|e| e.key.clone())
        .collect()
}

/// What a made value is: unknown here, written as SOPS writes ciphertext.
fn unknown_value(maker: &Object) -> String {
    format!("ENC[made by {} {}]", maker.kind, maker.name)
}

/// The Secrets the makers among `catalog` make, as a Flux reference reads them: named and
/// namespaced as the controller makes them, owned by their maker (`ownerReferences`, as both
/// controllers set it), each key under `stringData` with an unknown value. Every node points
/// at the maker's lines, so a reference resolves to the maker nearest the reading file, and
/// a value read from it names the line of its key.
pub(super) fn made_secrets(catalog: &[Object]) -> Vec<Object> {
    catalog
        .iter()
        .filter_map(|maker| made_by(maker).map(|made| secret_object(maker, made)))
        .collect()
}

fn secret_object(maker: &Object, made: Made) -> Object {
    let at = maker.span();
    let text = |s: &str| Node::string(s, at);
    let map = |entries: Vec<(&str, Node)>| {
        Node::new(
            Value::Map(
                entries
                    .into_iter()
                    .map(|(k, value)| Entry {
                        key: text(k),
                        value,
                    })
                    .collect(),
            ),
            at,
        )
    };
    let owner = map(vec![
        ("apiVersion", text(&maker.api_version)),
        ("kind", text(&maker.kind)),
        ("name", text(&maker.name)),
        ("controller", Node::new(Value::Bool(true), at)),
    ]);
    let mut metadata = vec![("name", text(&made.name))];
    if let Some(ns) = &maker.namespace {
        metadata.push(("namespace", text(ns)));
    }
    metadata.push(("ownerReferences", Node::new(Value::Seq(vec![owner]), at)));
    let unknown = unknown_value(maker);
    let string_data = made
        .keys
        .into_iter()
        .map(|key| Entry {
            value: Node::string(unknown.clone(), key.span),
            key,
        })
        .collect();
    let root = map(vec![
        ("apiVersion", text("v1")),
        ("kind", text("Secret")),
        ("metadata", map(metadata)),
        ("stringData", Node::new(Value::Map(string_data), at)),
    ]);
    Object {
        api_version: "v1".into(),
        kind: "Secret".into(),
        name: made.name,
        namespace: maker.namespace.clone(),
        root,
    }
}

/// What is known of the keys of `found`, the object a reference resolved to (`None`: not in
/// the repository). `find` looks an object up by kind and name in the reference's
/// namespace: a made Secret's maker.
pub(super) fn source_keys(
    found: Option<&Object>,
    find: &dyn Fn(&str, &str) -> Option<Object>,
) -> SourceKeys {
    let Some(o) = found else {
        return SourceKeys::Missing;
    };
    if let Some(maker) = controller(o).and_then(|(kind, name)| find(&kind, &name))
        && let Some(made) = made_by(&maker).filter(|m| m.name == o.name)
    {
        let how = format!("made by {} {}", maker.kind, maker.name);
        return if made.open {
            SourceKeys::Open { how }
        } else {
            SourceKeys::Closed {
                how,
                keys: made.keys.iter().map(|k| k.key_str().into_owned()).collect(),
            }
        };
    }
    if o.kind == "Secret" && is_encrypted(o) {
        return SourceKeys::Closed {
            how: "SOPS-encrypted".into(),
            keys: ["data", "stringData"]
                .iter()
                .filter_map(|k| o.root.get(k).and_then(Node::as_map))
                .flatten()
                .map(|e| e.key.key_str().into_owned())
                .collect(),
        };
    }
    SourceKeys::Written
}

/// The controlling owner a made Secret names (kind, name).
fn controller(o: &Object) -> Option<(String, String)> {
    let owners = o.metadata()?.get("ownerReferences")?.as_seq()?;
    let owner = owners
        .iter()
        .find(|r| r.get("controller").and_then(Node::as_bool) == Some(true))?;
    Some((
        owner.get_str("kind")?.to_string(),
        owner.get_str("name")?.to_string(),
    ))
}

/// A Secret SOPS encrypted: its metadata block, or ciphertext values (SOPS never encrypts
/// keys, so they stay readable).
fn is_encrypted(o: &Object) -> bool {
    o.root.get("sops").is_some()
        || ["data", "stringData"].iter().any(|k| {
            o.root
                .get(k)
                .and_then(Node::as_map)
                .unwrap_or_default()
                .iter()
                .any(|e| super::sops::is_ciphertext(&e.value))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceMap;
    use crate::yaml::{Limits, parse_str};

    fn objects(text: &str) -> Vec<Object> {
        let map = SourceMap::new();
        let id = map.add_text("apps/db/secrets.yaml", text.to_string());
        parse_str(text, id, &Limits::default())
            .docs
            .into_iter()
            .filter_map(|d| Object::from_node(d.root))
            .collect()
    }

    /// The made Secret's name and keys, and what a reference to it knows.
    fn made(text: &str) -> Vec<(String, Vec<String>, SourceKeys)> {
        let catalog = objects(text);
        made_secrets(&catalog)
            .iter()
            .map(|s| {
                let find = |kind: &str, name: &str| {
                    catalog
                        .iter()
                        .find(|o| o.kind == kind && o.name == name)
                        .cloned()
                };
                let keys = s
                    .root
                    .get("stringData")
                    .and_then(Node::as_map)
                    .unwrap_or_default()
                    .iter()
                    .map(|e| {
                        format!(
                            "{}={}",
                            e.key.key_str(),
                            e.value.scalar_text().unwrap_or_default()
                        )
                    })
                    .collect();
                (s.name.clone(), keys, source_keys(Some(s), &find))
            })
            .collect()
    }

    fn closed(how: &str, keys: &[&str]) -> SourceKeys {
        SourceKeys::Closed {
            how: how.into(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
        }
    }

    #[test]
    fn an_external_secret_makes_its_target_with_its_data_keys() {
        let got = made(
            "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: db, namespace: shop}\nspec:\n  target: {name: db-credentials}\n  data:\n    - secretKey: DB_USER\n      remoteRef: {key: db/user}\n    - secretKey: DB_PASSWORD\n      remoteRef: {key: db/password}\n",
        );
        assert_eq!(
            got,
            [(
                "db-credentials".to_string(),
                vec![
                    "DB_USER=ENC[made by ExternalSecret db]".to_string(),
                    "DB_PASSWORD=ENC[made by ExternalSecret db]".to_string()
                ],
                closed("made by ExternalSecret db", &["DB_USER", "DB_PASSWORD"])
            )]
        );
    }

    #[test]
    fn the_target_defaults_to_the_external_secret_name() {
        let got = made(
            "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata: {name: api-token}\nspec:\n  data:\n    - secretKey: TOKEN\n      remoteRef: {key: api}\n",
        );
        assert_eq!(got[0].0, "api-token");
        assert_eq!(
            got[0].2,
            closed("made by ExternalSecret api-token", &["TOKEN"])
        );
    }

    #[test]
    fn a_template_replaces_the_fetched_keys_unless_it_merges() {
        let es = |merge: &str| {
            format!(
                "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {{name: db}}\nspec:\n  target:\n    template:\n      {merge}\n      data:\n        DATABASE_URL: postgres://{{{{ .user }}}}@db\n  data:\n    - secretKey: user\n      remoteRef: {{key: db/user}}\n"
            )
        };
        assert_eq!(
            made(&es("engineVersion: v2"))[0].2,
            closed("made by ExternalSecret db", &["DATABASE_URL"])
        );
        assert_eq!(
            made(&es("mergePolicy: Merge"))[0].2,
            closed("made by ExternalSecret db", &["DATABASE_URL", "user"])
        );
        // A template with no data keeps what was fetched.
        let bare = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: db}\nspec:\n  target:\n    template: {type: kubernetes.io/basic-auth}\n  data:\n    - secretKey: username\n      remoteRef: {key: db/user}\n";
        assert_eq!(
            made(bare)[0].2,
            closed("made by ExternalSecret db", &["username"])
        );
    }

    #[test]
    fn data_from_template_from_and_merging_into_a_secret_open_the_key_set() {
        let open = SourceKeys::Open {
            how: "made by ExternalSecret app".into(),
        };
        let data_from = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: app}\nspec:\n  dataFrom:\n    - extract: {key: app}\n";
        assert_eq!(made(data_from)[0].2, open);
        let template_from = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: app}\nspec:\n  target:\n    template:\n      templateFrom:\n        - configMap: {name: tpl, items: [{key: config.yaml}]}\n  data:\n    - secretKey: user\n      remoteRef: {key: u}\n";
        assert_eq!(made(template_from)[0].2, open);
        let merged = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: app}\nspec:\n  target: {creationPolicy: Merge}\n  data:\n    - secretKey: user\n      remoteRef: {key: u}\n";
        assert_eq!(made(merged)[0].2, open);
        // With a template that has data and no merge, dataFrom only feeds the template.
        let templated = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: app}\nspec:\n  target:\n    template:\n      data: {url: 'https://{{ .host }}'}\n  dataFrom:\n    - extract: {key: app}\n";
        assert_eq!(
            made(templated)[0].2,
            closed("made by ExternalSecret app", &["url"])
        );
    }

    #[test]
    fn creation_policy_none_makes_no_secret() {
        let text = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: app}\nspec:\n  target: {creationPolicy: None}\n  data:\n    - secretKey: user\n      remoteRef: {key: u}\n";
        assert!(made(text).is_empty());
    }

    #[test]
    fn a_sealed_secret_makes_a_secret_of_its_own_name() {
        let got = made(
            "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata: {name: smtp, namespace: mail}\nspec:\n  encryptedData:\n    SMTP_PASSWORD: AgBy3i4OJSWK+PiTySYZZA9rO33H\n    OLD_KEY: AgAaX9g5h2kL+8mN4oP6qR7s3T9v\n  template:\n    metadata: {name: ignored}\n    data:\n      SMTP_URL: 'smtp://mailer:{{ .SMTP_PASSWORD }}@smtp.example.com'\n      OLD_KEY: null\n",
        );
        assert_eq!(got[0].0, "smtp");
        assert_eq!(
            got[0].2,
            closed("made by SealedSecret smtp", &["SMTP_PASSWORD", "SMTP_URL"])
        );
    }

    #[test]
    fn a_sops_secret_has_known_keys_and_a_clear_one_is_written() {
        let catalog = objects(
            "apiVersion: v1\nkind: Secret\nmetadata: {name: cluster-secrets}\nstringData:\n  SECRET_DOMAIN: ENC[AES256_GCM,data:abc=,iv:x,tag:y,type:str]\nsops:\n  mac: ENC[AES256_GCM,data:m,type:str]\n  lastmodified: '2024-01-01T00:00:00Z'\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-settings}\ndata: {CLUSTER: prod}\n",
        );
        let none = |_: &str, _: &str| None;
        assert_eq!(
            source_keys(catalog.first(), &none),
            closed("SOPS-encrypted", &["SECRET_DOMAIN"])
        );
        assert_eq!(source_keys(catalog.get(1), &none), SourceKeys::Written);
        assert_eq!(source_keys(None, &none), SourceKeys::Missing);
        assert!(made_secrets(&catalog).is_empty());
    }

    #[test]
    fn a_made_value_is_opaque_like_ciphertext_and_keys_keep_their_lines() {
        let catalog = objects(
            "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: db}\nspec:\n  data:\n    - secretKey: DB_USER\n      remoteRef: {key: db/user}\n",
        );
        let secret = &made_secrets(&catalog)[0];
        let value = secret.root.get_path(&["stringData", "DB_USER"]);
        assert!(value.is_some_and(crate::gitops::sops::is_ciphertext));
        // The value points at the line naming the key, `- secretKey: DB_USER`.
        let named = catalog[0]
            .root
            .get_path(&["spec", "data"])
            .and_then(|d| d.as_seq())
            .and_then(|d| d.first())
            .and_then(|d| d.get("secretKey"))
            .map(|n| n.span);
        assert_eq!(value.map(|v| v.span), named);
    }
}
