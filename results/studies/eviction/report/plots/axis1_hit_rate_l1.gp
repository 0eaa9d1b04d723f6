set title "hit_rate_l1"
set xlabel "cache.evict"
set ylabel "L1 hit rate"
set grid
set key outside right
set xtics ("heat" 0, "lru" 1, "lfu" 2, "belady" 3)
set offsets 0.5, 0.5, 0, 0
set terminal pngcairo size 960,540 noenhanced
set output 'axis1_hit_rate_l1.png'
plot 'data/axis1_hit_rate_l1.dat' index 0 using 1:2 with linespoints lw 2 title 'sparse.file=../../../results/studies/traces/stable.h5', 'data/axis1_hit_rate_l1.dat' index 1 using 1:2 with linespoints lw 2 title 'sparse.file=../../../results/studies/traces/drifting.h5', 'data/axis1_hit_rate_l1.dat' index 2 using 1:2 with linespoints lw 2 title 'sparse.file=../../../results/studies/traces/noisy.h5'
set terminal svg size 960,540 noenhanced
set output 'axis1_hit_rate_l1.svg'
plot 'data/axis1_hit_rate_l1.dat' index 0 using 1:2 with linespoints lw 2 title 'sparse.file=../../../results/studies/traces/stable.h5', 'data/axis1_hit_rate_l1.dat' index 1 using 1:2 with linespoints lw 2 title 'sparse.file=../../../results/studies/traces/drifting.h5', 'data/axis1_hit_rate_l1.dat' index 2 using 1:2 with linespoints lw 2 title 'sparse.file=../../../results/studies/traces/noisy.h5'
unset output
