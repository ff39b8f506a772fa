# Measures which list fields `kubectl kustomize` (v5.5.0) merges by key, for every kind and merge
# list in a merge-keys table (merge_keys_gen.py's output), and prints each result as
# `merged|replaced apiVersion kind type field path`: every line should say merged.
#   python3 merge_keys_probe.py merge-keys-v1.33.txt | grep -v ^merged
# Each probe is an object with a two-item list and a strategic-merge patch naming one item: a
# merged list keeps both items, a replaced one only the patch's.
import os
import subprocess
import sys
import tempfile

INT_KEYS = {"containerPort", "port"}


def load(path):
    roots, types, cur = [], {}, None
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("G "):
            _, av, kind, t = line.split()
            if not kind.endswith("List"):
                roots.append((av, kind, t))
        elif line.startswith("T "):
            cur = line.split()[1]
            types[cur] = []
        else:
            f, sh, child, merge = line.split()
            types[cur].append((f, sh, child, merge))
    return roots, types


def probes(root, types, depth=7):
    """Shortest path to each merge list: [(path of (field, shape, merge)), merge]."""
    seen, out, frontier = set(), [], [(root, [])]
    for _ in range(depth):
        nxt = []
        for t, path in frontier:
            for f, sh, child, merge in types.get(t, []):
                step = path + [(f, sh, merge)]
                if sh == "l" and merge != "-":
                    if (t, f) not in seen:
                        seen.add((t, f))
                        out.append((t, f, step, merge))
                if child != "-" and (sh != "l" or merge not in ("-", "=")):
                    nxt.append((child, step))
        frontier = nxt
    return out


def value(key, i):
    if key in INT_KEYS:
        return 1000 + i
    return f"k{i}"


def nest(step, leaf):
    """The object holding `leaf` under the path; a keyed list on the way gets one element."""
    node = leaf
    for f, sh, merge in reversed(step):
        if sh == "l":
            node = [dict({merge: value(merge, 0)}, **node)]
        elif sh == "m":
            node = {"k": node}
        node = {f: node}
    return node


def doc(av, kind, name, body):
    d = {"apiVersion": av, "kind": kind, "metadata": {"name": name}}
    for k, v in body.items():
        if k == "metadata":
            d["metadata"].update(v)
        else:
            d[k] = v
    return d


def main():
    import json
    roots, types = load(sys.argv[1])
    cases = []
    for av, kind, t in roots:
        for typ, field, step, merge in probes(t, types):
            if merge == "=":
                base_items, patch_items = ["a"], ["b"]
            else:
                base_items = [{merge: value(merge, 1), "probe": "base"}, {merge: value(merge, 2), "probe": "base"}]
                patch_items = [{merge: value(merge, 2), "probe": "patch"}]
            last = step[-1][0]
            base = nest(step[:-1], {last: base_items})
            patch = nest(step[:-1], {last: patch_items})
            cases.append((av, kind, typ, field, step, base, patch))
    with tempfile.TemporaryDirectory() as d:
        names = []
        with open(os.path.join(d, "base.yaml"), "w") as b, open(os.path.join(d, "patch.yaml"), "w") as p:
            for i, (av, kind, typ, field, step, base, patch) in enumerate(cases):
                name = f"p{i}"
                names.append(name)
                b.write("---\n" + json.dumps(doc(av, kind, name, base)) + "\n")
                p.write("---\n" + json.dumps(doc(av, kind, name, patch)) + "\n")
        with open(os.path.join(d, "kustomization.yaml"), "w") as k:
            k.write("resources:\n- base.yaml\npatchesStrategicMerge:\n- patch.yaml\n")
        out = subprocess.run(["kubectl", "kustomize", d],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(out.stderr)
            sys.exit(1)
        import yaml
        docs = {x["metadata"]["name"]: x for x in yaml.safe_load_all(out.stdout) if x}
    for i, (av, kind, typ, field, step, base, patch) in enumerate(cases):
        node = docs.get(f"p{i}")
        for j, (f, sh, merge) in enumerate(step):
            node = node.get(f) if isinstance(node, dict) else None
            if j + 1 < len(step) and sh == "l":
                node = node[0] if isinstance(node, list) and node else None
            elif j + 1 < len(step) and sh == "m":
                node = node.get("k") if isinstance(node, dict) else None
        merged = isinstance(node, list) and len(node) == 2
        print(f"{'merged' if merged else 'replaced'}\t{av}\t{kind}\t{typ}\t{field}\t{'.'.join(s[0] for s in step)}")


main()
