//! The built-in objects templates see besides `.Values`: `.Chart`, `.Release`,
//! `.Capabilities`, `.Files`, `.Template`, `.Subcharts` — with Helm's field names and
//! methods (`.Capabilities.APIVersions.Has`, `.Files.Glob`, ...).

use super::chart::{Chart, ImportValue, Metadata, MiscFile};
use crate::render::gotmpl::value::{GoObject, Map, Value};
use std::rc::Rc;

/// `helm version` of the oracle this renderer follows.
pub const HELM_VERSION: &str = "v3.18.0";
const HELM_GIT_COMMIT: &str = "cc58e3f5a3aa615c6a86275e6f4444b5fdd3cc4e";
const GO_VERSION: &str = "go1.24.3";

/// API group/versions `helm template` knows without a cluster (client-go's scheme for
/// Kubernetes 1.33 plus apiextensions), in Helm's order.
pub const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1alpha1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1alpha1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

/// `chartutil.KubeVersion`.
#[derive(Clone, Debug)]
pub struct KubeVersion {
    pub version: String,
    pub major: String,
    pub minor: String,
}

impl KubeVersion {
    pub fn default_version() -> KubeVersion {
        KubeVersion {
            version: "v1.33.0".into(),
            major: "1".into(),
            minor: "33".into(),
        }
    }

    /// `chartutil.ParseKubeVersion` (`1.16` → `v1.16.0`).
    pub fn parse(text: &str) -> Result<KubeVersion, String> {
        let v = super::semver::Version::parse(text)
            .map_err(|_| "Invalid Semantic Version".to_string())?;
        let mut version = format!("v{}.{}.{}", v.major, v.minor, v.patch);
        if !v.pre.is_empty() {
            version.push_str(&format!("-{}", v.pre));
        }
        if !v.metadata.is_empty() {
            version.push_str(&format!("+{}", v.metadata));
        }
        Ok(KubeVersion {
            version,
            major: v.major.to_string(),
            minor: v.minor.to_string(),
        })
    }
}

impl GoObject for KubeVersion {
    fn type_name(&self) -> &str {
        "*chartutil.KubeVersion"
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Version" => Some(Value::str(self.version.as_str())),
            "Major" => Some(Value::str(self.major.as_str())),
            "Minor" => Some(Value::str(self.minor.as_str())),
            _ => None,
        }
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        match name {
            "String" | "GitVersion" if args.is_empty() => {
                Some(Ok(Value::str(self.version.as_str())))
            }
            _ => None,
        }
    }
    fn format(&self) -> String {
        self.version.clone()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `chartutil.VersionSet` with `Has`.
pub struct ApiVersions(pub Vec<String>);

impl GoObject for ApiVersions {
    fn type_name(&self) -> &str {
        "chartutil.VersionSet"
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        match (name, args) {
            ("Has", [Value::String(s)]) => Some(Ok(Value::Bool(self.0.iter().any(|v| v == &**s)))),
            ("Has", [other]) => Some(Err(format!(
                "wrong type for value; expected string; got {}",
                other.type_name()
            ))),
            ("Has", _) => Some(Err(format!(
                "wrong number of args for Has: want 1 got {}",
                args.len()
            ))),
            _ => None,
        }
    }
    fn format(&self) -> String {
        format!("[{}]", self.0.join(" "))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

struct HelmVersion;

impl GoObject for HelmVersion {
    fn type_name(&self) -> &str {
        "version.BuildInfo"
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::str(match name {
            "Version" => HELM_VERSION,
            "GitCommit" => HELM_GIT_COMMIT,
            "GitTreeState" => "clean",
            "GoVersion" => GO_VERSION,
            _ => return None,
        }))
    }
    fn format(&self) -> String {
        format!("{{{HELM_VERSION} {HELM_GIT_COMMIT} clean {GO_VERSION}}}")
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `.Capabilities`.
pub struct Capabilities {
    pub kube: Rc<KubeVersion>,
    pub apis: Rc<ApiVersions>,
}

impl Capabilities {
    pub fn new(kube: KubeVersion, extra_apis: &[String]) -> Capabilities {
        let mut apis: Vec<String> = DEFAULT_API_VERSIONS.iter().map(|s| s.to_string()).collect();
        apis.extend(extra_apis.iter().cloned());
        Capabilities {
            kube: Rc::new(kube),
            apis: Rc::new(ApiVersions(apis)),
        }
    }
}

impl GoObject for Capabilities {
    fn type_name(&self) -> &str {
        "*chartutil.Capabilities"
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "KubeVersion" => Some(Value::Object(self.kube.clone())),
            "APIVersions" => Some(Value::Object(self.apis.clone())),
            "HelmVersion" => Some(Value::Object(Rc::new(HelmVersion))),
            _ => None,
        }
    }
    fn format(&self) -> String {
        format!(
            "&{{{} {} {}}}",
            self.kube.format(),
            self.apis.format(),
            HelmVersion.format()
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn strings(v: &[String]) -> Value {
    Value::list(v.iter().map(|s| Value::str(s.as_str())).collect())
}

/// `.Chart`: the chart's metadata (Helm's capitalised field names) plus `IsRoot`.
pub struct ChartObject {
    pub meta: Metadata,
    pub is_root: bool,
}

impl GoObject for ChartObject {
    fn type_name(&self) -> &str {
        "struct { chart.Metadata; IsRoot bool }"
    }
    fn field(&self, name: &str) -> Option<Value> {
        let m = &self.meta;
        Some(match name {
            "Name" => Value::str(m.name.as_str()),
            "Home" => Value::str(m.home.as_str()),
            "Sources" => strings(&m.sources),
            "Version" => Value::str(m.version.as_str()),
            "Description" => Value::str(m.description.as_str()),
            "Keywords" => strings(&m.keywords),
            "Maintainers" => Value::list(
                m.maintainers
                    .iter()
                    .map(|mt| {
                        let mut x = Map::new();
                        x.insert("Name".into(), Value::str(mt.name.as_str()));
                        x.insert("Email".into(), Value::str(mt.email.as_str()));
                        x.insert("URL".into(), Value::str(mt.url.as_str()));
                        Value::map(x)
                    })
                    .collect(),
            ),
            "Icon" => Value::str(m.icon.as_str()),
            "APIVersion" => Value::str(m.api_version.as_str()),
            "Condition" => Value::str(m.condition.as_str()),
            "Tags" => Value::str(m.tags.as_str()),
            "AppVersion" => Value::str(m.app_version.as_str()),
            "Deprecated" => Value::Bool(m.deprecated),
            "Annotations" => Value::map(
                m.annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::str(v.as_str())))
                    .collect(),
            ),
            "KubeVersion" => Value::str(m.kube_version.as_str()),
            "Dependencies" => Value::list(
                m.dependencies
                    .iter()
                    .map(|d| {
                        let mut x = Map::new();
                        x.insert("Name".into(), Value::str(d.name.as_str()));
                        x.insert("Version".into(), Value::str(d.version.as_str()));
                        x.insert("Repository".into(), Value::str(d.repository.as_str()));
                        x.insert("Condition".into(), Value::str(d.condition.as_str()));
                        x.insert("Tags".into(), strings(&d.tags));
                        x.insert("Enabled".into(), Value::Bool(d.enabled));
                        x.insert(
                            "ImportValues".into(),
                            Value::list(
                                d.import_values
                                    .iter()
                                    .map(|iv| match iv {
                                        ImportValue::Name(n) => Value::str(n.as_str()),
                                        ImportValue::Map { child, parent } => {
                                            let mut m = Map::new();
                                            m.insert("child".into(), Value::str(child.as_str()));
                                            m.insert("parent".into(), Value::str(parent.as_str()));
                                            Value::map(m)
                                        }
                                    })
                                    .collect(),
                            ),
                        );
                        x.insert("Alias".into(), Value::str(d.alias.as_str()));
                        Value::map(x)
                    })
                    .collect(),
            ),
            "Type" => Value::str(m.chart_type.as_str()),
            "IsRoot" => Value::Bool(self.is_root),
            _ => return None,
        })
    }
    fn format(&self) -> String {
        let m = &self.meta;
        format!(
            "{{{{{} {} [{}] {} {} [{}] [] {} {} {} {} {} {} map[] {} [] {}}} {}}}",
            m.name,
            m.home,
            m.sources.join(" "),
            m.version,
            m.description,
            m.keywords.join(" "),
            m.icon,
            m.api_version,
            m.condition,
            m.tags,
            m.app_version,
            m.deprecated,
            m.kube_version,
            m.chart_type,
            self.is_root
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `.Files`: the chart's non-template files, confined to the chart (Helm's `engine.files`).
/// A file is read when a template first asks for its contents; one that cannot be read
/// fails the call (and the render: see `Chart::unreadable_file`).
pub struct Files {
    pub files: Vec<MiscFile>,
}

impl Files {
    pub fn from_chart(chart: &Chart) -> Files {
        // Handles shared with the loaded chart: each file is read at most once per load.
        let mut files = chart.files.clone();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Files { files }
    }

    /// The contents of `name`; `Ok(None)` when the chart has no such file.
    fn get(&self, name: &str) -> Result<Option<&[u8]>, String> {
        match self.files.iter().find(|f| f.name == name) {
            Some(f) => f.bytes().map(Some),
            None => Ok(None),
        }
    }

    /// Every file with its contents, in name order. A file that cannot be read counts as
    /// empty here: its failure stays on the file and fails the render afterwards, as these
    /// callers (`range`, printing) cannot return an error.
    fn contents(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files
            .iter()
            .map(|f| (f.name.as_str(), f.bytes().unwrap_or_default()))
    }

    fn glob(&self, pattern: &str) -> Result<Files, String> {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| e.to_string())?
            .compile_matcher();
        Ok(Files {
            files: self
                .files
                .iter()
                .filter(|f| glob.is_match(&f.name))
                .cloned()
                .collect(),
        })
    }

    /// `AsConfig`/`AsSecrets`: a YAML map of base names to contents.
    fn as_map(&self, encode: impl Fn(&[u8]) -> String) -> Result<String, String> {
        let mut m: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
        for f in &self.files {
            let base = f.name.rsplit('/').next().unwrap_or(&f.name).to_string();
            m.insert(base, encode(f.bytes()?));
        }
        let map: Map = m.into_iter().map(|(k, v)| (k, Value::str(v))).collect();
        Ok(super::yamlout::to_yaml(&Value::map(map)))
    }
}

use crate::base64::encode as base64;

fn str_arg(name: &str, args: &[Value]) -> Result<String, String> {
    match args {
        [Value::String(s)] => Ok(s.to_string()),
        [other] => Err(format!(
            "wrong type for value; expected string; got {}",
            other.type_name()
        )),
        _ => Err(format!(
            "wrong number of args for {name}: want 1 got {}",
            args.len()
        )),
    }
}

impl GoObject for Files {
    fn type_name(&self) -> &str {
        "engine.files"
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        Some(match name {
            "Get" => str_arg(name, args)
                .and_then(|p| self.get(&p))
                .map(|d| Value::str(String::from_utf8_lossy(d.unwrap_or_default()))),
            "GetBytes" => str_arg(name, args)
                .and_then(|p| self.get(&p))
                .map(|d| Value::Bytes(Rc::from(d.unwrap_or_default()))),
            "Glob" => str_arg(name, args)
                .and_then(|p| self.glob(&p))
                .map(|f| Value::Object(Rc::new(f))),
            "Lines" => str_arg(name, args)
                .and_then(|p| self.get(&p))
                .map(|d| match d {
                    Some(d) if !d.is_empty() => {
                        let s = String::from_utf8_lossy(d);
                        let s = s.strip_suffix('\n').unwrap_or(&s);
                        Value::list(s.split('\n').map(Value::from).collect())
                    }
                    _ => Value::list(Vec::new()),
                }),
            "AsConfig" if args.is_empty() => self
                .as_map(|d| String::from_utf8_lossy(d).into_owned())
                .map(Value::str),
            "AsSecrets" if args.is_empty() => self.as_map(base64).map(Value::str),
            _ => return None,
        })
    }
    fn map_entries(&self) -> Option<Vec<(String, Value)>> {
        Some(
            self.contents()
                .map(|(n, d)| (n.to_string(), Value::Bytes(Rc::from(d))))
                .collect(),
        )
    }
    fn format(&self) -> String {
        let inner: Vec<String> = self.contents().map(|(n, d)| format!("{n}:{d:?}")).collect();
        format!("map[{}]", inner.join(" "))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How `json.Marshal` sees a built-in object (for `toYaml`/`toJson`): maps keyed by the
/// Go JSON field names (empty `omitempty` fields dropped), a list for `APIVersions`.
pub fn as_json_value(v: &Value) -> Option<Value> {
    let Value::Object(o) = v else { return None };
    let any = o.as_any();
    let s = |x: &str| Value::str(x);
    if let Some(k) = any.downcast_ref::<KubeVersion>() {
        let mut m = Map::new();
        m.insert("Version".into(), s(&k.version));
        m.insert("Major".into(), s(&k.major));
        m.insert("Minor".into(), s(&k.minor));
        return Some(Value::map(m));
    }
    if let Some(a) = any.downcast_ref::<ApiVersions>() {
        return Some(Value::list(a.0.iter().map(|x| s(x)).collect()));
    }
    if any.downcast_ref::<HelmVersion>().is_some() {
        let mut m = Map::new();
        m.insert("version".into(), s(HELM_VERSION));
        m.insert("git_commit".into(), s(HELM_GIT_COMMIT));
        m.insert("git_tree_state".into(), s("clean"));
        m.insert("go_version".into(), s(GO_VERSION));
        return Some(Value::map(m));
    }
    if let Some(c) = any.downcast_ref::<Capabilities>() {
        let mut m = Map::new();
        m.insert("KubeVersion".into(), Value::Object(c.kube.clone()));
        m.insert("APIVersions".into(), Value::Object(c.apis.clone()));
        m.insert("HelmVersion".into(), Value::Object(Rc::new(HelmVersion)));
        return Some(Value::map(m));
    }
    if let Some(c) = any.downcast_ref::<ChartObject>() {
        let mut m = Map::new();
        let md = &c.meta;
        let mut put = |k: &str, field: &str, keep: bool| {
            if keep && let Some(v) = c.field(field) {
                m.insert(k.into(), v);
            }
        };
        put("name", "Name", !md.name.is_empty());
        put("home", "Home", !md.home.is_empty());
        put("sources", "Sources", !md.sources.is_empty());
        put("version", "Version", !md.version.is_empty());
        put("description", "Description", !md.description.is_empty());
        put("keywords", "Keywords", !md.keywords.is_empty());
        put("icon", "Icon", !md.icon.is_empty());
        put("apiVersion", "APIVersion", !md.api_version.is_empty());
        put("condition", "Condition", !md.condition.is_empty());
        put("tags", "Tags", !md.tags.is_empty());
        put("appVersion", "AppVersion", !md.app_version.is_empty());
        put("deprecated", "Deprecated", md.deprecated);
        put("annotations", "Annotations", !md.annotations.is_empty());
        put("kubeVersion", "KubeVersion", !md.kube_version.is_empty());
        put("type", "Type", !md.chart_type.is_empty());
        put("IsRoot", "IsRoot", true);
        if !md.maintainers.is_empty() {
            let list = md
                .maintainers
                .iter()
                .map(|mt| {
                    let mut x = Map::new();
                    x.insert("name".into(), s(&mt.name));
                    if !mt.email.is_empty() {
                        x.insert("email".into(), s(&mt.email));
                    }
                    if !mt.url.is_empty() {
                        x.insert("url".into(), s(&mt.url));
                    }
                    Value::map(x)
                })
                .collect();
            m.insert("maintainers".into(), Value::list(list));
        }
        return Some(Value::map(m));
    }
    None
}

/// `.Release` (a map in Helm, not a struct).
pub fn release(name: &str, namespace: &str) -> Value {
    let mut m = Map::new();
    m.insert("Name".into(), Value::str(name));
    m.insert("Namespace".into(), Value::str(namespace));
    m.insert("IsUpgrade".into(), Value::Bool(false));
    m.insert("IsInstall".into(), Value::Bool(true));
    m.insert("Revision".into(), Value::Int(1));
    m.insert("Service".into(), Value::str("Helm"));
    Value::map(m)
}

/// `.Template`.
pub fn template_info(name: &str, base_path: &str) -> Value {
    let mut m = Map::new();
    m.insert("Name".into(), Value::str(name));
    m.insert("BasePath".into(), Value::str(base_path));
    Value::map(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_has_and_kube_version() {
        let caps = Capabilities::new(KubeVersion::default_version(), &["x.io/v1".into()]);
        let has = caps.apis.call("Has", &[Value::str("apps/v1")]);
        assert!(matches!(has, Some(Ok(Value::Bool(true)))));
        let has = caps.apis.call("Has", &[Value::str("x.io/v1")]);
        assert!(matches!(has, Some(Ok(Value::Bool(true)))));
        let kv = KubeVersion::parse("1.16")
            .map(|k| k.version)
            .unwrap_or_default();
        assert_eq!(kv, "v1.16.0");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(b"ab"), "YWI=");
    }

    #[test]
    fn files_lines_and_glob() {
        let file = |name: &str, data: &[u8]| {
            MiscFile::new(name.into(), crate::source::LazyBytes::loaded(data.into()))
        };
        let f = Files {
            files: vec![
                file("config/a.toml", b"x\ny\n"),
                file("config/sub/b.toml", b""),
            ],
        };
        let g = f.glob("config/*").map(|g| g.files.len()).unwrap_or(0);
        assert_eq!(g, 1);
        let g = f.glob("config/**").map(|g| g.files.len()).unwrap_or(0);
        assert_eq!(g, 2);
        let lines = f.call("Lines", &[Value::str("config/a.toml")]);
        assert!(matches!(lines, Some(Ok(Value::List(l))) if l.len() == 2));
    }
}
