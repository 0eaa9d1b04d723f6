set title "output_throughput"
set xlabel "workload.arrival.rate"
set ylabel "output tokens/s"
set grid
set key outside right
set terminal pngcairo size 960,540 noenhanced
set output 'axis1_output_throughput.png'
plot 'data/axis1_output_throughput.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.l1=50%', 'data/axis1_output_throughput.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.l1=60%', 'data/axis1_output_throughput.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.l1=70%', 'data/axis1_output_throughput.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.l1=85%', 'data/axis1_output_throughput.dat' index 4 using 1:2 with linespoints lw 2 title 'cache.l1=100%'
set terminal svg size 960,540 noenhanced
set output 'axis1_output_throughput.svg'
plot 'data/axis1_output_throughput.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.l1=50%', 'data/axis1_output_throughput.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.l1=60%', 'data/axis1_output_throughput.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.l1=70%', 'data/axis1_output_throughput.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.l1=85%', 'data/axis1_output_throughput.dat' index 4 using 1:2 with linespoints lw 2 title 'cache.l1=100%'
unset output
