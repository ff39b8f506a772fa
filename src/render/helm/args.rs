//! `helm template`'s own command line, so `gitops-lint helm template ARGS...` accepts what
//! helm does (and the corpus checker can run it unchanged).

use super::TemplateOptions;

/// Parse `helm template [NAME] [CHART] [flags]` (the leading `template` word is optional).
/// Returns the chart path and the options.
pub fn parse_helm_template_args(args: &[String]) -> Result<(String, TemplateOptions), String> {
    let mut opts = TemplateOptions::default();
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
            "--version" | "--repo" | "--output-dir" | "--post-renderer" | "--timeout"
            | "--description" | "--kubeconfig" | "--kube-context" | "--set-file"
            | "--set-literal" | "--labels" | "--username" | "--password" => {
                let v = value(&mut i)?;
                match flag.as_str() {
                    "--set-literal" => opts.set_literal.push(v),
                    "--set-file" | "--repo" | "--post-renderer" | "--output-dir" => {
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
    Ok((chart, opts))
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
}
