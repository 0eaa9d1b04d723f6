set title "output_throughput"
set xlabel "cache.block_size"
set ylabel "output tokens/s"
set grid
set key outside right
set terminal pngcairo size 960,540 noenhanced
set output 'axis1_output_throughput.png'
plot 'data/axis1_output_throughput.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=0', 'data/axis1_output_throughput.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=2', 'data/axis1_output_throughput.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=4', 'data/axis1_output_throughput.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=8'
set terminal svg size 960,540 noenhanced
set output 'axis1_output_throughput.svg'
plot 'data/axis1_output_throughput.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=0', 'data/axis1_output_throughput.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=2', 'data/axis1_output_throughput.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=4', 'data/axis1_output_throughput.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.prefetch_window=8'
unset output
