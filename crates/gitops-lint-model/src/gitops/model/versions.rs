//! The Argo CD and Flux releases apps are judged with, as data (`crate::gitops::versions`
//! finds them).

use super::{App, Cluster, Controller, Model};
use crate::config::Release;
use crate::source::{SourceMap, Span};

/// The newest Argo CD release this build knows (https://github.com/argoproj/argo-cd/releases).
pub const LATEST_ARGO: (u64, u64, &str) = (3, 5, "3.5.1");
/// The newest Flux release this build knows (https://github.com/fluxcd/flux2/releases).
pub const LATEST_FLUX: (u64, u64, &str) = (2, 9, "2.9.4");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Product {
    ArgoCd,
    Flux,
}

impl Product {
    /// The product whose release judges apps of this controller.
    pub fn of(controller: Controller) -> Option<Product> {
        match controller {
            Controller::Argocd => Some(Product::ArgoCd),
            c if c.is_flux() => Some(Product::Flux),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Product::ArgoCd => "Argo CD",
            Product::Flux => "Flux",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Product::ArgoCd => "argo-version",
            Product::Flux => "flux-version",
        }
    }
}

/// How the release an app is judged with was found.
#[derive(Clone, Debug, PartialEq)]
pub enum How {
    /// `--argo-version` / `--flux-version`.
    Flag,
    /// `profile.argo-version`, or a `profile.clusters` entry: the value's span.
    Config(Span),
    /// What the repo installs: the line that says so, and what it is.
    Repo(Span, String),
    /// Nothing said: the latest release.
    Latest,
}

/// A release an app is judged with.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    pub product: Product,
    pub major: u64,
    pub minor: u64,
    /// As written (`v2.14.2`, `2.x`), or the latest release's number.
    pub text: String,
    pub how: How,
}

impl Judged {
    /// Is this release older than `major.minor`?
    pub fn before(&self, major: u64, minor: u64) -> bool {
        (self.major, self.minor) < (major, minor)
    }

    /// Did the user or the repo say which release this is (not the latest by default)?
    pub fn is_stated(&self) -> bool {
        self.how != How::Latest
    }

    /// The line that states the release (the configuration value, the install), if any.
    pub fn span(&self) -> Option<Span> {
        match &self.how {
            How::Config(span) | How::Repo(span, _) => Some(*span),
            How::Flag | How::Latest => None,
        }
    }

    /// The release for a message: its number when the user or the repo stated it, else
    /// `unstated` (the range of releases the behaviour holds for, `3.0 and later`).
    pub fn named_or(&self, unstated: &str) -> String {
        if self.is_stated() {
            self.text.clone()
        } else {
            unstated.to_string()
        }
    }

    fn latest(product: Product) -> Judged {
        let (major, minor, text) = match product {
            Product::ArgoCd => LATEST_ARGO,
            Product::Flux => LATEST_FLUX,
        };
        Judged {
            product,
            major,
            minor,
            text: text.to_string(),
            how: How::Latest,
        }
    }

    pub(crate) fn from_release(product: Product, r: &Release) -> Judged {
        Judged {
            product,
            major: r.major,
            minor: r.minor,
            text: r.text.clone(),
            how: r.span.map_or(How::Flag, How::Config),
        }
    }

    /// `Argo CD v2.14.2 (installed by argocd/kustomization.yaml:4)`, `Flux 2.9.4 (the latest
    /// release; --flux-version or profile.flux-version to set)`: for messages and the
    /// coverage line.
    pub fn describe(&self, map: &SourceMap) -> String {
        let product = self.product.name();
        let why = match &self.how {
            How::Flag => format!("--{}", self.product.key()),
            How::Config(span) => format!("{}:{}", map.path(span.file), map.line_col(*span).line),
            How::Repo(span, what) => format!(
                "{what}, {}:{}",
                map.path(span.file),
                map.line_col(*span).line
            ),
            How::Latest => format!(
                "the latest release; --{0} or profile.{0} to set",
                self.product.key()
            ),
        };
        format!("{product} {} ({why})", self.text)
    }
}

/// The releases of the model: per cluster where the configuration or the repo names one,
/// and the release for every other cluster.
#[derive(Clone, Debug)]
pub struct PlatformVersions {
    pub(crate) argo: Vec<(String, Judged)>,
    pub(crate) flux: Vec<(String, Judged)>,
    pub(crate) argo_default: Judged,
    pub(crate) flux_default: Judged,
}

impl Default for PlatformVersions {
    fn default() -> Self {
        PlatformVersions {
            argo: Vec::new(),
            flux: Vec::new(),
            argo_default: Judged::latest(Product::ArgoCd),
            flux_default: Judged::latest(Product::Flux),
        }
    }
}

impl PlatformVersions {
    /// The release of `product` that runs on `cluster`.
    pub fn on(&self, product: Product, cluster: &Cluster) -> &Judged {
        let (list, default) = match product {
            Product::ArgoCd => (&self.argo, &self.argo_default),
            Product::Flux => (&self.flux, &self.flux_default),
        };
        list.iter()
            .find(|(name, _)| cluster.is_known() && name == cluster.name())
            .map_or(default, |(_, j)| j)
    }

    /// The release for every cluster no configuration or install names.
    pub fn default_for(&self, product: Product) -> &Judged {
        match product {
            Product::ArgoCd => &self.argo_default,
            Product::Flux => &self.flux_default,
        }
    }

    /// Per-cluster releases, for `apps --format json` and the coverage line.
    pub fn per_cluster(&self, product: Product) -> &[(String, Judged)] {
        match product {
            Product::ArgoCd => &self.argo,
            Product::Flux => &self.flux,
        }
    }
}

impl Model {
    /// The Argo CD release that runs `app` (on its home cluster).
    pub fn argo_version(&self, app: &App) -> &Judged {
        self.versions.on(Product::ArgoCd, &app.home)
    }

    /// The Flux release that runs `app` (on its home cluster).
    pub fn flux_version(&self, app: &App) -> &Judged {
        self.versions.on(Product::Flux, &app.home)
    }
}

/// The Flux release whose kustomize-controller reads `Kustomization.spec.ignore`
/// (kustomize-controller v1.9.0, https://github.com/fluxcd/kustomize-controller/pull/1627).
pub const KUSTOMIZATION_IGNORE_SINCE: (u64, u64) = (2, 9);
