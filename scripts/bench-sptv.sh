#!/usr/bin/env bash
# SpTV on a GPU (issue: the benchmark of docs/benchmarks.md): the shared tensors and generated
# tensors of 10^7 and 10^8 entries with skewed slices, every mode; the baselines (`bench --op
# sptv`: element-wise COO with atomics, cuSPARSE on the unfolding) beside `tune --op sptv`
# (HTF device-resident, and Alg. 1's pipeline from pinned host memory with the model's and the
# measured best stream counts).
#
# usage: scripts/bench-sptv.sh run SPARSETUNE [OUT]   one JSON pair per tensor and mode in OUT
#        scripts/bench-sptv.sh table OUT              the Markdown table of what OUT holds
# SHARED (default ../shared) holds tensors/*.tns.gz; GEN_NNZ (default "10000000 100000000")
# sets the generated sizes.
set -uo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
case "${1:-}" in
  run)
    st=$(realpath "${2:?usage: $0 run SPARSETUNE [OUT]}")
    out=$(realpath -m "${3:-sptv-bench}")
    shared=${SHARED:-../shared}
    mkdir -p "$out/tensors"
    tensors=("$shared"/tensors/*.tns.gz)
    for n in ${GEN_NNZ:-10000000 100000000}; do
      t="$out/tensors/skewed-$n.tns"
      # FROSTT-like shape: a short mode, two long ones; mode-0 slices Zipf-skewed.
      [ -s "$t" ] || "$st" -q gen tensor --dims 512,200000,100000 --nnz "$n" --skew 1.1 \
        --seed 7 -o "$t" || exit 1
      tensors+=("$t")
    done
    for t in "${tensors[@]}"; do
      name=$(basename "$t" .gz)
      name=${name%.tns}
      order=$("$st" --json features "$t" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["dims"]))' 2>/dev/null || echo 3)
      for ((k = 0; k < order; k++)); do
        "$st" --json bench "$t" --op sptv --mode "$k" >"$out/$name.m$k.bench.json" \
          2>"$out/$name.m$k.bench.err"
        b=$?
        "$st" --json tune "$t" --op sptv --mode "$k" --budget 60 --dtype f32 \
          -o "$out/$name.m$k.tuned" >"$out/$name.m$k.tune.json" 2>"$out/$name.m$k.tune.err"
        echo "$name mode $k: bench exit $b, tune exit $?"
      done
    done ;;
  table)
    out=${2:?usage: $0 table OUT}
    python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print("| tensor | mode | COO-atomic ms | unfolded cuSPARSE ms | HTF ms | vs best baseline | "
      "pipeline ms (best n) | model n | measured best n |")
print("|---|---|---|---|---|---|---|---|---|")
for tune in sorted(glob.glob(os.path.join(out, "*.tune.json"))):
    stem = tune[: -len(".tune.json")]
    name, mode = os.path.basename(stem).rsplit(".m", 1)
    try:
        t = json.load(open(tune))
        b = json.load(open(stem + ".bench.json"))
    except (OSError, ValueError):
        continue
    base = {r["name"]: r["time_ms"]["median"] for r in b.get("results", [])
            if r.get("verified") and "time_ms" in r}
    coo = base.get("coo-atomic")
    cus = min([v for k, v in base.items() if k.startswith("unfold")], default=None)
    g = t.get("gpu", {})
    htf = g.get("time_ms", {}).get("median")
    best = min([v for v in (coo, cus) if v], default=None)
    p = g.get("pipeline", {})
    model_n = "/".join(str(r["streams"]) for r in p.get("model", {}).get("formats", []))
    f = lambda v: "—" if v is None else f"{v:.3f}"
    print(f"| {name} | {mode} | {f(coo)} | {f(cus)} | {f(htf)} | "
          f"{'—' if not (htf and best) else f'{best / htf:.2f}x'} | "
          f"{f(p.get('best_measured_ms'))} | {model_n or '—'} | {p.get('best_measured_streams', '—')} |")
PY
    ;;
  *) echo "usage: $0 run SPARSETUNE [OUT] | table OUT" >&2; exit 2 ;;
esac
