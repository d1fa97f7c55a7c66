module github.com/guiagent/guiagent

go 1.26
