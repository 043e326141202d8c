#!/usr/bin/env bash
# A refactor moves no result: run two builds of `aifabric` on the same corpus of requests
# (every engine, the README's packet and flow examples, failures, compare-fabrics, replay)
# and compare their JSON. Every value the old build printed must be in the new one's output,
# bit for bit; keys the new build adds are listed, not failed.
#
#   scripts/same_results.sh OLD_BIN NEW_BIN [quick|full] [FILTER]
#
# Writes outputs under $OUT (default /tmp/same-results). Exit 1 on a difference.
set -uo pipefail
old=$1; new=$2; mode=${3:-quick}; filter=${4:-}
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/same-results}
mkdir -p "$out/old" "$out/new"
S=../shared/scenarios/htsim-uec/cm
[ -d "$S" ] || S=examples/traffic
cases=()
add() { cases+=("$1|$2"); }
# name | arguments (no --json: added below)
add flow-perm        "traffic prometheus --pattern permutation --gpus 1024 --size 2M --lb spray"
add flow-incast      "traffic prometheus --pattern incast:32 --gpus 1024 --size 1M --lb ecmp"
add flow-cm          "traffic examples/traffic/fat-tree-k8.yaml --tm examples/traffic/perm-128.cm --scale-up 1 --lb ecmp"
add flow-fail        "traffic prometheus --pattern permutation --gpus 512 --size 1M --lb ucmp --fail west.bag.plane3"
add coll-ecmp        "collective llama3-24k --gpus 1024 --placement fragmented:3 --lb ecmp --sizes 64M:1G:4"
add coll-eecmp       "collective llama3-24k --gpus 1024 --placement fragmented:3 --lb eecmp:16 --sizes 64M:1G:4"
add coll-a2a         "collective prometheus --gpus 4096 --op all_to_all --sizes 256M"
add coll-te          "collective llama3-24k --gpus 256 --lb te --sizes 64M"
add job-16k          "job prometheus --job examples/jobs/llama3-405b-16k.yaml"
add job-fail         "job prometheus --job examples/jobs/llama3-405b-16k.yaml --placement spread --fail plane:east.bag.plane0"
add job-moe          "job prometheus --job examples/jobs/moe-4k.yaml --lb spray"
add pkt-perm-both    "traffic htsim-k8 --tm $S/perm_128n_2MiB.cm --engine both --preset uec-htsim"
add pkt-incast-ecmp  "traffic htsim-k8 --tm $S/incast_8to1_128n_2MiB.cm --engine packet --preset uec-htsim --lb ecmp"
add pkt-a2a          "traffic htsim-k8 --tm $S/a2a_64of128n_256KiB_parallel.cm --engine both --preset uec-htsim --lb spray:128"
add pkt-adaptive     "traffic htsim-k8 --pattern permutation --gpus 128 --size 1M --engine both --lb adaptive"
add pkt-dsf-incast   "traffic dsf-l1-zone --tm examples/traffic/dsf-incast.csv --gpus 288 --engine packet --cc line-rate --ecn off --rto-us 10000"
add pkt-roce         "traffic htsim-k8 --pattern incast:16 --gpus 128 --size 2M --engine packet --preset roce"
add pkt-roce-noadm   "traffic htsim-k8 --pattern incast:16 --gpus 128 --size 2M --engine packet --preset roce --admission off"
add pkt-dcqcn        "traffic htsim-k8 --pattern incast:16 --gpus 128 --size 2M --engine packet --preset roce --admission off --cc dcqcn --ecn 5000:200000:0.01"
add pkt-dcqcn-htsim  "traffic htsim-k8 --pattern incast:16 --gpus 128 --size 2M --engine packet --preset roce --admission off --cc dcqcn-htsim"
add pkt-ring-spread  "traffic prometheus --pattern ring-allreduce --gpus 16 --size 16M --placement spread --engine both"
add pkt-hybrid       "traffic htsim-k8 --pattern permutation --gpus 128 --size 16M --engine hybrid --preset uec-htsim"
add coll-packet      "collective htsim-k16 --op all_reduce --algo ring --gpus 128 --sizes 1G --scale-up 1 --engine packet --preset uec-htsim"
add job-cut          "job htsim-k16 --job examples/jobs/small-64.yaml --placement spread --engine hybrid --preset uec-htsim --lb ecmp"
add job-hybrid       "job htsim-k8 --job crates/fixtures/jobs/small-8.yaml --engine hybrid --preset uec-htsim"
add pkt-fail         "traffic htsim-k8 --pattern permutation --gpus 128 --size 1M --engine both --preset uec-htsim --fail r.b.z.atsw0"
add pkt-nsf          "traffic nsf-l2 --pattern incast:8 --gpus 64 --size 1M --engine packet --lb adaptive --nsf-pruning"
add pkt-droptail     "traffic htsim-k8 --pattern incast:8 --gpus 128 --size 1M --engine packet --preset uec-htsim --drop-tail"
add compare-quick    "compare-fabrics --quick"
add failures-plane   "failures prometheus --sweep pairs:plane"
add failures-mc      "failures prometheus --sweep montecarlo --samples 200 --probability link=1e-4 --seed 3"
add failures-pd      "failures nsf-l2 --sweep single:pd --aggregation unconditional --mitigations --top 5"
add failures-ib      "failures prometheus --sweep single:plane --compare-inter-bag"
add capacity         "capacity prometheus --drain west.bag.plane3"
add routes           "routes nsf-l2 --device east.dc1.nsf.rtsw0 --prefix east.dc1.nsf.rack400"
add blackholes       "blackholes nsf-l2 --fail east.dc1.nsf.ftsw528--east.dc1.nsf.stsw0 --aggregation conditional"
add buffers          "buffers nsf-l2 --lossless-priorities 2"
if [ "$mode" = full ]; then
  add pkt-k16        "traffic htsim-k16 --pattern permutation --gpus 1024 --size 2M --engine packet --preset uec-htsim"
  add compare-full   "compare-fabrics"
  add compare-bagpfc "compare-fabrics --bag-pfc 8000000:6000000"
  add job-131k       "job prometheus --job examples/jobs/llama3-405b-131k.yaml --lb spray"
  add failures-mc1k  "failures prometheus --sweep montecarlo --samples 1000 --probability link=1e-4"
fi
fail=0
for c in "${cases[@]}"; do
  name=${c%%|*}; args=${c#*|}
  [ -n "$filter" ] && [[ $name != *$filter* ]] && continue
  # shellcheck disable=SC2086
  "$old" $args --json > "$out/old/$name.json" 2> "$out/old/$name.err"; ro=$?
  # shellcheck disable=SC2086
  "$new" $args --json > "$out/new/$name.json" 2> "$out/new/$name.err"; rn=$?
  if [ $ro != $rn ]; then echo "DIFF $name: exit $ro -> $rn"; fail=1; continue; fi
  if cmp -s "$out/old/$name.json" "$out/new/$name.json"; then
    echo "same $name (exit $ro, identical bytes)"
  elif python3 scripts/json_subset.py "$out/old/$name.json" "$out/new/$name.json"; then
    echo "same $name (exit $ro, every old value kept)"
  else
    echo "DIFF $name"; fail=1
  fi
done
exit $fail
