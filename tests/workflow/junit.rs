//! `--format junit` in the shape JUnit readers share (Jenkins' JUnit schema, dorny/test-reporter,
//! GitLab): parsed by a real XML parser (Python's, where installed) and checked element by
//! element: counts that add up, `time` on every suite and case, only the known children.

use std::path::Path;
use std::process::Command;

const CHECK: &str = r#"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
def num(e, a, kind=int):
    v = e.get(a)
    assert v is not None, (e.tag, a)
    return kind(v)
totals = dict(tests=0, failures=0, errors=0, skipped=0)
for suite in root:
    assert suite.tag == "testsuite", suite.tag
    assert suite.get("name"), "suite name"
    assert num(suite, "time", float) >= 0
    cases = list(suite)
    counted = dict(tests=len(cases), failures=0, errors=0, skipped=0)
    for case in cases:
        assert case.tag == "testcase", case.tag
        assert case.get("name") and case.get("classname"), case.attrib
        assert num(case, "time", float) >= 0
        kids = [k.tag for k in case]
        assert all(k in ("failure", "error", "skipped", "system-out", "system-err") for k in kids), kids
        assert len(kids) <= 1, kids
        for k in kids:
            if k == "failure": counted["failures"] += 1
            if k == "error": counted["errors"] += 1
            if k == "skipped": counted["skipped"] += 1
    for a in counted:
        assert num(suite, a) == counted[a], (suite.get("name"), a, num(suite, a), counted[a])
        totals[a] += counted[a]
for a in totals:
    assert num(root, a) == totals[a], (a, num(root, a), totals[a])
assert num(root, "time", float) > 0
print(totals["tests"], totals["failures"], totals["skipped"])
"#;

fn junit_counts(args: &[&str]) -> Option<String> {
    if Command::new("python3").arg("--version").output().is_err() {
        println!("skipped: no python3");
        return None;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let out = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["--format", "junit", "--comment", "off"])
        .args(args)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo"))
        .output()
        .expect("run");
    let xml = dir.path().join("report.xml");
    std::fs::write(&xml, &out.stdout).expect("write");
    let check = Command::new("python3")
        .args(["-c", CHECK])
        .arg(&xml)
        .output()
        .expect("python3");
    assert!(
        check.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&check.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    Some(String::from_utf8_lossy(&check.stdout).trim().to_string())
}

#[test]
fn junit_has_the_structure_readers_expect() {
    // The demo: 5 findings, 4 errors and one below the default --fail-on.
    let Some(counts) = junit_counts(&[]) else {
        return;
    };
    assert_eq!(counts, "5 4 1");
    // Warnings below --fail-on as failed test cases, when chosen.
    assert_eq!(
        junit_counts(&["--junit-below-fail-on", "failure"]).as_deref(),
        Some("5 5 0")
    );
    assert_eq!(
        junit_counts(&["--fail-on", "info"]).as_deref(),
        Some("5 5 0")
    );
}
