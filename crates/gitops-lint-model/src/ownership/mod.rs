//! The ownership engine: for a rendered object and the paths it
//! declares, who else writes them. Writers come from the repo (Kyverno and Gatekeeper
//! policies with their selectors, namespace labels from the repo's Namespace objects), from
//! platform facts in `.gitops-lint.yaml` (`platform.owned-fields`, for webhooks outside the
//! repo), and from the knowledge base of controller-written fields ([`kb`]).
//! Rules ask; the engine never reports.

mod admission_policy;
pub mod cel;
pub mod ci;
pub mod crd;
mod gatekeeper;
pub mod k8s_schema;
pub mod kb;
mod kyverno;
pub mod namespaces;
pub mod operators;
// Field-path patterns live with the YAML tree they resolve against (config validates them too).
pub use crate::yaml::path;
mod platform;
pub mod preconditions;
pub mod quantity;
pub mod scalers;
pub mod selector;
pub mod writers;

use crate::gitops::ignore::IgnoreEntry;
use crate::gitops::{Model, ModelObject};
use crate::source::Span;
use crate::yaml::Node;
use namespaces::NamespaceLabels;
use path::{Hit, Pattern, resolve};
use selector::Tri;

/// How a writer treats a field Git declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Replaces (or removes) whatever is there.
    Overwrite,
    /// Only sets the field when it is absent (Kyverno `+(key)`, Gatekeeper `MustNotExist`):
    /// never fights a declared value.
    AddIfAbsent,
}

/// What a write does to the declared value.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Replaces it with `Write::value` (or removes it / computes it when `None`).
    Set,
    /// Gatekeeper `ModifySet` merge: adds these list values.
    SetMerge(Vec<String>),
    /// Gatekeeper `ModifySet` prune: removes these list values.
    SetPrune(Vec<String>),
    /// Gatekeeper `AssignImage`: replaces parts of an image reference.
    Image {
        domain: Option<String>,
        path: Option<String>,
        tag: Option<String>,
    },
}

/// One field a writer sets.
#[derive(Clone, Debug)]
pub struct Write {
    /// Relative to the object the writer matches (before pod-controller auto-generation).
    pub path: Pattern,
    pub mode: Mode,
    /// The value written, when the repo says it literally (`None`: computed or removed).
    pub value: Option<String>,
    /// Where the write is declared (the policy line).
    pub span: Span,
    pub effect: Effect,
}

impl Write {
    /// What the writer does, for messages: "sets … to `Always`", "adds [a] to …".
    pub fn describe(&self, field: &str) -> String {
        match &self.effect {
            Effect::Set => match &self.value {
                Some(v) => format!("sets {field} to `{v}`"),
                None => format!("overwrites {field} with a value the repo cannot predict"),
            },
            Effect::SetMerge(v) => format!("adds [{}] to {field}", v.join(", ")),
            Effect::SetPrune(v) => format!("removes [{}] from {field}", v.join(", ")),
            Effect::Image { .. } => format!("rewrites the image reference in {field}"),
        }
    }

    /// The value the writer leaves when Git declares `declared` (None: unpredictable).
    fn result_for(&self, declared: &Node) -> Option<Result<String, bool>> {
        match &self.effect {
            Effect::Set => self.value.clone().map(Ok),
            // Ok(text) for scalars; Err(changes?) for list operations.
            Effect::SetMerge(values) => {
                let have: Vec<String> = declared
                    .as_seq()?
                    .iter()
                    .filter_map(Node::scalar_text)
                    .collect();
                Some(Err(values.iter().any(|v| !have.contains(v))))
            }
            Effect::SetPrune(values) => {
                let have: Vec<String> = declared
                    .as_seq()?
                    .iter()
                    .filter_map(Node::scalar_text)
                    .collect();
                Some(Err(values.iter().any(|v| have.contains(v))))
            }
            Effect::Image { domain, path, tag } => {
                let image = declared.scalar_text()?;
                Some(Ok(assign_image(&image, domain, path, tag)))
            }
        }
    }
}

/// Gatekeeper `AssignImage`: split `domain/path:tag` (or `@digest`) and replace the parts
/// given. A first component is a domain when it has a `.` or `:` or is `localhost`.
pub fn assign_image(
    image: &str,
    domain: &Option<String>,
    path: &Option<String>,
    tag: &Option<String>,
) -> String {
    let (d, rest) = match image.split_once('/') {
        Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => {
            (Some(first.to_string()), rest.to_string())
        }
        _ => (None, image.to_string()),
    };
    let split_at = rest
        .find('@')
        .or_else(|| rest.rfind(':').filter(|i| !rest[*i..].contains('/')));
    let (p, t) = match split_at {
        Some(i) => (rest[..i].to_string(), Some(rest[i..].to_string())),
        None => (rest, None),
    };
    let d = domain.clone().or(d);
    let p = path.clone().unwrap_or(p);
    let t = tag.clone().or(t);
    let mut out = String::new();
    if let Some(d) = d {
        out.push_str(&d);
        out.push('/');
    }
    out.push_str(&p);
    if let Some(t) = t {
        out.push_str(&t);
    }
    out
}

/// When a writer acts, which decides whether Argo's server-side diff can hide it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Firing {
    /// A mutating admission policy or webhook; `on_update` when it also fires on UPDATE
    /// (server-side diff's dry run then sees the mutation).
    Admission { on_update: bool },
    /// A background mutation of existing objects (Kyverno `mutate.targets`): never
    /// neutralized by server-side diff.
    Background,
}

/// Which objects a writer acts on (one Kyverno resource filter, a Gatekeeper match, a
/// platform selector). Empty lists match everything.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// `(group, kind)` globs; `None` group matches any group.
    pub kinds: Vec<(Option<String>, String)>,
    pub names: Vec<String>,
    pub namespaces: Vec<String>,
    /// Annotation keys, one of which the object carries (empty: any object).
    pub annotations: Vec<String>,
    pub excluded_namespaces: Vec<String>,
    pub object_selector: Option<Node>,
    pub namespace_selector: Option<Node>,
    /// Filters the repo cannot evaluate (request subjects, annotations on the request).
    pub opaque: bool,
    /// Selects only operations an apply never performs (DELETE, CONNECT).
    pub never: bool,
}

/// A writer: a policy rule, an Assign mutation, a platform fact.
#[derive(Clone, Debug)]
pub struct Mutator {
    /// Human name: `ClusterPolicy/force-image-pull rule always-pull`.
    pub owner: String,
    /// The rule or mutation a person reads (secondary label).
    pub span: Span,
    pub firing: Firing,
    /// Any of these scopes (Kyverno `match.any`; a single scope otherwise)…
    pub match_any: Vec<Scope>,
    /// …and all of these (Kyverno `match.all`).
    pub match_all: Vec<Scope>,
    /// Excluded when any of these match (Kyverno `exclude.any`)…
    pub exclude: Vec<Scope>,
    /// …or when all of these do (Kyverno `exclude.all`).
    pub exclude_all: Vec<Scope>,
    /// A namespaced Kyverno `Policy` acts only in its own namespace.
    pub own_namespace: Option<String>,
    /// Preconditions or anchors the repo cannot evaluate: the writer "may" apply.
    pub conditional: bool,
    /// CEL `matchConditions` (MutatingAdmissionPolicy): evaluated per object; one that is
    /// false excludes it, one the repo cannot decide makes the writer "may" apply.
    pub match_conditions: Vec<cel::CelCondition>,
    /// Kyverno rule `preconditions`, evaluated per object in their common form.
    pub preconditions: Option<Node>,
    /// Kyverno auto-generation: rules on `Pod` also mutate these pod controllers.
    pub autogen: Vec<String>,
    pub writes: Vec<Write>,
    /// The app that deploys the writer (its policy object), when the repo does: it never acts
    /// on objects another cluster runs (`Model::placement`).
    pub deployed_by: Option<usize>,
}

/// Where a pod template sits in a pod controller (Kyverno auto-gen rewrites paths so).
pub fn pod_template_prefix(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "Job"
        | "ReplicationController" => Some(&["spec", "template"]),
        "CronJob" => Some(&["spec", "jobTemplate", "spec", "template"]),
        _ => None,
    }
}

impl Scope {
    fn kind_matches(&self, group: &str, kind: &str) -> bool {
        self.kinds.is_empty()
            || self.kinds.iter().any(|(g, k)| {
                crate::gitops::ignore::glob_match(k, kind)
                    && g.as_deref()
                        .is_none_or(|g| crate::gitops::ignore::glob_match(g, group))
            })
    }

    /// Does this scope select the object (as `as_kind` when auto-generated from `Pod`)?
    fn applies(&self, mo: &ModelObject, as_kind: (&str, &str), ns: &NamespaceLabels) -> Tri {
        let o = &mo.object;
        if self.never || !self.kind_matches(as_kind.0, as_kind.1) {
            return Tri::No;
        }
        let glob = crate::gitops::ignore::glob_match;
        if !self.names.is_empty() && !self.names.iter().any(|n| glob(n, &o.name)) {
            return Tri::No;
        }
        if !self.namespaces.is_empty() && !self.namespaces.iter().any(|n| glob(n, &mo.namespace)) {
            return Tri::No;
        }
        if self
            .excluded_namespaces
            .iter()
            .any(|n| glob(n, &mo.namespace))
        {
            return Tri::No;
        }
        if !self.annotations.is_empty()
            && !self.annotations.iter().any(|a| o.annotation(a).is_some())
        {
            return Tri::No;
        }
        let mut result = Tri::Yes;
        if let Some(sel) = &self.object_selector {
            let labels = selector::labels_of(o.metadata().and_then(|m| m.get("labels")));
            result = result.and(selector::matches(sel, Some(&labels)));
        }
        if let Some(sel) = &self.namespace_selector {
            result = result.and(selector::matches(sel, ns.labels(&mo.namespace)));
        }
        if self.opaque {
            result = result.and(Tri::Maybe);
        }
        result
    }
}

impl Mutator {
    /// Does this writer act on the object, and under which path prefix (pod controllers
    /// under auto-generation get `spec.template…`)?
    pub fn applies(
        &self,
        mo: &ModelObject,
        ns: &NamespaceLabels,
    ) -> (Tri, &'static [&'static str]) {
        let o = &mo.object;
        if let Some(own) = &self.own_namespace
            && own != &mo.namespace
        {
            return (Tri::No, &[]);
        }

        let direct = self.evaluate(mo, (o.group(), &o.kind), ns);
        if direct != Tri::No {
            return (direct, &[]);
        }
        if let Some(prefix) = pod_template_prefix(&o.kind)
            && self.autogen.iter().any(|k| k == &o.kind)
        {
            return (self.evaluate(mo, ("", "Pod"), ns), prefix);
        }
        (Tri::No, &[])
    }

    fn evaluate(&self, mo: &ModelObject, as_kind: (&str, &str), ns: &NamespaceLabels) -> Tri {
        let mut result = if self.match_any.is_empty() {
            Tri::Yes
        } else {
            self.match_any
                .iter()
                .map(|s| s.applies(mo, as_kind, ns))
                .fold(Tri::No, Tri::or)
        };
        for s in &self.match_all {
            result = result.and(s.applies(mo, as_kind, ns));
        }
        if self.match_any.is_empty() && self.match_all.is_empty() {
            return Tri::No;
        }
        let mut excluded = self
            .exclude
            .iter()
            .map(|s| s.applies(mo, as_kind, ns))
            .fold(Tri::No, Tri::or);
        if !self.exclude_all.is_empty() {
            let all = self
                .exclude_all
                .iter()
                .map(|s| s.applies(mo, as_kind, ns))
                .fold(Tri::Yes, Tri::and);
            excluded = excluded.or(all);
        }
        result = result.and(excluded.negate());
        if self.conditional {
            result = result.and(Tri::Maybe);
        }
        if result != Tri::No {
            for c in &self.match_conditions {
                result = result.and(cel::evaluate(&c.expression, &mo.object.root, &mo.namespace));
                if result == Tri::No {
                    break;
                }
            }
        }
        if result != Tri::No
            && let Some(pre) = &self.preconditions
        {
            result = result.and(preconditions::evaluate(pre, &mo.object.root, &mo.namespace).0);
        }
        result
    }

    /// The first condition the repo cannot decide for `mo`, as a person reads it: a CEL
    /// match condition (name and expression) or a Kyverno precondition key.
    pub fn undecided_condition(&self, mo: &ModelObject) -> Option<String> {
        if let Some(c) = self
            .match_conditions
            .iter()
            .find(|c| cel::evaluate(&c.expression, &mo.object.root, &mo.namespace) == Tri::Maybe)
        {
            return Some(format!(
                "matchCondition `{}` — `{}`",
                c.name,
                c.expression.trim()
            ));
        }
        let pre = self.preconditions.as_ref()?;
        let (r, key) = preconditions::evaluate(pre, &mo.object.root, &mo.namespace);
        (r == Tri::Maybe).then(|| format!("precondition `{}`", key.unwrap_or_default()))
    }
}

/// A declared field someone else overwrites.
pub struct Claim<'a> {
    pub hit: Hit<'a>,
    pub mutator: &'a Mutator,
    pub write: &'a Write,
    pub applies: Tri,
}

impl Claim<'_> {
    /// Does the writer leave the value Git already declares (then nothing fights)?
    pub fn agrees(&self) -> bool {
        let declared = &self.hit.entry.value;
        match self.write.result_for(declared) {
            Some(Ok(v)) => declared.scalar_text().as_deref() == Some(v.as_str()),
            Some(Err(changes)) => !changes,
            None => false,
        }
    }
}

/// An autoscaler's claim on `spec.replicas` of its target.
pub struct ReplicaWriter {
    pub namespace: String,
    /// Target group (`""` when the reference does not say), kind and name.
    pub group: String,
    pub kind: String,
    pub name: String,
    pub owner: String,
    pub span: Span,
}

/// Everything the engine knows about writers in this repo.
pub struct Ownership {
    pub namespaces: NamespaceLabels,
    pub mutators: Vec<Mutator>,
    /// Operators of the knowledge base the repo shows running (`operators.rs`).
    pub operators: operators::Operators,
    pub replica_writers: Vec<ReplicaWriter>,
}

impl Ownership {
    pub fn build(model: &Model) -> Ownership {
        let mut mutators = Vec::new();
        for mo in &model.objects {
            let before = mutators.len();
            kyverno::mutators(&mo.object, &mut mutators);
            gatekeeper::mutators(&mo.object, &mut mutators);
            for m in &mut mutators[before..] {
                m.deployed_by = Some(mo.app);
            }
        }
        let before = mutators.len();
        admission_policy::mutators(&model.objects, &mut mutators);
        for m in &mut mutators[before..] {
            // The policy's own cluster: where its app deploys it.
            m.deployed_by = model
                .objects
                .iter()
                .find(|mo| {
                    mo.object.kind == "MutatingAdmissionPolicy"
                        && m.owner.ends_with(&format!(" {}", mo.object.name))
                })
                .map(|mo| mo.app);
        }
        for fact in &model.platform.owned_fields {
            mutators.push(platform::mutator(fact));
        }
        let replica_writers = scalers::scalers(model)
            .into_iter()
            .filter(|s| s.kind != scalers::ScalerKind::Vpa)
            .map(|s| ReplicaWriter {
                namespace: s.obj.namespace.clone(),
                owner: s.describe(),
                span: s.target_span,
                group: s.target.0,
                kind: s.target.1,
                name: s.target.2,
            })
            // Autoscalers the cluster has outside the repo (`profile.autoscalers`).
            .chain(model.profile.autoscalers.iter().map(|p| ReplicaWriter {
                namespace: p.namespace.clone(),
                owner: p.describe(),
                span: p.span,
                group: p.target_group.clone(),
                kind: p.target_kind.clone(),
                name: p.target_name.clone(),
            }))
            .collect();
        Ownership {
            namespaces: NamespaceLabels::from_model(model),
            mutators,
            operators: operators::Operators::build(model),
            replica_writers,
        }
    }

    /// What the knowledge base's operators write on `mo`, where the repo shows they act on it.
    pub fn operator_writes(
        &self,
        model: &Model,
        mo: &ModelObject,
    ) -> Vec<operators::OperatorWrite> {
        self.operators.writes(model, &self.namespaces, mo)
    }

    /// Does `m` act on `mo` (same cluster, selectors), and under which path prefix?
    pub fn applies(
        &self,
        model: &Model,
        m: &Mutator,
        mo: &ModelObject,
    ) -> (Tri, &'static [&'static str]) {
        if let Some(writer_app) = m.deployed_by.and_then(|i| model.apps.get(i))
            && crate::gitops::model::cluster::placement(writer_app, model.app_of(mo))
                == crate::gitops::Placement::Different
        {
            return (Tri::No, &[]);
        }
        m.applies(mo, &self.namespaces)
    }

    /// Declared fields of `mo` that a writer overwrites (add-if-absent writes never fight).
    pub fn claims<'a>(&'a self, model: &Model, mo: &'a ModelObject) -> Vec<Claim<'a>> {
        let mut out = Vec::new();
        for m in &self.mutators {
            let (applies, prefix) = self.applies(model, m, mo);
            if applies == Tri::No {
                continue;
            }
            for w in m.writes.iter().filter(|w| w.mode == Mode::Overwrite) {
                for hit in resolve(&mo.object.root, &w.path.under(prefix)) {
                    out.push(Claim {
                        hit,
                        mutator: m,
                        write: w,
                        applies,
                    });
                }
            }
        }
        out
    }
}

/// An effective ignore (app or system: `ignoreDifferences` or `argocd-cm`; a Flux
/// Kustomization's `spec.ignore` or a HelmRelease's `driftDetection.ignore`) that covers `path`
/// of `mo`: `Some((span, respected))`, where `respected` means the sync keeps the live value
/// (Argo CD: only with `RespectIgnoreDifferences=true`; Flux: always).
pub fn covering_ignore(model: &Model, mo: &ModelObject, path: &[String]) -> Option<(Span, bool)> {
    let app = model.app_of(mo);
    if app.flux.is_some() {
        // Flux leaves ignored paths out of drift detection and out of the apply: the live
        // value stays (a Kustomization's rules only where its release reads them).
        let segments: Vec<&str> = path.iter().map(String::as_str).collect();
        return model
            .flux_ignores(app)
            .iter()
            .find(|i| i.covers(&segments) && i.matches(&mo.object, &mo.namespace))
            .map(|i| (i.span, true));
    }
    let argo = app.argo.as_ref()?;
    let covers = |e: &IgnoreEntry| {
        e.matches(&mo.object, &mo.namespace)
            && e.paths().iter().any(|(p, _)| {
                !p.is_empty()
                    && p.len() <= path.len()
                    && p.iter().zip(path).all(|(a, b)| a == "*" || a == b)
            })
    };
    let entry = argo
        .ignores
        .iter()
        .chain(model.argo_settings(app).ignores.iter())
        .find(|e| covers(e))?;
    Some((
        entry.span,
        argo.sync.has_option("RespectIgnoreDifferences=true"),
    ))
}

/// Does the Argo app diff server-side? The Application's compare option
/// (`ServerSideDiff=true|false`) wins over the controller-wide
/// `controller.diff.server.side` in a repo `argocd-cmd-params-cm`. Admission mutations on
/// UPDATE then show on both sides.
pub fn server_side_diff(model: &Model, mo: &ModelObject) -> bool {
    let Some(argo) = model.app_of(mo).argo.as_ref() else {
        return false;
    };
    let app_option = argo
        .decl
        .annotation("argocd.argoproj.io/compare-options")
        .and_then(|v| {
            v.split(',').find_map(|o| match o.trim() {
                "ServerSideDiff=true" => Some(true),
                "ServerSideDiff=false" => Some(false),
                _ => None,
            })
        });
    // The controller-wide flag of the instance that runs the app.
    app_option.unwrap_or_else(|| {
        model
            .argo_settings(model.app_of(mo))
            .server_side_diff
            .unwrap_or(false)
    })
}

/// The span a person edits for a declared entry: key and value when written together,
/// else the value (a rendered value written in a patch or values file).
pub fn edit_span(entry: &crate::yaml::Entry) -> Span {
    if entry.key.span.file == entry.value.span.file {
        entry.key.span.cover(entry.value.span)
    } else {
        entry.value.span
    }
}

#[cfg(test)]
mod tests {
    use super::assign_image;

    #[test]
    fn assign_image_replaces_only_the_given_parts() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            assign_image("nginx:1.25", &some("mirror.example.com"), &None, &None),
            "mirror.example.com/nginx:1.25"
        );
        assert_eq!(
            assign_image(
                "docker.io/library/nginx:1.25",
                &some("mirror.example.com"),
                &None,
                &None
            ),
            "mirror.example.com/library/nginx:1.25"
        );
        assert_eq!(
            assign_image(
                "localhost:5000/app@sha256:abc",
                &None,
                &None,
                &some(":latest")
            ),
            "localhost:5000/app:latest"
        );
        assert_eq!(
            assign_image("app", &None, &some("team/app"), &None),
            "team/app"
        );
    }
}
