# A window of dense text for the OCR benchmarks: a text widget of 40 lines,
# at the position given as arguments X Y W H. Prints "ready" once drawn.
lassign $argv wx wy ww wh
wm geometry . ${ww}x${wh}+$wx+$wy
text .t -font {DejaVuSans 10} -wrap word -borderwidth 0 -background white
pack .t -fill both -expand 1
set words {the screen shows a form with fields and buttons and a list of items that a person reads
    quickly while an agent finds each label by its words alone without asking a model where it is}
for {set i 1} {$i <= 40} {incr i} {
    set line "Line $i:"
    for {set k 0} {$k < 14} {incr k} {
        append line " " [lindex $words [expr {($i * 7 + $k * 3) % [llength $words]}]]
    }
    .t insert end "$line\n"
}
update
after 300 {
    update
    puts ready
    flush stdout
}
