//! CEL match conditions of a `MutatingAdmissionPolicy`, evaluated against the rendered object
//! with a real interpreter (the `cel` crate). The API server skips the policy when any
//! condition is false. What the repo cannot know makes the answer "maybe": an expression
//! that reads the request, the policy's `params`, the live `oldObject`, the namespace object,
//! the authorizer or `variables`, or one the interpreter cannot parse or run.

use super::selector::Tri;
use crate::source::Span;
use crate::yaml::Node;

/// One `matchConditions` entry.
#[derive(Clone, Debug)]
pub struct CelCondition {
    pub name: String,
    pub expression: String,
    pub span: Span,
}

impl CelCondition {
    /// Read `spec.matchConditions` (entries without an expression are skipped).
    pub fn read_all(list: Option<&Node>) -> Vec<CelCondition> {
        list.and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(|c| {
                let expression = c.get("expression").and_then(Node::scalar_text)?;
                Some(CelCondition {
                    name: c
                        .get("name")
                        .and_then(Node::scalar_text)
                        .unwrap_or_default(),
                    span: c.get("expression").map(|e| e.span).unwrap_or(c.span),
                    expression,
                })
            })
            .collect()
    }
}

/// Variables an admission request has that the repository cannot supply.
const UNKNOWN_VARIABLES: &[&str] = &[
    "request",
    "params",
    "oldObject",
    "namespaceObject",
    "authorizer",
    "variables",
];

/// Evaluate one condition for `object` (the rendered manifest, with its effective namespace).
pub fn evaluate(expression: &str, object: &Node, namespace: &str) -> Tri {
    // The interpreter's parser is third-party code run on repo input: a panic there is an
    // undecidable condition, never a crash of the linter.
    std::panic::catch_unwind(|| evaluate_inner(expression, object, namespace)).unwrap_or(Tri::Maybe)
}

fn evaluate_inner(expression: &str, object: &Node, namespace: &str) -> Tri {
    let Ok(program) = ::cel::Program::compile(expression) else {
        return Tri::Maybe;
    };
    let references = program.references();
    if UNKNOWN_VARIABLES.iter().any(|v| references.has_variable(v)) {
        return Tri::Maybe;
    }
    // The API server sees the namespace the object lands in.
    let json = crate::gitops::served_json(object, namespace);
    let Ok(value) = ::cel::to_value(&json) else {
        return Tri::Maybe;
    };
    let mut context = ::cel::Context::default();
    context.add_variable_from_value("object", value);
    match program.execute(&context) {
        Ok(::cel::Value::Bool(b)) => Tri::from_bool(b),
        _ => Tri::Maybe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::first_doc;

    #[test]
    fn conditions_on_the_object_are_decided() {
        let obj = first_doc(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {tier: frontend}\nspec:\n  replicas: 2\n",
        );
        let eval = |e: &str| evaluate(e, &obj, "shop");
        assert_eq!(eval("object.metadata.namespace == 'shop'"), Tri::Yes);
        assert_eq!(eval("object.metadata.namespace != 'shop'"), Tri::No);
        assert_eq!(
            eval("has(object.metadata.labels) && object.metadata.labels['tier'] == 'backend'"),
            Tri::No
        );
        assert_eq!(eval("object.spec.replicas > 1"), Tri::Yes);
        assert_eq!(eval("!object.metadata.name.startsWith('kube-')"), Tri::Yes);
    }

    #[test]
    fn what_the_repo_cannot_know_is_maybe() {
        let obj = first_doc("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n");
        let eval = |e: &str| evaluate(e, &obj, "default");
        assert_eq!(eval("request.userInfo.username == 'admin'"), Tri::Maybe);
        assert_eq!(eval("params.enabled"), Tri::Maybe);
        assert_eq!(eval("object.metadata.("), Tri::Maybe);
        // A missing field is an evaluation error: the failure policy decides, not the repo.
        assert_eq!(eval("object.spec.nodeName == 'x'"), Tri::Maybe);
    }
}
