//! Fields a CustomResourceDefinition of the repo makes immutable with the CEL transition
//! rule `self == oldSelf` in `x-kubernetes-validations`
//! (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#transition-rules).
//! Only object properties are followed: below a list, which item is "the same" is the
//! list type's business, and the rule is read where a path names one field.

use super::immutable::TransitionRules;
use crate::gitops::Model;
use crate::ownership::crd::crd_schemas;
use crate::yaml::Node;

/// Deepest schema walked (CRD schemas nest a few levels; input is bounded anyway).
const MAX_DEPTH: usize = 64;

/// The guarded paths of every CRD in these models (base and head: a rule the change adds is
/// enforced once the CRD syncs, and CRDs sync first).
pub fn of_models(models: &[&Model]) -> TransitionRules {
    let mut out = TransitionRules::new();
    for model in models {
        for crd in crd_schemas(model) {
            let mut paths = Vec::new();
            collect(crd.schema, &mut Vec::new(), &mut paths);
            if paths.is_empty() {
                continue;
            }
            let entry = out
                .entry((crd.group.clone(), crd.kind.clone()))
                .or_default();
            for p in paths {
                if !entry.contains(&p) {
                    entry.push(p);
                }
            }
        }
    }
    out
}

fn collect(schema: &Node, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if path.len() > MAX_DEPTH {
        return;
    }
    let guarded = schema
        .get("x-kubernetes-validations")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .any(|v| {
            v.get("rule")
                .and_then(Node::scalar_text)
                .is_some_and(|r| is_self_equals_old(&r))
        });
    if guarded && !path.is_empty() {
        out.push(path.clone());
        return;
    }
    for entry in schema
        .get("properties")
        .and_then(Node::as_map)
        .unwrap_or_default()
    {
        path.push(entry.key.key_str().into_owned());
        collect(&entry.value, path, out);
        path.pop();
    }
}

/// `self == oldSelf` (either order, any spacing): the whole value may not change.
fn is_self_equals_old(rule: &str) -> bool {
    let compact: String = rule.chars().filter(|c| !c.is_whitespace()).collect();
    compact == "self==oldSelf" || compact == "oldSelf==self"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_whole_value_rule_counts() {
        assert!(is_self_equals_old("self == oldSelf"));
        assert!(is_self_equals_old(" oldSelf==self "));
        assert!(!is_self_equals_old("self >= oldSelf"));
        assert!(!is_self_equals_old("self.size() == oldSelf.size()"));
    }
}
