//! Patch and replacement targets: group/version/kind/name/namespace as anchored regular
//! expressions, plus label and annotation selectors.

use super::resource::Resource;
use super::tree;
use crate::yaml::Node;
use regex::Regex;

#[derive(Debug, Clone, Default)]
pub struct Selector {
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub label_selector: Option<String>,
    pub annotation_selector: Option<String>,
}

fn field(n: &Node, k: &str) -> Option<String> {
    n.get(k).and_then(tree::text).filter(|s| !s.is_empty())
}

impl Selector {
    pub fn from_node(n: &Node) -> Selector {
        Selector {
            group: field(n, "group"),
            version: field(n, "version"),
            kind: field(n, "kind"),
            name: field(n, "name"),
            namespace: field(n, "namespace"),
            label_selector: field(n, "labelSelector"),
            annotation_selector: field(n, "annotationSelector"),
        }
    }

    pub fn compile(&self) -> Result<CompiledSelector, String> {
        let re = |s: &Option<String>| -> Result<Option<Regex>, String> {
            match s {
                None => Ok(None),
                Some(p) => Regex::new(&format!("^(?:{p})$"))
                    .map(Some)
                    .map_err(|e| e.to_string()),
            }
        };
        Ok(CompiledSelector {
            group: re(&self.group)?,
            version: re(&self.version)?,
            kind: re(&self.kind)?,
            name: re(&self.name)?,
            namespace: re(&self.namespace)?,
            labels: self
                .label_selector
                .as_deref()
                .map(parse_label_selector)
                .transpose()?,
            annotations: self
                .annotation_selector
                .as_deref()
                .map(parse_label_selector)
                .transpose()?,
        })
    }
}

pub struct CompiledSelector {
    group: Option<Regex>,
    version: Option<Regex>,
    kind: Option<Regex>,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: Option<Vec<Requirement>>,
    annotations: Option<Vec<Requirement>>,
}

impl CompiledSelector {
    pub fn matches(&self, r: &Resource) -> bool {
        let ok = |re: &Option<Regex>, v: &str| re.as_ref().is_none_or(|re| re.is_match(v));
        if !ok(&self.group, &r.group())
            || !ok(&self.version, &r.version())
            || !ok(&self.kind, &r.kind())
        {
            return false;
        }
        if let Some(re) = &self.name
            && !r.all_names().iter().any(|n| re.is_match(n))
        {
            return false;
        }
        if let Some(re) = &self.namespace {
            let mut spaces: Vec<String> = r.history.iter().map(|(_, ns)| ns.clone()).collect();
            spaces.push(r.namespace().into_owned());
            let any = spaces.iter().any(|ns| {
                let eff = if ns.is_empty() {
                    "default"
                } else {
                    ns.as_str()
                };
                re.is_match(eff) || re.is_match(ns)
            });
            if !any {
                return false;
            }
        }
        if let Some(reqs) = &self.labels
            && !reqs.iter().all(|q| q.matches(&r.labels()))
        {
            return false;
        }
        if let Some(reqs) = &self.annotations
            && !reqs.iter().all(|q| q.matches(&r.annotations()))
        {
            return false;
        }
        true
    }
}

#[derive(Debug, Clone)]
enum Requirement {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

impl Requirement {
    fn matches(&self, labels: &[(String, String)]) -> bool {
        let get = |k: &str| {
            labels
                .iter()
                .rev()
                .find(|(lk, _)| lk == k)
                .map(|(_, v)| v.as_str())
        };
        match self {
            Requirement::Eq(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEq(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        }
    }
}

/// Kubernetes label selector syntax: `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
fn parse_label_selector(s: &str) -> Result<Vec<Requirement>, String> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    let mut out = Vec::new();
    for p in parts {
        let p = p.trim();
        if p.is_empty() {
            continue;
        }
        let set = |rest: &str| -> Vec<String> {
            rest.trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect()
        };
        if let Some((k, v)) = p.split_once("!=") {
            out.push(Requirement::NotEq(k.trim().into(), v.trim().into()));
        } else if let Some((k, v)) = p.split_once("==") {
            out.push(Requirement::Eq(k.trim().into(), v.trim().into()));
        } else if let Some((k, v)) = p.split_once('=') {
            out.push(Requirement::Eq(k.trim().into(), v.trim().into()));
        } else if let Some((k, rest)) = p.split_once(" notin ") {
            out.push(Requirement::NotIn(k.trim().into(), set(rest)));
        } else if let Some((k, rest)) = p.split_once(" in ") {
            out.push(Requirement::In(k.trim().into(), set(rest)));
        } else if let Some(k) = p.strip_prefix('!') {
            out.push(Requirement::NotExists(k.trim().into()));
        } else if p.chars().all(|c| c.is_alphanumeric() || "-_./".contains(c)) {
            out.push(Requirement::Exists(p.into()));
        } else {
            return Err(format!("unable to parse requirement: {p}"));
        }
    }
    Ok(out)
}
