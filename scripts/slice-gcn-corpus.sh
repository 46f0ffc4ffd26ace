#!/usr/bin/env bash
# Writes Slice-GCN's training corpus into DIR: the generated tensors g1..g15 (the `gen tensor`
# commands below; g1-g6 are the ones the shipped labels have used since 2026-11-25), the
# generated matrices of configs/corpus/slice-gcn-matrices.list (each one slice, named by its
# generator and parameters) and links to the shared tensors and matrices, so that
#   cd DIR && sparsetune slice-gcn collect $(cat sources.txt) -o labels.csv
# measures them and `slice-gcn train --timings labels.csv` finds them by the names the CSV gives.
# The generators are deterministic: the same commands give the same files on any machine.
#
# usage: scripts/slice-gcn-corpus.sh SPARSETUNE DIR [SHARED]   (SHARED: ../shared by default)
# Writes DIR/sources.txt (every source, the tensors first) and DIR/md5.txt. Files already there
# are kept.
set -euo pipefail
st=$1
dir=$2
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${3:-$root/../shared}
mkdir -p "$dir"
cd "$dir"

# dims / entries / Zipf skew of mode 0 / seed
tensors=(
  64,2000,2000/1e6/1.1/11 32,400,400/2e6/0.5/12 128,5000,50/5e5/1.5/13
  256,30000,30000/2e6/1.2/14 100,500,500/1e6/2.0/15 48,3000,200/1.5e6/0.8/16
  16,8000,8000/1e6/1.0/21 500,1000,20/8e5/0.3/22 2000,2000,2000/3e6/1.8/23
  80,80,80/2e5/0.6/24 1000,100000,64/2e6/1.3/25 300,300,20000/1.2e6/0.9/26
  10000,50,5000/1e6/2.5/27 64,64,100000/1.5e6/1.0/28 50,40,30,20/3e5/0.7/29
)
sources=()
i=1
for spec in "${tensors[@]}"; do
  IFS=/ read -r dims nnz skew seed <<<"$spec"
  # g1-g6 as .tns: the shipped labels name them so.
  f=g$i.safetensors
  [ "$i" -le 6 ] && f=g$i.tns
  [ -s "$f" ] || "$st" gen tensor --dims "$dims" --nnz "$nnz" --skew "$skew" --seed "$seed" \
    -o "$f" >/dev/null &
  sources+=("$f")
  i=$((i + 1))
done
wait

# `gen KIND name=value ... seed=S` -> KIND_name=value_..._seed=S.safetensors
while read -r word kind params; do
  [ "$word" = gen ] || continue
  name=$kind
  args=()
  for kv in $params; do
    name+="_$kv"
    k=${kv%%=*}
    args+=("--${k//_/-}" "${kv#*=}")
  done
  f=$name.safetensors
  [ -s "$f" ] || "$st" gen "$kind" "${args[@]}" -o "$f" >/dev/null
  sources+=("$f")
done < <(grep -v '^#' "$root/configs/corpus/slice-gcn-matrices.list")

for f in "$shared"/tensors/*.tns.gz "$shared"/matrices/*.mtx.gz; do
  [ -e "$f" ] || continue
  ln -sf "$f" .
  sources+=("$(basename "$f")")
done
printf '%s\n' "${sources[@]}" >sources.txt
md5sum g[0-9]*.tns g[0-9]*.safetensors >md5.txt
echo "${#sources[@]} sources in $dir"
