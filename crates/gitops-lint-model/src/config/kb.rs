//! The shipped knowledge base of writers: what well-known operators, webhooks and
//! controllers write on objects a repository declares, one YAML file per operator under
//! `kb/writers/` (embedded here), each in the `platform.owned-fields` schema plus how a
//! repository shows that the operator runs (`deployed-by`). `schema/kb-writer.schema.json`
//! describes the format; the ownership engine decides which entries apply to a repository.

use super::{OwnedField, parse_owned_field, schema, strings_at, unknown_keys};
use crate::source::{FileId, Span};
use crate::yaml::Node;
use std::sync::OnceLock;

/// One operator of the knowledge base.
#[derive(Debug)]
pub struct Operator {
    /// `keda`, as `profile.operators` names it.
    pub id: String,
    /// How findings name it: "the KEDA operator".
    pub name: String,
    pub link: String,
    /// The file under `kb/writers/`.
    pub file: &'static str,
    /// A CRD of one of these groups shows the repo deploys it.
    pub crd_groups: Vec<String>,
    /// So does a Helm chart of one of these names…
    pub charts: Vec<String>,
    /// …or a container image of one of these repositories.
    pub images: Vec<String>,
    pub fields: Vec<KbField>,
}

/// One field an operator writes.
#[derive(Debug)]
pub struct KbField {
    pub fact: OwnedField,
    /// The objects the selector names exist only where the operator runs (its API group,
    /// the annotation that asks it): the entry applies without deployment evidence.
    pub self_evident: bool,
}

/// The files, by name (a test holds this list equal to the folder).
const FILES: &[(&str, &str)] = &[
    (
        "aws-load-balancer-controller.yaml",
        include_str!("../../kb/writers/aws-load-balancer-controller.yaml"),
    ),
    (
        "cert-manager.yaml",
        include_str!("../../kb/writers/cert-manager.yaml"),
    ),
    (
        "cloudnative-pg.yaml",
        include_str!("../../kb/writers/cloudnative-pg.yaml"),
    ),
    ("dapr.yaml", include_str!("../../kb/writers/dapr.yaml")),
    ("eck.yaml", include_str!("../../kb/writers/eck.yaml")),
    (
        "external-secrets.yaml",
        include_str!("../../kb/writers/external-secrets.yaml"),
    ),
    (
        "gatekeeper.yaml",
        include_str!("../../kb/writers/gatekeeper.yaml"),
    ),
    ("istio.yaml", include_str!("../../kb/writers/istio.yaml")),
    ("keda.yaml", include_str!("../../kb/writers/keda.yaml")),
    (
        "knative.yaml",
        include_str!("../../kb/writers/knative.yaml"),
    ),
    (
        "kyverno.yaml",
        include_str!("../../kb/writers/kyverno.yaml"),
    ),
    (
        "metallb.yaml",
        include_str!("../../kb/writers/metallb.yaml"),
    ),
    (
        "strimzi.yaml",
        include_str!("../../kb/writers/strimzi.yaml"),
    ),
    (
        "vault-agent-injector.yaml",
        include_str!("../../kb/writers/vault-agent-injector.yaml"),
    ),
];

/// Every operator of the knowledge base, in file order.
pub fn catalog() -> &'static [Operator] {
    static CATALOG: OnceLock<Vec<Operator>> = OnceLock::new();
    // The files are part of the binary and a unit test parses each one: a file that does
    // not parse is a build defect, left out here rather than stopping a lint.
    CATALOG.get_or_init(|| {
        FILES
            .iter()
            .filter_map(|(file, text)| parse(file, text).ok())
            .collect()
    })
}

/// The operators' ids (`profile.operators` accepts these).
pub fn ids() -> Vec<&'static str> {
    catalog().iter().map(|o| o.id.as_str()).collect()
}

/// Parse one knowledge-base file.
fn parse(file: &'static str, text: &str) -> Result<Operator, (Span, String)> {
    // Spans of the embedded files never reach a report: findings point at the repo.
    let root = crate::yaml::parse_str(text, FileId(u32::MAX), &Default::default())
        .docs
        .into_iter()
        .next()
        .map(|d| d.root)
        .ok_or((Span::default(), format!("{file}: empty")))?;
    unknown_keys(
        &root,
        &schema::names(schema::KB_WRITER),
        "a knowledge-base file",
    )?;
    let text_of = |k: &str| {
        root.get(k)
            .and_then(Node::scalar_text)
            .ok_or((root.span, format!("{file}: `{k}` is required")))
    };
    let name = text_of("name")?;
    let mut op = Operator {
        id: text_of("operator")?,
        link: text_of("link")?,
        file,
        crd_groups: Vec::new(),
        charts: Vec::new(),
        images: Vec::new(),
        fields: Vec::new(),
        name: name.clone(),
    };
    if let Some(d) = root.get("deployed-by") {
        unknown_keys(d, &schema::names(schema::KB_DEPLOYED_BY), "`deployed-by`")?;
        op.crd_groups = strings_at(d, "crd-groups")?;
        op.charts = strings_at(d, "charts")?;
        op.images = strings_at(d, "images")?;
    }
    let items = root
        .get("owned-fields")
        .and_then(Node::as_seq)
        .ok_or((root.span, format!("{file}: `owned-fields` must be a list")))?;
    for item in items {
        let fact = parse_owned_field(item, schema::KB_OWNED_FIELD, Some(&name))?;
        if fact.link.is_none() {
            return Err((
                item.span,
                format!("{file}: every entry names its upstream `link`"),
            ));
        }
        let self_evident = item
            .get("self-evident")
            .and_then(Node::scalar_text)
            .is_some_and(|v| v == "true");
        op.fields.push(KbField { fact, self_evident });
    }
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_folder_is_embedded_and_parses() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kb/writers");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let embedded: Vec<String> = FILES.iter().map(|(f, _)| f.to_string()).collect();
        assert_eq!(on_disk, embedded, "kb/writers and FILES differ");
        for (file, text) in FILES {
            let op = parse(file, text).unwrap_or_else(|(_, m)| panic!("{file}: {m}"));
            assert_eq!(
                format!("{}.yaml", op.id),
                *file,
                "a file is named by its operator id"
            );
            assert!(op.link.starts_with("https://"), "{file}");
            assert!(!op.fields.is_empty(), "{file}");
        }
        assert_eq!(catalog().len(), FILES.len());
    }

    #[test]
    fn a_file_with_an_unknown_key_or_no_link_is_refused() {
        let bad = "operator: x\nname: x\nlink: https://x\nowned-fields:\n  - path: spec.a\n    colour: red\n    link: https://x\n";
        assert!(parse("x.yaml", bad).is_err());
        let unlinked = "operator: x\nname: x\nlink: https://x\nowned-fields:\n  - path: spec.a\n";
        assert!(parse("x.yaml", unlinked).is_err());
    }
}
