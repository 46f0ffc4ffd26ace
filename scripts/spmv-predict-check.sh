#!/usr/bin/env bash
# SpMV predict-only answer against the searched best, on a GPU: for each matrix of LIST_DIR
# (written by scripts/spmv-predict-list.py: the spmv-rank model's test matrices), the
# `tune --budget 0` pick (fp64) against the fastest verified graph the tuning database's searches
# recorded for it (LIST_DIR/graphs/ID.json, emitted by `emit-kernel --graph`), both folders run by
# `sparsetune --json run DIR --runs 30` (flushed median, verified), interleaved (p s, then s p),
# twice each; the better round each. share = searched best us / pick us (> 1: the pick won).
# Preparation (gen, tune --budget 0, emit-kernel) runs $JOBS matrices at once before any timing;
# the timed runs go strictly one at a time, in matrices.tsv's order (the shared ones, then the
# generated ones round-robin over families), and stop cleanly before the deadline. The table
# (lowest share first) and the summary lines are printed last.
#
# usage: scripts/spmv-predict-check.sh LIST_DIR OUT_DIR
#   python3 scripts/spmv-predict-list.py --out /tmp/list &&
#     ST=build/apps/sparsetune/sparsetune scripts/spmv-predict-check.sh /tmp/list /tmp/out
# OUT_DIR gets gpu.txt, results.tsv (a row per matrix), ID.json (its numbers) and the runs'
# stderr. Environment: ST (the sparsetune command, default `sparsetune` on PATH), SHARED (the
# shared .mtx.gz, default ../shared/matrices of the repository root), WORK (scratch folder, empty
# or absent, kept; default a temporary one removed at exit), JOBS (preparations at once, default
# 8), DEADLINE (seconds for the whole script, default none), PREP_MAX (seconds the preparation
# may take, default 3/10 of DEADLINE, else none), SPARSETUNE_CONFIG_DIR (default the
# repository's configs, so the pick uses the model the list was made from).
# Without a GPU every run fails: each matrix prints "no time" and the summary still comes.
set -euo pipefail
usage() { sed -n '/^# usage:/,/^[^#]/ s/^# \{0,1\}//p' "$0" >&2; exit "${1:-2}"; }
case "${1:-}" in -h | --help) usage 0 ;; esac
[ $# -eq 2 ] || usage
start=$(date +%s)
root=$(cd "$(dirname "$0")/.." && pwd)
LIST=$(cd "$1" && pwd) || exit 2
OUT=$2
if [ ! -s "$LIST/matrices.tsv" ] || [ ! -d "$LIST/graphs" ]; then
  echo "$0: $LIST has no matrices.tsv and graphs/ (scripts/spmv-predict-list.py)" >&2
  exit 2
fi
ST=${ST:-sparsetune}
command -v "$ST" >/dev/null || { echo "$0: no sparsetune command: $ST (set ST)" >&2; exit 2; }
SHARED=${SHARED:-$root/../shared/matrices}
JOBS=${JOBS:-8}
DEADLINE=${DEADLINE:-}
PREP_MAX=${PREP_MAX:-${DEADLINE:+$((DEADLINE * 3 / 10))}}
export SPARSETUNE_CONFIG_DIR=${SPARSETUNE_CONFIG_DIR:-$root/configs}
if [ -n "${WORK:-}" ]; then
  # Stale run files of another list would be read as this one's.
  mkdir -p "$WORK"
  [ -z "$(ls -A "$WORK")" ] || { echo "$0: WORK=$WORK is not empty" >&2; exit 2; }
  W=$WORK
else
  W=$(mktemp -d)
  trap 'rm -rf "$W"' EXIT
fi
mkdir -p "$W/mat" "$OUT"
# Seconds left before the deadline; without one, more than any matrix needs.
left() {
  if [ -n "$DEADLINE" ]; then echo $((DEADLINE - ($(date +%s) - start))); else echo 999999; fi
}
export ST LIST W SHARED

{ nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"; } |
  tee "$OUT/gpu.txt"
{ "$ST" --version 2>&1 || true; } | head -n 1

IDS=$(awk -F'\t' '!/^#/ { print $1 }' "$LIST/matrices.tsv")
echo "$(echo "$IDS" | wc -w) matrices listed"

# prep ID: the matrix (shared, or generated into $W/mat), the pick ($W/ID-p), the best ($W/ID-s).
# A failure is reported and leaves the matrix without a time; the others go on.
prep() {
  local id=$1 name src gen f
  IFS=$'\t' read -r _ name _ src gen _ < <(awk -F'\t' -v id="$id" '$1 == id' "$LIST/matrices.tsv")
  if [ "$src" = shared ]; then
    f=$SHARED/$name.mtx.gz
  else
    f=$W/mat/$id.safetensors
    # shellcheck disable=SC2086  # gen's arguments are words
    "$ST" --json gen $gen -o "$f" >"$W/$id-gen.json" 2>"$W/$id-gen.err" ||
      { echo "$id gen failed: $(tail -c 200 "$W/$id-gen.err")"; return 0; }
  fi
  echo "$f" >"$W/$id.path"
  "$ST" --json tune "$f" --budget 0 --force --db "$W/$id-p.db" -o "$W/$id-p" \
    >"$W/$id-p.json" 2>"$W/$id-p.err" ||
    echo "$id tune failed: $(tail -c 200 "$W/$id-p.err")"
  "$ST" --json emit-kernel "$f" --graph "$LIST/graphs/$id.json" -o "$W/$id-s" \
    >"$W/$id-s.json" 2>"$W/$id-s.err" ||
    echo "$id emit failed: $(tail -c 200 "$W/$id-s.err")"
  return 0
}
export -f prep
t0=$(date +%s)
# timeout kills the whole preparation (xargs and its children) at PREP_MAX; what is not ready
# then is reported as such below.
echo "$IDS" | ${PREP_MAX:+timeout "$PREP_MAX"} xargs -P "$JOBS" -I{} bash -c 'prep {}' || true
count() { find "$W" -mindepth 2 -maxdepth 2 -path "*-$1/format.safetensors" | wc -l; }
echo "prepared $(count p) picks, $(count s) bests in $(($(date +%s) - t0)) s ($JOBS at once)$(
  [ -z "$DEADLINE" ] || echo "; $(left) s left")"

# One matrix's numbers: a line on stdout, a row of $OUT/results.tsv, $OUT/ID.json.
summarize() {
  python3 - "$1" "$2" "$W" "$LIST" "$OUT" <<'PY'
import json, sys
id, secs, W, K, OUT = sys.argv[1:6]
row = next(l.rstrip("\n").split("\t") for l in open(f"{K}/matrices.tsv") if l.split("\t")[0] == id)
_, name, label, src, gen, rows, cols, nnz, fp, measured, distinct, best, best_rec = row
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
tune, emit = load(f"{W}/{id}-p.json"), load(f"{W}/{id}-s.json")
out = {"id": id, "matrix": name, "source": src, "gen": gen, "fingerprint": fp,
       "measured": int(measured), "distinct": int(distinct), "best": best,
       "best_us_recorded": float(best_rec), "seconds": float(secs)}
notes, dec, wall, same = [], None, None, "?"
if tune:
    m = tune.get("matrix", {})
    if m.get("fingerprint") != fp:
        notes.append("fp!=" + str(m.get("fingerprint")))
    if (m.get("rows"), m.get("nnz")) != (int(rows), int(nnz)):
        notes.append(f"size {m.get('rows')}/{m.get('nnz')}")
    wb = tune.get("wall_budget") or {}
    dec = (wb.get("spent_before_search_s") or 0) + ((tune.get("search") or {}).get("seconds") or 0)
    wall = wb.get("wall_s")
    out.update(decision_s=dec, tune_wall_s=wall, pick=tune.get("graph_line"),
               pick_predicted_us=tune.get("time_us"))
    bg = load(f"{K}/graphs/{id}.json")
    if bg and tune.get("graph"):
        same = "=" if bg.get("ops") == tune["graph"].get("ops") else ""
else:
    notes.append("no pick")
if not emit:
    notes.append("no best")
runs = {}
for k in ("p", "s"):
    for r in (1, 2):
        j = load(f"{W}/{id}-{k}-run{r}.json")
        if j is None:
            runs[f"{k}{r}"] = None
            try:
                err = [l.strip() for l in open(f"{W}/{id}-{k}-run.err") if l.strip()]
            except Exception:
                err = []
            notes.append(f"{k}{r} " + (err[-1][:60] if err else "no output"))
            continue
        t = (j.get("time_ms") or {}).get("median")
        ok = j.get("status") == "ok" and j.get("verified") and t
        runs[f"{k}{r}"] = {"us": t * 1e3 if t else None, "verified": j.get("verified"),
                           "status": j.get("status"), "note": j.get("note", "")[:200],
                           "compile_ms": j.get("compile_ms")}
        if not ok:
            notes.append(f"{k}{r} {j.get('status')}/{'v' if j.get('verified') else 'NOT verified'}")
out["runs"] = runs
def best_of(k):
    v = [runs[f"{k}{r}"]["us"] for r in (1, 2)
         if runs[f"{k}{r}"] and runs[f"{k}{r}"]["verified"] and runs[f"{k}{r}"]["us"]]
    return min(v) if v else None
p, s = best_of("p"), best_of("s")
share = s / p if p and s else None
out.update(pick_us=p, best_us=s, share=share, notes=notes)
json.dump(out, open(f"{OUT}/{id}.json", "w"), indent=1)
f = lambda x, d=2: f"{x:.{d}f}" if x is not None else "-"
with open(f"{OUT}/results.tsv", "a") as o:
    o.write("\t".join([id, label, src, nnz, measured, f(dec), f(wall), f(p), f(s),
                       f(share, 3), same, best_rec, ";".join(notes), secs]) + "\n")
if share is None:
    print(f"{id} {label[:22]} no time: {'; '.join(notes)[:50] or 'not run'} {secs}s")
else:
    print(f"{id} {label[:22]} {f(p)}/{f(s)} {f(share, 3)}{same} {secs}s"
          + (" " + ";".join(notes)[:30] if notes else ""))
PY
}
: >"$OUT/results.tsv"

# The timed runs, one at a time: two at once would share the GPU and each other's caches.
longest=10 done=0
for id in $IDS; do
  # Stop before a matrix that may not finish: half again the slowest so far, and some slack.
  need=$((longest * 3 / 2 + 8))
  if [ "$(left)" -lt "$need" ]; then
    echo "deadline: stopped before $id ($(left) s left, a matrix may take $need s)"
    break
  fi
  t1=$(date +%s)
  if [ -s "$W/$id-p/format.safetensors" ] && [ -s "$W/$id-s/format.safetensors" ]; then
    for r in 1 2; do
      if [ $r = 1 ]; then order="p s"; else order="s p"; fi
      for k in $order; do
        lim=$(($(left) - 6))
        if [ $lim -gt 120 ]; then lim=120; fi
        [ $lim -gt 5 ] || break
        # A failed run leaves its JSON empty or absent: summarize reports it, the loop goes on.
        timeout -k 3 $lim "$ST" --json run "$W/$id-$k" --runs 30 --timeout 60 \
          >"$W/$id-$k-run$r.json" 2>>"$W/$id-$k-run.err" || true
      done
    done
  fi
  dt=$(($(date +%s) - t1))
  if [ $dt -gt $longest ]; then longest=$dt; fi
  summarize "$id" "$dt" || echo "$id: no summary"
  done=$((done + 1))
done
find "$W" -maxdepth 1 -name '*-run.err' -size +0 -exec cp {} "$OUT/" \;
# The commonest run errors, to see at once why runs failed.
find "$W" -maxdepth 1 -name '*-run.err' -exec cat {} + | { grep -v '^$' || true; } |
  sort | uniq -c | sort -rn | head -n 3 || true

# The table (by share, lowest first) and the summary: printed last, they are what a caller that
# keeps only the output's tail sees.
python3 - "$OUT/results.tsv" "$done" "$(($(date +%s) - start))" <<'PY'
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print(f"\n== {sys.argv[2]} matrices timed in {sys.argv[3]} s; share = best searched us / pick us"
      " (>1: the pick won; within 10%: share >= 0.90); = pick is the best graph ==")
print(f"{'id':3s} {'matrix':24s} {'nnz':>8s} {'cand':>4s} {'dec s':>5s} {'pick us':>8s}"
      f" {'best us':>8s} {'share':>6s}")
num = lambda x: float(x) if x not in ("-", "") else None
rows.sort(key=lambda r: (num(r[9]) is None, num(r[9]) or 0))
for r in rows:
    id, label, src, nnz, meas, dec, wall, p, s, share, same, rec, notes, secs = r
    print(f"{id:3s} {label[:24]:24s} {int(nnz):8d} {int(meas):4d} {dec:>5s} {p:>8s} {s:>8s}"
          f" {share:>6s}{same:1s}" + (f" {notes[:30]}" if notes else ""))
def line(title, sel):
    v = [(num(r[9]), r[1]) for r in sel if num(r[9]) is not None]
    if not v:
        print(f"{title}: none timed"); return
    g = math.exp(sum(math.log(x) for x, _ in v) / len(v))
    w = min(v)
    n10 = sum(1 for x, _ in v if x >= 0.9)
    print(f"{title:34s} n={len(v):2d}  geomean {g:.3f}x  worst {w[0]:.3f}x ({w[1][:20]})"
          f"  within 10%: {n10}")
print()
line("all timed", rows)
line("search measured >= 5 candidates", [r for r in rows if int(r[4]) >= 5])
line("shared", [r for r in rows if r[2] == "shared"])
line("generated", [r for r in rows if r[2] == "gen"])
fams = sorted({r[1].split()[0] for r in rows if r[2] == "gen"})
print("by family: " + ", ".join(
    f"{f} {math.exp(sum(math.log(num(r[9])) for r in s) / len(s)):.3f}({len(s)})"
    for f in fams for s in [[r for r in rows if r[2] == "gen" and r[1].split()[0] == f
                             and num(r[9]) is not None]] if s))
d = [num(r[5]) for r in rows if num(r[5]) is not None]
wl = [num(r[6]) for r in rows if num(r[6]) is not None]
if d:
    print(f"decision (read+features+ranking, prepared in parallel): {min(d):.2f}-{max(d):.2f} s,"
          f" median {sorted(d)[len(d)//2]:.2f}"
          + (f"; tune --budget 0 wall {min(wl):.2f}-{max(wl):.2f} s" if wl else ""))
sec = sorted(int(r[13]) for r in rows)
if sec:
    print(f"seconds per matrix (4 runs): mean {sum(sec) / len(sec):.1f}, max {sec[-1]}")
fpbad = [r[0] for r in rows if "fp!=" in r[12] or "size " in r[12]]
print("fingerprint or size differs from the database's: " + (" ".join(fpbad)[:200] or "none"))
runbad = [r[0] for r in rows if r[12] and r[0] not in fpbad]
print("a run failed, unverified or missing: " + (" ".join(runbad)[:200] or "none"))
PY
