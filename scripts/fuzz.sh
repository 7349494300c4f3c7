#!/usr/bin/env bash
# Fuzzing: the libFuzzer targets (clang, ASan + UBSan; test/fuzz) for the schema parser, the
# storage bounds check behind as_strided and every import, and the Python-level entry
# points (checkpoint loader, numpy / DLPack import, tensor() of nested data, in an embedded
# interpreter with Python line coverage); and the Hypothesis / mutation fuzzers in
# test/python (every registry operator against torch, the same entry points).
#   scripts/fuzz.sh --short      what CI runs: the libFuzzer targets, fixed seeds, ~1 min
#   scripts/fuzz.sh [MINUTES]    a long run (default 30 minutes per libFuzzer target, then the
#                                Python fuzzers with many examples over several seeds);
#                                figures go in docs/reliability.md
# Expects a normal build in build/release (scripts/test.sh makes one).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
short=0; minutes=30
case "${1:-}" in
  --short) short=1 ;;
  "") ;;
  *[!0-9]*) echo "usage: scripts/fuzz.sh [--short | MINUTES]" >&2; exit 2 ;;
  *) minutes=$1 ;;
esac

export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
cmake -S test/fuzz -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build/fuzz

# Seed corpus: every schema in ops.yaml, one file each (fresh for the short run, so the
# CI run is the same every time; a long run keeps what it found).
corpus=build/fuzz/corpus/schema
[[ $short -eq 1 ]] && rm -rf "$corpus"
mkdir -p "$corpus" build/fuzz/crashes
/usr/bin/python3 - "$corpus" <<'PY'
import hashlib, pathlib, sys, yaml
out = pathlib.Path(sys.argv[1])
for entry in yaml.safe_load(open("ops.yaml")):
    if isinstance(entry, dict) and "func" in entry:
        (out / hashlib.sha1(entry["func"].encode()).hexdigest()[:16]).write_text(entry["func"])
PY

if [[ $short -eq 1 ]]; then
  fuzz_args=(-runs=300000 -seed=1)
else
  fuzz_args=(-max_total_time=$((minutes * 60)) -seed=$RANDOM)
fi
run_target() {  # name corpus
  build/fuzz/"$1" "${fuzz_args[@]}" -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/ "$2" 2>&1 |
    grep -E "^(stat::|#[0-9]+ +DONE)|ERROR|SUMMARY|disagrees" | tee build/fuzz/"$1".log
  grep -q "stat::number_of_executed_units" build/fuzz/"$1".log
}
run_target fuzz_schema_parser "$corpus"
bounds_corpus=build/fuzz/corpus/storage_bounds
[[ $short -eq 1 ]] && rm -rf "$bounds_corpus"
mkdir -p "$bounds_corpus"
run_target fuzz_storage_bounds "$bounds_corpus"

# The Python-level entry points (fuzz_python_entry: an embedded interpreter with Python line
# coverage), against the normal build's tessera: seeds are real torch.save files and their
# pickles (load), or a few byte strings Hypothesis decodes (numpy, nested).
export TESSERA_BUILD_DIR="$root/build/release" PYTHONPATH="$root/build/release/python"
for target in load numpy nested; do
  tcorpus=build/fuzz/corpus/$target
  [[ $short -eq 1 ]] && rm -rf "$tcorpus"
  /usr/bin/python3 -c "import sys; sys.path.insert(0, 'test/fuzz'); import fuzz_targets as f; f.seed_corpus('$target', '$tcorpus')"
  if [[ $short -eq 1 ]]; then
    case $target in load) runs=3000 ;; numpy) runs=500 ;; nested) runs=1000 ;; esac
    fuzz_args=(-runs=$runs -seed=1 -max_len=512 -timeout=60)
  else
    fuzz_args=(-max_total_time=$((minutes * 60)) -seed=$RANDOM -max_len=4096 -timeout=60)
  fi
  TESSERA_FUZZ_TARGET=$target run_target fuzz_python_entry "$tcorpus"
  mv build/fuzz/fuzz_python_entry.log build/fuzz/python_$target.log
done

pytest=(/usr/bin/python3 -m pytest -q -p no:cacheprovider -p no:warnings)
# The short run leaves the Python fuzzers to ctest, which runs them (fixed seeds) in the
# normal build and, for the import and loader fuzzers, under ASan/UBSan as well.
if [[ $short -eq 0 ]]; then
  for seed in 1 2 3 4; do
    TESSERA_FUZZ_SEED=$seed TESSERA_FUZZ_EXAMPLES=300 "${pytest[@]}" test/python/test_fuzz_differential.py
    TESSERA_FUZZ_SEED=$seed TESSERA_FUZZ_EXAMPLES=5000 "${pytest[@]}" test/python/test_fuzz_inputs.py
    TESSERA_FUZZ_SEED=$seed TESSERA_FUZZ_LOAD_CASES=20000 "${pytest[@]}" test/python/test_fuzz_load.py
  done
fi
echo "fuzz: done ($([[ $short -eq 1 ]] && echo short || echo "$minutes min"))"
