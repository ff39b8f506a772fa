#!/usr/bin/env python3
"""Differential check against the real tools.

    bench/differential.py [--bin target/debug/gitops-lint] [--details DIR] [--jobs N] ROOT...

Every chart under ROOT (a directory with Chart.yaml that is not a vendored subchart under
another chart's charts/) is rendered by `helm template r CHART` and by
`gitops-lint helm template r CHART`, once with the chart's defaults and once per
`ci/*.yaml` values file (`-f`). Every kustomization directory (kustomization.yaml,
kustomization.yml or Kustomization) is built by `kubectl kustomize DIR` and by
`gitops-lint render DIR`. Each case is one of:

  identical   the same stdout (trailing whitespace aside)
  masked      the same once random lines are masked: helm renders the chart twice and the
              lines that differ between its two runs (randAlphaNum, genCA, uuidv4, ...) are
              masked in all three outputs
  differ      different output
  both-error  both exit non-zero
  one-error   one exits non-zero, the other not

The table goes to stdout; with --details, DIR gets one file per non-identical case (both
outputs, or both errors). Commands run with a 120 s limit each, in the case's parent
directory, with no network needed (charts whose dependencies are not vendored fail in both).
"""
import argparse
import concurrent.futures
import difflib
import os
import subprocess
import sys

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
TIMEOUT = 120


def run(cmd, cwd):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {TIMEOUT}s"
    except OSError as e:
        return 127, "", str(e)


def norm(text):
    lines = [l.rstrip() for l in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def find_cases(roots):
    charts, kusts = [], []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            parts = dirpath.split(os.sep)
            if "Chart.yaml" in filenames and "charts" not in parts[:-1]:
                charts.append(dirpath)
            if any(n in filenames for n in KUSTOMIZATION_NAMES):
                kusts.append(dirpath)
    return charts, kusts


def chart_cases(chart):
    out = [(chart, [])]
    ci = os.path.join(chart, "ci")
    if os.path.isdir(ci):
        for f in sorted(os.listdir(ci)):
            if f.endswith((".yaml", ".yml")):
                out.append((chart, ["-f", os.path.join(ci, f)]))
    return out


def classify(ref, ref2, nat):
    """ref, ref2: two runs of the real tool; nat: the native one. (rc, out, err) each."""
    if ref[0] != 0 and nat[0] != 0:
        return "both-error"
    if (ref[0] != 0) != (nat[0] != 0):
        return "one-error"
    a, b = norm(ref[1]), norm(nat[1])
    if a == b:
        return "identical"
    a2 = norm(ref2[1]) if ref2 else a
    if len(a) == len(a2) == len(b):
        random = {i for i in range(len(a)) if a[i] != a2[i]}
        if random and all(a[i] == b[i] for i in range(len(a)) if i not in random):
            return "masked"
    return "differ"


def helm_case(binary, chart, extra):
    parent = os.path.dirname(os.path.abspath(chart))
    name = os.path.basename(os.path.abspath(chart))
    args = ["template", "r", name] + [os.path.abspath(x) if x != "-f" else x for x in extra]
    ref = run(["helm"] + args, parent)
    ref2 = run(["helm"] + args, parent) if ref[0] == 0 else None
    nat = run([binary, "helm"] + args, parent)
    label = chart + ("" if not extra else " " + " ".join(extra))
    return label, classify(ref, ref2, nat), ref, nat


def kustomize_case(binary, d):
    path = os.path.abspath(d)
    ref = run(["kubectl", "kustomize", path], "/")
    nat = run([binary, "render", path], "/")
    return d, classify(ref, None, nat), ref, nat


def write_detail(details, kind, label, verdict, ref, nat):
    safe = label.replace("/", "__").replace(" ", "_")[-180:]
    with open(os.path.join(details, f"{kind}-{verdict}-{safe}.txt"), "w") as f:
        f.write(f"# {kind} {label}: {verdict}\n")
        if verdict == "differ":
            f.writelines(
                l + "\n"
                for l in difflib.unified_diff(norm(ref[1]), norm(nat[1]), "reference", "gitops-lint", lineterm="")
            )
        f.write(f"\n# reference exit {ref[0]} stderr:\n{ref[2]}\n# gitops-lint exit {nat[0]} stderr:\n{nat[2]}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "debug", "gitops-lint"))
    ap.add_argument("--details")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    if not os.access(binary, os.X_OK):
        sys.exit(f"differential: {binary} is not built (cargo build)")
    if a.details:
        os.makedirs(a.details, exist_ok=True)
    charts, kusts = find_cases(a.roots)
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for chart in charts:
            for c, extra in chart_cases(chart):
                jobs.append(("helm", pool.submit(helm_case, binary, c, extra)))
        for d in kusts:
            jobs.append(("kustomize", pool.submit(kustomize_case, binary, d)))
        results = [(kind, f.result()) for kind, f in jobs]
    verdicts = ["identical", "masked", "differ", "both-error", "one-error"]
    table = {k: {v: 0 for v in verdicts} for k in ("helm", "kustomize")}
    listed = []
    for kind, (label, verdict, ref, nat) in results:
        table[kind][verdict] += 1
        if verdict in ("differ", "one-error"):
            listed.append(f"{kind}\t{verdict}\t{label}")
        if a.details and verdict != "identical":
            write_detail(a.details, kind, label, verdict, ref, nat)
    print("| renderer | cases | " + " | ".join(verdicts) + " |")
    print("|---|---|" + "---|" * len(verdicts))
    for kind in ("helm", "kustomize"):
        row = table[kind]
        print(f"| {kind} | {sum(row.values())} | " + " | ".join(str(row[v]) for v in verdicts) + " |")
    for l in sorted(listed):
        print(l)


main()
