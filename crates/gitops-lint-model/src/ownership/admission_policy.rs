//! Kubernetes `MutatingAdmissionPolicy` + `MutatingAdmissionPolicyBinding` as writers
//! (https://kubernetes.io/docs/reference/access-authn-authz/mutating-admission-policy/). Paths come
//! from simple literal CEL: `ApplyConfiguration` expressions built from `Object{…}` literals, and
//! `JSONPatch` expressions listing `JSONPatch{op, path, value}` literals. Anything else is not a
//! known write.

use super::path::{Pattern, Seg};
use super::{Effect, Firing, Mode, Mutator, Scope, Write};
use crate::gitops::ModelObject;
use crate::yaml::Node;

/// A CEL literal, as far as the writes go.
#[derive(Debug)]
enum Lit {
    /// `Name{field: value, …}`
    Object(Vec<(String, Lit)>),
    List(Vec<Lit>),
    Scalar(String),
    /// Anything computed (`object.metadata.name + "-x"`).
    Unknown,
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> String {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || matches!(self.s[self.i], b'_' | b'.'))
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn string(&mut self) -> Option<String> {
        self.ws();
        let quote = *self.s.get(self.i)?;
        if quote != b'"' && quote != b'\'' {
            return None;
        }
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != quote {
            if self.s[self.i] == b'\\' {
                self.i += 1;
            }
            self.i += 1;
        }
        let text = String::from_utf8_lossy(self.s.get(start..self.i)?).into_owned();
        self.i += 1;
        Some(text)
    }

    /// Skip a computed expression up to the next `,` / `}` / `]` at this level.
    fn skip_expr(&mut self) {
        let mut level = 0usize;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'(' | b'[' | b'{' => level += 1,
                b')' | b']' | b'}' if level == 0 => return,
                b')' | b']' | b'}' => level -= 1,
                b',' if level == 0 => return,
                b'"' | b'\'' => {
                    let _ = self.string();
                    continue;
                }
                _ => {}
            }
            self.i += 1;
        }
    }

    fn value(&mut self) -> Lit {
        self.depth += 1;
        if self.depth > 64 {
            return Lit::Unknown;
        }
        let lit = self.value_inner();
        self.depth -= 1;
        lit
    }

    fn value_inner(&mut self) -> Lit {
        self.ws();
        let start = self.i;
        if let Some(s) = self.string() {
            return self.end_or_unknown(Lit::Scalar(s), start);
        }
        if self.eat(b'[') {
            let mut items = Vec::new();
            while !self.eat(b']') {
                let before = self.i;
                if before >= self.s.len() {
                    return Lit::Unknown;
                }
                items.push(self.value());
                self.eat(b',');
                // A closing `}` or `)` where the list should go on consumes nothing: without
                // this the loop would push unknown items forever (found by the lint_repo fuzzer).
                if self.i == before {
                    return Lit::Unknown;
                }
            }
            return self.end_or_unknown(Lit::List(items), start);
        }
        let word = self.ident();
        if self.eat(b'{') {
            let mut fields = Vec::new();
            while !self.eat(b'}') {
                let before = self.i;
                let key = self.ident();
                if key.is_empty() || !self.eat(b':') {
                    return Lit::Unknown;
                }
                fields.push((key, self.value()));
                self.eat(b',');
                if self.i == before {
                    return Lit::Unknown;
                }
            }
            return self.end_or_unknown(Lit::Object(fields), start);
        }
        if matches!(word.as_str(), "true" | "false")
            || (!word.is_empty() && word.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        {
            return self.end_or_unknown(Lit::Scalar(word), start);
        }
        self.i = start;
        self.skip_expr();
        Lit::Unknown
    }

    /// A literal followed by an operator (`"a" + x`) is computed.
    fn end_or_unknown(&mut self, lit: Lit, start: usize) -> Lit {
        self.ws();
        match self.s.get(self.i) {
            None | Some(b',' | b'}' | b']' | b')') => lit,
            Some(_) => {
                self.i = start;
                self.skip_expr();
                Lit::Unknown
            }
        }
    }
}

fn parse(expr: &str) -> Lit {
    Parser {
        s: expr.as_bytes(),
        i: 0,
        depth: 0,
    }
    .value()
}

/// Writes of an apply configuration: every leaf under the `Object{…}` literal. List items
/// select elements by their `name` (the usual merge key).
fn apply_writes(lit: &Lit, prefix: &mut Vec<Seg>, out: &mut Vec<(Pattern, Option<String>)>) {
    match lit {
        Lit::Object(fields) => {
            for (k, v) in fields {
                prefix.push(Seg::Key(k.clone()));
                apply_writes(v, prefix, out);
                prefix.pop();
            }
        }
        Lit::List(items)
            if items.iter().all(|i| matches!(i, Lit::Object(_))) && !items.is_empty() =>
        {
            for item in items {
                let Lit::Object(fields) = item else { continue };
                let name = fields.iter().find_map(|(k, v)| match (k.as_str(), v) {
                    ("name", Lit::Scalar(n)) => Some(n.clone()),
                    _ => None,
                });
                prefix.push(Seg::Each(
                    name.map(|n| vec![("name".into(), n)]).unwrap_or_default(),
                ));
                for (k, v) in fields.iter().filter(|(k, _)| k != "name") {
                    prefix.push(Seg::Key(k.clone()));
                    apply_writes(v, prefix, out);
                    prefix.pop();
                }
                prefix.pop();
            }
        }
        Lit::Scalar(v) => out.push((Pattern(prefix.clone()), Some(v.clone()))),
        Lit::List(_) | Lit::Unknown => out.push((Pattern(prefix.clone()), None)),
    }
}

fn json_patch_writes(lit: &Lit, out: &mut Vec<(Pattern, Option<String>)>) {
    let Lit::List(ops) = lit else { return };
    for op in ops {
        let Lit::Object(fields) = op else { continue };
        let get = |k: &str| fields.iter().find(|(f, _)| f == k).map(|(_, v)| v);
        let Some(Lit::Scalar(kind)) = get("op") else {
            continue;
        };
        if !matches!(kind.as_str(), "add" | "replace" | "remove") {
            continue;
        }
        let Some(Lit::Scalar(path)) = get("path") else {
            continue;
        };
        let Some(pattern) = Pattern::parse_pointer(path) else {
            continue;
        };
        let value = match get("value") {
            Some(Lit::Scalar(v)) if kind != "remove" => Some(v.clone()),
            _ => None,
        };
        out.push((pattern, value));
    }
}

/// `deployments` → `Deployment` for the resources policies name.
fn kind_of(resource: &str) -> Option<&'static str> {
    Some(match resource {
        "deployments" => "Deployment",
        "statefulsets" => "StatefulSet",
        "daemonsets" => "DaemonSet",
        "replicasets" => "ReplicaSet",
        "jobs" => "Job",
        "cronjobs" => "CronJob",
        "pods" => "Pod",
        "services" => "Service",
        "configmaps" => "ConfigMap",
        "secrets" => "Secret",
        "serviceaccounts" => "ServiceAccount",
        "ingresses" => "Ingress",
        "*" => "*",
        _ => return None,
    })
}

fn strings(node: Option<&Node>) -> Vec<String> {
    node.and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::scalar_text)
        .collect()
}

/// The scope of `matchConstraints` / `matchResources`.
fn scope(m: Option<&Node>, on_update: &mut bool) -> Scope {
    let mut kinds = Vec::new();
    let mut had_rules = false;
    for rule in m
        .and_then(|m| m.get("resourceRules"))
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        had_rules = true;
        let ops = strings(rule.get("operations"));
        if !ops.is_empty() && !ops.iter().any(|o| o == "UPDATE" || o == "*") {
            *on_update = false;
        }
        if !ops.is_empty()
            && !ops
                .iter()
                .any(|o| matches!(o.as_str(), "CREATE" | "UPDATE" | "*"))
        {
            continue; // DELETE / CONNECT only: never on apply
        }
        let groups = strings(rule.get("apiGroups"));
        for r in strings(rule.get("resources")) {
            let Some(kind) = kind_of(&r) else { continue };
            if groups.is_empty() || groups.iter().any(|g| g == "*") {
                kinds.push((None, kind.to_string()));
            }
            for g in groups.iter().filter(|g| *g != "*") {
                kinds.push((Some(g.clone()), kind.to_string()));
            }
        }
    }
    Scope {
        // Rules that name only resources we cannot map (or only DELETE) select nothing we
        // know; an empty kind list would select everything.
        never: had_rules && kinds.is_empty(),
        kinds,
        namespace_selector: m.and_then(|m| m.get("namespaceSelector")).cloned(),
        object_selector: m.and_then(|m| m.get("objectSelector")).cloned(),
        ..Scope::default()
    }
}

fn is_kind(mo: &ModelObject, kind: &str) -> bool {
    mo.object.group() == "admissionregistration.k8s.io" && mo.object.kind == kind
}

/// Writers for every policy that a binding in the repo puts into effect.
pub fn mutators(objects: &[ModelObject], out: &mut Vec<Mutator>) {
    for binding in objects
        .iter()
        .filter(|m| is_kind(m, "MutatingAdmissionPolicyBinding"))
    {
        let spec = binding.object.root.get("spec");
        let Some(policy_name) = spec
            .and_then(|s| s.get("policyName"))
            .and_then(Node::scalar_text)
        else {
            continue;
        };
        let Some(policy) = objects
            .iter()
            .find(|m| is_kind(m, "MutatingAdmissionPolicy") && m.object.name == policy_name)
        else {
            continue;
        };
        let pspec = policy.object.root.get("spec");
        let mut on_update = true;
        let policy_scope = scope(
            pspec.and_then(|s| s.get("matchConstraints")),
            &mut on_update,
        );
        let mut binding_scope = scope(spec.and_then(|s| s.get("matchResources")), &mut on_update);
        // The binding narrows by selectors; its resource rules are not modelled (the
        // policy's constraints decide the kinds).
        binding_scope.kinds.clear();
        binding_scope.never = false;
        let mut writes = Vec::new();
        for m in pspec
            .and_then(|s| s.get("mutations"))
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            let mut found = Vec::new();
            match m.get_str("patchType") {
                Some("ApplyConfiguration") => {
                    if let Some(expr) = m
                        .get_path(&["applyConfiguration", "expression"])
                        .and_then(Node::as_str)
                    {
                        apply_writes(&parse(expr), &mut Vec::new(), &mut found);
                    }
                }
                Some("JSONPatch") => {
                    if let Some(expr) = m
                        .get_path(&["jsonPatch", "expression"])
                        .and_then(Node::as_str)
                    {
                        json_patch_writes(&parse(expr), &mut found);
                    }
                }
                _ => {}
            }
            for (path, value) in found {
                writes.push(Write {
                    path,
                    mode: Mode::Overwrite,
                    value,
                    span: m.span,
                    effect: Effect::Set,
                });
            }
        }
        if writes.is_empty() {
            continue;
        }
        out.push(Mutator {
            owner: format!("MutatingAdmissionPolicy {policy_name}"),
            span: policy.object.name_span(),
            firing: Firing::Admission { on_update },
            match_any: vec![policy_scope],
            match_all: vec![binding_scope],
            exclude: Vec::new(),
            exclude_all: Vec::new(),
            own_namespace: None,
            // Conditions are evaluated per object (`cel.rs`); only a list that is there but
            // unreadable leaves the policy "may apply" for every object.
            conditional: pspec
                .and_then(|s| s.get("matchConditions"))
                .is_some_and(|c| !c.is_empty_value() && c.as_seq().is_none()),
            preconditions: None,
            match_conditions: super::cel::CelCondition::read_all(
                pspec.and_then(|s| s.get("matchConditions")),
            ),
            autogen: Vec::new(),
            writes,
            deployed_by: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_cut_short_by_a_closing_brace_ends_instead_of_looping() {
        // `[Object.x{...}}]`: the extra `}` stops the list item; the list must give up
        // (found by the lint_repo fuzzer as a hang growing to gigabytes).
        let lit = parse("Object{spec: [Object.spec.a{name: \"web\", x: \"y\"}}]}");
        assert!(matches!(lit, Lit::Object(_) | Lit::Unknown));
    }

    #[test]
    fn apply_configuration_literals_become_paths() {
        let lit = parse(
            r#"Object{ spec: Object.spec{ template: Object.spec.template{ spec: Object.spec.template.spec{
                 containers: [Object.spec.template.spec.containers{name: "api", imagePullPolicy: "Always"}],
                 priorityClassName: object.metadata.name + "-prio" } } } }"#,
        );
        let mut out = Vec::new();
        apply_writes(&lit, &mut Vec::new(), &mut out);
        let shown: Vec<(String, Option<String>)> =
            out.iter().map(|(p, v)| (p.display(), v.clone())).collect();
        assert_eq!(
            shown,
            [
                (
                    "spec.template.spec.containers[name:api].imagePullPolicy".to_string(),
                    Some("Always".to_string())
                ),
                ("spec.template.spec.priorityClassName".to_string(), None),
            ]
        );
        let mut ops = Vec::new();
        json_patch_writes(
            &parse(
                r#"[JSONPatch{op: "replace", path: "/spec/replicas", value: 3}, JSONPatch{op: "test", path: "/x"}]"#,
            ),
            &mut ops,
        );
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].1.as_deref(), Some("3"));
    }
}
