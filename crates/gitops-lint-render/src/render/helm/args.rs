//! `helm template`'s own command line, so `gitops-lint helm template ARGS...` accepts what
//! helm does (and the corpus checker can run it unchanged).

use super::TemplateOptions;

/// `gitops-lint helm template --help`: the flags this parser accepts (a test checks each).
pub const TEMPLATE_HELP: &str = "\
Render chart templates locally and display the output, natively and offline (helm 3.18
semantics; no cluster, no network, no plugins or post-renderers).

Usage:
  gitops-lint helm template [NAME] [CHART] [flags]

Flags that change the output:
  -a, --api-versions strings      Kubernetes api versions used for Capabilities.APIVersions
      --debug                     print the rendered YAML even when it does not parse
      --include-crds              include CRDs in the templated output
      --is-upgrade                set .Release.IsUpgrade instead of .Release.IsInstall
      --kube-version string       Kubernetes version used for Capabilities.KubeVersion
      --name-template string      specify template used to name the release
  -n, --namespace string          namespace scope for this request
      --no-hooks                  prevent hooks from running during install
      --set stringArray           set values on the command line (key1=val1,key2=val2)
      --set-file stringArray      set values from files (key1=path1,key2=path2); a path is
                                  read relative to the working directory, inside the
                                  directories this command reads
      --set-json stringArray      set JSON values on the command line (key1=jsonval1)
      --set-literal stringArray   set a literal STRING value on the command line
      --set-string stringArray    set STRING values on the command line
  -s, --show-only stringArray     only show manifests rendered from the given templates
      --skip-crds                 if set, no CRDs will be installed
      --skip-schema-validation    disable JSON schema validation
      --skip-tests                skip tests from templated output
  -f, --values strings            specify values in a YAML file (can specify multiple)

Flags accepted for compatibility, without effect here:
      --atomic, --create-namespace, --dependency-update, --description string, --devel,
      --disable-openapi-validation, --dry-run[=client|server|none|true|false],
      --generate-name (-g), --kube-context string, --kubeconfig string, --labels string,
      --password string, --release-name, --timeout string, --username string, --validate,
      --version string, --wait

Refused (they need the network or run programs):
      --repo, --post-renderer, --output-dir

Chart and values paths may be relative to the working directory or absolute; files are read
only inside the chart's git checkout (or the chart directory, or the working directory when
the chart is below it) and the directories of the files named with -f and --set-file.
";

/// A parsed `helm template` command line.
#[derive(Default)]
pub struct HelmCli {
    pub chart: String,
    pub opts: TemplateOptions,
    /// `--set-file` values as given (`key=path,...`): the caller reads the files.
    pub set_file: Vec<String>,
    /// `-h` / `--help` was given.
    pub help: bool,
}

/// Parse `helm template [NAME] [CHART] [flags]` (the leading `template` word is optional).
/// Returns the chart path and the options; `--set-file` is refused, since the files must be
/// read by the caller ([`parse_helm_cli`]).
pub fn parse_helm_template_args(args: &[String]) -> Result<(String, TemplateOptions), String> {
    let cli = parse_helm_cli(args)?;
    if !cli.set_file.is_empty() {
        return Err("--set-file is read only by `gitops-lint helm template`".into());
    }
    Ok((cli.chart, cli.opts))
}

/// Parse `helm template [NAME] [CHART] [flags]`, keeping `--set-file` and `--help`.
pub fn parse_helm_cli(args: &[String]) -> Result<HelmCli, String> {
    let mut opts = TemplateOptions::default();
    let mut set_file = Vec::new();
    let mut positional: Vec<String> = Vec::new();
    let mut name_template: Option<String> = None;
    let mut i = 0;
    let mut args: Vec<String> = args.to_vec();
    if args.first().map(String::as_str) == Some("template") {
        args.remove(0);
    }
    while i < args.len() {
        let arg = args[i].clone();
        i += 1;
        if !arg.starts_with('-') || arg == "-" {
            positional.push(arg);
            continue;
        }
        if arg == "--" {
            positional.extend(args[i..].iter().cloned());
            break;
        }
        if arg == "-h" || arg == "--help" {
            return Ok(HelmCli {
                help: true,
                ..HelmCli::default()
            });
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        // Short flags may carry their value attached: `-nfoo`, `-f=x`.
        let (flag, inline) = if !flag.starts_with("--") && flag.len() > 2 {
            let v = flag[2..].trim_start_matches('=').to_string();
            (flag[..2].to_string(), Some(v))
        } else {
            (flag, inline)
        };
        let value = |i: &mut usize| -> Result<String, String> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            let v = args
                .get(*i)
                .cloned()
                .ok_or_else(|| format!("flag needs an argument: {flag}"))?;
            *i += 1;
            Ok(v)
        };
        match flag.as_str() {
            "-n" | "--namespace" => opts.namespace = value(&mut i)?,
            "-f" | "--values" => {
                for v in value(&mut i)?.split(',') {
                    opts.value_files.push(v.to_string());
                }
            }
            "--set" => opts.set.push(value(&mut i)?),
            "--set-string" => opts.set_string.push(value(&mut i)?),
            "--set-json" => opts.set_json.push(value(&mut i)?),
            "--kube-version" => opts.kube_version = Some(value(&mut i)?),
            "-a" | "--api-versions" => {
                for v in value(&mut i)?.split(',') {
                    opts.api_versions.push(v.to_string());
                }
            }
            "-s" | "--show-only" => {
                for v in value(&mut i)?.split(',') {
                    opts.show_only.push(v.to_string());
                }
            }
            "--name-template" => name_template = Some(value(&mut i)?),
            "--include-crds" => opts.include_crds = bool_flag(inline.as_deref())?,
            "--skip-tests" => opts.skip_tests = bool_flag(inline.as_deref())?,
            "--skip-crds" => opts.skip_crds = bool_flag(inline.as_deref())?,
            "--skip-schema-validation" => {
                opts.skip_schema_validation = bool_flag(inline.as_deref())?
            }
            "--release-name"
            | "--debug"
            | "--validate"
            | "--dependency-update"
            | "--devel"
            | "--disable-openapi-validation"
            | "--no-hooks"
            | "--atomic"
            | "--wait"
            | "--create-namespace"
            | "--generate-name"
            | "-g"
            | "--is-upgrade" => {
                if flag == "--debug" {
                    opts.debug = true;
                }
                if flag == "--no-hooks" {
                    opts.no_hooks = true;
                }
                if flag == "--is-upgrade" {
                    opts.is_upgrade = bool_flag(inline.as_deref())?;
                }
            }
            // helm's `--dry-run` takes its value only attached (`NoOptDefVal` "client"), so a
            // following word stays a positional argument, as in helm.
            "--dry-run" => match inline.as_deref() {
                None | Some("client" | "server" | "none" | "true" | "false") => {}
                Some(_) => {
                    return Err("Invalid dry-run flag. Flag must one of the following: false, true, none, client, server".into());
                }
            },
            "--version" | "--repo" | "--output-dir" | "--post-renderer" | "--timeout"
            | "--description" | "--kubeconfig" | "--kube-context" | "--set-file"
            | "--set-literal" | "--labels" | "--username" | "--password" => {
                let v = value(&mut i)?;
                match flag.as_str() {
                    "--set-literal" => opts.set_literal.push(v),
                    "--set-file" => set_file.push(v),
                    "--repo" | "--post-renderer" | "--output-dir" => {
                        return Err(format!("{flag} is not supported offline"));
                    }
                    _ => {}
                }
            }
            _ => return Err(format!("unknown flag: {flag}")),
        }
    }
    if positional.is_empty() {
        return Err("\"helm template\" requires at least 1 argument\n\nUsage:  helm template [NAME] [CHART] [flags]".into());
    }
    if positional.len() > 2 {
        return Err(format!(
            "expected at most two arguments, unexpected arguments: {}",
            positional[2..].join(", ")
        ));
    }
    let chart = if positional.len() == 2 {
        if name_template.is_some() {
            return Err("cannot set --name-template and also specify a name".into());
        }
        opts.release_name = positional[0].clone();
        positional[1].clone()
    } else {
        opts.name_template = name_template;
        positional[0].clone()
    };
    Ok(HelmCli {
        chart,
        opts,
        set_file,
        help: false,
    })
}

/// `--set-file key1=path1,key2=path2` → `(key, path)` pairs (helm's parser splits on commas
/// outside `[...]` and reads each value as a file name).
pub fn set_file_pairs(value: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for part in value.split(',').filter(|p| !p.is_empty()) {
        let Some((key, path)) = part.split_once('=') else {
            return Err(format!(
                "failed parsing --set-file data: key \"{part}\" has no value"
            ));
        };
        out.push((key.to_string(), path.to_string()));
    }
    Ok(out)
}

fn bool_flag(v: Option<&str>) -> Result<bool, String> {
    match v {
        None | Some("true") | Some("1") | Some("t") | Some("T") | Some("TRUE") | Some("True") => {
            Ok(true)
        }
        Some("false") | Some("0") | Some("f") | Some("F") | Some("FALSE") | Some("False") => {
            Ok(false)
        }
        Some(other) => Err(format!("invalid boolean value {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<(String, TemplateOptions), String> {
        let args: Vec<String> = s.split_whitespace().map(String::from).collect();
        parse_helm_template_args(&args)
    }

    #[test]
    fn helm_argument_orders() {
        let (chart, o) = p(
            "template rel charts/x --namespace default -f a.yaml --set a=b -a x/v1 --include-crds",
        )
        .unwrap_or_default();
        assert_eq!(chart, "charts/x");
        assert_eq!(o.release_name, "rel");
        assert_eq!(o.namespace, "default");
        assert_eq!(o.value_files, vec!["a.yaml"]);
        assert_eq!(o.set, vec!["a=b"]);
        assert_eq!(o.api_versions, vec!["x/v1"]);
        assert!(o.include_crds);
        let (chart, o) =
            p("--kube-version 1.16.0 testdata/c --show-only=templates/a.yaml").unwrap_or_default();
        assert_eq!(chart, "testdata/c");
        assert_eq!(o.release_name, "release-name");
        assert_eq!(o.kube_version.as_deref(), Some("1.16.0"));
        assert_eq!(o.show_only, vec!["templates/a.yaml"]);
        assert!(p("template").is_err());
    }

    #[test]
    fn dry_run_is_accepted_as_helm_accepts_it() {
        for ok in [
            "--dry-run",
            "--dry-run=client",
            "--dry-run=server",
            "--dry-run=none",
        ] {
            assert!(p(&format!("template rel c {ok}")).is_ok(), "{ok}");
        }
        // The value is never taken from the next word: `client` is then a third positional.
        let e = p("template rel c --dry-run client")
            .err()
            .unwrap_or_default();
        assert!(e.contains("unexpected arguments: client"), "{e}");
        let e = p("template rel c --dry-run=bogus")
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("Invalid dry-run flag"), "{e}");
    }

    #[test]
    fn help_lists_only_flags_the_parser_accepts() {
        let words: Vec<&str> = TEMPLATE_HELP
            .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')' || c == '[')
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .collect();
        assert!(words.len() > 30, "{words:?}");
        let refused = ["--repo", "--post-renderer", "--output-dir"];
        for w in words {
            let flag = w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
            let takes_value = TEMPLATE_HELP.lines().any(|l| {
                l.contains(&format!("{flag} string")) || l.contains(&format!("{flag} strings"))
            });
            let line = if takes_value {
                format!("template c {flag} v")
            } else {
                format!("template c {flag}")
            };
            let words: Vec<String> = line.split_whitespace().map(String::from).collect();
            let r = parse_helm_cli(&words);
            if refused.contains(&flag) {
                assert!(r.is_err(), "{flag} should be refused");
            } else {
                assert!(r.is_ok(), "{flag}: {:?}", r.err());
            }
        }
        let cli = parse_helm_cli(&["template".into(), "--help".into()]);
        assert!(cli.is_ok_and(|c| c.help));
    }

    #[test]
    fn set_file_values_are_kept_for_the_caller() {
        let args: Vec<String> = ["template", "rel", "c", "--set-file", "a=x.txt,b.c=y.txt"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let cli = parse_helm_cli(&args).unwrap_or_default();
        assert_eq!(cli.set_file, ["a=x.txt,b.c=y.txt"]);
        assert_eq!(
            set_file_pairs(&cli.set_file[0]).unwrap_or_default(),
            [("a".into(), "x.txt".into()), ("b.c".into(), "y.txt".into())]
        );
        assert!(parse_helm_template_args(&args).is_err());
        assert!(set_file_pairs("nokey").is_err());
    }
}
