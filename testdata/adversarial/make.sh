#!/usr/bin/env bash
# Builds the adversarial repo in DIR: the checked-in apps of repo/ plus the inputs too big or
# too many to commit (a 100,000-deep nesting, a 50 MB scalar, 10,000 tiny files, a symlink
# farm with loops and links out of the repo). Used by tests/adversarial.rs and
# bench/adversarial.sh.  Usage: testdata/adversarial/make.sh DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"
mkdir -p "$out"
cp -r "$here/repo/." "$out/"
cd "$out"
mkdir -p yaml many farm
# 100,000 nested flow sequences.
python3 -c "import sys; sys.stdout.write('[' * 100000 + ']' * 100000 + '\n')" > yaml/deep-nesting.yaml
# One 50 MB plain scalar.
python3 - <<'PY'
with open("yaml/huge-scalar.yaml", "w") as f:
    f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\ndata:\n  blob: ")
    f.write("x" * (50 * 1024 * 1024))
    f.write("\n")
PY
# 10,000 tiny (valid) manifests.
python3 - <<'PY'
for i in range(10000):
    with open(f"many/cm-{i:05}.yaml", "w") as f:
        f.write(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: tiny\ndata:\n  n: \"{i}\"\n")
PY
# A symlink farm: chains, loops, directory loops, links to the host and out of the repo.
for i in $(seq 0 199); do ln -s "link-$(( (i + 1) % 200 )).yaml" "farm/link-$i.yaml"; done
ln -s .. farm/up
ln -s ../farm farm/self
ln -s /etc/passwd farm/passwd.yaml
ln -s /etc farm/etc
ln -s ../../.. farm/outside
for i in $(seq 0 99); do ln -s ../many "farm/many-$i"; done
