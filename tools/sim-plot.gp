# SPDX-License-Identifier: GPL-2.0-or-later
# Plot turbosched-sim's CSV: gain in ops/s and in mean frequency of the
# CPU-intensive threads over stock CFS, against N (N intensive + N jitter).
#   gnuplot -e "csv='docs/sim-results.csv'; out='docs/sim-results.png'" tools/sim-plot.gp
if (!exists("csv")) csv = 'docs/sim-results.csv'
if (!exists("out")) out = 'docs/sim-results.png'
if (!exists("tsd")) tsd = 'turboschedd (packer_plan)'
if (!exists("chip")) chip = '16 SMT4 cores'

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1000,900 font "sans,10"
} else {
    set terminal png size 1000,900
}
set output out
set datafile separator ","
set termoption noenhanced
set key top right
set grid
# N as far as the CSV goes (p9-22 runs to 44)
stats csv using 2 skip 1 nooutput
nmax = STATS_max
set xrange [1:nmax + 1]
xstep = nmax > 16 ? 2 : 1
set xtics xstep
# the published points are POWER9's: shown for the POWER9 shapes only
pub = strstrt(chip, "p9") == 1 || strstrt(chip, "16 SMT4") == 1
pubtitle = pub ? "published peaks (v2-v6, read from charts)" : ""
if (!pub) set key bottom left
set xzeroaxis lt -1

# Published TurboSched gains read from the cover letters' ASCII charts
# (REFERENCE.md §5, [DERIVED], +-1.7 points, +-1 N): ops/s, then frequency.
$pub_ops << EOD
10,13,v2
10,13,v4
11,12,v4
12,10,v4
12,15,v5
9,15,v6
EOD
$pub_freq << EOD
10,15,v2
10,13,v4
6,10,v4
9,16,v5
9,18,v6
EOD

# column 1 is the policy; select rows by name
sel(p, col) = (strcol(1) eq p) ? column(col) : NaN
pct(p, col) = (strcol(1) eq p) ? 100 * (column(col) - 1) : NaN

set multiplot layout 2,1 title "turbosched-sim: N CPU-intensive + N jitter threads, ".chip
set ylabel "ops/s vs CFS (%)"
plot csv using 2:(pct("turbosched", 4)) skip 1 with linespoints lw 5 pt 7 ps 1.5 title "TurboSched in-kernel rule", \
     csv using 2:(pct("turboschedd", 4)) skip 1 with linespoints lw 2 pt 5 title tsd, \
     csv using 2:(pct("benefit-table", 4)) skip 1 with linespoints lw 3 pt 13 title "benefit model, given the frequency table", \
     csv using 2:(pct("benefit-probe", 4)) skip 1 with linespoints lw 2 dt 3 pt 12 title "benefit model, learnt by probes", \
     csv using 2:(pct("iso-best", 4)) skip 1 with linespoints lw 2 pt 9 title "static isolation (best of K=1,2)", \
     csv using 2:(pct("cfs", 4)) skip 1 with lines lt -1 dt 2 title "CFS", \
     $pub_ops using 1:(pub ? $2 : NaN) with points pt 6 ps 2 lc rgb "black" title pubtitle
set xlabel "N"
set ylabel "mean frequency vs CFS (%)"
plot csv using 2:(pct("turbosched", 6)) skip 1 with linespoints lw 5 pt 7 ps 1.5 title "TurboSched in-kernel rule", \
     csv using 2:(pct("turboschedd", 6)) skip 1 with linespoints lw 2 pt 5 title tsd, \
     csv using 2:(pct("benefit-table", 6)) skip 1 with linespoints lw 3 pt 13 title "benefit model, given the frequency table", \
     csv using 2:(pct("benefit-probe", 6)) skip 1 with linespoints lw 2 dt 3 pt 12 title "benefit model, learnt by probes", \
     csv using 2:(pct("iso-best", 6)) skip 1 with linespoints lw 2 pt 9 title "static isolation (best of K=1,2)", \
     csv using 2:(pct("cfs", 6)) skip 1 with lines lt -1 dt 2 title "CFS", \
     $pub_freq using 1:(pub ? $2 : NaN) with points pt 6 ps 2 lc rgb "black" title pubtitle
unset multiplot
