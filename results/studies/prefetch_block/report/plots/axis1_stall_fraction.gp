set title "stall_fraction"
set xlabel "cache.block_size"
set ylabel "stall fraction"
set grid
set key outside right
set terminal pngcairo size 960,540 noenhanced
set output 'axis1_stall_fraction.png'
plot 'data/axis1_stall_fraction.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=0', 'data/axis1_stall_fraction.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=2', 'data/axis1_stall_fraction.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=4', 'data/axis1_stall_fraction.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=8'
set terminal svg size 960,540 noenhanced
set output 'axis1_stall_fraction.svg'
plot 'data/axis1_stall_fraction.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=0', 'data/axis1_stall_fraction.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=2', 'data/axis1_stall_fraction.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=4', 'data/axis1_stall_fraction.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=8'
unset output
