set title "output_throughput"
set xlabel "cache.prefetch_window"
set ylabel "output tokens/s"
set grid
set key outside right
set terminal pngcairo size 960,540 noenhanced
set output 'axis0_output_throughput.png'
plot 'data/axis0_output_throughput.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.block_size=16', 'data/axis0_output_throughput.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.block_size=32', 'data/axis0_output_throughput.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.block_size=64'
set terminal svg size 960,540 noenhanced
set output 'axis0_output_throughput.svg'
plot 'data/axis0_output_throughput.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.block_size=16', 'data/axis0_output_throughput.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.block_size=32', 'data/axis0_output_throughput.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.block_size=64'
unset output
