//! Inputs the linter will not fetch or run offline (remote bases and files, charts and chart
//! dependencies that are not fetched or vendored, plugins). Each app still lints what renders
//! without them; what is missing is reported once per input, with the apps that need it.

use super::util::ForApp;
use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use crate::finding::{Finding, Severity};
use crate::gitops::App;
use crate::render::{IssueKind, MissingInput, RenderIssue};
use std::collections::BTreeMap;

pub const ID: &str = "offline-unrenderable-input";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Warning,
    graded: &[
        Grade {
            severity: Severity::Info,
            when: "what is missing exists only in the cluster (the clusters an ApplicationSet's cluster generator reads, HelmRelease values only the cluster holds): nothing to fetch or vendor",
        },
    ],
    summary: "an input cannot be rendered offline (remote base, plugin, chart not vendored)",
    doc: include_str!("../../rules/offline-unrenderable-input.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::Apps,
};

/// How many app names a message lists before it counts the rest.
const NAMED_APPS: usize = 5;
/// How many other places a finding points at (every use and every step left undone).
const RELATED_PLACES: usize = 20;

/// The one wording for a remote input: where it comes from and how to get it linted.
const FETCH_HELP: &str = "Run `gitops-lint fetch` (in the GitHub Action: the `fetch` input, on by default) to download it, verified and pinned in `.gitops-lint.lock`; lint then renders it from that cache, still without the network. Or vendor it into the repository.";
const LOCAL_HELP: &str = "Vendor it into the repository, or lint it where it lives: lint never uses the network, runs plugins or reads the cluster.";
const VENDOR_HELP: &str = "`gitops-lint fetch` does not download this kind of input: vendor it into the repository (and point the entry at the copy) to have it linted; lint never uses the network.";
const IN_CLUSTER_HELP: &str = "Nothing to fetch: Argo CD's clusters are registered in the cluster, not in Git, so each template is linted once for a stand-in cluster. Cluster Secrets the repository holds (label `argocd.argoproj.io/secret-type: cluster`, for example as ExternalSecret or SealedSecret templates) are expanded as Argo CD expands them.";

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    let mut by_input: BTreeMap<&MissingInput, Vec<(&App, &RenderIssue)>> = BTreeMap::new();
    for app in &model.apps {
        for issue in app.issues.iter().filter(|i| i.kind.is_unrenderable()) {
            match &issue.input {
                Some(input) => by_input.entry(input).or_default().push((app, issue)),
                None => out.push(single(app, issue)),
            }
        }
    }
    for (input, uses) in by_input {
        out.push(per_input(model, input, uses));
    }
}

/// An input that is nothing to fetch or vendor as such (a plugin, a value file a downloader
/// reads, an object the repository does not hold).
fn single(app: &App, issue: &RenderIssue) -> Finding {
    // What only the cluster holds cannot be vendored: a note, not a warning.
    let severity = if issue.kind == IssueKind::InCluster {
        Severity::Info
    } else {
        Severity::Warning
    };
    Finding::new(
        ID,
        severity,
        format!("app `{}` is only partly linted: {}", app.name, issue.message),
        issue.span,
    )
    .label("not fetched or run offline")
    .for_app(app)
    .help(LOCAL_HELP)
}

/// One finding for one missing input: on the first place it is named, with the apps that
/// render without it and the steps (patches, replacements) left undone for it.
fn per_input(model: &Scope, input: &MissingInput, mut uses: Vec<(&App, &RenderIssue)>) -> Finding {
    let map = &model.map;
    let place = |i: &RenderIssue| (map.path(i.span.file), i.span.start);
    // Pointed at where it matters: a use by an app something deploys, before archived or
    // standalone copies; the input's own entry before the steps it leaves undone.
    uses.sort_by_key(|(app, i)| {
        (
            i.kind == IssueKind::NotApplied,
            model.applied_by_nothing(app),
            place(i),
            app.name.clone(),
        )
    });
    uses.dedup_by(|a, b| a.1.span == b.1.span && a.0.name == b.0.name);
    let mut apps: Vec<&App> = Vec::new();
    for (app, _) in &uses {
        if !apps.iter().any(|a| std::ptr::eq(*a, *app)) {
            apps.push(app);
        }
    }
    let mut names: Vec<&str> = apps.iter().map(|a| a.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let not_applied = uses
        .iter()
        .filter(|(_, i)| i.kind == IssueKind::NotApplied)
        .count();
    let in_cluster = uses.iter().all(|(_, i)| i.kind == IssueKind::InCluster);
    let (first_app, first) = uses[0];
    // The finding speaks for an app that something deploys, when one does: the deployment
    // policy then keeps it a warning.
    let speaker = apps
        .iter()
        .find(|a| !model.applied_by_nothing(a))
        .copied()
        .unwrap_or(first_app);
    let listed = match names.len() {
        1 => format!("app `{}` is linted without it", names[0]),
        n if n <= NAMED_APPS => format!("{n} apps are linted without it: {}", names.join(", ")),
        n => format!(
            "{n} apps are linted without it: {}, and {} more",
            names[..NAMED_APPS].join(", "),
            n - NAMED_APPS
        ),
    };
    let undone = match not_applied {
        0 => String::new(),
        1 => "; 1 patch or replacement that may target what it holds is not applied".to_string(),
        n => format!("; {n} patches or replacements that may target what it holds are not applied"),
    };
    let (message, severity, help) = if in_cluster {
        (
            format!("{} are not in the repository: {listed} ({})", input.name, first.message),
            Severity::Info,
            IN_CLUSTER_HELP,
        )
    } else if input.fetchable {
        (
            format!(
                "{} is not fetched: {listed}{undone}; run `gitops-lint fetch` (in the Action: `fetch: true`) to render it",
                input.name
            ),
            Severity::Warning,
            FETCH_HELP,
        )
    } else {
        (
            format!("{} is not available offline: {listed}{undone} ({})", input.name, first.message),
            Severity::Warning,
            VENDOR_HELP,
        )
    };
    let mut finding = Finding::new(ID, severity, message, first.span)
        .label(if first.kind == IssueKind::NotApplied {
            "not applied offline"
        } else {
            "rendered without it"
        })
        .field(input.name.clone())
        .for_app(speaker)
        .help(help);
    for (app, issue) in uses.iter().skip(1).take(RELATED_PLACES) {
        if issue.span == first.span {
            continue;
        }
        let text = if issue.kind == IssueKind::NotApplied {
            format!("app `{}`: {}", app.name, issue.message)
        } else {
            format!("also named here (app `{}`)", app.name)
        };
        finding = finding.secondary(issue.span, text);
    }
    finding
}
