#!/usr/bin/env bash
# The learning pipeline end to end on the CPU: db export, train on the committed fixture (an
# export of twelve matrices measured on an H100), tune --budget 0 with the trained model and with
# a stale one, eval, and collect (refusing without a GPU; --compile-only resuming past done
# matrices and recording a failing one).
set -u
st=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$root/tests/cli/assert.sh"
expect_out() {
  if grep -Eq -- "$2" "$tmp/out"; then ok; else bad "$1: stdout does not match /$2/"; head -5 "$tmp/out"; fi
}
expect_err() {
  if grep -Eq -- "$2" "$tmp/err"; then ok; else bad "$1: stderr does not match /$2/"; head -5 "$tmp/err"; fi
}
fixture=$root/tests/data/spmv-rank-fixture.json.gz
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 6\n1 1 2\n1 2 -1\n2 2 3\n3 1 1\n3 3 4\n4 4 5\n' >"$tmp/small.mtx"

# ---- db export: JSON export -> SQLite -> a part of it as JSON ----
expect_ok "db export of an export to .db" "$st" db export "$fixture" -o "$tmp/f.db"
expect_out "db export counts" "12 matrices"
expect_ok "db stats of the export" "$st" --json db --db "$tmp/f.db" stats
expect_out "the export holds the fixture's matrices" '"matrices": 12'
expect_ok "db export --only" "$st" db export "$tmp/f.db" -o "$tmp/two.json" --only 494_bus cora
expect_out "db export --only keeps two" "2 matrices"
expect_fail "db export to an unknown kind of file" "must end in .json" \
  "$st" db export "$tmp/f.db" -o "$tmp/x.txt"
# Filters that match nothing are errors, and leave an earlier export as it was; JSON lines
# (no -o) go through the same filters.
cp "$tmp/two.json" "$tmp/keep.json"
expect_fail "db export --only of an unknown name" "--only: the database holds no matrix named 'nosuch'" \
  "$st" db export "$tmp/f.db" -o "$tmp/keep.json" --only nosuch
expect_fail "db export --arch of another architecture" "--arch: the database holds no rows of sm_99" \
  "$st" db export "$tmp/f.db" -o "$tmp/keep.json" --arch sm_99
cmp -s "$tmp/two.json" "$tmp/keep.json" && ok || bad "a refused export replaced the earlier file"
fp=$(python3 -c "import json,sys; print([m['fingerprint'] for m in json.load(open(sys.argv[1]))['matrices']
  if m['name'] == '494_bus'][0])" "$tmp/two.json")
expect_ok "db export lines --only" "$st" db export "$tmp/f.db" --only 494_bus
[ -s "$tmp/out" ] && ! grep -qv "\"$fp\"" "$tmp/out" && ok ||
  bad "db export lines --only 494_bus printed other matrices' rows"

# ---- train ----
expect_ok "train on the fixture" "$st" train --model spmv-rank --db "$tmp/f.db" -o "$tmp/models"
expect_out "train prints the test scores" "^test +[0-9]+"
for f in spmv-rank.json spmv-rank.xgb.ubj spmv-rank.level.xgb.ubj spmv-rank.report.json; do
  [ -s "$tmp/models/sm_90/$f" ] && ok || bad "train did not write $f"
done
# --holdout-like: another seed, the model's held-out matrices again.
like=$tmp/models/sm_90/spmv-rank.json
expect_ok "train --holdout-like" "$st" --json train --model spmv-rank --db "$tmp/f.db" --seed 7 \
  --holdout-like "$like" --no-write
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); m=json.load(open(sys.argv[2]))
sys.exit(sorted(r['split']['test']) != sorted(m['split']['test']))" "$tmp/out" "$like" \
  && ok || bad "train --holdout-like did not hold out the model's test matrices"
expect_out "train --holdout-like says how" '"held_out_found": [1-9]'
expect_out "train --holdout-like names the model it followed" '"held_out_like": "spmv-rank.json"'
expect_fail "train --holdout-like of slice-gcn" "slice-gcn train --holdout-like" \
  "$st" train --model slice-gcn --db "$tmp/f.db" --holdout-like "$like" --no-write
expect_fail "train --holdout-like of every predictor" \
  "one model named by --model \(spmv-rank, spmm-rank, crux, liteform-cell, liteform-partitions or row-order\)" \
  "$st" train --db "$tmp/f.db" --holdout-like "$like" --no-write
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); del m['split']['test']
json.dump(m, open(sys.argv[2], 'w'))" "$like" "$tmp/no-test.json"
expect_fail "train --holdout-like of a model without split.test" "no-test.json: field 'split.test'" \
  "$st" train --model spmv-rank --db "$tmp/f.db" --holdout-like "$tmp/no-test.json" --no-write
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); m['split']['test'] = ['nope']
json.dump(m, open(sys.argv[2], 'w'))" "$like" "$tmp/foreign-test.json"
expect_fail "train --holdout-like of matrices the database lacks" \
  "none of the 1 matrices named to be held out is in the database" \
  "$st" train --model spmv-rank --db "$tmp/f.db" --holdout-like "$tmp/foreign-test.json" --no-write
# --bag: each booster the mean of three, their trees side by side.
expect_ok "train --bag 3" "$st" train --model spmv-rank --db "$tmp/f.db" --bag 3 -o "$tmp/bag"
# Three boosters' trees: about three times the bytes of the one model above.
python3 -c "import json,os,sys; d=sys.argv[1]; m=json.load(open(d+'/spmv-rank.json'))
r=os.path.getsize(d+'/spmv-rank.xgb.ubj')/os.path.getsize(sys.argv[2]+'/spmv-rank.xgb.ubj')
sys.exit(not (m['options']['bag'] == 3 and 2.5 < r < 3.5))" "$tmp/bag/sm_90" "$tmp/models/sm_90" \
  && ok || bad "train --bag 3 did not write three boosters' trees"
expect_ok "tune --budget 0 with a bagged model" "$st" --json tune "$tmp/small.mtx" --budget 0 \
  --db "$tmp/bag.db" -o "$tmp/bag-out" --models-dir "$tmp/bag"
expect_out "the bagged model ranks" '"ranked_by": "the learned spmv-rank model'
expect_fail "train --bag of a classifier" \
  "train --bag averages the models of spmv-rank, spmm-rank or slice-gcn, not 'crux'" \
  "$st" train --model crux --db "$tmp/f.db" --bag 2 --no-write
expect_fail "train --order-classes of another predictor" \
  "train --order-classes applies to --model row-order .or all., not 'crux'" \
  "$st" train --model crux --db "$tmp/f.db" --order-classes 3 --no-write
expect_fail "train --epochs of another predictor" \
  "train --epochs applies to --model slice-gcn .or all., not 'spmv-rank'" \
  "$st" train --model spmv-rank --db "$tmp/f.db" --epochs 5 -o "$tmp/epochs"
[ ! -e "$tmp/epochs" ] && ok || bad "a refused train --epochs wrote a models folder"
expect_fail "train of an unknown predictor" "no predictor named 'nope'" \
  "$st" train --model nope --db "$tmp/f.db" --no-write
echo '{"format": "something else"}' >"$tmp/bad.json"
expect_fail "train on a file that is no export" "bad.json: not a tuning-database export" \
  "$st" train --db "$tmp/bad.json" --no-write
expect_fail "train on a database of predictions only" "nothing to train on" \
  "$st" train --db "$tmp/two.json" --arch sm_80 --no-write

# ---- tune --budget 0 with the model, without it, with a stale one ----
expect_ok "tune with the trained model" "$st" --json tune "$tmp/small.mtx" --budget 0 \
  --db "$tmp/t.db" -o "$tmp/t1" --models-dir "$tmp/models"
expect_out "the learned model ranked" '"ranked_by": "the learned spmv-rank model \(sm_90\)"'
expect_ok "tune --cost-model" "$st" --json tune "$tmp/small.mtx" --budget 0 --cost-model \
  --db "$tmp/t.db" -o "$tmp/t2" --models-dir "$tmp/models"
expect_out "--cost-model ranks by the cost model" '"ranked_by": "the cost model"'
sed -i 's/"alphasparse.rows"/"alphasparse.renamed"/' "$tmp/models/sm_90/spmv-rank.json"
expect_ok "tune with a stale model" "$st" --json tune "$tmp/small.mtx" --budget 0 \
  --db "$tmp/t3.db" -o "$tmp/t3" --models-dir "$tmp/models"
expect_out "a stale model is left for the cost model" '"ranked_by": "the cost model"'
expect_err "a stale model is said" "stale model: it reads feature 'alphasparse.renamed', which this program lacks"
[ "$(grep -c 'stale model' "$tmp/err")" = 1 ] && ok || bad "the stale model is not said once"
sed -i 's/"alphasparse.renamed"/"alphasparse.rows"/' "$tmp/models/sm_90/spmv-rank.json"

# ---- eval ----
expect_ok "eval with the learned model" "$st" eval "$tmp/f.db" --models-dir "$tmp/models" \
  -o "$tmp/eval.json"
expect_out "eval scores the learned model" "spmv-rank over 12 matrices"
expect_out "eval scores the cost model" "cost-model over [0-9]+ matrices"
grep -q '"predictor": "spmv-rank"' "$tmp/eval.json" && ok || bad "eval -o lacks spmv-rank"
expect_ok "eval --test-split" "$st" eval "$tmp/f.db" --models-dir "$tmp/models" --test-split
expect_out "eval --test-split scores the held-out matrices only" "spmv-rank over [1-9] matrices"
expect_fail "eval of predictors without a model or rows" "eval: nothing to score" "$st" eval \
  "$tmp/f.db" --models-dir "$tmp/models" --predictor row-order slice-gcn
expect_err "eval says why row-order is not scored" "row-order: .*no row-order model"
expect_err "eval says why slice-gcn is not scored" "slice-gcn: .*does not exist"
expect_ok "eval of one predictor scored and one not" "$st" eval "$tmp/f.db" \
  --models-dir "$tmp/models" --predictor spmv-rank row-order
expect_out "eval says why row-order is not scored beside the one scored" \
  "row-order: not scored: .*no row-order model"
# LiteForm's shipped models on the export they were trained from, held-out cases only: eval's
# figures are the training report's (configs/models/sm_90/liteform-*.report.json: test accuracy
# 1.0 and 0.810 on 21 cases).
expect_ok "eval of LiteForm's shipped models" "$st" eval \
  "$root/configs/models/sm_90/spmm-labels.json.gz" --predictor liteform-cell liteform-partitions \
  --test-split
expect_out "eval of liteform-cell as its report" "liteform-cell over 21 cases: top-1 100.0 %"
expect_out "eval of liteform-partitions as its report" \
  "liteform-partitions over 21 cases: top-1 81.0 %"
expect_fail "eval of an unknown predictor" "no predictor named 'nope'" \
  "$st" eval "$tmp/f.db" --predictor nope
expect_fail "eval --test-split with nothing to score" "nothing to score; row-order: " \
  "$st" eval "$tmp/f.db" --models-dir "$tmp/models" --predictor row-order --test-split

# ---- collect ----
if "$st" --json info | grep -q '"devices": \[\]'; then
  expect_fail "collect without a GPU" "collect: .*collect measures on a GPU" \
    "$st" collect "$tmp/small.mtx" --db "$tmp/c.db"
fi
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 1\n5 5 1\n' >"$tmp/broken.mtx"
printf '# corpus\nsmall.mtx  tiny\nbroken.mtx\ngen stencil2d nx=8 seed=2\n' >"$tmp/c.list"
"$st" collect "$tmp/c.list" --compile-only --budget 4 --db "$tmp/c.db" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && ok || bad "collect with a failing matrix does not exit 1"
expect_out "collect did two" "2 done, 0 skipped .* 1 failed"
expect_out "collect gives the failure's reason" "broken +failed .*broken.mtx:3"
expect_err "collect draws progress with an ETA" "\[3/3\].*ETA"
"$st" collect "$tmp/c.list" --compile-only --budget 4 --db "$tmp/c.db" >"$tmp/out" 2>"$tmp/err"
expect_out "collect resumes" "0 done, 2 skipped .* 1 failed"
expect_ok "the generated matrix's family" "$st" report "$tmp/c.db" -o "$tmp/rep" --no-plots
grep -q "gen:stencil2d" "$tmp/rep/matrices.csv" && ok || bad "collect lost the generator family"
"$st" collect "$tmp/c.list" --compile-only --budget 4 --db "$tmp/c1.db" --shard 1/3 \
  >"$tmp/out" 2>"$tmp/err"
expect_out "collect --shard 1/3 takes the list's second matrix alone" "0 done, 0 skipped .* 1 failed"
expect_out "collect --shard 1/3 took broken.mtx" "broken +failed"
expect_fail "collect --shard out of range" "--shard 3/3: expected I/N" \
  "$st" collect "$tmp/c.list" --compile-only --db "$tmp/c1.db" --shard 3/3
# A budget that leaves the search no time: a failure naming the budget to give, or with
# --grow-budget one more tune at that budget (not when --per-matrix-timeout is shorter).
printf 'small.mtx\n' >"$tmp/one.list"
"$st" collect "$tmp/one.list" --compile-only --budget 0.01 --db "$tmp/s1.db" >"$tmp/out" 2>"$tmp/err"
expect_out "collect with a starving budget fails the matrix" "small +failed .*give --budget [0-9]+ or more"
"$st" collect "$tmp/one.list" --compile-only --budget 0.01 --grow-budget --db "$tmp/s2.db" \
  >"$tmp/out" 2>"$tmp/err" && ok || bad "collect --grow-budget exited non-zero"
expect_out "collect --grow-budget searches again" "small +done .*--budget grown to [0-9]+ s"
"$st" collect "$tmp/one.list" --compile-only --budget 0.01 --grow-budget --per-matrix-timeout 5 \
  --db "$tmp/s3.db" >"$tmp/out" 2>"$tmp/err"
expect_out "collect --grow-budget keeps within --per-matrix-timeout" "small +failed .*give --budget"

# ---- scripts/collect-gpus.sh: one shard per GPU, merged (GPUS=2 without a GPU: --compile-only) ----
printf 'small.mtx\ngen stencil2d nx=8 seed=2\ngen kron scale=5 seed=3\n' >"$tmp/g.list"
GPUS=2 ST=$st bash "$root/scripts/collect-gpus.sh" "$tmp/g.list" "$tmp/g.db" --compile-only \
  --budget 4 >"$tmp/out" 2>"$tmp/err"
[ $? = 0 ] && ok || bad "collect-gpus.sh failed: $(tail -n 3 "$tmp/err")"
expect_out "collect-gpus.sh: shard 0 did two" "gpu 0: .*2 done"
expect_out "collect-gpus.sh: shard 1 did one" "gpu 1: .*1 done"
expect_out "collect-gpus.sh merged every search" "runs \(completed tunes\) +3"
GPUS=2 ST=$st bash "$root/scripts/collect-gpus.sh" "$tmp/g.list" "$tmp/g.db" --compile-only \
  --budget 4 >"$tmp/out" 2>"$tmp/err"
expect_out "collect-gpus.sh resumes" "gpu 0: .*0 done, 2 skipped"
expect_fail "collect-gpus.sh sets --db itself" "sets --db, --gen-dir and --shard" \
  env GPUS=1 ST="$st" bash "$root/scripts/collect-gpus.sh" "$tmp/g.list" "$tmp/g.db" --db x.db
expect_fail "collect-gpus.sh without a list" "no such list" \
  env GPUS=1 ST="$st" bash "$root/scripts/collect-gpus.sh" "$tmp/none.list" "$tmp/g.db"

# ---- scripts/spmv-predict-compare.sh and spmv-predict-proxy.py on a one-matrix list ----
mkdir -p "$tmp/pl/graphs" "$tmp/sh"
gzip -c "$tmp/small.mtx" >"$tmp/sh/small.mtx.gz"
cp "$root/configs/graphs/csr-vector.json" "$tmp/pl/graphs/m01.json"
"$st" db --db "$tmp/g.db" export -o "$tmp/g.json" >/dev/null
fp=$(python3 -c "import json,sys; print([m['fingerprint'] for m in json.load(open(sys.argv[1]))['matrices'] if m['name'] == 'small'][0])" "$tmp/g.json")
printf '# id\tname\tlabel\tsource\tgen-args\trows\tcols\tnnz\tfingerprint\tmeasured\tdistinct\tbest-candidate\tbest-us-recorded\n' >"$tmp/pl/matrices.tsv"
printf 'm01\tsmall\tsmall\tshared\t-\t4\t4\t6\t%s\t5\t5\tgraph/x\t1.000\n' "$fp" >>"$tmp/pl/matrices.tsv"
GPUS=1 ST=$st SHARED=$tmp/sh bash "$root/scripts/spmv-predict-compare.sh" "$tmp/pl" "$tmp/pc" \
  shipped fixture="$tmp/models/sm_90" >"$tmp/out" 2>"$tmp/err"
[ $? = 0 ] && ok || bad "spmv-predict-compare.sh failed: $(tail -n 3 "$tmp/err")"
expect_out "compare: both rankings in the table" "best us +shipped +fixture"
[ -s "$tmp/pc/fixture-gpu0/results.tsv" ] && ok || bad "compare wrote no results for fixture"
expect_fail "compare: a ranking without a model" "expected NAME=DIR" \
  env GPUS=1 ST="$st" bash "$root/scripts/spmv-predict-compare.sh" "$tmp/pl" "$tmp/pc2" x="$tmp"
ST=$st SHARED=$tmp/sh python3 "$root/scripts/spmv-predict-proxy.py" "$tmp/pl" shipped \
  fixture="$tmp/models/sm_90" --db "$tmp/g.json" >"$tmp/out" 2>"$tmp/err"
[ $? = 0 ] && ok || bad "spmv-predict-proxy.py failed: $(tail -n 3 "$tmp/err")"
expect_out "proxy: the device of the bests" "1 matrices, bests of cost-model"
expect_out "proxy: a line per ranking" "^fixture "
expect_fail "proxy: an unknown device" "no measurements of device 'nope'" \
  env ST="$st" python3 "$root/scripts/spmv-predict-proxy.py" "$tmp/pl" shipped --db "$tmp/g.json" \
  --device nope

printf 'gen nokind\n' >"$tmp/bad.list"
expect_fail "collect names a bad list line" "bad.list:1: no generator kind 'nokind'" \
  "$st" collect "$tmp/bad.list" --compile-only --db "$tmp/c.db"


# ---- collect --op sptv, train --model slice-gcn ----
printf '3 3 3 4\n1 1 1 1.0\n2 2 1 2.0\n3 1 3 -1.0\n1 3 2 0.5\n' >"$tmp/t.tns"
if "$st" --json info | grep -q '"devices": \[\]'; then
  expect_fail "collect --op sptv without a GPU" "slices are timed on a GPU" \
    "$st" collect "$tmp/t.tns" --op sptv --db "$tmp/s.db"
fi
expect_fail "collect --op sptv --compile-only" "compile-only is for spmv and spmm" \
  "$st" collect "$tmp/t.tns" --op sptv --compile-only --db "$tmp/s.db"
printf 't.tns\ngen kron scale=6\n' >"$tmp/t.list"
expect_fail "collect --op sptv names a generated line" "t.list:2: .*gen tensor" \
  "$st" collect "$tmp/t.list" --op sptv --db "$tmp/s.db"
expect_fail "train --model slice-gcn without slice timings" "no slice timings.*collect --op sptv" \
  "$st" train --model slice-gcn --db "$tmp/f.db" --no-write

# ---- collect --op spmm --row-orders, train --model row-order ----
expect_fail "collect --n without --op spmm" "collect --n sets B's columns of SpMM; add --op spmm" \
  "$st" collect "$tmp/small.mtx" --n 32 --compile-only --db "$tmp/r.db"
expect_fail "collect --row-orders without --op spmm" "row-orders times SpMM; add --op spmm" \
  "$st" collect "$tmp/small.mtx" --row-orders --db "$tmp/r.db"
expect_fail "collect --row-orders --compile-only" "compile-only does not" \
  "$st" collect "$tmp/small.mtx" --op spmm --row-orders --compile-only --db "$tmp/r.db"
expect_fail "train --model row-order without row-order times" "no row-order times" \
  "$st" train --model row-order --db "$tmp/f.db" --no-write

# The shipped labels: another seed, the shipped model's held-out matrices again.
labels=$root/configs/models/sm_90/row-order-labels.json.gz
shipped=$root/configs/models/sm_90/row-order.json
expect_ok "train --model row-order --holdout-like" "$st" --json train --model row-order \
  --db "$labels" --seed 5 --holdout-like "$shipped" --no-write
python3 - "$tmp/out" "$shipped" <<'PY' && ok || bad "train --model row-order --holdout-like did not hold out the shipped model's test matrices"
import json, sys
report, model = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
split = report["reports"][0]["split"] if "reports" in report else report["split"]
assert sorted(split["test"]) == sorted(model["split"]["test"]), "test part differs"
assert split["held_out_like"] == "row-order.json" and split["seed"] == 5
PY

# -o that names no folder: refused before training, the shipped models untouched.
expect_fail "train -o empty" "the models folder is empty" \
  "$st" train --model row-order --db "$labels" -o ""
: >"$tmp/a-file"
expect_fail "train -o a file" "a-file: exists and is not a folder" \
  "$st" train --model row-order --db "$labels" -o "$tmp/a-file"
[ ! -s "$tmp/a-file" ] && ok || bad "train -o a file wrote into it"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
