# Sourced by the benches: run a command several times and keep the fastest run's figures.
#
#   best_of N CMD...   sets BEST_WALL, BEST_CPU (user+sys, seconds), BEST_CORES (CPU/wall)
#                      and BEST_RSS_MIB (peak resident set) of the run with the least wall time
#   figures LABEL      prints them on one line
#
# Needs GNU time (/usr/bin/time). The command's stdout goes to $BEST_OUT when set.
best_of() {
  local n=$1; shift
  local tmp; tmp=$(mktemp)
  BEST_WALL=""
  for _ in $(seq "$n"); do
    /usr/bin/time -f '%e %U %S %M' -o "$tmp" "$@" > "${BEST_OUT:-/dev/null}" 2>/dev/null || true
    read -r wall user sys kb < <(tail -1 "$tmp")
    if [ -z "$BEST_WALL" ] || awk "BEGIN{exit !($wall < $BEST_WALL)}"; then
      BEST_WALL=$wall
      BEST_CPU=$(awk "BEGIN{printf \"%.2f\", $user + $sys}")
      BEST_RSS_MIB=$((kb / 1024))
    fi
  done
  rm -f "$tmp"
  BEST_CORES=$(awk "BEGIN{printf \"%.2f\", $BEST_CPU / ($BEST_WALL > 0 ? $BEST_WALL : 0.01)}")
}

figures() {
  printf '%s: wall %.2fs, cpu %.2fs, cores used %.2f, peak RSS %d MiB\n' \
    "$1" "$BEST_WALL" "$BEST_CPU" "$BEST_CORES" "$BEST_RSS_MIB"
}

# The build the benches time: the `dist` profile the release binaries ship in (whole-program
# LTO; the first build takes ~10 minutes on 2 cores). GITOPS_LINT_PROFILE=release times the
# build the tests use.
BENCH_PROFILE=${GITOPS_LINT_PROFILE:-dist}
# build_lint [CARGO ARGS...]: build the binary in that profile; lint_bin: its path.
build_lint() { cargo build --profile "$BENCH_PROFILE" --quiet "$@"; }
lint_bin() { echo "${CARGO_TARGET_DIR:-$PWD/target}/$BENCH_PROFILE/gitops-lint"; }
