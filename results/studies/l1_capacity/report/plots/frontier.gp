set title "P99 TPOT against throughput"
set xlabel "output tokens/s"
set ylabel "P99 TPOT (s)"
set grid
set key outside right
set terminal pngcairo size 960,540 noenhanced
set output 'frontier.png'
plot 'data/frontier.dat' index 0 using 1:2 with points pt 7 ps 1.2 title 'points', '' index 1 using 1:2 with linespoints lw 2 title 'Pareto frontier'
set terminal svg size 960,540 noenhanced
set output 'frontier.svg'
plot 'data/frontier.dat' index 0 using 1:2 with points pt 7 ps 1.2 title 'points', '' index 1 using 1:2 with linespoints lw 2 title 'Pareto frontier'
unset output
