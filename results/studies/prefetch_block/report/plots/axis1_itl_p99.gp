set title "itl_p99"
set xlabel "cache.block_size"
set ylabel "P99 ITL (s)"
set grid
set key outside right
set terminal pngcairo size 960,540 noenhanced
set output 'axis1_itl_p99.png'
plot 'data/axis1_itl_p99.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=0', 'data/axis1_itl_p99.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=2', 'data/axis1_itl_p99.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=4', 'data/axis1_itl_p99.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=8'
set terminal svg size 960,540 noenhanced
set output 'axis1_itl_p99.svg'
plot 'data/axis1_itl_p99.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=0', 'data/axis1_itl_p99.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=2', 'data/axis1_itl_p99.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=4', 'data/axis1_itl_p99.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=8'
unset output
