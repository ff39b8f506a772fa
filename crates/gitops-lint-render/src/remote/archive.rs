//! Git trees in the cache: a checkout is stored as a deterministic `.tar.gz` (sorted paths,
//! fixed modes and times), so the same commit always has the same digest, and is unpacked
//! into memory with the containment vendored chart archives get.

use crate::source::MemTree;
use std::io::Read;

/// Most files one tree archive may hold.
pub const MAX_TREE_FILES: usize = 50_000;
/// Most bytes one tree may hold unpacked.
pub const MAX_TREE_BYTES: u64 = 256 << 20;

/// Pack files (repo-relative `/` paths) into a deterministic gzipped tar.
pub fn pack_tree(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    for (path, bytes) in sorted {
        if crate::source::normalize_relative(path).as_deref() != Some(path.as_str())
            || path.is_empty()
        {
            return Err(format!("tree path `{path}` is not a plain relative path"));
        }
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, path, &bytes[..])
            .map_err(|e| format!("packing {path}: {e}"))?;
    }
    let gz = tar.into_inner().map_err(|e| e.to_string())?;
    gz.finish().map_err(|e| e.to_string())
}

/// Unpack a tree archive into memory. Only regular files are taken; an absolute path, a `..`
/// or too much content is an error (never a partial tree).
pub fn unpack_tree(bytes: &[u8]) -> Result<MemTree, String> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut archive = tar::Archive::new(gz.take(MAX_TREE_BYTES + 1));
    let mut tree = MemTree::new();
    let mut total: u64 = 0;
    let mut count = 0usize;
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let raw = entry
            .path()
            .map_err(|e| e.to_string())?
            .to_string_lossy()
            .replace('\\', "/");
        if raw.starts_with('/') || raw.split('/').any(|p| p == "..") {
            return Err(format!("tree archive holds a path outside its root: {raw}"));
        }
        count += 1;
        if count > MAX_TREE_FILES {
            return Err(format!(
                "tree archive holds more than {MAX_TREE_FILES} files"
            ));
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| e.to_string())?;
        total += data.len() as u64;
        if total > MAX_TREE_BYTES {
            return Err(format!(
                "tree archive unpacks to more than {MAX_TREE_BYTES} bytes"
            ));
        }
        tree.insert(&raw, data);
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_tree_packs_to_the_same_bytes_and_unpacks_whole() {
        let a = vec![
            (
                "base/kustomization.yaml".to_string(),
                b"resources: [cm.yaml]\n".to_vec(),
            ),
            ("base/cm.yaml".to_string(), b"kind: ConfigMap\n".to_vec()),
        ];
        let mut b = a.clone();
        b.reverse();
        let packed = pack_tree(&a).unwrap();
        assert_eq!(packed, pack_tree(&b).unwrap());
        let tree = unpack_tree(&packed).unwrap();
        assert_eq!(tree.get("base/cm.yaml"), Some(&b"kind: ConfigMap\n"[..]));
        assert_eq!(tree.len(), 2);
    }

    #[test]
    fn paths_that_climb_out_are_refused_both_ways() {
        assert!(pack_tree(&[("../x".to_string(), vec![])]).is_err());
        // A hand-made archive with `..` in a member name.
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        let mut header = tar::Header::new_gnu();
        header.set_size(1);
        header.set_entry_type(tar::EntryType::Regular);
        {
            let name = b"a/../../evil";
            let gnu = header.as_gnu_mut().unwrap();
            gnu.name[..name.len()].copy_from_slice(name);
        }
        header.set_cksum();
        tar.append(&header, &b"x"[..]).unwrap();
        let bytes = tar.into_inner().unwrap().finish().unwrap();
        assert!(
            unpack_tree(&bytes)
                .unwrap_err()
                .contains("outside its root")
        );
    }
}
