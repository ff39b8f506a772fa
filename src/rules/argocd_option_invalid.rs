//! Misspelled or misplaced sync/compare options, invented
//! `argocd.argoproj.io/*` annotations, and hook values that make an object never apply.

use super::util::ForApp;
use super::{FixAvailability, Grade, Kinds, RuleMeta, Scope};
use super::util::{about, object_id};
use crate::finding::{Finding, Severity};
use crate::yaml::Node;

pub const ID: &str = "argocd-option-invalid";

pub const META: RuleMeta = RuleMeta {
    id: ID,
    severity: Severity::Error,
    graded: &[
        Grade {
            severity: Severity::Warning,
            when: "a valid option sits where Argo CD does not read it: an Application-level sync option or an Application-only compare option on another object, or `ignore-differences-json-pointers` on a resource whose Application does not sync with RespectIgnoreDifferences=true",
        },
        Grade {
            severity: Severity::Info,
            when: "an Application's sync option restates the default or is read by no code (`Replace=false`, `ServerSideApply=false`, `ApplyOutOfSyncOnly=false`, `ClientSideApplyMigration=true`)",
        },
    ],
    summary: "misspelled or misplaced Argo CD sync/compare options, annotations or hook values",
    doc: include_str!("../../rules/argocd-option-invalid.md"),
    fix: FixAvailability::None,
    removal: false,
    security: false,
    since: "0.1.0",
    kinds: Kinds::All,
};

/// App-level `syncOptions` that do something
/// (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/).
const APP_OPTIONS: &[&str] = &[
    "Prune=false",
    "Prune=confirm",
    "Delete=false",
    "Delete=confirm",
    "Validate=false",
    "SkipDryRunOnMissingResource=true",
    "PruneLast=true",
    "Replace=true",
    "ServerSideApply=true",
    "ApplyOutOfSyncOnly=true",
    "PrunePropagationPolicy=foreground",
    "PrunePropagationPolicy=background",
    "PrunePropagationPolicy=orphan",
    "FailOnSharedResource=true",
    "RespectIgnoreDifferences=true",
    "CreateNamespace=true",
    "ClientSideApplyMigration=false",
];
/// App-level options that restate a default or are read by no code.
const APP_NOOPS: &[&str] = &[
    "Replace=false",
    "ServerSideApply=false",
    "ApplyOutOfSyncOnly=false",
    "ClientSideApplyMigration=true",
];
/// `argocd.argoproj.io/sync-options` values on a resource.
const RESOURCE_OPTIONS: &[&str] = &[
    "Prune=false",
    "Prune=confirm",
    "Delete=false",
    "Delete=confirm",
    "Validate=false",
    "SkipDryRunOnMissingResource=true",
    "PruneLast=true",
    "Replace=true",
    "Force=true",
    "ServerSideApply=true",
    "ServerSideApply=false",
];
const APP_ONLY_OPTIONS: &[&str] = &[
    "RespectIgnoreDifferences=true",
    "CreateNamespace=true",
    "ApplyOutOfSyncOnly=true",
    "FailOnSharedResource=true",
    "PrunePropagationPolicy=foreground",
    "PrunePropagationPolicy=background",
    "PrunePropagationPolicy=orphan",
];

const KNOWN_KEYS: &[&str] = &[
    "application-set-refresh",
    "compare-options",
    "hook",
    "hook-delete-policy",
    "hook-finalizer",
    "hydrate",
    "hydrate-timestamp",
    "manifest-generate-paths",
    "managed-by-url",
    "refresh",
    "refresh-timestamp",
    "skip-reconcile",
    "sync-options",
    "sync-wave",
    "tracking-id",
    "installation-id",
    "ignore-default-links",
    "ignore-resource-updates",
    "ignore-restart-policy",
    "ignore-healthcheck",
    "deletion-approved",
    "client-side-apply-migration-manager",
    "instance",
    "secret-type",
    "auto-label-cluster-info",
    "kubernetes-version",
    "managed-by",
];

const HOOKS: &[&str] = &[
    "PreSync",
    "Sync",
    "PostSync",
    "SyncFail",
    "Skip",
    "PreDelete",
    "PostDelete",
];
const DELETE_POLICIES: &[&str] = &["HookSucceeded", "HookFailed", "BeforeHookCreation"];

fn closest<'a>(value: &str, vocabulary: &[&'a str]) -> Option<&'a str> {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let v = norm(value);
    vocabulary
        .iter()
        .copied()
        .find(|c| norm(c) == v)
        .or_else(|| {
            // singular/plural and small typos: same text once `s` and `-` are dropped
            let loose = |s: &str| norm(s).replace(['s', '-', '_'], "");
            vocabulary
                .iter()
                .copied()
                .find(|c| loose(c) == loose(value))
        })
}

pub fn check(model: &Scope, out: &mut Vec<Finding>) {
    for (app, argo) in model.argo_apps() {
        for opt in &argo.sync.options {
            let Some(text) = opt.as_str() else {
                out.push(
                    Finding::new(ID, Severity::Error, "syncOptions entries are strings like `ServerSideApply=true`; this entry is not a string and is ignored", opt.full_span())
                        .label("not a string").for_app(app)
                        .help("Write each option as one string: `- ServerSideApply=true`."),
                );
                continue;
            };
            if APP_OPTIONS.contains(&text) {
                continue;
            }
            let (severity, msg, label) = if text == "Force=true" {
                (Severity::Error, "`Force=true` is not an app-level sync option (it is the sync strategy's `force`, or a resource annotation): it does nothing here".to_string(), "no-op at app level".to_string())
            } else if APP_NOOPS.contains(&text) {
                (
                    Severity::Info,
                    format!("`{text}` restates the default or is read by no code: it does nothing"),
                    "no-op".to_string(),
                )
            } else {
                let hint = closest(text, APP_OPTIONS)
                    .map(|c| format!("did you mean `{c}`? options match exactly"))
                    .unwrap_or_else(|| "unknown option".into());
                (
                    Severity::Error,
                    format!(
                        "sync option `{text}` is not recognised: Argo CD matches options by exact string and silently ignores this one"
                    ),
                    hint,
                )
            };
            out.push(
                Finding::new(ID, severity, msg, opt.span)
                    .label(label)
                    .for_app(app)
                    .help("Sync options are exact, case-sensitive strings (see the Argo CD sync-options documentation)."),
            );
        }
    }

    for mo in model.in_scope() {
        let Some(meta) = mo.object.metadata() else {
            continue;
        };
        let app = model.app_of(mo);
        let is_application = mo.object.group() == "argoproj.io" && mo.object.kind == "Application";
        let Some(annotations) = meta.get("annotations").and_then(Node::as_map) else {
            continue;
        };
        for entry in annotations {
            let key = entry.key.key_str();
            let Some(short) = key.strip_prefix("argocd.argoproj.io/") else {
                continue;
            };
            let value = entry.value.scalar_text().unwrap_or_default();
            let emit = |out: &mut Vec<Finding>,
                        sev: Severity,
                        msg: String,
                        label: &str,
                        help: &str,
                        span| {
                out.push(about(
                    Finding::new(ID, sev, msg, span).label(label).help(help),
                    app,
                    mo,
                ));
            };
            match short {
                "sync-options" => {
                    for v in value.split(',').map(str::trim).filter(|v| !v.is_empty()) {
                        if RESOURCE_OPTIONS.contains(&v) {
                            continue;
                        }
                        if APP_ONLY_OPTIONS.contains(&v) {
                            emit(
                                out,
                                Severity::Warning,
                                format!(
                                    "`{v}` only works in the Application's spec.syncPolicy.syncOptions; as a resource annotation it does nothing"
                                ),
                                "app-level option on a resource",
                                "Move the option to the Application.",
                                entry.value.span,
                            );
                        } else {
                            let hint = closest(v, RESOURCE_OPTIONS)
                                .map(|c| format!("did you mean `{c}`?"))
                                .unwrap_or_else(|| "unknown option".into());
                            emit(
                                out,
                                Severity::Error,
                                format!(
                                    "sync option `{v}` on {} is not recognised and is ignored",
                                    object_id(mo)
                                ),
                                &hint,
                                "Resource sync options: Prune=false|confirm, Delete=false|confirm, Validate=false, SkipDryRunOnMissingResource=true, PruneLast=true, Replace=true, Force=true, ServerSideApply=true|false.",
                                entry.value.span,
                            );
                        }
                    }
                }
                "compare-options" => {
                    for v in value.split(',').map(str::trim).filter(|v| !v.is_empty()) {
                        let app_level =
                            v.starts_with("ServerSideDiff=") || v == "IncludeMutationWebhook=true";
                        if app_level && !is_application {
                            emit(
                                out,
                                Severity::Warning,
                                format!(
                                    "`{v}` only works on an Application; on {} it does nothing",
                                    object_id(mo)
                                ),
                                "Application-only compare option",
                                "Put it on the Application's annotations.",
                                entry.value.span,
                            );
                        } else if !app_level && v != "IgnoreExtraneous" {
                            emit(
                                out,
                                Severity::Error,
                                format!("compare option `{v}` is not recognised and is ignored"),
                                "unknown compare option",
                                "Compare options: IgnoreExtraneous (resources), ServerSideDiff=true|false and IncludeMutationWebhook=true (Applications).",
                                entry.value.span,
                            );
                        }
                    }
                }
                "hook" => {
                    let bad: Vec<&str> = value
                        .split(',')
                        .map(str::trim)
                        .filter(|v| !HOOKS.contains(v))
                        .collect();
                    if !bad.is_empty() {
                        let hint = bad
                            .iter()
                            .find_map(|b| closest(b, HOOKS))
                            .map(|c| format!("did you mean `{c}`? hook types are case-sensitive"))
                            .unwrap_or_else(|| "invalid hook type".into());
                        emit(
                            out,
                            Severity::Error,
                            format!(
                                "hook type `{}` is invalid: the object is a hook with no phase and is never applied",
                                bad.join(",")
                            ),
                            &hint,
                            "Hook types: PreSync, Sync, PostSync, SyncFail, Skip, PreDelete, PostDelete.",
                            entry.value.span,
                        );
                    }
                }
                "hook-delete-policy" => {
                    for v in value.split(',').map(str::trim) {
                        if !DELETE_POLICIES.contains(&v) {
                            let hint = closest(v, DELETE_POLICIES)
                                .map(|c| format!("did you mean `{c}`?"))
                                .unwrap_or_else(|| "invalid policy".into());
                            emit(
                                out,
                                Severity::Error,
                                format!("hook delete policy `{v}` is invalid and ignored"),
                                &hint,
                                "Policies: HookSucceeded, HookFailed, BeforeHookCreation.",
                                entry.value.span,
                            );
                        }
                    }
                }
                "sync-wave" => {
                    if value.trim().parse::<i64>().is_err() {
                        emit(
                            out,
                            Severity::Error,
                            format!(
                                "sync-wave `{value}` is not an integer: Argo CD falls back to wave 0 (or helm.sh/hook-weight)"
                            ),
                            "not an integer",
                            "Write the wave as a quoted integer: \"-1\", \"0\", \"5\".",
                            entry.value.span,
                        );
                    }
                }
                "ignore-differences-json-pointers" => {
                    resource_ignore_pointers(out, app, mo, entry, &value);
                }
                k if KNOWN_KEYS.contains(&k) => {}
                k => {
                    let hint = closest(k, KNOWN_KEYS)
                        .map(|c| format!("did you mean `argocd.argoproj.io/{c}`?"))
                        .unwrap_or_else(|| "not an Argo CD annotation".into());
                    let extra = if k == "hook-failure-policy" {
                        " (a failing PreSync hook already aborts the sync)"
                    } else {
                        ""
                    };
                    emit(
                        out,
                        Severity::Error,
                        format!(
                            "`argocd.argoproj.io/{k}` is not an annotation Argo CD reads: it does nothing{extra}"
                        ),
                        &hint,
                        "Known keys: sync-wave, sync-options, compare-options, hook, hook-delete-policy, … (see the Argo CD annotations reference).",
                        entry.key.span,
                    );
                }
            }
        }
    }
}

/// `argocd.argoproj.io/ignore-differences-json-pointers` on a resource: a comma-separated
/// list of RFC 6901 pointers that Argo CD merges with the Application's ignoreDifferences,
/// read only when the Application syncs with `RespectIgnoreDifferences=true`
/// (https://github.com/argoproj/argo-cd/pull/29616).
fn resource_ignore_pointers(
    out: &mut Vec<Finding>,
    app: &crate::gitops::App,
    mo: &crate::gitops::ModelObject,
    entry: &crate::yaml::Entry,
    value: &str,
) {
    for pointer in value.split(',').map(str::trim) {
        if let Some(why) = pointer_error(pointer) {
            out.push(about(
                Finding::new(
                    ID,
                    Severity::Error,
                    format!("ignore-differences-json-pointers entry `{pointer}` is not a JSON pointer ({why}): Argo CD cannot use it"),
                    entry.value.span,
                )
                .label("not an RFC 6901 pointer")
                .help("Write pointers like `/spec/replicas` or `/metadata/annotations/example.com~1key` (`~1` for `/`, `~0` for `~`), separated by commas."),
                app,
                mo,
            ));
        }
    }
    if let Some(argo) = &app.argo
        && !argo.sync.has_option("RespectIgnoreDifferences=true")
    {
        out.push(about(
            Finding::new(
                ID,
                Severity::Warning,
                format!(
                    "`argocd.argoproj.io/ignore-differences-json-pointers` is read only when the Application syncs with RespectIgnoreDifferences=true, which `{}` does not set: the fields are still compared and overwritten",
                    app.name
                ),
                entry.key.span,
            )
            .label("not read by this Application")
            .help("Add `RespectIgnoreDifferences=true` to the Application's spec.syncPolicy.syncOptions, or move the pointers into its spec.ignoreDifferences."),
            app,
            mo,
        ));
    }
}

/// Why `p` is not an RFC 6901 JSON pointer, if it is not.
fn pointer_error(p: &str) -> Option<&'static str> {
    if p.is_empty() {
        return Some("empty");
    }
    if !p.starts_with('/') {
        return Some("it must start with `/`");
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Some("`~` must be followed by 0 or 1");
        }
    }
    None
}

