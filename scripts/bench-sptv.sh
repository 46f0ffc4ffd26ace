#!/usr/bin/env bash
# SpTV on a GPU (issue: the benchmark of docs/benchmarks.md): the shared tensors and generated
# tensors of 10^7 and 10^8 entries with skewed slices, every mode; the baselines (`bench --op
# sptv`: element-wise COO with atomics, cuSPARSE on the unfolding, each device-resident and with
# transfers: H2D of its arrays and v, the kernel, D2H of y) beside `tune --op sptv` (HTF
# device-resident, and Alg. 1's pipeline from pinned host memory, timed at the measured best
# stream count and at the model's). The table gives both settings' speed-ups.
#
# usage: scripts/bench-sptv.sh run SPARSETUNE [OUT]   one JSON pair per tensor and mode in OUT
#        scripts/bench-sptv.sh table OUT              the Markdown table of what OUT holds
# SHARED (default ../shared) holds tensors/*.tns.gz; GEN_NNZ (default "10000000 100000000")
# sets the generated sizes (written as the binary tensor container, .safetensors: the .tns text
# of 10^8 entries is 3.5 GB, slow to write and to parse), BUDGET (default 60) the seconds of each
# tune, TUNE_RANK (device or transfers, default device) what its search ranks the measured designs
# by, MODES (default: every mode) which modes run, e.g. "1 2", GEN_DIMS (default
# 512,200000,100000) and GEN_SKEW (default 1.1) the generated tensors' dims and mode-0 Zipf skew
# (a shape other than the default's is named by its dims too). The table also sets what
# --budget 0 would emit (the search's predicted design) against the fastest design measured.
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
    dims=${GEN_DIMS:-512,200000,100000}
    skew=${GEN_SKEW:-1.1}
    tag=""
    [ "$dims,$skew" = "512,200000,100000,1.1" ] || tag="-${dims//,/x}-s$skew"
    for n in ${GEN_NNZ:-10000000 100000000}; do
      t="$out/tensors/skewed-$n$tag.safetensors"
      # FROSTT-like shape by default: a short mode, two long ones; mode-0 slices Zipf-skewed.
      [ -s "$t" ] || "$st" -q gen tensor --dims "$dims" --nnz "$n" --skew "$skew" \
        --seed 7 -o "$t" || exit 1
      tensors+=("$t")
    done
    for t in "${tensors[@]}"; do
      name=$(basename "$t" .gz)
      name=${name%.tns}
      name=${name%.safetensors}
      order=$("$st" --json features "$t" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["dims"]))' 2>/dev/null || echo 3)
      modes=${MODES:-$(seq 0 $((order - 1)))}
      for k in $modes; do
        ((k < order)) || continue
        "$st" --json bench "$t" --op sptv --mode "$k" >"$out/$name.m$k.bench.json" \
          2>"$out/$name.m$k.bench.err"
        b=$?
        "$st" --json tune "$t" --op sptv --mode "$k" --budget "${BUDGET:-60}" --dtype f32 \
          --rank-by "${TUNE_RANK:-device}" -o "$out/$name.m$k.tuned" \
          >"$out/$name.m$k.tune.json" 2>"$out/$name.m$k.tune.err"
        echo "$name mode $k: bench exit $b, tune exit $?"
      done
    done ;;
  table)
    out=$(cd "$OLDPWD" && realpath -m "${2:?usage: $0 table OUT}")  # relative to the caller
    python3 - "$out" <<'PY'
import glob, json, math, os, sys
out = sys.argv[1]
print("Device-resident (kernels only) and with transfers (H2D of the arrays and v, the kernels, "
      "D2H of y; HTF: Alg. 1's pipeline from pinned memory), ms.\n")
print("| tensor | mode | COO-atomic | unfolded cuSPARSE | HTF | vs best baseline | "
      "COO-atomic +T | cuSPARSE +T | pipeline, best n | vs best baseline +T | "
      "Alg. 1 (16 batches), best n | model n | pipeline, model n |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for tune in sorted(glob.glob(os.path.join(out, "*.tune.json"))):
    stem = tune[: -len(".tune.json")]
    name, mode = os.path.basename(stem).rsplit(".m", 1)
    try:
        t = json.load(open(tune))
        b = json.load(open(stem + ".bench.json"))
    except (OSError, ValueError):
        continue
    ok = [r for r in b.get("results", []) if r.get("verified") and "time_ms" in r]
    base = {r["name"]: r["time_ms"]["median"] for r in ok}
    base_t = {r["name"]: r["with_transfers_ms"]["median"] for r in ok
              if isinstance(r.get("with_transfers_ms"), dict)}
    unfold = lambda d: min([v for k, v in d.items() if k.startswith("unfold")], default=None)
    coo, cus = base.get("coo-atomic"), unfold(base)
    coo_t, cus_t = base_t.get("coo-atomic"), unfold(base_t)
    g = t.get("gpu", {})
    htf = g.get("time_ms", {}).get("median")
    best = min([v for v in (coo, cus) if v], default=None)
    best_t = min([v for v in (coo_t, cus_t) if v], default=None)
    p = g.get("pipeline", {})
    pipe = p.get("best_measured_ms") or None
    model_n = "/".join(str(r["streams"]) for r in p.get("model", {}).get("formats", []))
    model_ms = p.get("model_run", {}).get("time_ms") or None
    alg1 = p.get("alg1_best_ms") or None
    cut = p.get("best_measured_batches")
    how = f"{p.get('best_measured_streams', '—')}" + (f", {cut} batch/format" if cut == 1 else "")
    f = lambda v: "—" if v is None else f"{v:.3f}"
    x = lambda num, den: "—" if not (num and den) else f"{num / den:.2f}x"
    print(f"| {name} | {mode} | {f(coo)} | {f(cus)} | {f(htf)} | {x(best, htf)} | "
          f"{f(coo_t)} | {f(cus_t)} | {f(pipe)} ({how}) | "
          f"{x(best_t, pipe)} | {f(alg1)} ({p.get('alg1_best_streams', '—')}) | {model_n or '—'} | "
          f"{f(model_ms)} |")

# What --budget 0 emits (the search's first row, "predicted") against the selection and the
# fastest design the search measured, device-resident.
rows = []
for tune in sorted(glob.glob(os.path.join(out, "*.tune.json"))):
    try:
        s = json.load(open(tune))["selection"]["search"]
    except (OSError, ValueError, KeyError):
        continue
    ms = {r["design"]: r["time_ms"] for r in s if "time_ms" in r}
    pred = next((r["design"] for r in s if r.get("predicted")), None)
    if pred not in ms:
        continue
    best = min(ms, key=ms.get)
    name, mode = os.path.basename(tune)[: -len(".tune.json")].rsplit(".m", 1)
    rows.append((name, mode, pred, ms[pred], ms.get("selected"), best, ms[best]))
if rows:
    print("\nThe predicted design (what --budget 0 emits) against the fastest measured, ms.\n")
    print("| tensor | mode | predicted | ms | the selection | fastest measured | ms | "
          "predicted / fastest | selection / fastest |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, mode, pred, t, sel, best, tb in rows:
        r = lambda v: "—" if v is None else f"{v / tb:.3f}"
        print(f"| {name} | {mode} | {pred} | {t:.4f} | "
              f"{'—' if sel is None else f'{sel:.4f}'} | {best} | {tb:.4f} | {r(t)} | {r(sel)} |")
    gm = lambda v: math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")
    sels = [sel / tb for *_, sel, _, tb in rows if sel]
    print(f"\nGeometric mean over {len(rows)} runs: predicted "
          f"{gm([t / tb for *_, t, _, _, tb in rows]):.3f}x the fastest"
          + (f", the selection {gm(sels):.3f}x ({len(sels)} measured)." if sels else "."))
PY
    ;;
  *) echo "usage: $0 run SPARSETUNE [OUT] | table OUT" >&2; exit 2 ;;
esac
