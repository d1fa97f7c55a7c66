# A window of dense text for the OCR benchmarks: a text widget of 40 lines,
# at the position given as arguments X Y W H, each line "Line N:" and WORDS
# words (default 14) of a list, picked from an offset SEED (default 0) so
# that windows with different seeds show different text. Prints
# "ready VISIBLE" once drawn: how many lines are wholly in view.
lassign $argv wx wy ww wh nwords seed
if {$nwords eq ""} { set nwords 14 }
if {$seed eq ""} { set seed 0 }
wm geometry . ${ww}x${wh}+$wx+$wy
text .t -font {DejaVuSans 10} -wrap none -borderwidth 0 -background white
pack .t -fill both -expand 1
set words {the screen shows a form with fields and buttons and a list of items that a person reads
    quickly while an agent finds each label by its words alone without asking a model where it is}
for {set i 1} {$i <= 40} {incr i} {
    set line "Line $i:"
    for {set k 0} {$k < $nwords} {incr k} {
        append line " " [lindex $words [expr {($i * 7 + $k * 3 + $seed) % [llength $words]}]]
    }
    .t insert end "$line\n"
}
update
after 300 {
    update
    set visible 0
    for {set i 1} {$i <= 40} {incr i} {
        set d [.t dlineinfo $i.0]
        if {$d ne "" && [lindex $d 1] + [lindex $d 3] <= [winfo height .t]} { incr visible }
    }
    puts "ready $visible"
    flush stdout
}
