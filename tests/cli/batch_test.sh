#!/usr/bin/env bash
# scripts/batch.sh end to end on the CPU: LIST parsing (paths, SuiteSparse Group/Name as ssget
# stores them, archives, families, errors naming list:line), a batch with a failing matrix, resume
# after a batch is interrupted, the Slurm path (--part and merge), and `sparsetune report` on the
# database the batch wrote. usage: batch_test.sh SPARSETUNE_BINARY REPO_ROOT
set -u
st=$1
root=$2
batch="$root/scripts/batch.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/assert.sh"
# check NAME COMMAND...: the command (a test) holds.
check() { local name=$1; shift; if "$@"; then ok; else bad "$name"; fi; }

# Small matrices: a 5-point stencil, a random one, and one without non-zeros (tune refuses it).
mkdir -p "$tmp/m"
"$st" gen stencil2d --nx 8 -o "$tmp/m/tri.mtx" >/dev/null || bad "gen stencil2d"
"$st" gen erdos --n 60 --degree 5 --seed 3 -o "$tmp/m/er.mtx" >/dev/null || bad "gen erdos"
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 0\n' >"$tmp/m/empty.mtx"

# ---- LIST parsing ----
ss="$tmp/ssget"
mkdir -p "$ss/MM/HB/bcs" "$ss/MM/SNAP"
cp "$tmp/m/tri.mtx" "$ss/MM/HB/bcs/bcs.mtx"
mkdir -p "$tmp/pack/wv" && cp "$tmp/m/er.mtx" "$tmp/pack/wv/wv.mtx"
tar -czf "$ss/MM/SNAP/wv.tar.gz" -C "$tmp/pack" wv/wv.mtx
cat >"$tmp/list" <<EOF
# a comment line, then a blank one

m/tri.mtx                 # relative to the list's folder; family defaults to "matrix"
$tmp/m/er.mtx  power-law  # absolute, with a family
HB/bcs                    # SuiteSparse, extracted by ssget
SNAP/wv   social          # SuiteSparse archive; the family given wins over the group
EOF
SUITESPARSE_DIR="$ss" bash "$batch" "$tmp/list" --out "$tmp/o1" --dry-run >"$tmp/dry" 2>"$tmp/err"
check "dry run succeeds" [ $? -eq 0 ]
check "dry run: four matrices" [ "$(wc -l <"$tmp/dry")" -eq 4 ]
check "relative path, default family" grep -qP "^0\t$tmp/m/tri.mtx\ttri\tmatrix$" "$tmp/dry"
check "absolute path with family" grep -qP "^1\t$tmp/m/er.mtx\ter\tpower-law$" "$tmp/dry"
check "Group/Name resolved, group as family" grep -qP "^2\t$ss/MM/HB/bcs/bcs.mtx\tbcs\tHB$" "$tmp/dry"
check "archive resolved, family given" grep -qP "^3\t$tmp/o1/suitesparse/SNAP/wv.mtx\twv\tsocial$" \
  "$tmp/dry"
SUITESPARSE_DIR="$ss" bash "$batch" "$tmp/list" --out "$tmp/o1" --dry-run --part 1/2 >"$tmp/dry"
check "--part 1/2 takes every second line" [ "$(cut -f3 "$tmp/dry" | tr '\n' ' ')" = "er wv " ]

printf 'm/tri.mtx\nm/missing.mtx\n' >"$tmp/bad1"
expect_fail "missing file named with list:line" "bad1:2: 'm/missing.mtx': no such file" \
  bash "$batch" "$tmp/bad1" --dry-run
printf 'HB/bcs\n' >"$tmp/bad2"
expect_fail "Group/Name without SUITESPARSE_DIR" "bad2:1: 'HB/bcs' is not a file, and SUITESPARSE_DIR" \
  env -u SUITESPARSE_DIR bash "$batch" "$tmp/bad2" --dry-run
printf 'HB/nothere\n' >"$tmp/bad3"
expect_fail "Group/Name not downloaded" "bad3:1: SuiteSparse matrix 'HB/nothere' not found" \
  env SUITESPARSE_DIR="$ss" bash "$batch" "$tmp/bad3" --dry-run
printf 'm/tri.mtx\n%s/m/tri.mtx\n' "$tmp" >"$tmp/bad4"
expect_fail "same name twice" "bad4:2: 'tri' is also line 1" bash "$batch" "$tmp/bad4" --dry-run
printf 'm/tri.mtx a b\n' >"$tmp/bad5"
expect_fail "extra fields" "bad5:1: expected" bash "$batch" "$tmp/bad5" --dry-run
printf '# nothing\n' >"$tmp/bad6"
expect_fail "empty list" "no matrices listed" bash "$batch" "$tmp/bad6" --dry-run
expect_fail "tune needs spmv" "tune searches --op spmv only" bash "$batch" "$tmp/list" --op spmm
expect_fail "bad --part" "--part must be K/N" bash "$batch" "$tmp/list" --part 3
expect_fail "missing list" "nolist: no such list" bash "$batch" "$tmp/nolist"

# ---- a batch on the CPU (budget 0: the cost model), one matrix failing ----
printf 'm/tri.mtx stencil\nm/er.mtx random\nm/empty.mtx broken\n' >"$tmp/run.list"
bash "$batch" "$tmp/run.list" --budget 0 -j 2 --out "$tmp/o2" --sparsetune "$st" \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a batch with a failed matrix exits 1" [ $rc -eq 1 ]
check "ok matrices marked ok" grep -q '"status": "ok"' "$tmp/o2/status/tri.json"
check "failure recorded with its reason" grep -q '"status": "failed".*no non-zeros' \
  "$tmp/o2/status/empty.json"
check "summary line" grep -q "batch: 2 ok, 1 failed, 0 not run (of 3)" "$tmp/err"
check "tuned outputs kept per matrix" [ -f "$tmp/o2/tuned/er/kernel.cu" ]
check "family recorded with the run" [ "$("$st" db --db "$tmp/o2/tuning.db" stats --json |
  grep -o '"runs": *[0-9]*' | grep -o '[0-9]*$')" = 2 ]
bash "$batch" "$tmp/run.list" --budget 0 --out "$tmp/o2" --sparsetune "$st" >"$tmp/out" 2>"$tmp/err"
check "a re-run skips done matrices" grep -q "3 matrices, 3 done before, 0 to run" "$tmp/err"

# Another list into the same OUT (a folder with a space): its own matrices counted, not OUT's.
printf 'm/tri.mtx\n' >"$tmp/one.list"
bash "$batch" "$tmp/one.list" --budget 0 -j 1 --out "$tmp/sp ace" --sparsetune "$st" >/dev/null 2>&1
printf 'm/er.mtx\nm/empty.mtx\n' >"$tmp/two.list"
bash "$batch" "$tmp/two.list" --budget 0 -j 1 --out "$tmp/sp ace" --sparsetune "$st" \
  >"$tmp/out" 2>"$tmp/err"
check "a second list into one OUT exits 1 for its failure" [ $? -eq 1 ]
check "and counts its own two matrices" grep -q "batch: 1 ok, 1 failed, 0 not run (of 2)" "$tmp/err"
check "and names the failure, in a folder with a space" grep -q "failed: empty:" "$tmp/err"
expect_fail "--out without a value" "--out needs a value" bash "$batch" "$tmp/run.list" --out
# Without a GPU a search only predicts: refused, so that no prediction is marked done.
if "$st" --json info | grep -q '"devices": \[\]'; then
  expect_fail "a searching batch without a GPU" "no GPU found: tune --budget 5 would only predict" \
    bash "$batch" "$tmp/run.list" --budget 5 --out "$tmp/nogpu" --sparsetune "$st"
  [ ! -e "$tmp/nogpu" ] && ok || bad "a refused batch left its OUT folder"
fi

# ---- interrupted, then resumed ----
# A stand-in for sparsetune that takes its time, so the batch can be interrupted mid-matrix.
cat >"$tmp/slow" <<EOF
#!/usr/bin/env bash
echo started >>"$tmp/slow.log"
sleep 30
EOF
chmod +x "$tmp/slow"
setsid bash "$batch" "$tmp/run.list" --budget 0 -j 2 --out "$tmp/o3" --sparsetune "$tmp/slow" \
  >"$tmp/out" 2>"$tmp/err" &
bpid=$!
for _ in $(seq 100); do [ "$(cat "$tmp/slow.log" 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.1; done
kill -INT -- -"$bpid" 2>/dev/null  # Ctrl-C: the whole process group
wait "$bpid"
rc=$?
check "an interrupted batch exits 130 (got $rc)" [ $rc -eq 130 ]
check "interrupted matrices are not marked done" [ -z "$(ls "$tmp/o3/status" 2>/dev/null)" ]
bash "$batch" "$tmp/run.list" --budget 0 -j 2 --out "$tmp/o3" --sparsetune "$st" \
  >"$tmp/out" 2>"$tmp/err"
check "the resumed batch runs all three" grep -q "3 matrices, 0 done before, 3 to run" "$tmp/err"
check "and finishes them" grep -q "batch: 2 ok, 1 failed" "$tmp/err"

# ---- the Slurm path: two parts into two databases, merged ----
for k in 0 1; do
  bash "$batch" "$tmp/run.list" --budget 0 -j 1 --out "$tmp/o4" --db "$tmp/o4/db/task-$k.db" \
    --part "$k/2" --sparsetune "$st" >/dev/null 2>&1
done
SPARSETUNE="$st" bash "$batch" merge "$tmp/o4" >"$tmp/out" 2>"$tmp/err"
check "merge of the task databases" [ $? -eq 0 ]
check "merged database holds both parts' runs" [ "$("$st" db --db "$tmp/o4/tuning.db" stats --json |
  grep -o '"runs": *[0-9]*' | grep -o '[0-9]*$')" = 2 ]

# ---- report from the batch's database ----
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  "$st" report "$tmp/o2/tuning.db" -o "$tmp/o2/report" >"$tmp/out" 2>"$tmp/err"
  check "report succeeds" [ $? -eq 0 ]
  for f in index.html matrices.csv predictions.csv speedup_vs_nnz.png format_wins.png; do
    check "report wrote $f" [ -s "$tmp/o2/report/$f" ]
  done
  check "one table row per matrix" [ "$(tail -n +2 "$tmp/o2/report/matrices.csv" | wc -l)" -eq 2 ]
  # The renderer alone on a fixture of 10 rows (a name with a comma, empty cells, two dtypes).
  cp -r "$root/tests/cli/report_fixture" "$tmp/fx"
  /usr/bin/python3 "$root/scripts/report/render.py" "$tmp/fx" 2>"$tmp/err"
  check "renderer on the fixture" [ $? -eq 0 ]
  check "fixture page lists every row" [ "$(grep -c '<tr' "$tmp/fx/index.html")" -ge 11 ]
  check "fixture: six plots" [ "$(ls "$tmp/fx"/*.png | wc -l)" -eq 6 ]
  sed -i '3s/^\([^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,\)[0-9]*/\1many/' "$tmp/fx/matrices.csv"
  /usr/bin/python3 "$root/scripts/report/render.py" "$tmp/fx" 2>"$tmp/err"
  check "a malformed CSV is exit 2" [ $? -eq 2 ]
  check "naming file and line" grep -q "matrices.csv:3" "$tmp/err"
  if command -v chromium >/dev/null; then
    bash "$root/scripts/check-report.sh" "$tmp/o2/report" >"$tmp/out" 2>&1
    check "headless Chromium sees every image and row" grep -q "check-report: OK" "$tmp/out"
  else
    echo "SKIPPED: check-report.sh (no chromium)"
  fi
else
  echo "SKIPPED: report plots (python3-matplotlib not installed)"
fi
"$st" report "$tmp/o2/tuning.db" -o "$tmp/o2/csv" --no-plots >/dev/null 2>&1
check "report --no-plots" [ -s "$tmp/o2/csv/matrices.csv" ]
expect_fail "report of a missing database" "nope.db: no such tuning database" \
  "$st" report "$tmp/nope.db" -o "$tmp/r"
expect_fail "report of a folder" "o2: a folder, not a tuning database" \
  "$st" report "$tmp/o2" -o "$tmp/r"
# An interpreter that exits 0 without running the script: no report, and the error says why.
expect_fail "report whose python writes nothing" "without writing index.html" \
  "$st" report "$tmp/o2/tuning.db" -o "$tmp/r-true" --python /bin/true
[ ! -e "$tmp/r-true" ] && ok || bad "a report without its page left a folder"

echo "batch_test: $pass passed, $fail failed"
[ $fail -eq 0 ]
