# results/published/rows.sh - sourced by contexts.sh and qwen_contexts.sh:
# the rows of a table of steady decode throughput by prompt length, baseline
# against HiSparse, from the files steady.py wrote ($tmp/NAME.steady: tokens/s,
# mean batch, mean step time; read by probe.sh's steady).

# throughput_rows "CTX..." "BASELINE..." "HISPARSE...": per prompt length CTX
# (runs baselineCTX and hisparseCTX), the two configurations' rows against
# the published tokens/s, then their ratio's
throughput_rows() {
    local ctxs=($1) pub_b=($2) pub_h=($3) i=0 ctx v p
    for ctx in "${ctxs[@]}"; do
        for v in baseline hisparse; do
            p=${pub_b[$i]}
            [ "$v" = hisparse ] && p=${pub_h[$i]}
            awk -v c="$ctx" -v v="$v" -v p="$p" -v k="$(steady "$v$ctx" 1)" -v b="$(steady "$v$ctx" 2)" \
                -v s="$(steady "$v$ctx" 3)" \
                'BEGIN { printf "| %dK | %s | %d | %.0f | %+.0f%% | %.3g | %.2f |\n", c / 1024, v, p, k, (k - p) / p * 100, b, s * 1000 }'
        done
        awk -v c="$ctx" -v p="$(awk -v a="${pub_h[$i]}" -v b="${pub_b[$i]}" 'BEGIN { print a / b }')" \
            -v k="$(awk -v a="$(steady "hisparse$ctx" 1)" -v b="$(steady "baseline$ctx" 1)" 'BEGIN { print a / b }')" \
            'BEGIN { printf "| %dK | ratio | %.2f | %.2f | %+.0f%% | | |\n", c / 1024, p, k, (k - p) / p * 100 }'
        i=$((i + 1))
    done
}
