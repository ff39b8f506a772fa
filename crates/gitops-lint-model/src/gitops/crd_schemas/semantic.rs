//! What a controller rejects beyond its CRD's schema. Argo CD marks an Application
//! `InvalidSpecError` and never syncs it when it has no source, or a source without
//! `repoURL` and one of `path` / `chart` (`ref` too, for an item of `sources`).

use super::validate::{Hint, Problem, ProblemKind, Seg, display_path};
use crate::object::Object;
use crate::source::Span;
use crate::yaml::Node;

fn text(node: Option<&Node>) -> String {
    node.and_then(Node::scalar_text).unwrap_or_default()
}

fn key_span(parent: &Node, key: &str) -> Option<Span> {
    parent.entry(key).map(|e| e.key.span)
}

fn spec_sources(
    spec: &Node,
    path: &[Seg],
    anchor: Span,
    found: &[Problem],
    out: &mut Vec<Problem>,
) {
    let at = |name: &str| {
        let mut p = path.to_vec();
        p.push(Seg::Key(name.into()));
        p
    };
    if spec.get("sourceHydrator").is_some() {
        return;
    }
    let many = spec
        .get("sources")
        .and_then(Node::as_seq)
        .unwrap_or_default();
    if !many.is_empty() {
        for (i, s) in many.iter().enumerate() {
            if s.as_map().is_none() || s.get("repoURL").is_none() {
                continue; // the schema's finding
            }
            if ["path", "chart", "ref"]
                .iter()
                .all(|k| text(s.get(k)).is_empty())
            {
                let mut p = at("sources");
                p.push(Seg::Index(i));
                out.push(Problem {
                    kind: ProblemKind::Controller(format!(
                        "{} has no `path`, `chart` or `ref`",
                        display_path(&p)
                    )),
                    path: p,
                    span: s.span,
                });
            }
        }
        return;
    }
    let Some(source) = spec.get("source") else {
        out.push(Problem {
            kind: ProblemKind::Controller(format!(
                "{} has no `source`, `sources` or `sourceHydrator`",
                display_path(path)
            )),
            path: path.to_vec(),
            span: anchor,
        });
        return;
    };
    if source.as_map().is_none() || source.get("repoURL").is_none() {
        return;
    }
    let source_path = display_path(&at("source"));
    // A `path:` or `chart:` found beside the source already says where it belongs.
    let misplaced = found.iter().any(|p| {
        p.kind == ProblemKind::Unknown(Some(Hint::Under(source_path.clone())))
            && matches!(p.path.last(), Some(Seg::Key(k)) if k == "path" || k == "chart")
    });
    if !misplaced && text(source.get("path")).is_empty() && text(source.get("chart")).is_empty() {
        out.push(Problem {
            kind: ProblemKind::Controller(format!("{source_path} has neither `path` nor `chart`")),
            path: at("source"),
            span: key_span(spec, "source").unwrap_or(source.span),
        });
    }
}

/// Do the generators carry templates of their own (merged into the main one per
/// generator)? Then the main template alone is not what Argo CD validates. A walk with a
/// stack: generators nest (matrix, merge) as deep as the input.
fn generator_templates(node: &Node) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if let Some(entries) = n.as_map() {
            for e in entries {
                if e.key.key_is("template") {
                    return true;
                }
                stack.push(&e.value);
            }
        } else if let Some(items) = n.as_seq() {
            stack.extend(items);
        }
    }
    false
}

pub(super) fn check(obj: &Object, found: &[Problem], out: &mut Vec<Problem>) {
    if obj.group() != "argoproj.io" {
        return;
    }
    let root = &obj.root;
    match obj.kind.as_str() {
        "Application" => {
            if let (Some(spec), Some(anchor)) = (root.get("spec"), key_span(root, "spec"))
                && spec.as_map().is_some()
            {
                spec_sources(spec, &[Seg::Key("spec".into())], anchor, found, out);
            }
        }
        "ApplicationSet" => {
            let Some(spec) = root.get("spec") else {
                return;
            };
            // A `templatePatch` can add the source; generator templates add to the template.
            if spec.get("templatePatch").is_some()
                || spec.get("generators").is_some_and(generator_templates)
            {
                return;
            }
            let Some(template) = spec.get("template") else {
                return;
            };
            if let (Some(tspec), Some(anchor)) = (template.get("spec"), key_span(template, "spec"))
                && tspec.as_map().is_some()
            {
                let path = [
                    Seg::Key("spec".into()),
                    Seg::Key("template".into()),
                    Seg::Key("spec".into()),
                ];
                spec_sources(tspec, &path, anchor, found, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::validate::validate;
    use super::*;
    use crate::source::FileId;

    fn controller(text: &str) -> Vec<String> {
        let docs = crate::yaml::parse_str(text, FileId(0), &crate::yaml::Limits::default()).docs;
        let obj = Object::from_node(docs.into_iter().next().expect("doc").root).expect("object");
        validate(&obj)
            .into_iter()
            .filter_map(|p| match p.kind {
                ProblemKind::Controller(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    const HEAD: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  project: default\n  destination:\n    server: https://kubernetes.default.svc\n";

    #[test]
    fn an_application_needs_a_source_with_a_path_or_chart() {
        assert_eq!(
            controller(HEAD),
            ["spec has no `source`, `sources` or `sourceHydrator`"]
        );
        assert_eq!(
            controller(&format!(
                "{HEAD}  source:\n    repoURL: https://example.com/r.git\n"
            )),
            ["spec.source has neither `path` nor `chart`"]
        );
        assert_eq!(
            controller(&format!(
                "{HEAD}  sources:\n  - repoURL: https://example.com/r.git\n    ref: values\n  - repoURL: https://example.com/r.git\n    targetRevision: main\n"
            )),
            ["spec.sources[1] has no `path`, `chart` or `ref`"]
        );
        assert!(
            controller(&format!(
                "{HEAD}  source:\n    repoURL: https://charts.example.com\n    chart: web\n    targetRevision: 1.2.3\n"
            ))
            .is_empty()
        );
    }

    #[test]
    fn an_application_set_template_is_checked_unless_something_else_fills_it() {
        let appset = |extra: &str| {
            format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: s\nspec:\n  generators:\n  - list:\n      elements: []\n{extra}  template:\n    metadata:\n      name: '{{{{name}}}}'\n    spec:\n      project: default\n      destination:\n        server: https://kubernetes.default.svc\n"
            )
        };
        assert_eq!(
            controller(&appset("")),
            ["spec.template.spec has no `source`, `sources` or `sourceHydrator`"]
        );
        assert!(
            controller(&appset(
                "  templatePatch: |\n    spec:\n      source:\n        repoURL: https://example.com/r.git\n        path: '{{ .path }}'\n"
            ))
            .is_empty()
        );
        // A generator's own template (here inside a matrix) may supply the source.
        let nested = appset("").replace(
            "  - list:\n      elements: []\n",
            "  - matrix:\n      generators:\n      - list:\n          elements: []\n        template:\n          metadata: {}\n          spec:\n            project: default\n            destination: {}\n            source:\n              repoURL: https://example.com/r.git\n              path: apps\n",
        );
        assert!(nested.contains("matrix"));
        assert!(controller(&nested).is_empty());
    }
}
