//! What the Helm renderer marked on the nodes of each object — reads of the release's
//! install/upgrade state and non-deterministic calls (related labels, see
//! `render::helm::provenance`) — found in one walk per object before the rules run. Two rules
//! report them; each walked every node of every object for its own marks, and those walks
//! were most of their time.

use super::release_state::{self, ReleaseRead};
use crate::gitops::{Model, ModelObject};
use crate::render::helm::provenance::TAINT_LABEL;
use crate::yaml::{Node, path_to_string};

/// The marks of one object.
#[derive(Default)]
pub struct ObjectMarks<'m> {
    /// Release-state reads that reach the object (see [`release_state::Reads`]).
    pub release_reads: Vec<ReleaseRead>,
    /// Nodes with at least one non-deterministic call among their related labels, in
    /// document order, with their field paths.
    pub tainted: Vec<(String, &'m Node)>,
}

impl<'m> ObjectMarks<'m> {
    fn of(mo: &'m ModelObject) -> ObjectMarks<'m> {
        let mut marks = ObjectMarks::default();
        let mut reads = release_state::Reads::default();
        mo.object.root.walk(|path, node| {
            let Some(related) = &node.related else { return };
            reads.add(path, node, related);
            if related.iter().any(|r| r.label.starts_with(TAINT_LABEL)) {
                marks.tainted.push((path_to_string(path), node));
            }
        });
        marks.release_reads = reads.into_reads();
        marks
    }
}

/// The marks of every object of the model, by object index.
pub fn of_model(model: &Model) -> Vec<ObjectMarks<'_>> {
    use rayon::prelude::*;
    model.objects.par_iter().map(ObjectMarks::of).collect()
}
