#!/usr/bin/env bash
# The per-turn cost of a checkpoint (axon-checkpoint's snapshot after a
# 3-file change) on (a) this repository's own tree (its committed files,
# copied to a scratch folder) and (b) a generated 10,000-file tree, against
# a peer doing the same in the same tree in the same run: Gemini CLI's
# checkpoint sequence (a shadow repository with GIT_DIR/GIT_WORK_TREE, then
# `git add -A` and `git commit --allow-empty`), as plain git processes with
# the same isolated environment (crates/checkpoint/examples/checkpoint_bench.rs).
# Prints the first snapshot, the median and p95 of RUNS turns, and one
# restore to the first snapshot. Target: < 50 ms per turn.
#
# Usage: bench/checkpoint.sh [RUNS] [FILES]     (defaults: 50 turns, 10000 files)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

runs=${1:-50}
files=${2:-10000}
command -v git >/dev/null || { echo "bench/checkpoint.sh: needs git" >&2; exit 2; }

cargo build --release --quiet -p axon-checkpoint --example checkpoint_bench
bench=${CARGO_TARGET_DIR:-target}/release/examples/checkpoint_bench

git --version
echo
echo "## (a) this repository's tree"
mkdir -p "$work/repo"
git archive HEAD | tar -x -C "$work/repo"
echo "$(git ls-files | wc -l) files, $(git ls-files -z | xargs -0 cat | wc -l) lines"
"$bench" "$work/repo" "$runs"
echo
echo "## (b) a generated tree of $files files"
mkdir -p "$work/gen"
"$bench" --generate "$files" "$work/gen"
"$bench" "$work/gen" "$runs"
