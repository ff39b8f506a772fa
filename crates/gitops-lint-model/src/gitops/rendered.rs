//! What rendering an app's sources produced. A memoised render's objects are held by
//! reference to the memo's output, not copied: the model builder runs several passes over
//! the repo and all but the last are thrown away, so copying every object in every pass
//! (and dropping the copies) was most of a pass's cost. The pass that becomes the model
//! takes the objects out, moving them where no other app shares the render.

use super::render_jobs::JobOutput;
use crate::object::Object;
use crate::render::RenderIssue;
use std::sync::Arc;

/// What rendering one app's sources produced.
#[derive(Default)]
pub(super) struct Rendered {
    pub(super) objects: RenderedObjects,
    pub(super) issues: Vec<RenderIssue>,
    pub(super) sources: Vec<String>,
    pub(super) differences: Vec<super::model::RenderDifference>,
    /// Remote inputs named while rendering (charts, dependencies, remote bases).
    pub(super) remotes: Vec<super::RemoteUse>,
    /// Inputs left out of the render (a remote base that is not fetched).
    pub(super) skipped: Vec<super::Skip>,
    /// Kustomization directories its kustomize builds entered.
    pub(super) kustomize_dirs: Vec<String>,
    /// Argo CD ConfigMaps read from the values of an argo-cd chart that is not fetched: read
    /// for the instance's settings only, not linted as objects (`argo_chart.rs`).
    pub(super) argo_config: Vec<Object>,
}

/// An app's rendered objects, in order.
#[derive(Default)]
pub(super) struct RenderedObjects {
    parts: Vec<Part>,
}

enum Part {
    Own(Object),
    /// Every object of a memoised render, in its order.
    Job(Arc<JobOutput>),
}

impl RenderedObjects {
    /// Add the objects of a memoised render, after those already here.
    pub(super) fn extend_job(&mut self, out: Arc<JobOutput>) {
        if !out.objects.is_empty() {
            self.parts.push(Part::Job(out));
        }
    }

    pub(super) fn len(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Own(_) => 1,
                Part::Job(out) => out.objects.len(),
            })
            .sum()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Object> {
        self.parts.iter().flat_map(|p| match p {
            Part::Own(o) => std::slice::from_ref(o).iter(),
            Part::Job(out) => out.objects.iter(),
        })
    }

    /// The objects to change in place: shared renders are copied first (the memo's output
    /// and the other apps that share it keep theirs).
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Object> {
        if self.parts.iter().any(|p| matches!(p, Part::Job(_))) {
            let parts = std::mem::take(&mut self.parts);
            for part in parts {
                match part {
                    Part::Own(o) => self.parts.push(Part::Own(o)),
                    Part::Job(out) => self
                        .parts
                        .extend(out.objects.iter().cloned().map(Part::Own)),
                }
            }
        }
        self.parts.iter_mut().filter_map(|p| match p {
            Part::Own(o) => Some(o),
            Part::Job(_) => None,
        })
    }

    /// The objects, owned: a render no one else holds any more (the memo let go of it before
    /// the model is assembled) gives up its objects, one still shared is copied.
    pub(super) fn into_objects(self) -> Vec<Object> {
        let mut all = Vec::new();
        for part in self.parts {
            match part {
                Part::Own(o) => all.push(o),
                Part::Job(out) => match Arc::try_unwrap(out) {
                    Ok(out) => all.extend(out.objects),
                    Err(shared) => all.extend(shared.objects.iter().cloned()),
                },
            }
        }
        all
    }
}

impl FromIterator<Object> for RenderedObjects {
    fn from_iter<I: IntoIterator<Item = Object>>(objects: I) -> Self {
        RenderedObjects {
            parts: objects.into_iter().map(Part::Own).collect(),
        }
    }
}

impl Extend<Object> for RenderedObjects {
    fn extend<I: IntoIterator<Item = Object>>(&mut self, objects: I) {
        self.parts.extend(objects.into_iter().map(Part::Own));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(name: &str) -> Object {
        let text = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
        let doc = crate::yaml::parse_str(&text, crate::source::FileId(0), &Default::default())
            .docs
            .remove(0);
        Object::from_node(doc.root).unwrap_or_else(|| panic!("{name} is an object"))
    }

    fn job(names: &[&str]) -> Arc<JobOutput> {
        Arc::new(JobOutput {
            objects: names.iter().map(|n| object(n)).collect(),
            ..JobOutput::default()
        })
    }

    fn names<'a>(objects: impl Iterator<Item = &'a Object>) -> Vec<String> {
        objects.map(|o| o.name.clone()).collect()
    }

    #[test]
    fn own_and_shared_objects_keep_their_order() {
        let mut r = RenderedObjects::default();
        r.extend([object("a")]);
        r.extend_job(job(&["b", "c"]));
        r.extend([object("d")]);
        assert_eq!(names(r.iter()), ["a", "b", "c", "d"]);
        let owned = r.into_objects();
        assert_eq!(names(owned.iter()), ["a", "b", "c", "d"]);
    }

    /// An app whose only source is the memoised render `out`.
    fn holding(out: &Arc<JobOutput>) -> RenderedObjects {
        let mut r = RenderedObjects::default();
        r.extend_job(out.clone());
        r
    }

    #[test]
    fn a_change_to_one_app_does_not_reach_another_app_sharing_the_render() {
        let shared = job(&["web"]);
        let (mut first, second) = (holding(&shared), holding(&shared));
        for o in first.iter_mut() {
            o.name = "changed".into();
        }
        assert_eq!(names(first.iter()), ["changed"]);
        assert_eq!(names(second.iter()), ["web"]);
        assert_eq!(names(shared.objects.iter()), ["web"]);
    }

    #[test]
    fn a_render_still_shared_is_copied_and_the_last_holder_takes_it() {
        let shared = job(&["web"]);
        let (first, second) = (holding(&shared), holding(&shared));
        drop(shared);
        let from_first = first.into_objects();
        let Some(Part::Job(out)) = second.parts.first() else {
            panic!("the second app holds the render");
        };
        assert_eq!(Arc::strong_count(out), 1, "the first app let go of it");
        let from_second = second.into_objects();
        assert_eq!(names(from_first.iter()), ["web"]);
        assert_eq!(names(from_second.iter()), ["web"]);
    }
}
