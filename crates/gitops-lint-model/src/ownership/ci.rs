//! Second writers (`second-writer`): cluster-mutating commands in CI workflows, scripts and
//! Makefiles, read as text. Each command says what it writes — files or directories it
//! applies, objects it names, a Helm release, an Argo app it overrides — for the rule to
//! match against what the GitOps apps deploy.

use crate::source::{FileId, SourceMap, Span};

/// CI and automation files whose commands run against clusters.
pub fn is_ci_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.starts_with(".github/workflows/")
        || path.starts_with(".buildkite/")
        || matches!(
            path,
            ".gitlab-ci.yml"
                | ".circleci/config.yml"
                | "azure-pipelines.yml"
                | "bitbucket-pipelines.yml"
                | ".drone.yml"
                | "Taskfile.yml"
                | "Taskfile.yaml"
        )
        || name.ends_with(".gitlab-ci.yml")
        || crate::source::is_script(path)
}

/// What a command writes.
#[derive(Debug, Default)]
pub struct Command {
    /// The tool and verb (`kubectl apply`, `helm upgrade`).
    pub what: String,
    /// Where it is written (the logical line, first physical line).
    pub span: Span,
    /// Repo-relative files or directories it applies (`-f`, `-k`, `kustomize build`, a
    /// local chart).
    pub paths: Vec<String>,
    /// Objects it names: (kind as typed, name).
    pub objects: Vec<(String, String)>,
    pub namespace: Option<String>,
    /// `helm install|upgrade|rollback|uninstall <release>`.
    pub helm_release: Option<String>,
    /// `argocd app set|patch|sync --local <app>`.
    pub argo_app: Option<String>,
}

/// A file that starts a throwaway cluster tests against it, not against production: by a
/// command, or by a GitHub Action that sets one up (`helm/kind-action`,
/// `engineerd/setup-kind`, `AbsaOSS/k3d-action`, `medyagh/setup-minikube`, …).
fn ephemeral(text: &str) -> bool {
    // Creating or deleting one: a Makefile with `create-k3d`/`delete-k3d` targets (the
    // create step often in a script it calls) manages a local cluster.
    [
        "kind create cluster",
        "kind delete cluster",
        "k3d cluster create",
        "k3d cluster delete",
        "minikube start",
        "minikube delete",
        "vcluster create",
        "ctlptl create",
    ]
    .iter()
    .any(|s| text.contains(s))
        || text.lines().any(uses_throwaway_cluster_action)
}

/// A workflow step `uses: owner/name@ref` whose name has a throwaway-cluster tool as one of
/// its words (`setup-kind`, `kind-action`, `action-k3s-helm`).
fn uses_throwaway_cluster_action(line: &str) -> bool {
    let line = line.trim_start().trim_start_matches("- ").trim_start();
    let Some(action) = line.strip_prefix("uses:") else {
        return false;
    };
    let action = action.trim().trim_matches(|c| c == '"' || c == '\'');
    let repo = action.split('@').next().unwrap_or("");
    let name = repo.split('/').nth(1).unwrap_or("");
    name.to_ascii_lowercase()
        .split(['-', '_', '.'])
        .any(|w| matches!(w, "kind" | "k3d" | "k3s" | "minikube" | "microk8s" | "kwok"))
}

/// Commands in one file.
pub fn commands(map: &SourceMap, file: FileId) -> Vec<Command> {
    let src = map.get(file);
    let text = &src.text;
    if ephemeral(text) {
        return Vec::new();
    }
    if src.path.ends_with(".tf") {
        return terraform(&src.path, text, file);
    }
    let mut out = Vec::new();
    let mut offset = 0usize;
    let mut pending: Option<(usize, String)> = None;
    for raw in text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let (begin, mut joined) = pending.take().unwrap_or((start, String::new()));
        if let Some(head) = line.strip_suffix('\\') {
            joined.push_str(head);
            joined.push(' ');
            pending = Some((begin, joined));
            continue;
        }
        joined.push_str(line);
        let first_line_end = text[begin..]
            .find('\n')
            .map(|i| begin + i)
            .unwrap_or(text.len());
        let span = Span::new(
            file,
            begin + leading_ws(&text[begin..first_line_end]),
            first_line_end,
        );
        parse_line(&joined, span, &mut out);
    }
    // make runs a Makefile's recipes in the Makefile's directory: its relative paths are
    // relative to it, not to the repository root.
    if let Some(dir) = makefile_dir(&src.path) {
        for cmd in &mut out {
            for p in &mut cmd.paths {
                if !p.starts_with('/') && !p.contains('$') {
                    *p = format!("{dir}/{p}");
                }
            }
        }
    }
    out
}

/// The directory of a Makefile below the repository root (`None` at the root or for any
/// other file).
fn makefile_dir(path: &str) -> Option<&str> {
    let (dir, name) = path.rsplit_once('/')?;
    (matches!(name, "Makefile" | "makefile" | "GNUmakefile") || name.ends_with(".mk"))
        .then_some(dir)
        .filter(|d| !d.is_empty())
}

fn leading_ws(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

fn unquote(t: &str) -> String {
    t.trim_matches(['"', '\'']).to_string()
}

/// Split a shell line into pipelines of commands (`a | b && c; d`), each as tokens.
fn segments(line: &str) -> Vec<Vec<Vec<String>>> {
    let code = match line.trim_start().strip_prefix('#') {
        Some(_) => return Vec::new(),
        None => line,
    };
    // YAML `run: kubectl …` / `- kubectl …` / `script: …`: the shell part follows.
    let mut pipelines = Vec::new();
    for chain in code
        .split("&&")
        .flat_map(|c| c.split(';'))
        .flat_map(|c| c.split("||"))
    {
        let pipeline: Vec<Vec<String>> = chain
            .split('|')
            .map(|c| c.split_whitespace().map(unquote).collect())
            .collect();
        pipelines.push(pipeline);
    }
    pipelines
}

fn tool_index(tokens: &[String], tool: &str) -> Option<usize> {
    tokens
        .iter()
        .position(|t| t == tool || t.ends_with(&format!("/{tool}")))
}

/// Value of `-x V`, `-x=V`, `--long V`, `--long=V`.
fn flag_values(tokens: &[String], short: &str, long: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if (t == short || t == long) && i + 1 < tokens.len() {
            out.push(tokens[i + 1].clone());
            i += 2;
            continue;
        }
        for f in [short, long] {
            if !f.is_empty()
                && let Some(v) = t.strip_prefix(&format!("{f}="))
            {
                out.push(v.to_string());
            }
        }
        i += 1;
    }
    out
}

/// Flags that take a value, so their value is not a positional argument.
const VALUED_FLAGS: &[&str] = &[
    "-f",
    "--filename",
    "-k",
    "--kustomize",
    "-n",
    "--namespace",
    "--context",
    "-l",
    "--selector",
    "-o",
    "--output",
    "-p",
    "--patch",
    "--type",
    "--values",
    "-c",
    "--container",
    "--set",
    "--version",
    "--timeout",
    "--kubeconfig",
    "--field-manager",
];

fn positionals(tokens: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if VALUED_FLAGS.contains(&t.as_str()) {
            i += 2;
            continue;
        }
        if !t.starts_with('-') {
            out.push(t.clone());
        }
        i += 1;
    }
    out
}

fn dry_run(tokens: &[String]) -> bool {
    tokens
        .iter()
        .any(|t| (t.starts_with("--dry-run") && t != "--dry-run=none") || t == "--server-dry-run")
}

fn parse_line(line: &str, span: Span, out: &mut Vec<Command>) {
    for pipeline in segments(line) {
        // `kustomize build X | kubectl apply -f -`
        let mut piped_path: Option<String> = None;
        for tokens in &pipeline {
            if let Some(i) = tool_index(tokens, "kustomize")
                && tokens.get(i + 1).map(String::as_str) == Some("build")
            {
                piped_path = tokens.get(i + 2).cloned();
            }
            if let Some(i) = tool_index(tokens, "kubectl")
                && tokens.get(i + 1).map(String::as_str) == Some("kustomize")
            {
                piped_path = tokens.get(i + 2).cloned();
            }
            if let Some(mut cmd) = kubectl(tokens, span) {
                if cmd.paths.iter().any(|p| p == "-") {
                    cmd.paths.retain(|p| p != "-");
                    cmd.paths.extend(piped_path.clone());
                }
                out.push(cmd);
            } else if let Some(cmd) = helm(tokens, span).or_else(|| argocd(tokens, span)) {
                out.push(cmd);
            }
        }
    }
}

const KUBECTL_WRITES: &[&str] = &[
    "apply", "create", "replace", "patch", "edit", "set", "scale", "label", "annotate", "delete",
    "rollout",
];

fn kubectl(tokens: &[String], span: Span) -> Option<Command> {
    let i = tool_index(tokens, "kubectl").or_else(|| tool_index(tokens, "oc"))?;
    let rest = &tokens[i + 1..];
    let pos = positionals(rest);
    let verb = pos.first()?.as_str();
    if !KUBECTL_WRITES.contains(&verb) || dry_run(rest) {
        return None;
    }
    let mut skip = 1;
    if verb == "rollout" {
        if pos.get(1).map(String::as_str) != Some("restart") {
            return None;
        }
        skip = 2;
    }
    if verb == "set" {
        skip = 2; // `set image|env|resources …`
    }
    let mut cmd = Command {
        what: format!(
            "{} {}",
            tokens[i].rsplit('/').next().unwrap_or("kubectl"),
            pos[..skip].join(" ")
        ),
        span,
        ..Command::default()
    };
    cmd.paths.extend(flag_values(rest, "-f", "--filename"));
    cmd.paths.extend(flag_values(rest, "-k", "--kustomize"));
    cmd.namespace = flag_values(rest, "-n", "--namespace").into_iter().next();
    let args: Vec<&String> = pos[skip..].iter().collect();
    // `kind/name …` or `kind name` (the resource-name form).
    let mut j = 0;
    while j < args.len() {
        let a = args[j];
        if a.contains('=') || a.contains(':') {
            j += 1;
            continue;
        }
        if let Some((kind, name)) = a.split_once('/') {
            cmd.objects.push((kind.to_string(), name.to_string()));
        } else if let Some(name) = args.get(j + 1)
            && !name.contains('=')
            && cmd.paths.is_empty()
        {
            cmd.objects.push((a.clone(), (*name).clone()));
            j += 1;
        }
        j += 1;
    }
    Some(cmd)
}

fn helm(tokens: &[String], span: Span) -> Option<Command> {
    let i = tool_index(tokens, "helm")?;
    let rest = &tokens[i + 1..];
    let pos = positionals(rest);
    let verb = pos.first()?.as_str();
    if !matches!(
        verb,
        "install" | "upgrade" | "rollback" | "uninstall" | "delete"
    ) || dry_run(rest)
    {
        return None;
    }
    let mut cmd = Command {
        what: format!("helm {verb}"),
        span,
        helm_release: pos.get(1).cloned(),
        namespace: flag_values(rest, "-n", "--namespace").into_iter().next(),
        ..Command::default()
    };
    if matches!(verb, "install" | "upgrade")
        && let Some(chart) = pos.get(2)
        && (chart.starts_with('.') || chart.contains('/'))
        && !chart.contains("://")
    {
        cmd.paths.push(chart.clone());
    }
    cmd.paths.extend(flag_values(rest, "-f", "--values"));
    Some(cmd)
}

fn argocd(tokens: &[String], span: Span) -> Option<Command> {
    let i = tool_index(tokens, "argocd")?;
    let rest = &tokens[i + 1..];
    let pos = positionals(rest);
    if pos.first().map(String::as_str) != Some("app") {
        return None;
    }
    let verb = pos.get(1)?.as_str();
    let overrides = rest.iter().any(|t| {
        t == "-p"
            || [
                "--parameter",
                "--helm-set",
                "--values",
                "--kustomize-image",
                "--kustomize-replica",
                "--revision",
            ]
            .iter()
            .any(|f| t.starts_with(f))
    });
    let writes = match verb {
        "set" => overrides,
        "patch" => true,
        "sync" => rest.iter().any(|t| t.starts_with("--local")),
        _ => false,
    };
    if !writes {
        return None;
    }
    Some(Command {
        what: format!("argocd app {verb}"),
        span,
        argo_app: pos.get(2).cloned(),
        ..Command::default()
    })
}

/// Terraform resources that write to clusters: `kubernetes_manifest` / `kubectl_manifest`
/// reading repo files, `helm_release`, and typed `kubernetes_<kind>` resources.
fn terraform(path: &str, text: &str, file: FileId) -> Vec<Command> {
    let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(found) = text[search..].find("resource \"") {
        let start = search + found;
        let rest = &text[start + 10..];
        let Some(ty_end) = rest.find('"') else { break };
        let ty = &rest[..ty_end];
        let Some(open) = text[start..].find('{').map(|i| start + i) else {
            break;
        };
        let mut level = 0usize;
        let mut end = text.len();
        for (i, c) in text[open..].char_indices() {
            match c {
                '{' => level += 1,
                '}' => {
                    level = level.saturating_sub(1);
                    if level == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let body = &text[open..end];
        search = end.max(start + 1);
        let line_end = text[start..]
            .find('\n')
            .map(|i| start + i)
            .unwrap_or(text.len());
        let mut cmd = Command {
            what: format!("terraform {ty}"),
            span: Span::new(file, start, line_end),
            namespace: tf_string(body, "namespace"),
            ..Command::default()
        };
        match ty {
            "kubernetes_manifest" | "kubectl_manifest" => {
                cmd.paths = tf_files(body, dir);
            }
            "helm_release" => {
                cmd.helm_release = tf_string(body, "name");
                if let Some(chart) = tf_string(body, "chart")
                    && (chart.starts_with('.') || chart.contains("${path."))
                {
                    cmd.paths.push(tf_relative(&chart, dir));
                }
            }
            t if t.starts_with("kubernetes_") => {
                let kind = t
                    .trim_start_matches("kubernetes_")
                    .trim_end_matches("_v1")
                    .trim_end_matches("_v2")
                    .replace('_', "");
                if let Some(name) = tf_string(body, "name") {
                    cmd.objects.push((kind, name));
                }
            }
            _ => continue,
        }
        out.push(cmd);
    }
    out
}

/// The first `key = "value"` in a Terraform block.
fn tf_string(body: &str, key: &str) -> Option<String> {
    body.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key)
            .then(|| v.trim().trim_matches('"').to_string())
            .filter(|v| !v.is_empty() && !v.contains(' '))
    })
}

/// `file("…")` / `templatefile("…")` arguments, relative to the repo.
fn tf_files(body: &str, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find("file(\"") {
        rest = &rest[i + 6..];
        if let Some(end) = rest.find('"') {
            out.push(tf_relative(&rest[..end], dir));
            rest = &rest[end..];
        }
    }
    out
}

fn tf_relative(path: &str, dir: &str) -> String {
    let p = path
        .trim_start_matches("${path.module}/")
        .trim_start_matches("${path.root}/");
    if dir.is_empty() {
        p.to_string()
    } else {
        format!("{dir}/{p}")
    }
}

/// Does a kind as typed on the command line (`deploy`, `deployments`, `Deployment`) name
/// this kind?
pub fn kind_matches(typed: &str, kind: &str) -> bool {
    let typed = typed.to_ascii_lowercase();
    let typed = typed.split('.').next().unwrap_or(&typed).to_string();
    let kind_l = kind.to_ascii_lowercase();
    let short = match kind {
        "Deployment" => "deploy",
        "StatefulSet" => "sts",
        "DaemonSet" => "ds",
        "Service" => "svc",
        "ConfigMap" => "cm",
        "HorizontalPodAutoscaler" => "hpa",
        "Ingress" => "ing",
        "ServiceAccount" => "sa",
        "PersistentVolumeClaim" => "pvc",
        "Namespace" => "ns",
        "CronJob" => "cj",
        _ => "",
    };
    typed == kind_l
        || typed == format!("{kind_l}s")
        || typed == format!("{kind_l}es")
        || (!short.is_empty() && typed == short)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Vec<Command> {
        let mut out = Vec::new();
        parse_line(line, Span::default(), &mut out);
        out
    }

    #[test]
    fn a_makefile_applies_paths_relative_to_its_own_directory() {
        let map = SourceMap::new();
        let mk = map.add_text(
            "test/kafka/Makefile",
            "setup:\n\tkubectl kustomize kubernetes | kubectl apply -f -\n\tkubectl apply -f /abs/x.yaml\n",
        );
        let paths: Vec<String> = commands(&map, mk)
            .into_iter()
            .flat_map(|c| c.paths)
            .collect();
        assert_eq!(paths, ["test/kafka/kubernetes", "/abs/x.yaml"]);
        let root = map.add_text("Makefile", "deploy:\n\tkubectl apply -k overlays/prod\n");
        let paths: Vec<String> = commands(&map, root)
            .into_iter()
            .flat_map(|c| c.paths)
            .collect();
        assert_eq!(paths, ["overlays/prod"]);
    }

    #[test]
    fn a_workflow_that_sets_up_a_throwaway_cluster_is_a_test_not_a_writer() {
        for step in [
            "      - uses: helm/kind-action@v1.10.0",
            "        uses: engineerd/setup-kind@v0.5.0",
            "      - uses: 'AbsaOSS/k3d-action@v2'",
            "        uses: medyagh/setup-minikube@latest",
            "        uses: jupyterhub/action-k3s-helm@v4",
        ] {
            assert!(ephemeral(&format!("steps:\n{step}\n")), "{step}");
        }
        assert!(ephemeral("delete-k3d:\n\tk3d cluster delete picluster\n"));
        for step in [
            "      - uses: actions/checkout@v4",
            "        uses: azure/k8s-set-context@v4",
            "        uses: example/kindness-bot@v1",
            "        # uses: helm/kind-action@v1",
        ] {
            assert!(!ephemeral(&format!("steps:\n{step}\n")), "{step}");
        }
    }

    #[test]
    fn finds_cluster_writes_and_skips_previews() {
        let c = parse("kubectl apply -k overlays/prod -n pay-prod");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].paths, ["overlays/prod"]);
        assert_eq!(c[0].namespace.as_deref(), Some("pay-prod"));
        let c = parse("kustomize build apps/web | kubectl apply -f -");
        assert_eq!(
            c.first().map(|c| c.paths.clone()),
            Some(vec!["apps/web".to_string()])
        );
        let c = parse("kubectl -n shop scale deployment/web --replicas=3");
        assert_eq!(
            c.first().map(|c| c.objects.clone()),
            Some(vec![("deployment".into(), "web".into())])
        );
        let c = parse("kubectl set image deploy web api=registry/web:2");
        assert_eq!(
            c.first().map(|c| c.objects.clone()),
            Some(vec![("deploy".into(), "web".into())])
        );
        assert!(parse("kubectl apply --dry-run=server -f apps/web").is_empty());
        assert!(parse("kubectl diff -f apps/web").is_empty());
        assert!(parse("helm template web charts/web").is_empty());
        assert!(parse("# kubectl apply -f apps/web").is_empty());
        let c = parse("helm upgrade --install web ./charts/web -n shop");
        assert_eq!(
            c.first().and_then(|c| c.helm_release.clone()).as_deref(),
            Some("web")
        );
        let c = parse("argocd app set web -p image.tag=2");
        assert_eq!(
            c.first().and_then(|c| c.argo_app.clone()).as_deref(),
            Some("web")
        );
        assert!(parse("argocd app diff web").is_empty());
        assert!(kind_matches("deployments", "Deployment"));
        assert!(kind_matches("deploy", "Deployment"));
    }

    #[test]
    fn terraform_resources_that_write_to_clusters() {
        let text = "resource \"kubernetes_manifest\" \"web\" {\n  manifest = yamldecode(file(\"${path.module}/../apps/web/deployment.yaml\"))\n}\nresource \"helm_release\" \"redis\" {\n  name      = \"redis\"\n  namespace = \"data\"\n  chart     = \"bitnami/redis\"\n}\nresource \"kubernetes_deployment_v1\" \"api\" {\n  metadata {\n    name      = \"api\"\n    namespace = \"shop\"\n  }\n}\n";
        let c = terraform("infra/k8s.tf", text, FileId(0));
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].paths, ["infra/../apps/web/deployment.yaml"]);
        assert_eq!(c[1].helm_release.as_deref(), Some("redis"));
        assert_eq!(c[1].namespace.as_deref(), Some("data"));
        assert_eq!(
            c[2].objects,
            [("deployment".to_string(), "api".to_string())]
        );
        assert_eq!(c[2].namespace.as_deref(), Some("shop"));
    }
}
