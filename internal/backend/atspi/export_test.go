package atspi

// CallsSent is how many D-Bus calls the package has sent so far.
func CallsSent() int64 { return callsSent.Load() }
