//! Label selectors (`matchLabels` / `matchExpressions`) evaluated with three outcomes: an
//! object's labels are always known, a namespace's only when the repo declares it.

use crate::yaml::Node;
use std::collections::BTreeMap;

pub type Labels = BTreeMap<String, String>;

/// Does a policy apply? `Maybe` when the repo cannot tell (unknown namespace labels,
/// preconditions), which rules report at a lower severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tri {
    No,
    Maybe,
    Yes,
}

impl Tri {
    pub fn and(self, other: Tri) -> Tri {
        self.min(other)
    }
    pub fn or(self, other: Tri) -> Tri {
        self.max(other)
    }
    pub fn negate(self) -> Tri {
        match self {
            Tri::No => Tri::Yes,
            Tri::Maybe => Tri::Maybe,
            Tri::Yes => Tri::No,
        }
    }
    pub fn from_bool(b: bool) -> Tri {
        if b { Tri::Yes } else { Tri::No }
    }
}

/// Labels of a map node (`metadata.labels`), scalars as Kubernetes reads them.
pub fn labels_of(node: Option<&Node>) -> Labels {
    node.and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| Some((e.key.key_str().into_owned(), e.value.scalar_text()?)))
        .collect()
}

/// Evaluate a `metav1.LabelSelector` against labels (`None`: labels unknown). An empty
/// selector matches everything; a selector the repo cannot read is `Maybe`.
pub fn matches(selector: &Node, labels: Option<&Labels>) -> Tri {
    let Some(map) = selector.as_map() else {
        return if selector.is_null() {
            Tri::Yes
        } else {
            Tri::Maybe
        };
    };
    if map.is_empty() {
        return Tri::Yes;
    }
    let Some(labels) = labels else {
        return Tri::Maybe;
    };
    let mut result = Tri::Yes;
    for (k, v) in labels_of(selector.get("matchLabels")) {
        result = result.and(Tri::from_bool(labels.get(&k) == Some(&v)));
    }
    for expr in selector
        .get("matchExpressions")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let key = expr
            .get("key")
            .and_then(Node::scalar_text)
            .unwrap_or_default();
        let values: Vec<String> = expr
            .get("values")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(Node::scalar_text)
            .collect();
        let have = labels.get(&key);
        let ok = match expr.get_str("operator") {
            Some("In") => have.is_some_and(|h| values.contains(h)),
            Some("NotIn") => !have.is_some_and(|h| values.contains(h)),
            Some("Exists") => have.is_some(),
            Some("DoesNotExist") => have.is_none(),
            _ => return Tri::Maybe,
        };
        result = result.and(Tri::from_bool(ok));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;
    use crate::yaml::{Limits, parse_str};

    fn sel(text: &str) -> Node {
        parse_str(text, FileId(0), &Limits::default())
            .docs
            .into_iter()
            .next()
            .map(|d| d.root)
            .unwrap_or_else(|| Node::string("", crate::source::Span::new(FileId(0), 0, 0)))
    }

    #[test]
    fn selectors() {
        let labels: Labels = [("policy.lab/image-pull".to_string(), "always".to_string())].into();
        let s = sel("matchLabels:\n  policy.lab/image-pull: always\n");
        assert_eq!(matches(&s, Some(&labels)), Tri::Yes);
        assert_eq!(matches(&s, Some(&Labels::new())), Tri::No);
        assert_eq!(matches(&s, None), Tri::Maybe);
        let e = sel("matchExpressions:\n- {key: team, operator: DoesNotExist}\n");
        assert_eq!(matches(&e, Some(&labels)), Tri::Yes);
        assert_eq!(matches(&sel("{}"), None), Tri::Yes);
    }
}
