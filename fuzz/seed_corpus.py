#!/usr/bin/env python3
"""Seed fuzz/corpus/<target>/ from the repository's testdata and ../shared/corpus.

Each seed is written in its target's input encoding (see src/fuzzing.rs); files are named by
content hash, so seeding twice adds nothing. Usage: seed_corpus.py REPO_ROOT SHARED_DIR
"""

import hashlib
import json
import os
import sys

MAX_SEED = 64 * 1024  # libFuzzer's -max_len in run.sh
PER_TARGET = 400
YAML_EXT = (".yaml", ".yml", ".json")


def files_under(root, exts=None):
    out = []
    for d, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            if exts and not n.endswith(exts):
                continue
            if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) <= MAX_SEED:
                out.append(p)
    return out


def read(p):
    with open(p, "rb") as f:
        return f.read()


def encode_tree(pairs):
    """path\\0content\\0path\\0content…"""
    parts = []
    for path, content in pairs:
        parts += [path.encode(), content]
    return b"\0".join(parts)


class Corpus:
    def __init__(self, out_dir, target):
        self.dir = os.path.join(out_dir, target)
        os.makedirs(self.dir, exist_ok=True)
        self.count = 0

    def add(self, data):
        if self.count >= PER_TARGET or len(data) > MAX_SEED:
            return
        name = hashlib.sha1(data).hexdigest()
        path = os.path.join(self.dir, name)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
        self.count += 1


def tree_pairs(root, base=None):
    base = base or root
    return [(os.path.relpath(p, base), read(p)) for p in files_under(root)]


def kustomize_cases(shared):
    """(case dir, build root) of the kustomize conformance vectors, success and error cases."""
    for sub in ("vectors", "vectors-errors"):
        d = os.path.join(shared, "corpus", "kustomize", sub)
        if not os.path.isdir(d):
            continue
        for case in sorted(os.listdir(d)):
            cj = os.path.join(d, case, "case.json")
            if os.path.isfile(cj):
                with open(cj) as f:
                    yield os.path.join(d, case), json.load(f).get("root", ".")


def kustomization_file(d):
    for n in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
        if os.path.isfile(os.path.join(d, n)):
            return n
    return None


def seed_kustomize_build(c, shared):
    for case, root in kustomize_cases(shared):
        rdir = os.path.normpath(os.path.join(case, root))
        kname = kustomization_file(rdir)
        if not kname:
            continue
        # Re-root: the build root's files move to the top, `../` references lose a level.
        kust = read(os.path.join(rdir, kname)).replace(b"../", b"")
        pairs = []
        for p in files_under(case):
            if os.path.basename(p) in ("case.json",) or os.path.basename(p).startswith("expected"):
                continue
            if os.path.normpath(p) == os.path.join(rdir, kname):
                continue
            rel = os.path.relpath(p, rdir)
            if rel.startswith(".."):
                rel = os.path.relpath(p, case)
            pairs.append((rel, read(p)))
        c.add(kust + b"\0" + encode_tree(pairs))


def seed_yaml(c, repo, shared):
    for p in files_under(os.path.join(repo, "testdata"), YAML_EXT):
        c.add(read(p))
    for case, _ in kustomize_cases(shared):
        for p in files_under(case, YAML_EXT):
            if os.path.basename(p) != "case.json":
                c.add(read(p))


def seed_gotmpl(c, shared):
    helm = os.path.join(shared, "corpus", "helm")
    with open(os.path.join(helm, "sprig-vectors.json")) as f:
        for v in json.load(f)["vectors"]:
            c.add(v["template"].encode() + b"\0" + json.dumps(v.get("vars") or {}).encode())
    with open(os.path.join(helm, "text-template-vectors.json")) as f:
        for t in json.load(f)["exec_tests"]:
            c.add(t["input"].encode())
    charts = os.path.join(helm, "charts")
    for chart in sorted(os.listdir(charts)):
        values = os.path.join(charts, chart, "values.yaml")
        tdir = os.path.join(charts, chart, "templates")
        if not os.path.isdir(tdir):
            continue
        v = read(values) if os.path.isfile(values) else b""
        for p in files_under(tdir)[:6]:
            c.add(read(p) + b"\0" + v)


def seed_patch(c, shared):
    """Objects and the patches applied to them in the kustomize vectors."""
    flags = 0
    for case, _ in kustomize_cases(shared):
        ys = [p for p in files_under(case, YAML_EXT) if os.path.basename(p) != "case.json"]
        objects = [p for p in ys if b"kind:" in read(p) and "patch" not in os.path.basename(p)]
        patches = [p for p in ys if "patch" in os.path.basename(p).lower()]
        if not objects or not patches:
            continue
        for p in patches[:3]:
            c.add(bytes([flags % 4]) + read(objects[0]) + b"\0" + read(p))
            flags += 1


def seed_lint_repo(c, repo, shared):
    roots = []
    for top in ("apps", "demo", "ownership", "nondeterminism", "nondeterminism-clean"):
        d = os.path.join(repo, "testdata", top)
        if os.path.isdir(d):
            roots += [os.path.join(d, n) for n in sorted(os.listdir(d))]
    rules = os.path.join(repo, "testdata", "rules")
    if os.path.isdir(rules):
        roots += [os.path.join(rules, n) for n in sorted(os.listdir(rules))]
    for r in roots:
        if os.path.isdir(r):
            c.add(encode_tree(tree_pairs(r)))
    for case, _ in kustomize_cases(shared):
        c.add(encode_tree([(k, v) for k, v in tree_pairs(case) if k != "case.json"
                           and not k.startswith("expected")]))


def main():
    repo, shared = sys.argv[1], sys.argv[2]
    out = os.path.join(repo, "fuzz", "corpus")
    seed_yaml(Corpus(out, "yaml_load"), repo, shared)
    seed_gotmpl(Corpus(out, "gotmpl"), shared)
    seed_kustomize_build(Corpus(out, "kustomize_build"), shared)
    seed_patch(Corpus(out, "patch"), shared)
    seed_lint_repo(Corpus(out, "lint_repo"), repo, shared)


if __name__ == "__main__":
    main()
