set title "ttft_p99"
set xlabel "sparse.file"
set ylabel "P99 TTFT (s)"
set grid
set key outside right
set xtics ("../../../results/studies/traces/stable.h5" 0, "../../../results/studies/traces/drifting.h5" 1, "../../../results/studies/traces/noisy.h5" 2)
set offsets 0.5, 0.5, 0, 0
set terminal pngcairo size 960,540 noenhanced
set output 'axis0_ttft_p99.png'
plot 'data/axis0_ttft_p99.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.evict=heat', 'data/axis0_ttft_p99.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.evict=lru', 'data/axis0_ttft_p99.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.evict=lfu', 'data/axis0_ttft_p99.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.evict=belady'
set terminal svg size 960,540 noenhanced
set output 'axis0_ttft_p99.svg'
plot 'data/axis0_ttft_p99.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.evict=heat', 'data/axis0_ttft_p99.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.evict=lru', 'data/axis0_ttft_p99.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.evict=lfu', 'data/axis0_ttft_p99.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.evict=belady'
unset output
