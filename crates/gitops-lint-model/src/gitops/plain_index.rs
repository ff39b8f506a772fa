//! The repo's plain manifests by directory: a directory app takes the objects of the files
//! in (or under) its path, and a repo has as many of those apps as directories, so finding
//! them by scanning every plain object per app grew with apps × objects.

use crate::source::{below_dir, dir_of};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub(super) struct PlainByDir {
    /// Directory of each plain object's file → the objects' indices, ascending.
    dirs: BTreeMap<String, Vec<usize>>,
    len: usize,
}

impl PlainByDir {
    pub(super) fn of<'a>(files: impl Iterator<Item = &'a str>) -> PlainByDir {
        let mut index = PlainByDir::default();
        for (i, file) in files.enumerate() {
            index
                .dirs
                .entry(dir_of(file).to_string())
                .or_default()
                .push(i);
            index.len = i + 1;
        }
        index
    }

    /// The indices of the objects whose file is in `dir` (or below it, with `recurse`), in
    /// the order of the plain list, the order [`crate::source::is_within`] would pick them.
    pub(super) fn indices(&self, dir: &str, recurse: bool) -> Vec<usize> {
        if recurse && dir.is_empty() {
            return (0..self.len).collect();
        }
        let mut out: Vec<usize> = self.dirs.get(dir).cloned().unwrap_or_default();
        if recurse {
            let below = self
                .dirs
                .range(below_dir(dir))
                .flat_map(|(_, v)| v.iter().copied());
            out.extend(below);
            out.sort_unstable();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> PlainByDir {
        PlainByDir::of(
            [
                "apps/a.yaml",
                "apps-b/x.yaml",
                "apps/sub/c.yaml",
                "root.yaml",
                "apps/d.yaml",
                "apps/sub/deeper/e.yaml",
            ]
            .into_iter(),
        )
    }

    #[test]
    fn a_directory_holds_only_its_own_files_without_recursion() {
        assert_eq!(index().indices("apps", false), vec![0, 4]);
        assert_eq!(index().indices("", false), vec![3]);
        assert_eq!(index().indices("missing", false), Vec::<usize>::new());
    }

    #[test]
    fn recursion_adds_subdirectories_but_not_siblings_sharing_a_prefix() {
        // `apps-b` starts with `apps` but is not inside it.
        assert_eq!(index().indices("apps", true), vec![0, 2, 4, 5]);
        assert_eq!(index().indices("apps/sub", true), vec![2, 5]);
        assert_eq!(index().indices("", true), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn it_picks_what_is_within_picks() {
        let files = [
            "a/b.yaml",
            "a/b/c.yaml",
            "a.b/d.yaml",
            "a/b-c/e.yaml",
            "ab/f.yaml",
            "a/g.yaml",
        ];
        let idx = PlainByDir::of(files.into_iter());
        for dir in ["", "a", "a/b", "a.b", "ab", "a/b-c", "z"] {
            for recurse in [false, true] {
                let expected: Vec<usize> = files
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| {
                        let fdir = dir_of(f);
                        if recurse {
                            crate::source::is_within(dir, fdir)
                        } else {
                            fdir == dir
                        }
                    })
                    .map(|(i, _)| i)
                    .collect();
                assert_eq!(idx.indices(dir, recurse), expected, "{dir} {recurse}");
            }
        }
    }
}
