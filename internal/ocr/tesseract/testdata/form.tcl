# A Tk form for the OCR tests: ordinary buttons, white labels on saturated
# buttons, list rows, form labels and a dark-mode panel. Once it is drawn it
# prints one line per widget that shows text, "NAME<TAB>TEXT<TAB>X Y W H" in
# root-window pixels as Tk itself reports them (winfo rootx/rooty/width/height;
# listbox rows from the listbox's bbox), then "ready". Arguments: the
# window's position, X Y (default 40 30).
set wx 40
set wy 30
if {$argc == 2} {
    lassign $argv wx wy
}
wm geometry . +$wx+$wy
. configure -background #ececec
option add *Font {DejaVuSans 10}

set widgets {}
proc track {name w text} {
    global widgets
    lappend widgets [list $name $w $text]
}

frame .top -background #ececec
pack .top -side top -fill x -padx 16 -pady 12
label .top.title -text "Account settings" -background #ececec -font {DejaVuSans 14 bold}
pack .top.title -side left
track title .top.title "Account settings"

frame .form -background #ececec
pack .form -side top -fill x -padx 16
foreach {row key text value} {0 name "Name:" "Ada Lovelace" 1 email "Email:" "ada@example.org"} {
    label .form.l$key -text $text -background #ececec
    entry .form.e$key -width 28 -relief solid -borderwidth 1 -background white
    .form.e$key insert 0 $value
    grid .form.l$key -row $row -column 0 -sticky w -pady 4
    grid .form.e$key -row $row -column 1 -sticky w -padx 8 -pady 4
    track label_$key .form.l$key $text
    track entry_$key .form.e$key $value
}

frame .buttons -background #ececec
pack .buttons -side top -fill x -padx 16 -pady 12
foreach {key text} {open Open save Save submit Submit} {
    button .buttons.$key -text $text -width 8
    pack .buttons.$key -side left -padx 6
    track button_$key .buttons.$key $text
}

frame .colours -background #ececec
pack .colours -side top -fill x -padx 16 -pady 4
foreach {key text bg} {red RED #d32f2f green GREEN #2e7d32 blue BLUE #1565c0} {
    button .colours.$key -text $text -width 9 -foreground white -background $bg \
        -activeforeground white -activebackground $bg -relief flat -font {DejaVuSans 11 bold} -pady 6
    pack .colours.$key -side left -padx 6
    track colour_$key .colours.$key $text
}

frame .lower -background #ececec
pack .lower -side top -fill both -padx 16 -pady 12
listbox .lower.list -height 6 -width 18 -relief solid -borderwidth 1 -activestyle none \
    -selectbackground #3874d8 -selectforeground white
foreach i {1 2 3 4 5 6} {
    .lower.list insert end "Item $i"
}
.lower.list selection set 2
pack .lower.list -side left -anchor n

frame .lower.dark -background #1e1e1e -padx 14 -pady 10
pack .lower.dark -side left -padx 16 -anchor n -fill y
label .lower.dark.head -text "Dark mode" -foreground #e0e0e0 -background #1e1e1e -font {DejaVuSans 12 bold}
label .lower.dark.status -text "Sync enabled" -foreground #a0a0a0 -background #1e1e1e
label .lower.dark.warn -text "Low storage" -foreground #ffb74d -background #1e1e1e
button .lower.dark.apply -text "Apply" -foreground white -background #3c3c3c -activebackground #3c3c3c \
    -activeforeground white -relief flat -highlightthickness 0 -width 8
pack .lower.dark.head .lower.dark.status .lower.dark.warn -side top -anchor w -pady 2
pack .lower.dark.apply -side top -anchor w -pady 8
foreach {name w text} {dark_head .lower.dark.head "Dark mode" dark_status .lower.dark.status "Sync enabled" \
        dark_warn .lower.dark.warn "Low storage" dark_apply .lower.dark.apply "Apply"} {
    track $name $w $text
}

update idletasks
update

after 300 {
    update
    foreach t $widgets {
        lassign $t name w text
        puts [format "%s\t%s\t%d %d %d %d" $name $text [winfo rootx $w] [winfo rooty $w] [winfo width $w] [winfo height $w]]
    }
    set lx [winfo rootx .lower.list]
    set ly [winfo rooty .lower.list]
    for {set i 0} {$i < 6} {incr i} {
        lassign [.lower.list bbox $i] x y w h
        # A row spans the listbox's width; bbox gives its top and height.
        puts [format "row_%d\tItem %d\t%d %d %d %d" [expr {$i + 1}] [expr {$i + 1}] $lx [expr {$ly + $y}] [winfo width .lower.list] $h]
    }
    puts ready
    flush stdout
}
