// Command gen writes a provider's lifecycle table from its SDK's deprecation
// markers:
//
//	go run ../internal/sdkmodels/gen -module M -file F -types T1,T2 -var V -out lifecycle_gen.go
//
// It is run by go generate in the provider packages.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/guiagent/guiagent/internal/llm/internal/sdkmodels"
)

func main() {
	module := flag.String("module", "", "the SDK's module path")
	file := flag.String("file", "", "the Go file of the SDK that declares the model constants")
	types := flag.String("types", "", "comma-separated names of the constants' types")
	pkg := flag.String("pkg", "", "the package of the generated file")
	name := flag.String("var", "sdkLifecycle", "the variable to declare")
	out := flag.String("out", "lifecycle_gen.go", "the file to write")
	flag.Parse()
	src, err := sdkmodels.Generate(*module, *file, *pkg, *name, strings.Split(*types, ","))
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
