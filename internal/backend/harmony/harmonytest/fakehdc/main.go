// Command fakehdc is the fake hdc of package harmonytest: it answers hdc's
// command line from the scripted phone beside it.
package main

import (
	"os"

	"github.com/guiagent/guiagent/internal/backend/harmony/harmonytest"
)

func main() { os.Exit(harmonytest.Main(os.Args[1:], os.Stdout)) }
