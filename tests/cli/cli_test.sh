#!/usr/bin/env bash
# End-to-end tests of the sparsetune command line: exit codes, outputs, and the error messages
# that bad inputs must produce. usage: cli_test.sh SPARSETUNE_BINARY REPO_ROOT
set -u
st=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/assert.sh"

# expect_out NAME PATTERN: the last command's stdout matches PATTERN.
expect_out() {
  if grep -Eq -- "$2" "$tmp/out"; then ok; else bad "$1: stdout does not match /$2/"; head -5 "$tmp/out"; fi
}

mtx() { printf '%b' "$2" >"$tmp/$1"; echo "$tmp/$1"; }

example=$root/docs/examples/poisson2d_16x16.mtx

# --- general ---------------------------------------------------------------------------------
expect_ok "version" "$st" --version
expect_out "version" "^sparsetune [0-9]+\.[0-9]+\.[0-9]+"
expect_ok "info" "$st" info
expect_out "info names the gpu state" "gpu"
expect_ok "info --json" "$st" --json info
expect_out "info --json" '"version"'
expect_fail "no command" "required|subcommand" "$st"
expect_fail "unknown command" "[Ee]xtra|not expected|unknown|required" "$st" frobnicate
for c in info features convert gen bench db; do
  expect_ok "$c --help" "$st" "$c" --help
done

# --- features --------------------------------------------------------------------------------
expect_ok "features on the example" "$st" features "$example"
expect_out "features lists row statistics" "row"
expect_ok "features --json on the example" "$st" --json features "$example"
expect_out "features --json" "\{"
expect_fail "features on a missing file" "no_such_file" "$st" features "$tmp/no_such_file.mtx"

# --- row-orders ------------------------------------------------------------------------------
expect_ok "row-orders on the example" "$st" row-orders "$example"
expect_out "row-orders lists every order" "hybrid2\.3"
expect_ok "row-orders --json" "$st" --json row-orders "$example" --warps 4 --window 8
expect_out "row-orders --json" '"lines_per_step"'
expect_ok "row-orders with candidates from shared lines" "$st" --json row-orders "$example" --candidates shared-lines
expect_out "row-orders --json names the candidates" '"candidates": "shared-lines"'
expect_fail "row-orders with unknown candidates" "--candidates.*nearby" \
  "$st" row-orders "$example" --candidates nearby
expect_ok "row-orders writes a permuted matrix" "$st" row-orders "$example" --order lpt -o "$tmp/lpt.mtx"
expect_ok "the permuted matrix reads back" "$st" convert "$tmp/lpt.mtx" "$tmp/lpt2.mtx"
expect_out "same size after the permutation" "256 x 256, 1216 non-zeros"
expect_fail "row-orders with an unknown order" "unknown row order 'zig'.*hybrid1" \
  "$st" row-orders "$example" --order zig -o "$tmp/zig.mtx"
[ ! -e "$tmp/zig.mtx" ] && ok || bad "row-orders left a file behind for an unknown order"
expect_fail "row-orders --order without -o" "go together" "$st" row-orders "$example" --order lpt
expect_fail "row-orders without a matrix" "FILE.*collect / train" "$st" row-orders
expect_fail "a number option refuses nan" "--budget: 'nan' is not a finite number" \
  "$st" tune "$example" --budget nan --compile-only -o "$tmp/nan-tune"
[ ! -e "$tmp/nan-tune" ] && ok || bad "tune --budget nan wrote a folder"
printf 'matrix,rows,cols\nm,1,1\n' >"$tmp/ro.csv"
expect_fail "row-orders train on a foreign CSV" "ro.csv:1: column 4 must be 'nnz'" \
  "$st" row-orders train "$tmp/ro.csv" -o "$tmp/ro-model"
[ ! -e "$tmp/ro-model/row-order.json" ] && ok || bad "row-orders train wrote a model from a bad CSV"
expect_fail "row-orders collect on a missing list" "no_such.list" \
  "$st" row-orders collect "$tmp/no_such.list" -o "$tmp/ro-out.csv"
[ ! -e "$tmp/ro-out.csv" ] && ok || bad "row-orders collect wrote a CSV without measuring"
printf '../../../shared/matrices/cora.mtx.gz\ngen kron scale=12 seed=1\n' >"$tmp/ro.list"
expect_fail "row-orders collect with --n 0" "--n must be 1 to 1024 \\(got 0\\)" \
  "$st" row-orders collect "$tmp/ro.list" -o "$tmp/ro-out.csv" --n 0 --gen-dir "$tmp/ro-gen"
[ ! -e "$tmp/ro-gen" ] && ok || bad "row-orders collect generated matrices before checking --n"
expect_fail "row-orders collect with both --n and --n-square" "excludes" \
  "$st" row-orders collect "$tmp/ro.list" -o "$tmp/ro-out.csv" --n 64 --n-square
printf '%%%%MatrixMarket matrix coordinate real general\n3 5 2\n1 1 1.0\n3 5 2.0\n' >"$tmp/wide.mtx"
expect_fail "row-orders collect --n-square on a rectangular matrix" \
  "wide: --n-square needs a square matrix \\(this one is 3 x 5\\)" \
  "$st" row-orders collect "$tmp/wide.mtx" --n-square -o "$tmp/ro-sq.csv"
[ ! -e "$tmp/ro-sq.csv" ] && ok || bad "row-orders collect --n-square wrote a CSV for a refused matrix"

# --- gen + features --------------------------------------------------------------------------
expect_ok "gen kron scale 16" "$st" gen kron --scale 16 --seed 1 -o "$tmp/k.mtx"
expect_ok "features of the Kronecker matrix" "$st" features "$tmp/k.mtx"
expect_ok "gen stencil3d" "$st" gen stencil3d --n 6 --points 27 -o "$tmp/s.mtx"
expect_ok "gen tensor" "$st" gen tensor --dims 10,20,30 --nnz 500 --seed 3 -o "$tmp/t.tns"
expect_ok "features of a tensor" "$st" features "$tmp/t.tns"
expect_fail "gen with a bad parameter" "scale" "$st" gen kron --scale -3 -o "$tmp/bad.mtx"
# The scenario list's reproducer command writes the matrix the tests ran.
expect_ok "gen scenario" "$st" gen scenario --name tall -o "$tmp/tall.mtx"
grep -q '^4000 30 ' "$tmp/tall.mtx" && ok || bad "gen scenario tall: not a 4000 x 30 matrix"
expect_ok "gen scenario 0x0" "$st" gen scenario --name 0x0 -o "$tmp/empty.mtx"
expect_fail "gen scenario with an unknown name" "unknown name 'nope'.*duplicates" \
  "$st" gen scenario --name nope -o "$tmp/nope.mtx"
[ ! -e "$tmp/nope.mtx" ] && ok || bad "failed gen scenario left an output file"
[ ! -e "$tmp/bad.mtx" ] && ok || bad "failed gen left an output file"

# --- convert round trips ---------------------------------------------------------------------
expect_ok "convert mtx -> safetensors" "$st" convert "$example" "$tmp/e.safetensors"
expect_ok "convert safetensors -> mtx.gz" "$st" convert "$tmp/e.safetensors" "$tmp/e.mtx.gz"
expect_ok "convert mtx.gz -> mtx" "$st" convert "$tmp/e.mtx.gz" "$tmp/e2.mtx"
expect_ok "convert -o" "$st" convert "$tmp/e.mtx.gz" -o "$tmp/e3.mtx"
cmp -s "$tmp/e2.mtx" "$tmp/e3.mtx" && ok || bad "convert -o wrote something else than convert OUT"
expect_fail "convert without an output" "no output file" "$st" convert "$example"
expect_fail "convert with OUT and -o" "excludes" "$st" convert "$example" "$tmp/x.mtx" -o "$tmp/y.mtx"
"$st" --json features "$example" >"$tmp/f1" 2>/dev/null
"$st" --json features "$tmp/e2.mtx" >"$tmp/f2" 2>/dev/null
if diff <(grep -v '_seconds' "$tmp/f1" | grep -v '"file"') <(grep -v '_seconds' "$tmp/f2" | grep -v '"file"') >/dev/null; then ok; else bad "round trip changed the features"; fi

# --- features options -----------------------------------------------------------------------
expect_ok "features --group" "$st" features "$example" --group matxtract
expect_out "one group only" "matxtract"
if grep -q "alphasparse" "$tmp/out"; then bad "--group printed other groups"; else ok; fi
expect_fail "features --group unknown" "nosuchgroup" "$st" features "$example" --group nosuchgroup
expect_ok "features of a tensor with slices" "$st" features "$tmp/t.tns" --mode 0
expect_fail "gen tensor of two modes" "--dims 5,5 gives fewer than 3 modes" \
  "$st" gen tensor --dims 5,5 -o "$tmp/two.tns"
[ ! -e "$tmp/two.tns" ] && ok || bad "gen tensor of two modes wrote a file"
# A gzipped matrix container is read by its content, as a gzipped tensor container is.
expect_ok "convert to a container" "$st" convert "$example" "$tmp/c.safetensors"
gzip -c "$tmp/c.safetensors" >"$tmp/c.safetensors.gz"
expect_ok "features of a gzipped matrix container" "$st" features "$tmp/c.safetensors.gz"
grep -q "256 x 256, 1216 entries" "$tmp/out" && ok || bad "the gzipped container was misread"

# --- bench without a GPU says so -------------------------------------------------------------
if "$st" --json info | grep -q '"devices": \[\]'; then
  expect_fail "bench without a GPU" "no CUDA device" "$st" bench "$example" --op spmv
fi

expect_fail "bench --db with sptv" "--db records matrices" "$st" bench "$tmp/t.tns" --op sptv --db "$tmp/b.db"
# A database that cannot be opened is said before anything is measured (here: before "no device").
echo "not a database" >"$tmp/notadb.db"
expect_fail "bench --db with a bad database" "notadb.db: tuning database: file is not a database" \
  "$st" bench "$example" --op spmv --db "$tmp/notadb.db"
# A failed bench creates no database (here it fails for want of a GPU, or for --n 0 where one is).
expect_fail "bench --n 0 with --db" "" "$st" bench "$example" --op spmm --n 0 --db "$tmp/bench-new.db"
[ ! -e "$tmp/bench-new.db" ] && ok || bad "a failed bench left a new database"
expect_fail "bench --op spmv with --n" "--n is the columns of B, for --op spmm only" \
  "$st" bench "$example" --op spmv --n 8
expect_fail "bench --op spmv with --mode" "--mode is the tensor mode, for --op sptv only" \
  "$st" bench "$example" --op spmv --mode 1

# --- tuning database -------------------------------------------------------------------------
# Reading never creates: a database that is not there is named, and stays not there.
expect_fail "db stats on a missing database" "t.db: no such tuning database" \
  "$st" db --db "$tmp/db/t.db" stats
expect_fail "db export of a missing database" "t.db: no such tuning database" \
  "$st" db --db "$tmp/db/t.db" export -o "$tmp/t.json"
[ ! -e "$tmp/db/t.db" ] && [ ! -e "$tmp/t.json" ] && ok || bad "reading a missing database made files"
printf '{"format": "sparsetune-db-export", "version": 1, "matrices": [], "measurements": [], "runs": []}\n' \
  >"$tmp/empty.json"
expect_ok "db merge of an empty export makes a database" "$st" db --db "$tmp/db/t.db" merge \
  "$tmp/empty.json"
expect_ok "db stats on a new database" "$st" db --db "$tmp/db/t.db" stats
expect_out "empty database" "measurements +0"
expect_ok "db export of an empty database" "$st" db --db "$tmp/db/t.db" export
[ ! -s "$tmp/out" ] && ok || bad "export of an empty database printed rows"
expect_ok "db merge" "$st" db --db "$tmp/db/u.db" merge "$tmp/db/t.db"
echo "not a database, just text of some length to look odd" >"$tmp/junk.db"
expect_fail "db merge of a junk file" "junk.db" "$st" db --db "$tmp/db/u.db" merge "$tmp/junk.db"
expect_fail "db stats on a junk file" "junk.db" "$st" db --db "$tmp/junk.db" stats
# A merge that fails removes the database it made; one that existed keeps the earlier merges.
expect_fail "db merge into a new database, failing" "junk.db" \
  "$st" db --db "$tmp/db/v.db" merge "$tmp/empty.json" "$tmp/junk.db"
[ ! -e "$tmp/db/v.db" ] && ok || bad "a failed merge left the database it made"
expect_fail "db merge into a database, failing after one" "keeps what was merged before: .*empty.json" \
  "$st" db --db "$tmp/db/u.db" merge "$tmp/empty.json" "$tmp/junk.db"

# --- bad Matrix Market inputs: each error names the file and the line ------------------------
f=$(mtx banner.mtx '%%MatrixMarkt matrix coordinate real general\n2 2 1\n1 1 1\n')
expect_fail "bad banner" "banner.mtx:1" "$st" features "$f"
f=$(mtx field.mtx '%%MatrixMarket matrix coordinate quaternion general\n2 2 1\n1 1 1\n')
expect_fail "unknown field" "field.mtx:1.*quaternion" "$st" features "$f"
f=$(mtx sym.mtx '%%MatrixMarket matrix coordinate real diagonal\n2 2 1\n1 1 1\n')
expect_fail "unknown symmetry" "sym.mtx:1.*diagonal" "$st" features "$f"
f=$(mtx complex.mtx '%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n')
expect_fail "complex" "complex.mtx.*not supported" "$st" features "$f"
f=$(mtx few.mtx '%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n')
expect_fail "too few entries" "few.mtx:2.*(declares 3 entries|too few)" "$st" features "$f"
f=$(mtx many.mtx '%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n2 2 2\n')
expect_fail "too many entries" "many.mtx:4" "$st" features "$f"
f=$(mtx range.mtx '%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n4 2 2\n')
expect_fail "row index out of range" "range.mtx:4" "$st" features "$f"
f=$(mtx zero.mtx '%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 0 2\n')
expect_fail "index below 1" "zero.mtx:4" "$st" features "$f"
f=$(mtx token.mtx '%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 abc\n')
expect_fail "non-numeric value" "token.mtx:4" "$st" features "$f"
f=$(mtx nan.mtx '%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 nan\n2 2 2\n')
expect_fail "NaN value" "nan.mtx:3" "$st" features "$f"
f=$(mtx inf.mtx '%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 -inf\n')
expect_fail "Inf value" "inf.mtx:4" "$st" features "$f"
f=$(mtx big.mtx '%%MatrixMarket matrix coordinate real general\n99999999999999999999 3 1\n1 1 1\n')
expect_fail "dimension overflow" "big.mtx:2" "$st" features "$f"
f=$(mtx size.mtx '%%MatrixMarket matrix coordinate real general\n3 x 1\n1 1 1\n')
expect_fail "bad size line" "size.mtx:2" "$st" features "$f"

f=$(mtx huge.mtx '%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n1 1 1\n')
expect_fail "a matrix too big for this machine" "huge.mtx:2.*needs about .* GiB of memory" "$st" features "$f"
expect_fail "a folder as input" "is a folder" "$st" features "$tmp"
: >"$tmp/empty.mtx"
expect_fail "an empty file" "empty.mtx:1" "$st" features "$tmp/empty.mtx"

# A failed conversion leaves neither the output nor a temporary file behind.
f=$(mtx partial.mtx '%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n3 3 x\n')
mkdir "$tmp/outdir"
expect_fail "convert of a bad file" "partial.mtx:5" "$st" convert "$f" "$tmp/outdir/o.mtx"
[ -z "$(ls -A "$tmp/outdir")" ] && ok || bad "failed convert left files: $(ls "$tmp/outdir")"

# --- bad tensors -----------------------------------------------------------------------------
f=$(mtx order2.tns '1 1 1.0\n2 2 2.0\n')
expect_fail "order-2 tensor" "order2.tns:1" "$st" features "$f"
f=$(mtx ragged.tns '1 1 1 1.0\n2 2 2.0\n')
expect_fail "ragged tensor line" "ragged.tns:2" "$st" features "$f"
f=$(mtx tzero.tns '1 1 1 1.0\n2 0 2 2.0\n')
expect_fail "tensor index below 1" "tzero.tns:2" "$st" features "$f"

# --- emit-kernel: format binary, kernel, host header and graph; errors name the rule ----------
expect_ok "emit-kernel csr-vector" "$st" emit-kernel --graph "$root/configs/graphs/csr-vector.json" \
  "$example" -o "$tmp/emit" --reference
for f in format.safetensors kernel.cu kernel.h graph.json x.f64 y_reference.f64; do
  [ -s "$tmp/emit/$f" ] && ok || bad "emit-kernel did not write $f"
done
grep -q 'Operator graph "csr-vector"' "$tmp/emit/kernel.cu" && ok || bad "kernel.cu does not name its graph"
expect_ok "emit-kernel hyb f16 --json" "$st" --json emit-kernel --graph "$root/configs/graphs/hyb.json" \
  "$example" -o "$tmp/emit16" --dtype f16
# --split-words: 32-bit column words that fit 24 bits stored as 16 + 8 bits (nz_col_hi); off by default.
# 40 entries at scattered columns of up to 70,000: no formula fits them, so nz_col is stored.
f=$(mtx wide.mtx "%%MatrixMarket matrix coordinate real general\n40 70000 40\n$(for i in $(seq 1 40); do
  printf '%d %d %d.5\\n' "$i" $(((i * i * 7919) % 70000 + 1)) "$i"; done)")
out=$("$st" --json emit-kernel --graph "$root/configs/graphs/csr-scalar.json" "$f" -o "$tmp/emit_split" --split-words)
echo "$out" | grep -q '"arrays_split": 1' && ok || bad "emit-kernel --split-words did not split: $out"
grep -q 'p_nz_col_hi' "$tmp/emit_split/kernel.cu" && ok || bad "split kernel.cu does not read nz_col_hi"
out=$("$st" --json emit-kernel --graph "$root/configs/graphs/csr-scalar.json" "$f" -o "$tmp/emit_whole")
echo "$out" | grep -q '"arrays_split": 0' && ok || bad "emit-kernel split without --split-words: $out"
# The kernels index in 32 bits where everything fits, in 64 when the design asks for 64-bit indices.
echo "$out" | grep -q '"kernel_index_bits": 32' && ok || bad "emit-kernel: no 32-bit kernel indices: $out"
grep -q 'typedef int st_idx_t;' "$tmp/emit_whole/kernel.cu" && ok || bad "kernel.cu does not index in 32 bits"
out=$("$st" --json emit-kernel --graph "$root/configs/graphs/csr-scalar.json" "$f" -o "$tmp/emit_wide" --index-bits 64)
echo "$out" | grep -q '"kernel_index_bits": 64' && ok || bad "emit-kernel --index-bits 64: $out"
grep -q 'typedef long long st_idx_t;' "$tmp/emit_wide/kernel.cu" && ok || bad "kernel.cu --index-bits 64 indexes in 32 bits"
# MatXtract's crux on tensor cores: mma.sync in the kernel; fp16 tensor cores refuse an f64 format.
expect_ok "emit-kernel crux-tc" "$st" emit-kernel --graph "$root/configs/graphs/crux-tc.json" \
  "$example" -o "$tmp/emit_crux"
grep -q 'mma.sync.aligned.m8n8k4' "$tmp/emit_crux/kernel.cu" && ok || bad "crux-tc kernel.cu has no mma.sync"
f=$(mtx crux16.json '{"ops":[{"op":"CRUX_SPLIT","tau_c":1,"tau_r":1,"branches":[[{"op":"TC_COMPRESS","width":8},{"op":"TC_MMA_F16"}],[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]]}]}')
expect_fail "emit-kernel: fp16 tensor cores for f64" "TC_MMA_F16: rule: serves f16 formats, not f64" \
  "$st" emit-kernel --graph "$f" "$example" -o "$tmp/emit_bad"
expect_ok "emit-kernel crux fp16" "$st" emit-kernel --graph "$f" "$example" -o "$tmp/emit_crux16" --dtype f16
f=$(mtx crux_bad.json '{"ops":[{"op":"CRUX_SPLIT","tau_c":0.2,"tau_r":0.6,"branches":[[{"op":"TC_COMPRESS"},{"op":"TC_MMA_F64"}],[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]]}]}')
expect_fail "emit-kernel: crux with tau_r > tau_c" "ops\[0\] \(CRUX_SPLIT\): rule: tau_r must not exceed tau_c" \
  "$st" emit-kernel --graph "$f" "$example" -o "$tmp/emit_bad"
f=$(mtx order.json '{"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"BMTB_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]}')
expect_fail "emit-kernel: rule broken" "ops\[2\] \(BMTB_ROW_BLOCK\): rule: .*coarser levels are cut first" \
  "$st" emit-kernel --graph "$f" "$example" -o "$tmp/emit_bad"
f=$(mtx rows.json '{"ops":[{"op":"COMPRESS"},{"op":"BMT_NNZ_BLOCK","nnz":9},{"op":"THREAD_TOTAL_RED"}]}')
expect_fail "emit-kernel: data rule broken" "THREAD_TOTAL_RED: rule: every BMT must hold one row" \
  "$st" emit-kernel --graph "$f" "$example" -o "$tmp/emit_bad"
[ ! -e "$tmp/emit_bad" ] && ok || bad "a refused emit-kernel left $tmp/emit_bad behind"
# A refused run into an existing folder leaves its previous outputs as they were.
before=$(cat "$tmp/emit"/* | md5sum)
expect_fail "emit-kernel over a folder: rule broken" "rule" \
  "$st" emit-kernel --graph "$f" "$example" -o "$tmp/emit"
[ "$(cat "$tmp/emit"/* | md5sum)" = "$before" ] && ok || bad "a refused emit-kernel changed $tmp/emit"
expect_fail "emit-kernel into the current folder" "a name of its own|holds it" \
  bash -c "cd '$tmp' && '$st' emit-kernel --graph '$root/configs/graphs/csr-vector.json' '$example' -o ."

# --- hostile inputs: clear errors within bounded memory and time ------------------------------
# A tensor claiming 10^9 along every mode, and a header claiming order 10^9.
f=$(mtx huge.tns '1 1 1 1.0\n1000000000 1000000000 1000000000 2.0\n')
expect_ok "tensor of 10^9 per mode, 1 GB of memory" bash -c "ulimit -v 1000000; timeout 20 '$st' features '$f'"
f=$(mtx order.tns '1000000000\n1 1 1 1.0\n')
expect_fail "tensor claiming order 10^9" "order.tns:1: order 1000000000 exceeds" \
  bash -c "ulimit -v 1000000; timeout 20 '$st' features '$f'"
# Graph JSON: 10^6 operators, branches nested 10^5 deep, JSON nested 10^6 deep.
python3 -c "import json; print(json.dumps({'ops': [{'op': 'SORT'}] * 1000000}, separators=(',', ':')))" \
  >"$tmp/many.json"
expect_fail "graph of 10^6 operators" "more than 4096 operators" \
  bash -c "ulimit -v 2000000; timeout 20 '$st' emit-kernel --graph '$tmp/many.json' '$example' -o '$tmp/g1'"
python3 -c "
import sys; n = 100000
sys.stdout.write('{\"ops\":' + '[{\"op\":\"HYB_SPLIT\",\"branches\":[' * n + '[]' + ']}]' * n + '}')" >"$tmp/deep.json"
expect_fail "graph branches nested 10^5 deep" "nested deeper than" \
  bash -c "ulimit -v 2000000; timeout 20 '$st' emit-kernel --graph '$tmp/deep.json' '$example' -o '$tmp/g2'"
python3 -c "print('{\"ops\":[{\"op\":\"COMPRESS\",\"x\":' + '[' * 1000000 + ']' * 1000000 + '}]}')" >"$tmp/deepjson.json"
expect_fail "graph JSON nested 10^6 deep" "nested deeper than 64" \
  bash -c "ulimit -v 2000000; timeout 20 '$st' emit-kernel --graph '$tmp/deepjson.json' '$example' -o '$tmp/g3'"
[ ! -e "$tmp/g1" ] && [ ! -e "$tmp/g2" ] && [ ! -e "$tmp/g3" ] && ok || bad "a refused graph left output"
# Format binaries: header length 2^63, offsets past the end, overlapping arrays, bad UTF-8.
"$st" emit-kernel --graph "$root/configs/graphs/csr-vector.json" "$example" -o "$tmp/fb" >/dev/null
python3 - "$tmp" <<'PY'
import json, shutil, struct, sys
tmp = sys.argv[1]
src = open(f"{tmp}/fb/format.safetensors", "rb").read()
n = struct.unpack("<Q", src[:8])[0]
head, data = json.loads(src[8:8 + n]), src[8 + n:]
names = [k for k in head if k != "__metadata__"]
def put(name, blob):
    shutil.copytree(f"{tmp}/fb", f"{tmp}/fb-{name}")
    open(f"{tmp}/fb-{name}/format.safetensors", "wb").write(blob)
def packed(h):
    t = json.dumps(h).encode()
    return struct.pack("<Q", len(t)) + t + data
put("hdr", struct.pack("<Q", 1 << 63) + src[8:])
h = json.loads(json.dumps(head)); h[names[0]]["data_offsets"][1] += 10 ** 6; put("past", packed(h))
h = json.loads(json.dumps(head)); h[names[1]]["data_offsets"] = list(h[names[0]]["data_offsets"]); put("overlap", packed(h))
t = json.dumps(head).encode().replace(b'"tool": "', b'"tool": "\xff\xfe', 1)
put("utf8", struct.pack("<Q", len(t)) + t + data)
PY
expect_fail "format binary: header length 2^63" "header length 9223372036854775808 runs past the end" \
  bash -c "ulimit -v 2000000; timeout 20 '$st' run '$tmp/fb-hdr'"
expect_fail "format binary: offsets past the end" "data_offsets .* run past the end" "$st" run "$tmp/fb-past"
expect_fail "format binary: overlapping arrays" "overlap" "$st" run "$tmp/fb-overlap"
expect_fail "format binary: bad UTF-8 in metadata" "format.safetensors: safetensors: header is not valid JSON.*UTF-8" \
  "$st" run "$tmp/fb-utf8"

# --- two tune processes writing one database at once lose nothing ------------------------------
"$st" gen stencil2d --nx 30 -o "$tmp/c1.mtx" >/dev/null && "$st" gen kron --scale 9 -o "$tmp/c2.mtx" >/dev/null
count() { "$st" --json db --db "$1" stats | sed -n 's/.*"measurements": *\([0-9]*\).*/\1/p'; }
for i in 1 2; do
  "$st" -q tune "$tmp/c$i.mtx" --budget 0 --db "$tmp/alone$i.db" -o "$tmp/alone$i" >/dev/null 2>&1
done
"$st" -q tune "$tmp/c1.mtx" --budget 0 --db "$tmp/both.db" -o "$tmp/both1" >/dev/null 2>&1 &
p1=$!
"$st" -q tune "$tmp/c2.mtx" --budget 0 --db "$tmp/both.db" -o "$tmp/both2" >/dev/null 2>&1 &
p2=$!
wait $p1 && wait $p2 && ok || bad "concurrent tunes on one database failed"
want=$(( $(count "$tmp/alone1.db") + $(count "$tmp/alone2.db") ))
got=$(count "$tmp/both.db")
[ "$want" -gt 0 ] && [ "$got" = "$want" ] && ok || bad "concurrent tunes: $got rows, expected $want"

# A budget below what the final steps need says so, and which budget would let the search run.
"$st" --json tune "$tmp/c1.mtx" --budget 0.5 --db "$tmp/short.db" -o "$tmp/short" >"$tmp/out" 2>"$tmp/err"
grep -q 'leaves the search no time on this matrix.*only CSR-vector was scored.*give --budget [0-9]* or more' \
  "$tmp/out" && ok || bad "a too-short --budget is not explained"
# ... and is not taken as the matrix's answer: the next tune searches again.
"$st" --json tune "$tmp/c1.mtx" --budget 0.5 --db "$tmp/short.db" -o "$tmp/short" >"$tmp/out" 2>"$tmp/err"
grep -q '"from_database": false' "$tmp/out" && ok || bad "a starved search answered the next tune"

# eval: a database of predictions only has nothing to score, and says so.
expect_fail "eval of a predict-only database" "cost-model: nothing it picked for has been measured" \
  "$st" eval "$tmp/alone1.db"
expect_fail "eval of a missing database" "nodb.db" "$st" eval "$tmp/nodb.db"

head -c 3000 "$tmp/alone1.db" >"$tmp/cut.db"
expect_fail "db merge of a truncated file" "cut.db: not a complete SQLite tuning database" \
  "$st" db --db "$tmp/alone2.db" merge "$tmp/cut.db"
[ "$(count "$tmp/alone2.db")" = "$(( want - $(count "$tmp/alone1.db") ))" ] && ok ||
  bad "a refused merge changed the target"

# --- tune --op sptv: predict, emit, compile without a GPU; bad input named --------------------
tns=$root/tests/data/order3.tns
for k in 0 1 2; do
  expect_ok "tune --op sptv --mode $k" "$st" --json tune "$tns" --op sptv --mode "$k" --budget 0 \
    -o "$tmp/sptv$k"
  expect_out "tune --op sptv reports the mode" "\"mode\": $k"
  for f in format.safetensors kernel.cu kernel.h graph.json report.json; do
    [ -s "$tmp/sptv$k/$f" ] && ok || bad "tune --op sptv --mode $k wrote no $f"
  done
done
grep -Eq '"predictor": "(structural rule|slice-gcn)' "$tmp/sptv1/report.json" && ok ||
  bad "a tune --op sptv does not name its predictor"
expect_fail "tune --op sptv without --mode" "needs --mode" "$st" tune "$tns" --op sptv --budget 0
expect_fail "tune --op sptv with a mode too large" "--mode 3 is not a mode" \
  "$st" tune "$tns" --op sptv --mode 3 --budget 0 -o "$tmp/sptv-bad"
[ ! -e "$tmp/sptv-bad" ] && ok || bad "a refused sptv tune left an output folder"
for opt in "--hyb-width -3" "--coo-sorted --coo-block-nnz -5" "--batches 0"; do
  # shellcheck disable=SC2086  # the option and its value are two words
  flag=${opt% *}
  expect_fail "tune --op sptv $opt" "${flag##* } must be" \
    "$st" tune "$tns" --op sptv --mode 0 --budget 0 $opt -o "$tmp/sptv-bad"
  [ ! -e "$tmp/sptv-bad" ] && ok || bad "a refused sptv tune ($opt) left an output folder"
done
expect_fail "tune --op sptv --coo-block-nnz alone" "--coo-block-nnz requires --coo-sorted" \
  "$st" tune "$tns" --op sptv --mode 0 --budget 0 --coo-block-nnz 5000 -o "$tmp/sptv-bad"
# SpTV's own options with another op, a density threshold outside (0, 1], a negative slice
# mode, and a matrix where a tensor belongs: refused by name.
expect_fail "tune --op spmv with --mode" "--mode goes with --op sptv" \
  "$st" tune "$example" --mode 1 --budget 0 -o "$tmp/sptv-bad"
expect_fail "tune --op spmm with --sp" "--sp goes with --op sptv" \
  "$st" tune "$example" --op spmm --n 4 --sp 0.5 --budget 0 -o "$tmp/sptv-bad"
expect_fail "tune --op sptv --sp 0" "--sp: '0' must be above 0 and at most 1" \
  "$st" tune "$tns" --op sptv --mode 0 --sp 0 --budget 0 -o "$tmp/sptv-bad"
expect_fail "tune --op sptv --slice-mode -1" "--slice-mode: '-1' must be 0 or more" \
  "$st" tune "$tns" --op sptv --mode 0 --slice-mode -1 --budget 0 -o "$tmp/sptv-bad"
expect_fail "tune --op sptv of a matrix" "poisson.*:1: this is a Matrix Market \(matrix\) file" \
  "$st" tune "$example" --op sptv --mode 0 --budget 0 -o "$tmp/sptv-bad"
[ ! -e "$tmp/sptv-bad" ] && ok || bad "a refused sptv tune (options) left an output folder"
printf '300000000000000 1 1 1.0\n' >"$tmp/long.tns"
expect_fail "tune --op sptv of a mode of billions, one entry" "needs about .* GiB of memory" \
  "$st" tune "$tmp/long.tns" --op sptv --mode 0 --budget 0 --compile-only -o "$tmp/sptv-bad"
[ ! -e "$tmp/sptv-bad" ] && ok || bad "a refused sptv tune (memory) left an output folder"
printf '1 1 1 x\n' >"$tmp/bad.tns"
expect_fail "tune --op sptv of a malformed tensor" "bad.tns" \
  "$st" tune "$tmp/bad.tns" --op sptv --mode 0 --budget 0 -o "$tmp/sptv-bad"
# --- tune --rank-by: flushed or warm; without a GPU nothing is ranked by a measured time --------
expect_fail "tune --rank-by of an unknown timing" "--rank-by" \
  "$st" tune "$example" --rank-by hot --budget 0 -o "$tmp/rank-bad"
[ ! -e "$tmp/rank-bad" ] && ok || bad "a refused --rank-by left an output folder"
expect_ok "tune --rank-by warm --budget 0" "$st" --json tune "$example" --rank-by warm --budget 0 \
  --db "$tmp/rank.db" -o "$tmp/rank"
expect_out "a predicted answer is ranked by no measured time" '"ranked_by": "predicted"'
expect_fail "tune --rank-by transfers on SpMV" "does not go with --op spmv" \
  "$st" tune "$example" --rank-by transfers --budget 0 -o "$tmp/rank-bad"
expect_fail "tune --op sptv --rank-by warm" "does not go with --op sptv" \
  "$st" tune "$tns" --op sptv --mode 0 --rank-by warm --budget 0 -o "$tmp/rank-bad"
[ ! -e "$tmp/rank-bad" ] && ok || bad "a refused --rank-by left an output folder"
expect_ok "tune --op sptv --rank-by transfers --budget 0" "$st" --json tune "$tns" --op sptv \
  --mode 0 --rank-by transfers --budget 0 -o "$tmp/sptv-rank"
# --- tune --op sptv --slice-format: one format for every slice; a foreign name refused ---------
expect_ok "tune --op sptv --slice-format COO" "$st" --json tune "$tns" --op sptv --mode 1 \
  --slice-format COO --budget 0 -o "$tmp/sptv-coo"
expect_out "every slice is COO, forced" '"predictor": "forced: --slice-format COO"'
grep -q '"ELL": 0' "$tmp/sptv-coo/report.json" && grep -q '"CSR": 0' "$tmp/sptv-coo/report.json" &&
  ok || bad "tune --slice-format COO left slices in other formats"
expect_fail "tune --op sptv --slice-format BSR" "--slice-format" \
  "$st" tune "$tns" --op sptv --mode 1 --slice-format BSR --budget 0 -o "$tmp/sptv-bad2"
[ ! -e "$tmp/sptv-bad2" ] && ok || bad "a refused --slice-format left an output folder"
# --- tune --op spmm: rank by the cost model, emit, compile without a GPU; bad input named -------
expect_ok "tune --op spmm --n 128" "$st" --json tune "$example" --op spmm --n 128 --budget 0 \
  --db "$tmp/spmm.db" -o "$tmp/spmm"
expect_out "tune --op spmm reports n" '"n": 128'
expect_out "tune --op spmm names its op" '"op": "spmm"'
for f in format.safetensors kernel.cu kernel.h graph.json report.json; do
  [ -s "$tmp/spmm/$f" ] && ok || bad "tune --op spmm wrote no $f"
done
grep -q 'COL_TILE' "$tmp/spmm/graph.json" && ok || bad "the tuned SpMM graph has no COL_TILE"
grep -q 'long long ldb' "$tmp/spmm/kernel.h" && ok || bad "kernel.h has no SpMM run()"
expect_fail "tune --op spmm without --n" "needs --n" "$st" tune "$example" --op spmm --budget 0
expect_fail "tune --op spmm with --n 2000" "--n" "$st" tune "$example" --op spmm --n 2000 \
  --budget 0 -o "$tmp/spmm-bad"
# collect tunes each matrix: an --n that tune refuses is refused up front, not once per matrix.
expect_fail "collect --op spmm with --n 2000" "not in range 1 to 1024" "$st" collect "$example" \
  --op spmm --n 2000 --db "$tmp/spmm-bad.db"
[ ! -e "$tmp/spmm-bad.db" ] && ok || bad "a refused collect left a database"
expect_fail "collect --candidates without --row-orders" "--candidates applies to --row-orders" \
  "$st" collect "$example" --op spmm --candidates matrix --db "$tmp/cand-bad.db"
[ ! -e "$tmp/cand-bad.db" ] && ok || bad "collect with a misplaced --candidates left a database"
expect_fail "tune --op spmv with --n" "goes with --op spmm" "$st" tune "$example" --n 4 --budget 0
[ ! -e "$tmp/spmm-bad" ] && ok || bad "a refused spmm tune left an output folder"
# f16: fp16 values and B, fp32 C; a value beyond fp16's range refused, naming the file.
expect_ok "tune --op spmm --dtype f16" "$st" --json tune "$example" --op spmm --n 16 --dtype f16 \
  --budget 0 --db "$tmp/spmm16.db" -o "$tmp/spmm16"
expect_out "tune --op spmm --dtype f16 reports it" '"dtype": "f16"'
grep -q 'typedef float result_t;  // C' "$tmp/spmm16/kernel.h" && ok ||
  bad "the f16 SpMM kernel.h does not write an fp32 C"
big=$(mtx big16.mtx '%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 70000\n')
expect_fail "tune --op spmm --dtype f16 beyond fp16's range" "big16.mtx.*exceed fp16's range" \
  "$st" tune "$big" --op spmm --n 8 --dtype f16 --budget 0 -o "$tmp/spmm16-bad"
[ ! -e "$tmp/spmm16-bad" ] && ok || bad "a refused f16 spmm tune left an output folder"
# emit-kernel refuses the same values (and fp32's past 3.4e38), rather than storing them as inf.
expect_fail "emit-kernel --dtype f16 beyond fp16's range" "big16.mtx: values up to 70000 exceed fp16" \
  "$st" emit-kernel "$big" --graph "$root/configs/graphs/csr-vector.json" --dtype f16 -o "$tmp/e16"
[ ! -e "$tmp/e16" ] && ok || bad "a refused emit-kernel left an output folder"
big32=$(mtx big32.mtx '%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1e300\n2 2 1\n')
expect_fail "emit-kernel --dtype f32 beyond fp32's range" "big32.mtx: values up to 1e\+300 exceed fp32" \
  "$st" emit-kernel "$big32" --graph "$root/configs/graphs/csr-vector.json" --dtype f32 -o "$tmp/e32"
expect_fail "tune --dtype f32 beyond fp32's range" "big32.mtx: values up to 1e\+300 exceed fp32" \
  "$st" tune "$big32" --dtype f32 --budget 0 -o "$tmp/t32"
# 2^63 - 1 columns: x cannot be held (or even sized); refused by size, never an internal error.
wide=$(mtx wide.mtx '%%MatrixMarket matrix coordinate real general\n1 9223372036854775807 1\n1 9223372036854775807 1\n')
expect_fail "tune of a matrix of 2^63 - 1 columns" "wide.mtx \(1 x 9223372036854775808, x and y\) needs about" \
  "$st" tune "$wide" --budget 0 -o "$tmp/wide"
expect_fail "emit-kernel of a matrix of 2^63 - 1 columns" "wide.mtx .* needs about" \
  "$st" emit-kernel "$wide" --graph "$root/configs/graphs/csr-vector.json" -o "$tmp/wide"
printf '{"op": "spmm", "ops": [{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}]}' \
  >"$tmp/notile.json"
expect_fail "emit-kernel of an spmm graph without COL_TILE" "notile.json.*COL_TILE" \
  "$st" emit-kernel "$example" --graph "$tmp/notile.json" -o "$tmp/notile"

# --- column-major B and C (--layout col): tune and emit on the CPU path; bad layouts named --------
expect_ok "tune --op spmm --layout col" "$st" --json tune "$example" --op spmm --n 33 --layout col \
  --budget 0 --db "$tmp/spmm.db" -o "$tmp/spmm-col"
expect_out "tune --layout col reports it" '"layout": "col"'
grep -q 'kColMajor = true' "$tmp/spmm-col/kernel.h" && ok || bad "kernel.h is not column-major"
grep -q 'st_mac_tile_cm' "$tmp/spmm-col/kernel.cu" && ok || bad "kernel.cu is not column-major"
grep -aq '"layout":"col"' "$tmp/spmm-col/format.safetensors" && ok ||
  bad "the format binary does not record the column-major layout"
grep -q '"layout": "col"' "$tmp/spmm-col/report.json" && ok || bad "report.json has no layout"
grep -aq '"layout"' "$tmp/spmm/format.safetensors" && bad "a row-major binary names a layout" || ok
expect_ok "emit-kernel --layout col" "$st" emit-kernel "$example" --layout col \
  --graph "$tmp/spmm-col/graph.json" -o "$tmp/emit-col"
grep -q 'kColMajor = true' "$tmp/emit-col/kernel.h" && ok || bad "emit-kernel --layout col ignored"
expect_fail "tune --op spmv --layout col" "for op spmm" "$st" tune "$example" --layout col \
  --budget 0 -o "$tmp/spmv-col"
[ ! -e "$tmp/spmv-col" ] && ok || bad "a refused --layout left an output folder"
expect_fail "tune --op sptv --layout col" "for op spmm" "$st" tune "$tns" --op sptv --mode 0 \
  --layout col --budget 0 -o "$tmp/sptv-col"
expect_fail "tune --layout diagonal" "--layout: diagonal not in \{row,col\}" \
  "$st" tune "$example" --op spmm --n 4 --layout diagonal --budget 0 -o "$tmp/spmm-diag"
expect_fail "convert --layout coo to Matrix Market" "--layout coo is the layout inside a .safetensors" \
  "$st" convert "$example" "$tmp/coo.mtx" --layout coo
expect_fail "emit-kernel --layout col of an SpMV graph" "for op spmm" "$st" emit-kernel "$example" \
  --layout col --graph "$root/configs/graphs/csr-vector.json" -o "$tmp/emit-spmv-col"
expect_fail "run --layout row of a column-major folder" "generated for col-major B and C" \
  "$st" run "$tmp/spmm-col" --layout row
expect_fail "run --layout col of an SpMV folder" "--layout is the layout of SpMM" \
  "$st" run "$tmp/emit" --layout col

printf 'tensor,mode,slice,format,time_us\norder3.tns,1,0,BSR,2\n' >"$tmp/timings.csv"
expect_fail "slice-gcn train names a bad format" "timings.csv:2.*BSR" \
  "$st" slice-gcn train --timings "$tmp/timings.csv" -o "$tmp/m.safetensors"
expect_fail "slice-gcn train with a bag of 65" "bag.*not in range 1 to 64" \
  "$st" slice-gcn train --timings "$tmp/timings.csv" --bag 65 -o "$tmp/m.safetensors"
expect_fail "slice-gcn collect with a mode too large" "--mode 3 is not a mode" \
  "$st" slice-gcn collect "$tns" --mode 3 -o "$tmp/labels.csv"
expect_fail "slice-gcn collect of a malformed tensor" "bad.tns" \
  "$st" slice-gcn collect "$tmp/bad.tns" -o "$tmp/labels.csv"
expect_fail "slice-gcn collect with no slices sampled" "max-slices" \
  "$st" slice-gcn collect "$tns" --max-slices 0 -o "$tmp/labels.csv"
expect_fail "slice-gcn collect of a matrix along another mode" "general_real.mtx: a matrix is one slice" \
  "$st" slice-gcn collect "$tns" "$root/tests/data/general_real.mtx" --mode 0 -o "$tmp/labels.csv"
[ ! -e "$tmp/labels.csv" ] && ok || bad "a refused slice-gcn collect wrote its CSV"

# Two collections in two folders, merged into a third: names relative to the merged file,
# times the geometric mean (2 and 8 -> 4).
mkdir -p "$tmp/ra" "$tmp/rb" "$tmp/merged"
printf '# measured on A\ntensor,mode,slice,format,time_us\n../t/g.tns,0,1,CSR,2\n../t/g.tns,0,1,COO,3\n' >"$tmp/ra/l.csv"
printf 'tensor,mode,slice,format,time_us\n../t/g.tns,0,1,CSR,8\n../t/g.tns,0,1,COO,3\n' >"$tmp/rb/l.csv"
expect_ok "slice-gcn merge" "$st" --json slice-gcn merge "$tmp/ra/l.csv" "$tmp/rb/l.csv" \
  -o "$tmp/merged/m.csv"
grep -qx '\.\./t/g.tns,0,1,CSR,4' "$tmp/merged/m.csv" && ok ||
  bad "slice-gcn merge: CSR's mean of 2 and 8 is not 4, or g.tns is misnamed"
grep -qx '\.\./t/g.tns,0,1,COO,3' "$tmp/merged/m.csv" && ok ||
  bad "slice-gcn merge: COO's mean of 3 and 3 is not 3"
grep -q '"same_label": 0.0' "$tmp/out" && grep -q '"same_label": 1.0' "$tmp/out" && ok ||
  bad "slice-gcn merge: collection A labels CSR, B and the merge COO"
printf 'tensor,mode,slice,format,time_us\ng.tns,0,x,CSR,1\n' >"$tmp/rb/bad.csv"
expect_fail "slice-gcn merge names a bad field" "bad.csv:2.*field slice" \
  "$st" slice-gcn merge "$tmp/ra/l.csv" "$tmp/rb/bad.csv" -o "$tmp/merged/bad.csv"
expect_fail "slice-gcn merge of a missing file" "nope.csv" \
  "$st" slice-gcn merge "$tmp/ra/l.csv" "$tmp/nope.csv" -o "$tmp/merged/bad.csv"
[ ! -e "$tmp/merged/bad.csv" ] && ok || bad "a refused slice-gcn merge wrote its CSV"
printf 'tensor,mode,slice,format,time_us\n' >"$tmp/rb/header-only.csv"
expect_fail "slice-gcn merge of no timing" "no slice timing in 1 file" \
  "$st" slice-gcn merge "$tmp/rb/header-only.csv" -o "$tmp/merged/bad.csv"
[ ! -e "$tmp/merged/bad.csv" ] && ok || bad "slice-gcn merge of no timing wrote a CSV"

# What the models read of a labelled slice. order3.tns along mode 1, sliced along mode 0: slice 0
# holds (1,1,1) and (1,2,3), two fibers of one entry each over 3 rows and 3 columns.
mkdir -p "$tmp/feat"
cp "$tns" "$tmp/feat/"
printf 'tensor,mode,slice,format,time_us\norder3.tns,1,0,CSR,2\norder3.tns,1,0,COO,3\n' >"$tmp/feat/t.csv"
expect_ok "slice-gcn features" "$st" slice-gcn features --timings "$tmp/feat/t.csv" -o "$tmp/feat/f.csv"
head -1 "$tmp/feat/f.csv" | grep -q '^slice,density,rows,cols,nnz,.*,fibers,.*,label,margin,CSR_us,COO_us' &&
  ok || bad "slice-gcn features: the header does not name the globals, label and times"
grep -qx 'order3.tns:1:0,0.222222222,3,3,2,0.666666667,1,0,0.666666667,1,0,2,1,1,0,2,CSR,1.5,2,3,,,' \
  "$tmp/feat/f.csv" && ok || bad "slice-gcn features: slice 0's features, label or times are wrong"
printf 'tensor,mode,slice,format,time_us\norder3.tns,1,7,CSR,1\n' >"$tmp/feat/none-t.csv"
expect_fail "slice-gcn features of a slice the tensor lacks" "no non-empty slice 7" \
  "$st" slice-gcn features --timings "$tmp/feat/none-t.csv" -o "$tmp/feat/none.csv"
[ ! -e "$tmp/feat/none.csv" ] && ok || bad "a refused slice-gcn features wrote its CSV"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
