#!/usr/bin/env bash
# Reproduces the target table of issue 10 with `mempursuit bench`:
#   int8 pursuit <= 0.4x the f32 pursuit (same process, default build) at
#   P=200,K=20,d=1536; <= 0.5x at d=384 and at P=500,K=20,d=1536;
#   f32 pursuit <= 1.05x the faster external library's K+1 passes.
# Requires libopenblas-dev (Debian/Ubuntu: apt-get install libopenblas-dev):
# the build links the system OpenBLAS (feature `openblas`) and faer.
# Run from the repository root on an otherwise idle machine; each case runs
# twice. One line per run: the medians (µs) of the table's rows and the
# ratios of medians (int8/f32 only in the int8 runs, where both are timed
# in the same process, round by round). Optional: DATA=path/to/hotpotqa-distractor
# adds the verified candidates per pick on the real pools.
set -euo pipefail
cargo build --release -p mempursuit-cli --features openblas,faer
B=target/release/mempursuit

# Reads a `mempursuit bench` table on stdin and prints one compact line.
row() {
    awk -F'|' '
        /^\| / && $3 ~ /[0-9]/ {
            name = $2; gsub(/^ +| +$/, "", name); sub(/ \(K\+1 passes\)$/, "", name)
            med[name] = $3 + 0; mn[name] = $6 + 0
        }
        function r(a, b) { return (a in med && b in med && med[b] > 0) ? sprintf("%.3f", med[a] / med[b]) : "-" }
        END {
            f = ("f32 pursuit" in med) ? "f32 pursuit" : "selection"
            line = ""
            if ("f32 pursuit" in med)
                line = sprintf("int8 %.1f µs, f32 %.1f µs", med["selection"], med["f32 pursuit"])
            else
                line = sprintf("f32 %.1f µs", med["selection"])
            line = line sprintf(", roofline %.1f, openblas %.1f, faer %.1f", med["roofline"], med["openblas"], med["faer"])
            best = ("faer" in med && med["faer"] < med["openblas"]) ? "faer" : "openblas"
            line = line " | "
            if ("f32 pursuit" in med)
                line = line sprintf("int8/f32 %s (minima %.3f), ", r("selection", "f32 pursuit"), mn["selection"] / mn["f32 pursuit"])
            line = line sprintf("f32/openblas %s, roofline/openblas %s, f32/faster(%s) %s",
                r(f, "openblas"), r("roofline", "openblas"), best, r(f, best))
            print line
        }'
}

for cfg in "-p 200 -k 20 -d 1536" "-p 200 -k 20 -d 384" "-p 500 -k 20 -d 1536"; do
    case "$cfg" in
        "-p 500"*) int8_rounds=5 ;;
        *) int8_rounds=10 ;;
    esac
    echo "== $cfg"
    for run in 1 2; do
        echo "int8 hot run $run: $($B bench $cfg --storage int8 --roofline --queries 1 --rounds $((int8_rounds * 20)) | row)"
        echo "int8 rotating run $run: $($B bench $cfg --storage int8 --roofline --queries 32 --rounds $int8_rounds | row)"
        echo "f32 hot run $run: $($B bench $cfg --roofline --queries 1 --rounds 300 | row)"
        echo "f32 rotating run $run: $($B bench $cfg --roofline --queries 32 --rounds 15 | row)"
    done
done
# The verified candidates per pick on real pools (where ../shared data is):
if [ -d "${DATA:-}" ]; then
    for k in 10 20; do
        echo "fixture K=$k: $($B bench --dir "$DATA" -k $k --storage int8 --rounds 3 | grep -E 'verified|picks vs')"
    done
fi
