//! Every key of `.gitops-lint.yaml`, declared once: its shape and what it means. The parser
//! takes its key lists from here (an unknown key is an error naming the known ones), the
//! limits their hard ceilings, and [`json_schema`] the JSON Schema published at
//! `schema/gitops-lint.schema.json` for editors (yaml-language-server) and printed by
//! `gitops-lint schema`.

use serde_json::{Value, json};

/// What a key holds.
pub enum Shape {
    /// A mapping with exactly these keys.
    Object(&'static [Key]),
    /// A mapping whose keys are names (a rule id, a cluster) and whose values have a shape.
    MapOf(&'static Shape),
    ListOf(&'static Shape),
    Text,
    /// A string from a fixed set.
    OneOf(&'static [&'static str]),
    /// A rule's setting: a severity, or `off` (which YAML 1.1 readers take for `false`).
    RuleSetting,
    /// A whole number from 1.
    Positive,
    /// A version as written (`2.14`, `v3.1.2`): a string or, unquoted, a number.
    Version,
    /// A label value: a string, or what YAML reads as a number or a boolean.
    Scalar,
    /// `true` or `false`.
    Flag,
}

pub struct Key {
    pub name: &'static str,
    pub shape: Shape,
    pub doc: &'static str,
    pub required: bool,
}

const fn key(name: &'static str, shape: Shape, doc: &'static str) -> Key {
    Key {
        name,
        shape,
        doc,
        required: false,
    }
}

const fn required(name: &'static str, shape: Shape, doc: &'static str) -> Key {
    Key {
        name,
        shape,
        doc,
        required: true,
    }
}

/// A limit: its key, the highest value `--limit` may set, and what it bounds. A repository's
/// configuration may only lower a limit; its default is the engine's.
pub struct Limit {
    pub key: &'static str,
    pub ceiling: u64,
    pub doc: &'static str,
}

pub const LIMITS: &[Limit] = &[
    limit(
        "max-file-bytes",
        256 << 20,
        "larger files are reported, not parsed",
    ),
    limit("max-files", 1_000_000, "files read from the repository"),
    limit("max-depth", 1024, "YAML nesting"),
    limit(
        "max-alias-nodes",
        10_000_000,
        "nodes aliases may copy in one file (alias bombs)",
    ),
    limit("max-documents", 1_000_000, "documents in one file"),
    limit("max-parse-seconds", 600, "wall time of parsing one file"),
    limit(
        "max-template-steps",
        1_000_000_000,
        "template steps of one chart render",
    ),
    limit(
        "max-template-output-bytes",
        512 << 20,
        "output of one chart render",
    ),
    limit("max-range-length", 100_000_000, "iterations of one `range`"),
    limit(
        "max-include-depth",
        10_000,
        "nesting of one named template's include",
    ),
    limit(
        "max-kustomize-resources",
        1_000_000,
        "resources of one kustomize build",
    ),
    limit("max-kustomize-depth", 256, "chain of nested kustomizations"),
    limit(
        "max-render-seconds",
        600,
        "wall time of one render (one chart, one kustomization)",
    ),
    limit(
        "max-render-memory-bytes",
        4 << 30,
        "values one chart render may create",
    ),
    limit(
        "max-apps",
        1_000_000,
        "Applications app-of-apps and ApplicationSets create in total",
    ),
    limit(
        "max-check-cost",
        100_000_000,
        "cost units of one check expression on one object",
    ),
    limit(
        "max-checks-cost",
        10_000_000_000,
        "cost units of all checks in one lint",
    ),
];

const fn limit(key: &'static str, ceiling: u64, doc: &'static str) -> Limit {
    Limit { key, ceiling, doc }
}

/// The hard ceiling of a limit (0 for an unknown key).
pub fn ceiling(name: &str) -> u64 {
    LIMITS
        .iter()
        .find(|l| l.key == name)
        .map_or(0, |l| l.ceiling)
}

pub fn limit_keys() -> Vec<&'static str> {
    LIMITS.iter().map(|l| l.key).collect()
}

/// The names of a mapping's keys, for the parser's unknown-key check.
pub fn names(keys: &[Key]) -> Vec<&'static str> {
    keys.iter().map(|k| k.name).collect()
}

pub const TOP: &[Key] = &[
    key(
        "rules",
        Shape::MapOf(&Shape::RuleSetting),
        "Severity per rule or check id, or `off`.",
    ),
    key(
        "exclude",
        Shape::ListOf(&Shape::Text),
        "Paths not read (globs, relative to the repository).",
    ),
    key(
        "ignore",
        Shape::ListOf(&Shape::Object(IGNORE)),
        "Findings of one rule on one object you cannot annotate (third-party chart output).",
    ),
    key(
        "repo-urls",
        Shape::ListOf(&Shape::Text),
        "URLs that mean \"this repository\" in Application sources.",
    ),
    key(
        "limits",
        Shape::Object(&[]), // filled from LIMITS by the schema
        "Hard limits against hostile input; a repository may only lower them.",
    ),
    key(
        "platform",
        Shape::Object(PLATFORM),
        "What the repository cannot show: writers outside it.",
    ),
    key(
        "profile",
        Shape::Object(PROFILE),
        "The destination cluster: what the repository does not say.",
    ),
    key(
        "checks",
        Shape::ListOf(&Shape::Object(CHECK)),
        "Your own rules: CEL over the rendered objects (docs/checks.md).",
    ),
];

pub const IGNORE: &[Key] = &[
    required("rule", Shape::Text, "The rule or check id."),
    key(
        "object",
        Shape::Text,
        "`Kind/namespace/name` of the object.",
    ),
    required("reason", Shape::Text, "Why the finding does not apply."),
];

pub const PLATFORM: &[Key] = &[key(
    "owned-fields",
    Shape::ListOf(&Shape::Object(OWNED_FIELD)),
    "Fields a writer outside the repository owns (a webhook, a policy, an operator).",
)];

pub const OWNED_FIELD: &[Key] = &[
    required("owner", Shape::Text, "Who writes the field."),
    required(
        "path",
        Shape::Text,
        "The field (`spec.template.spec.containers[*].imagePullPolicy`).",
    ),
    key(
        "value",
        Shape::Scalar,
        "The value it writes; omit when it varies.",
    ),
    key(
        "selector",
        Shape::Object(OWNED_SELECTOR),
        "Which objects; all keys optional.",
    ),
    key("reason", Shape::Text, "Why, for the reader."),
    key("link", Shape::Text, "Where upstream documents the write."),
];

/// The JSON Schema of one knowledge-base file (`schema/kb-writer.schema.json`).
pub fn kb_writer_schema() -> Value {
    document(
        KB_WRITER,
        "gitops-lint knowledge base: one operator's writes",
        "`kb/writers/<operator>.yaml`: what the operator writes and what shows that it runs.",
    )
}

/// A published schema: the object of `keys` with the draft, title and description.
fn document(keys: &[Key], title: &str, description: &str) -> Value {
    let mut root = object(keys);
    if let Some(obj) = root.as_object_mut() {
        obj.insert(
            "$schema".into(),
            json!("http://json-schema.org/draft-07/schema#"),
        );
        obj.insert("title".into(), json!(title));
        obj.insert("description".into(), json!(description));
    }
    root
}

/// One file of the shipped knowledge base of writers (`kb/writers/*.yaml`): an operator,
/// how a repository shows it runs, and what it writes, in the `platform.owned-fields` schema.
pub const KB_WRITER: &[Key] = &[
    required(
        "operator",
        Shape::Text,
        "Its id, as `profile.operators` names it.",
    ),
    required("name", Shape::Text, "How findings name it."),
    required("link", Shape::Text, "Its upstream documentation."),
    key(
        "deployed-by",
        Shape::Object(KB_DEPLOYED_BY),
        "What in a repository shows that it runs.",
    ),
    required(
        "owned-fields",
        Shape::ListOf(&Shape::Object(KB_OWNED_FIELD)),
        "What it writes (`platform.owned-fields`, plus `self-evident`).",
    ),
];

pub const KB_DEPLOYED_BY: &[Key] = &[
    key(
        "crd-groups",
        Shape::ListOf(&Shape::Text),
        "A CustomResourceDefinition of one of these groups.",
    ),
    key(
        "charts",
        Shape::ListOf(&Shape::Text),
        "A Helm chart of one of these names.",
    ),
    key(
        "images",
        Shape::ListOf(&Shape::Text),
        "A container image of one of these repositories (no tag).",
    ),
];

pub const KB_OWNED_FIELD: &[Key] = &[
    key(
        "owner",
        Shape::Text,
        "Who writes the field (default: `name`).",
    ),
    required("path", Shape::Text, "The field."),
    key("value", Shape::Scalar, "The value it writes."),
    key("selector", Shape::Object(OWNED_SELECTOR), "Which objects."),
    key("reason", Shape::Text, "Why, for the reader."),
    required("link", Shape::Text, "Where upstream shows the write."),
    key(
        "self-evident",
        Shape::Flag,
        "The objects the selector names exist only where the operator runs (its API \
         group, its annotation): no deployment evidence needed.",
    ),
];

pub const OWNED_SELECTOR: &[Key] = &[
    key(
        "kinds",
        Shape::ListOf(&Shape::Text),
        "`Kind` or `group/Kind`.",
    ),
    key("names", Shape::ListOf(&Shape::Text), "Globs on the name."),
    key(
        "namespaces",
        Shape::ListOf(&Shape::Text),
        "Globs on the namespace.",
    ),
    key(
        "annotations",
        Shape::ListOf(&Shape::Text),
        "Annotation keys: the object carries one of them.",
    ),
    key(
        "namespace-selector",
        Shape::Object(LABEL_SELECTOR),
        "A label selector on the namespace.",
    ),
    key(
        "object-selector",
        Shape::Object(LABEL_SELECTOR),
        "A label selector on the object.",
    ),
];

pub const LABEL_SELECTOR: &[Key] = &[
    key(
        "matchLabels",
        Shape::MapOf(&Shape::Scalar),
        "Labels that must be equal.",
    ),
    key(
        "matchExpressions",
        Shape::ListOf(&Shape::Object(LABEL_EXPRESSION)),
        "Set-based requirements.",
    ),
];

pub const LABEL_EXPRESSION: &[Key] = &[
    required("key", Shape::Text, "The label key."),
    required(
        "operator",
        Shape::OneOf(&["In", "NotIn", "Exists", "DoesNotExist"]),
        "How the values apply.",
    ),
    key("values", Shape::ListOf(&Shape::Scalar), "The values."),
];

pub const PROFILE: &[Key] = &[
    key(
        "kube-version",
        Shape::Version,
        "`.Capabilities.KubeVersion`, the chart `kubeVersion` check and api-removed.",
    ),
    key(
        "api-versions",
        Shape::ListOf(&Shape::Text),
        "Extra `.Capabilities.APIVersions` (`v1`, `group/version`, `group/version/Kind`).",
    ),
    key(
        "argo-version",
        Shape::Version,
        "The Argo CD release that runs the apps, on every cluster.",
    ),
    key(
        "flux-version",
        Shape::Version,
        "The Flux release that runs the apps, on every cluster.",
    ),
    key(
        "clusters",
        Shape::MapOf(&Shape::Object(PROFILE_CLUSTER)),
        "Releases per cluster (names as `gitops-lint apps` shows them).",
    ),
    key(
        "namespaces",
        Shape::MapOf(&Shape::Object(PROFILE_NAMESPACE)),
        "Labels of namespaces as they are in the cluster.",
    ),
    key(
        "autoscalers",
        Shape::ListOf(&Shape::Object(PROFILE_AUTOSCALER)),
        "HPAs and KEDA ScaledObjects created outside the repository.",
    ),
    key(
        "operators",
        Shape::ListOf(&Shape::Text),
        "Operators the clusters run that the repository does not deploy (ids of the \
         knowledge base, `gitops-lint explain writers`).",
    ),
];

pub const PROFILE_CLUSTER: &[Key] = &[
    key("argo-version", Shape::Version, "The Argo CD release."),
    key("flux-version", Shape::Version, "The Flux release."),
];

pub const PROFILE_NAMESPACE: &[Key] = &[key(
    "labels",
    Shape::MapOf(&Shape::Scalar),
    "The namespace's labels.",
)];

pub const PROFILE_AUTOSCALER: &[Key] = &[
    key(
        "kind",
        Shape::OneOf(&["HorizontalPodAutoscaler", "ScaledObject"]),
        "Default HorizontalPodAutoscaler.",
    ),
    required("name", Shape::Text, "The autoscaler's name."),
    required("namespace", Shape::Text, "Its namespace."),
    required("target", Shape::Object(PROFILE_TARGET), "What it scales."),
    key("min-replicas", Shape::Positive, "Its minimum."),
    key("max-replicas", Shape::Positive, "Its maximum."),
];

pub const PROFILE_TARGET: &[Key] = &[
    key("apiVersion", Shape::Text, "Default apps/v1."),
    key("kind", Shape::Text, "Default Deployment."),
    required("name", Shape::Text, "The scaled workload."),
];

pub const CHECK: &[Key] = &[
    required(
        "id",
        Shape::Text,
        "Lowercase letters, digits and `-`; not a built-in rule's id.",
    ),
    key(
        "severity",
        Shape::OneOf(&["error", "warning", "info"]),
        "Default warning.",
    ),
    key(
        "description",
        Shape::Text,
        "What `explain` prints and SARIF's rule description.",
    ),
    key("help", Shape::Text, "The help under each finding."),
    key(
        "match",
        Shape::Object(CHECK_MATCH),
        "Which objects (every list given must match).",
    ),
    required(
        "expr",
        Shape::Text,
        "CEL that must hold; a finding where it is false.",
    ),
    required(
        "message",
        Shape::Text,
        "The finding's text, with `{{ object.… }}`, `{{ app.… }}`, `{{ namespace.… }}`.",
    ),
    key(
        "field",
        Shape::Text,
        "JSONPath to the one field the finding points at (`$.spec.replicas`).",
    ),
];

pub const CHECK_MATCH: &[Key] = &[
    key(
        "kinds",
        Shape::ListOf(&Shape::Text),
        "`Kind` or `group/Kind`, `*` globs.",
    ),
    key(
        "namespaces",
        Shape::ListOf(&Shape::Text),
        "Globs on the namespace the object lands in.",
    ),
    key("names", Shape::ListOf(&Shape::Text), "Globs on the name."),
    key(
        "labels",
        Shape::MapOf(&Shape::Scalar),
        "Labels the object carries.",
    ),
    key(
        "namespace-labels",
        Shape::MapOf(&Shape::Scalar),
        "Labels of the namespace it lands in.",
    ),
    key(
        "controllers",
        Shape::ListOf(&Shape::OneOf(&["argo", "argocd", "flux", "none"])),
        "The app's controller.",
    ),
    key(
        "clusters",
        Shape::ListOf(&Shape::Text),
        "Globs on the app's cluster.",
    ),
    key(
        "paths",
        Shape::ListOf(&Shape::Text),
        "Globs on the file the object is written in.",
    ),
];

/// The configuration's JSON Schema (draft-07), from the declarations above.
pub fn json_schema() -> Value {
    let mut root = document(
        TOP,
        "gitops-lint configuration",
        "`.gitops-lint.yaml`: rules, exclusions, limits, platform and cluster facts, and your own checks.",
    );
    let limits: serde_json::Map<String, Value> = LIMITS
        .iter()
        .map(|l| {
            (
                l.key.to_string(),
                json!({"type": "integer", "minimum": 1, "description": format!("{} (at most {} through --limit)", l.doc, l.ceiling)}),
            )
        })
        .collect();
    if let Some(props) = root
        .get_mut("properties")
        .and_then(|p| p.get_mut("limits"))
        .and_then(Value::as_object_mut)
    {
        props.insert("properties".into(), Value::Object(limits));
    }
    root
}

fn object(keys: &[Key]) -> Value {
    let properties: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| {
            let mut v = shape(&k.shape);
            if let Some(o) = v.as_object_mut() {
                o.insert("description".into(), json!(k.doc));
            }
            (k.name.to_string(), v)
        })
        .collect();
    let required: Vec<&str> = keys.iter().filter(|k| k.required).map(|k| k.name).collect();
    let mut out = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
    });
    if !required.is_empty()
        && let Some(o) = out.as_object_mut()
    {
        o.insert("required".into(), json!(required));
    }
    out
}

fn shape(s: &Shape) -> Value {
    match s {
        Shape::Object(keys) => object(keys),
        Shape::MapOf(inner) => json!({"type": "object", "additionalProperties": shape(inner)}),
        Shape::ListOf(inner) => json!({"type": "array", "items": shape(inner)}),
        Shape::Text => json!({"type": "string"}),
        Shape::OneOf(values) => json!({"type": "string", "enum": values}),
        Shape::RuleSetting => json!({"enum": ["error", "warning", "info", "off", false]}),
        Shape::Positive => json!({"type": "integer", "minimum": 1}),
        Shape::Version => json!({"type": ["string", "number"]}),
        Shape::Scalar => json!({"type": ["string", "number", "boolean"]}),
        Shape::Flag => json!({"type": "boolean"}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published file is what the declarations generate (`UPDATE_SCHEMA=1` rewrites it).
    #[test]
    fn the_published_schema_is_generated_from_the_declarations() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../schema/gitops-lint.schema.json");
        let generated = format!(
            "{}\n",
            serde_json::to_string_pretty(&json_schema()).unwrap_or_default()
        );
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap_or_else(|e| panic!("{e}"));
        }
        let published = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            published == generated,
            "schema/gitops-lint.schema.json is stale: UPDATE_SCHEMA=1 cargo test --lib the_published_schema"
        );
    }

    /// The same for the knowledge base's file format.
    #[test]
    fn the_published_kb_schema_is_generated_from_the_declarations() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../schema/kb-writer.schema.json");
        let generated = format!(
            "{}\n",
            serde_json::to_string_pretty(&kb_writer_schema()).unwrap_or_default()
        );
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap_or_else(|e| panic!("{e}"));
        }
        let published = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            published == generated,
            "schema/kb-writer.schema.json is stale: UPDATE_SCHEMA=1 cargo test --lib the_published_kb_schema"
        );
    }

    #[test]
    fn every_limit_has_a_ceiling_above_its_default() {
        let defaults = crate::config::Config::default();
        for l in LIMITS {
            let d = crate::config::limit_value(&defaults, l.key);
            assert!(d > 0 && d <= l.ceiling, "{}: {d} vs {}", l.key, l.ceiling);
        }
    }
}
