#![no_main]
//! See gitops_lint::fuzzing::gotmpl for the input encoding.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = gitops_lint::fuzzing::gotmpl(data);
});
