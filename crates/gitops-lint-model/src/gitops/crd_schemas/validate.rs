//! An object against its kind's bundled schema: keys the schema does not have (with where
//! they belong, when that is clear), values of the wrong shape, and required fields left out.
//! Values a template still holds (`{{ … }}`, `${…}`) and nulls (which the API server drops
//! before validating) are never judged.

use super::{Def, Table, Ty, semantic, table};
use crate::object::Object;
use crate::source::Span;
use crate::yaml::{Node, Value};

/// One step of a path in an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// `spec.sources[0].path`
pub fn display_path(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Where an unknown key probably belongs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hint {
    /// A field of the same object (or an item of a list field) has this key: it was dedented
    /// out of it. The path of that field (`spec.source`, `spec.sources[]`).
    Under(String),
    /// The enclosing object has this key: it was indented into the wrong block.
    Up(String),
    /// A field of this object with a close spelling.
    Spelling(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    Unknown(Option<Hint>),
    WrongType {
        expected: &'static str,
        found: &'static str,
    },
    /// A required field (named) is missing from the object at the path.
    Missing(String),
    /// A rule of the controller itself, beyond the schema (the text says which).
    Controller(String),
}

#[derive(Clone, Debug)]
pub struct Problem {
    pub kind: ProblemKind,
    pub path: Vec<Seg>,
    /// The line to edit: the unknown key, the wrong value, or the key of the object that
    /// lacks a field.
    pub span: Span,
}

/// A value a generator or substitution fills in later: its type is not known yet.
pub(super) fn templated(s: &str) -> bool {
    s.contains("{{") || s.contains("${") || s.contains("<no value>")
}

fn shape(node: &Node) -> &'static str {
    match &node.value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Int(_) | Value::Float(_) => "a number",
        Value::String(_) => "a string",
        Value::Seq(_) => "a list",
        Value::Map(_) => "a map",
    }
}

fn expected(t: &Table, ty: Ty) -> &'static str {
    match ty {
        Ty::Str => "a string",
        Ty::Int => "an integer",
        Ty::Num => "a number",
        Ty::Bool => "a boolean",
        Ty::IntOrStr => "an integer or a string",
        Ty::Any => "anything",
        Ty::Def(_) => match t.def(ty) {
            Some(Def::List(_)) => "a list",
            _ => "a map",
        },
    }
}

/// Does `node` have the shape `ty` asks for? Only what the API server would reject.
fn fits(t: &Table, node: &Node, ty: Ty) -> bool {
    match (&node.value, ty) {
        (_, Ty::Any) | (Value::Null, _) => true,
        (Value::String(s), _) if templated(s) => true,
        (Value::String(_), Ty::Str | Ty::IntOrStr) => true,
        (Value::Int(_), Ty::Int | Ty::Num | Ty::IntOrStr) => true,
        // `1.0` decodes as a float; leave integral-looking numbers alone.
        (Value::Float(_), Ty::Int | Ty::Num) => true,
        (Value::Bool(_), Ty::Bool) => true,
        (Value::Seq(_), Ty::Def(_)) => matches!(t.def(ty), Some(Def::List(_))),
        (Value::Map(_), Ty::Def(_)) => matches!(t.def(ty), Some(Def::Obj { .. } | Def::Map(_))),
        _ => false,
    }
}

fn close(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (
        a.to_ascii_lowercase().chars().collect(),
        b.to_ascii_lowercase().chars().collect(),
    );
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Object fields (through one list level) of `def` that have `key`, declared ones first.
fn holders(t: &Table, def: &Def, key: &str, node: &Node) -> Option<(String, bool)> {
    let Def::Obj { fields, .. } = def else {
        return None;
    };
    let mut found: Vec<(&str, bool, bool)> = Vec::new();
    for (name, ty) in fields {
        let (inner, list) = match t.def(*ty) {
            Some(Def::List(item)) => (*item, true),
            _ => (*ty, false),
        };
        if t.def(inner).and_then(|d| d.field(key)).is_some() {
            found.push((name, list, node.get(name).is_some()));
        }
    }
    found.sort_by_key(|(_, _, declared)| !declared);
    found
        .first()
        .map(|(name, list, _)| (name.to_string(), *list))
}

fn hint(
    t: &Table,
    def: &Def,
    key: &str,
    node: &Node,
    path: &[Seg],
    parent: Option<(&Def, &[Seg])>,
) -> Option<Hint> {
    let Def::Obj { fields, .. } = def else {
        return None;
    };
    // No field name is long: a long key (input-sized) is compared with nothing.
    let comparable = key.len() <= 64;
    let near = |max: usize| {
        fields
            .iter()
            .filter(|_| comparable)
            .map(|(f, _)| (close(key, f), *f))
            .filter(|(d, _)| *d <= max)
            .min()
            .map(|(_, f)| Hint::Spelling(f.to_string()))
    };
    let limit = if key.chars().count() > 5 { 2 } else { 1 };
    near(1)
        .or_else(|| {
            holders(t, def, key, node).map(|(name, list)| {
                let mut p = path.to_vec();
                p.push(Seg::Key(name));
                let mut s = display_path(&p);
                if list {
                    s.push_str("[]");
                }
                Hint::Under(s)
            })
        })
        .or_else(|| {
            let (pdef, ppath) = parent?;
            pdef.field(key)?;
            Some(Hint::Up(display_path(ppath)))
        })
        .or_else(|| near(limit))
}

struct Frame<'a> {
    node: &'a Node,
    ty: Ty,
    path: Vec<Seg>,
    /// Where a missing field is reported: the key of this object.
    anchor: Span,
    /// The enclosing object's definition and path (for an indented-too-far key).
    parent: Option<(usize, Vec<Seg>)>,
}

/// Every problem of `obj` against its bundled schema, in file order; empty when no schema
/// is bundled for its apiVersion and kind.
pub fn validate(obj: &Object) -> Vec<Problem> {
    let t = table();
    let Some(root) = t.root(&obj.api_version, &obj.kind) else {
        return Vec::new();
    };
    let anchor = obj
        .root
        .entry("kind")
        .map(|e| e.key.span)
        .unwrap_or(obj.root.span);
    let mut out = Vec::new();
    let mut stack = vec![Frame {
        node: &obj.root,
        ty: root,
        path: Vec::new(),
        anchor,
        parent: None,
    }];
    while let Some(f) = stack.pop() {
        if f.path.len() > 64 {
            continue;
        }
        if !fits(t, f.node, f.ty) {
            out.push(Problem {
                kind: ProblemKind::WrongType {
                    expected: expected(t, f.ty),
                    found: shape(f.node),
                },
                path: f.path,
                span: f.node.span,
            });
            continue;
        }
        let Ty::Def(index) = f.ty else {
            continue;
        };
        let Some(def) = t.defs.get(index) else {
            continue;
        };
        match def {
            Def::List(item) => {
                for (i, n) in f.node.as_seq().unwrap_or_default().iter().enumerate() {
                    let mut path = f.path.clone();
                    path.push(Seg::Index(i));
                    stack.push(Frame {
                        node: n,
                        ty: *item,
                        path,
                        anchor: n.span,
                        parent: f.parent.clone(),
                    });
                }
            }
            Def::Map(value) => {
                for e in f.node.as_map().unwrap_or_default() {
                    let mut path = f.path.clone();
                    path.push(Seg::Key(e.key.key_str().into_owned()));
                    stack.push(Frame {
                        node: &e.value,
                        ty: *value,
                        path,
                        anchor: e.key.span,
                        parent: None,
                    });
                }
            }
            Def::Obj {
                open,
                embedded,
                required,
                ..
            } => {
                let Some(entries) = f.node.as_map() else {
                    continue;
                };
                let top = f.path.is_empty();
                for e in entries {
                    let key = e.key.key_str();
                    // The API server's own fields; `status` is committed-live-state's.
                    if (top
                        && matches!(key.as_ref(), "apiVersion" | "kind" | "metadata" | "status"))
                        || (*embedded && matches!(key.as_ref(), "apiVersion" | "kind" | "metadata"))
                    {
                        continue;
                    }
                    let mut path = f.path.clone();
                    path.push(Seg::Key(key.clone().into_owned()));
                    match def.field(&key) {
                        Some(ty) => stack.push(Frame {
                            node: &e.value,
                            ty,
                            path,
                            anchor: e.key.span,
                            parent: Some((index, f.path.clone())),
                        }),
                        None if *open || templated(&key) => {}
                        None => {
                            let parent = f
                                .parent
                                .as_ref()
                                .and_then(|(i, p)| t.defs.get(*i).map(|d| (d, p.as_slice())));
                            out.push(Problem {
                                kind: ProblemKind::Unknown(hint(
                                    t, def, &key, f.node, &f.path, parent,
                                )),
                                path,
                                span: e.key.span,
                            });
                        }
                    }
                }
                for r in required {
                    if (top && *r == "metadata") || f.node.get(r).is_some() {
                        continue;
                    }
                    out.push(Problem {
                        kind: ProblemKind::Missing(r.to_string()),
                        path: f.path.clone(),
                        span: f.anchor,
                    });
                }
            }
        }
    }
    // A required field written with a typo is one problem, reported on the typo.
    let misspelt: Vec<(Vec<Seg>, String)> = out
        .iter()
        .filter_map(|p| match &p.kind {
            ProblemKind::Unknown(Some(Hint::Spelling(s))) => {
                Some((p.path[..p.path.len().saturating_sub(1)].to_vec(), s.clone()))
            }
            _ => None,
        })
        .collect();
    out.retain(|p| match &p.kind {
        ProblemKind::Missing(field) => !misspelt.iter().any(|(at, s)| *at == p.path && s == field),
        _ => true,
    });
    let mut refused = Vec::new();
    semantic::check(obj, &out, &mut refused);
    out.extend(refused);
    out.sort_by_key(|p| (p.span.file, p.span.start));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn object(text: &str) -> Object {
        let docs = crate::yaml::parse_str(text, FileId(0), &crate::yaml::Limits::default()).docs;
        Object::from_node(docs.into_iter().next().expect("one document").root).expect("object")
    }

    fn problems(text: &str) -> Vec<(String, ProblemKind)> {
        validate(&object(text))
            .into_iter()
            .map(|p| (display_path(&p.path), p.kind))
            .collect()
    }

    const APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  project: default\n  destination:\n    server: https://kubernetes.default.svc\n";

    #[test]
    fn a_path_dedented_out_of_source_belongs_under_source() {
        let p = problems(&format!(
            "{APP}  source:\n    repoURL: https://example.com/r.git\n    targetRevision: main\n  path: apps/web\n"
        ));
        assert_eq!(
            p,
            [(
                "spec.path".to_string(),
                ProblemKind::Unknown(Some(Hint::Under("spec.source".into())))
            )]
        );
    }

    #[test]
    fn misspelled_and_over_indented_keys_get_a_hint() {
        let p = problems(&format!(
            "{APP}  source:\n    repoUrl: https://example.com/r.git\n    path: apps/web\n    syncPolicy: {{}}\n"
        ));
        assert_eq!(
            p,
            [
                // Not also "spec.source lacks the required repoURL": one problem, one finding.
                (
                    "spec.source.repoUrl".to_string(),
                    ProblemKind::Unknown(Some(Hint::Spelling("repoURL".into())))
                ),
                (
                    "spec.source.syncPolicy".to_string(),
                    ProblemKind::Unknown(Some(Hint::Up("spec".into())))
                ),
            ]
        );
    }

    #[test]
    fn a_map_where_a_list_goes_and_a_missing_destination() {
        let p = problems(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  project: default\n  source:\n    repoURL: https://example.com/r.git\n    path: .\n  syncPolicy:\n    syncOptions:\n      CreateNamespace: true\n",
        );
        assert_eq!(
            p,
            [
                (
                    "spec".to_string(),
                    ProblemKind::Missing("destination".into())
                ),
                (
                    "spec.syncPolicy.syncOptions".to_string(),
                    ProblemKind::WrongType {
                        expected: "a list",
                        found: "a map"
                    }
                ),
            ]
        );
    }

    #[test]
    fn template_placeholders_and_nulls_are_not_judged() {
        let p = problems(
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: s\nspec:\n  goTemplate: true\n  generators:\n  - list:\n      elements: []\n  template:\n    metadata:\n      name: '{{ .name }}'\n    spec:\n      project: default\n      revisionHistoryLimit: '{{ .values.limit }}'\n      source:\n        repoURL: https://example.com/r.git\n        path: '{{ .path }}'\n        helm: ~\n      destination:\n        server: https://kubernetes.default.svc\n",
        );
        assert_eq!(p, []);
    }

    #[test]
    fn flux_versions_are_checked_against_their_own_schema() {
        let ks = |api: &str| {
            problems(&format!(
                "apiVersion: {api}\nkind: Kustomization\nmetadata:\n  name: k\nspec:\n  interval: 5m\n  path: ./apps\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  validation: client\n"
            ))
        };
        assert_eq!(ks("kustomize.toolkit.fluxcd.io/v1beta1"), []);
        assert_eq!(
            ks("kustomize.toolkit.fluxcd.io/v1"),
            [("spec.validation".to_string(), ProblemKind::Unknown(None))]
        );
        // No schema for this version: nothing to say.
        assert_eq!(ks("kustomize.toolkit.fluxcd.io/v9"), []);
    }
}
