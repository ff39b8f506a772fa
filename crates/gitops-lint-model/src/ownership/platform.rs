//! Platform facts from `.gitops-lint.yaml` (`platform.owned-fields`): fields a webhook or
//! controller outside the repo writes, with the selector it applies to.

use super::path::Pattern;
use super::{Effect, Firing, Mode, Mutator, Scope, Write};
use crate::config::OwnedField;

/// The objects an `owned-fields` entry's selector names.
pub(super) fn scope(fact: &OwnedField) -> Scope {
    let kinds = fact
        .kinds
        .iter()
        .map(|k| match k.rsplit_once('/') {
            Some((g, kind)) => (Some(g.to_string()), kind.to_string()),
            None => (None, k.clone()),
        })
        .collect();
    Scope {
        kinds,
        names: fact.names.clone(),
        namespaces: fact.namespaces.clone(),
        annotations: fact.annotations.clone(),
        excluded_namespaces: Vec::new(),
        object_selector: fact.object_selector.clone(),
        namespace_selector: fact.namespace_selector.clone(),
        opaque: false,
        never: false,
    }
}

pub fn mutator(fact: &OwnedField) -> Mutator {
    Mutator {
        owner: format!("platform owner `{}`", fact.owner),
        span: fact.span,
        firing: Firing::Admission { on_update: true },
        match_any: vec![scope(fact)],
        match_all: Vec::new(),
        exclude: Vec::new(),
        exclude_all: Vec::new(),
        own_namespace: None,
        match_conditions: Vec::new(),
        preconditions: None,
        conditional: false,
        autogen: Vec::new(),
        deployed_by: None,
        writes: Pattern::parse_dotted(&fact.path)
            .map(|path| Write {
                path,
                mode: Mode::Overwrite,
                value: fact.value.clone(),
                span: fact.span,
                effect: Effect::Set,
            })
            .into_iter()
            .collect(),
    }
}
