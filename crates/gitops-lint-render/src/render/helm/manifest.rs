//! From rendered templates to `helm template`'s stdout (`pkg/releaseutil`): split each file
//! into documents, read each head (kind, name, hook annotations), sort by install order
//! (kind, then the order found), hooks after manifests, `---\n# Source:` framing.

use crate::yaml::{Limits, Node, Value as Y, parse_str};
use std::ops::Range;

/// Helm's `InstallOrder`.
pub const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
];

const HOOK_EVENTS: &[&str] = &[
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
];

/// One document of a rendered template.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// Template path (`chart/templates/x.yaml`), as `# Source:` prints it.
    pub source: String,
    /// The document text (trimmed, as Helm keeps it).
    pub content: String,
    /// Byte range of `content` in the template's rendered output.
    pub range: Range<usize>,
    pub kind: String,
    pub name: String,
    /// Hook events; empty for a plain manifest.
    pub hooks: Vec<String>,
    /// The document's YAML, parsed once for the head and kept for lint's objects (spans in
    /// a placeholder file until the rendered text has its own, `Node::set_file`).
    pub docs: Vec<Node>,
}

impl Manifest {
    pub fn is_test_hook(&self) -> bool {
        self.hooks
            .iter()
            .any(|h| h == "test" || h == "test-success")
    }
}

/// Helm's `SplitManifests`: documents separated by `---` at a line start (the regex
/// `(?:^|\s*\n)---\s*`), trimmed, empty ones dropped. Returns byte ranges into `text`.
pub fn split_manifests(text: &str) -> Vec<Range<usize>> {
    let lead = text.len() - text.trim_start().len();
    let body_end = text.trim_end().len();
    if lead >= body_end {
        return Vec::new();
    }
    let b = text.as_bytes();
    let mut pieces: Vec<Range<usize>> = Vec::new();
    let mut start = lead;
    let mut i = lead;
    // A separator at the very start.
    if text[lead..body_end].starts_with("---") {
        let mut j = lead + 3;
        while j < body_end && (b[j] as char).is_ascii_whitespace() {
            j += 1;
        }
        pieces.push(lead..lead);
        start = j;
        i = j;
    }
    while i < body_end {
        if b[i] == b'\n' && text[i + 1..body_end].starts_with("---") {
            // Whitespace before the newline belongs to the separator.
            let mut sep_start = i;
            while sep_start > start && (b[sep_start - 1] as char).is_ascii_whitespace() {
                sep_start -= 1;
            }
            let mut j = i + 4;
            while j < body_end && (b[j] as char).is_ascii_whitespace() {
                j += 1;
            }
            pieces.push(start..sep_start);
            start = j;
            i = j;
            continue;
        }
        i += 1;
    }
    pieces.push(start..body_end);
    pieces
        .into_iter()
        .filter(|r| r.start < r.end)
        .map(|r| {
            let s = &text[r.clone()];
            let l = s.len() - s.trim_start().len();
            let t = s.trim().len();
            r.start + l..r.start + l + t
        })
        .filter(|r| r.start < r.end)
        .collect()
}

/// A document's kind, name and `helm.sh/hook` annotation.
type Head = (String, String, Option<String>);

/// Read the head of a document as Helm's `SimpleHead` does, with its error texts.
pub fn simple_head(doc: &str) -> Result<Head, String> {
    parse_document(doc).map(|(head, _)| head)
}

/// The head of a document and its parsed YAML (one parse serves both).
fn parse_document(doc: &str) -> Result<(Head, Vec<Node>), String> {
    let parsed = parse_str(doc, Default::default(), &Limits::default());
    if let Some(e) = parsed.error {
        return Err(format!(
            "error converting YAML to JSON: {}",
            super::values::go_yaml_error(&e, doc)
        ));
    }
    let roots: Vec<Node> = parsed.docs.into_iter().map(|d| d.root).collect();
    let head = head_of(roots.first())?;
    Ok((head, roots))
}

/// Helm's `SimpleHead` of a parsed document (`None`: an empty one).
fn head_of(root: Option<&Node>) -> Result<Head, String> {
    let Some(root) = root else {
        return Ok(Default::default());
    };
    let kind_of = |n: &Node| match &n.value {
        Y::String(_) => "string",
        Y::Int(_) | Y::Float(_) => "number",
        Y::Bool(_) => "bool",
        Y::Seq(_) => "array",
        Y::Map(_) => "object",
        Y::Null => "null",
    };
    match &root.value {
        Y::Null => return Ok(Default::default()),
        Y::Map(_) => {}
        _ => {
            return Err(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type releaseutil.SimpleHead",
                kind_of(root)
            ));
        }
    }
    let field = |n: Option<&Node>, go_field: &str| -> Result<String, String> {
        match n {
            None => Ok(String::new()),
            Some(n) => match &n.value {
                Y::Null => Ok(String::new()),
                Y::String(s) => Ok(s.clone()),
                _ => Err(format!(
                    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {go_field} of type string",
                    kind_of(n)
                )),
            },
        }
    };
    let kind = field(root.get("kind"), "SimpleHead.kind")?;
    field(root.get("apiVersion"), "SimpleHead.apiVersion")?;
    let mut name = String::new();
    let mut hook = None;
    if let Some(meta) = root.get("metadata") {
        match &meta.value {
            Y::Null => {}
            Y::Map(_) => {
                name = field(meta.get("name"), "SimpleHead.metadata.name")?;
                if let Some(ann) = meta.get("annotations") {
                    match &ann.value {
                        Y::Null => {}
                        Y::Map(entries) => {
                            for e in entries {
                                let v = field(Some(&e.value), "SimpleHead.metadata.annotations")?;
                                if e.key.key_is("helm.sh/hook") {
                                    hook = Some(v);
                                }
                            }
                        }
                        _ => {
                            return Err(format!(
                                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field .metadata.annotations of type map[string]string",
                                kind_of(ann)
                            ));
                        }
                    }
                }
            }
            _ => {
                return Err(format!(
                    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field SimpleHead.metadata of type struct {{ Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }}",
                    kind_of(meta)
                ));
            }
        }
    }
    Ok((kind, name, hook))
}

/// The documents of one rendered template, or Helm's `YAML parse error on ...`.
pub fn file_manifests(source: &str, text: &str) -> Result<Vec<Manifest>, String> {
    let mut out = Vec::new();
    for range in split_manifests(text) {
        let content = &text[range.clone()];
        let ((kind, name, hook), docs) =
            parse_document(content).map_err(|e| format!("YAML parse error on {source}: {e}"))?;
        let mut hooks = Vec::new();
        if let Some(h) = hook {
            let mut unknown = false;
            for ev in h.split(',') {
                let ev = ev.trim().to_ascii_lowercase();
                if HOOK_EVENTS.contains(&ev.as_str()) {
                    hooks.push(ev);
                } else {
                    unknown = true;
                    break;
                }
            }
            if unknown {
                // Helm logs "skipping unknown hook" and drops the document.
                continue;
            }
        }
        out.push(Manifest {
            source: source.to_string(),
            content: content.to_string(),
            range,
            kind,
            name,
            hooks,
            docs,
        });
    }
    Ok(out)
}

fn kind_rank(kind: &str) -> Option<usize> {
    INSTALL_ORDER.iter().position(|k| *k == kind)
}

/// Helm's stable sort by kind: known kinds in install order, unknown kinds after them
/// alphabetically, ties in the order found.
pub fn sort_by_kind(items: &mut [Manifest]) {
    items.sort_by(|a, b| kind_cmp(&a.kind, &b.kind));
}

pub fn kind_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (kind_rank(a), kind_rank(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> Vec<&str> {
        split_manifests(text)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn splits_like_helm() {
        assert_eq!(docs("a: 1\n---\nb: 2\n"), vec!["a: 1", "b: 2"]);
        // Go's regex eats the blank lines after a separator, so a second `---` right after
        // them is not a separator (it stays in the document, as in Helm).
        assert_eq!(
            docs("---\na: 1\n---  \n\n---\nb: 2"),
            vec!["a: 1", "---\nb: 2"]
        );
        assert_eq!(docs("---\na: 1\n---\nb: 2"), vec!["a: 1", "b: 2"]);
        assert_eq!(docs("\n\n  \n"), Vec::<&str>::new());
        assert_eq!(docs("# only a comment\n"), vec!["# only a comment"]);
        assert_eq!(docs("a: |\n  x\n  ---\n"), vec!["a: |\n  x\n  ---"]);
    }

    #[test]
    fn heads_and_hooks() {
        let m = file_manifests(
            "c/templates/t.yaml",
            "kind: Pod\nmetadata:\n  name: p\n  annotations:\n    helm.sh/hook: test\n---\nkind: Service\n",
        )
        .unwrap_or_default();
        assert_eq!(m.len(), 2);
        assert!(m[0].is_test_hook());
        assert_eq!(m[1].kind, "Service");
        let err = file_manifests("c/templates/t.yaml", "just a string")
            .err()
            .unwrap_or_default();
        assert!(
            err.contains("cannot unmarshal string into Go value of type releaseutil.SimpleHead")
        );
    }

    #[test]
    fn kind_order_then_found_order() {
        let mk = |k: &str, n: &str| Manifest {
            source: String::new(),
            content: String::new(),
            range: 0..0,
            kind: k.into(),
            name: n.into(),
            hooks: vec![],
            docs: vec![],
        };
        let mut v = vec![
            mk("Deployment", "a"),
            mk("Zed", "z"),
            mk("Service", "s"),
            mk("Abc", "x"),
            mk("Deployment", "b"),
        ];
        sort_by_kind(&mut v);
        let names: Vec<&str> = v.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, vec!["s", "a", "b", "x", "z"]);
    }
}
