set title "hit_rate_l1"
set xlabel "workload.arrival.rate"
set ylabel "L1 hit rate"
set grid
set key outside right
set terminal pngcairo size 960,540 noenhanced
set output 'axis1_hit_rate_l1.png'
plot 'data/axis1_hit_rate_l1.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.l1=50%', 'data/axis1_hit_rate_l1.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.l1=60%', 'data/axis1_hit_rate_l1.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.l1=70%', 'data/axis1_hit_rate_l1.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.l1=85%', 'data/axis1_hit_rate_l1.dat' index 4 using 1:2 with linespoints lw 2 title 'cache.l1=100%'
set terminal svg size 960,540 noenhanced
set output 'axis1_hit_rate_l1.svg'
plot 'data/axis1_hit_rate_l1.dat' index 0 using 1:2 with linespoints lw 2 title 'cache.l1=50%', 'data/axis1_hit_rate_l1.dat' index 1 using 1:2 with linespoints lw 2 title 'cache.l1=60%', 'data/axis1_hit_rate_l1.dat' index 2 using 1:2 with linespoints lw 2 title 'cache.l1=70%', 'data/axis1_hit_rate_l1.dat' index 3 using 1:2 with linespoints lw 2 title 'cache.l1=85%', 'data/axis1_hit_rate_l1.dat' index 4 using 1:2 with linespoints lw 2 title 'cache.l1=100%'
unset output
