package config

import (
	"fmt"
	"strings"
)

// Accepts says in a few words what k accepts.
func (k Knob) Accepts() string {
	switch k.Kind {
	case KindInt, KindDuration:
		return fmt.Sprintf("%d-%d", k.Min, k.Max)
	case KindBool:
		return "true, false"
	case KindList:
		return "comma list"
	case KindSize:
		return "WxH"
	case KindChoice:
		return strings.Join(k.Choices(), ", ")
	case KindURL:
		return "http(s) URL"
	}
	if k.Secret {
		return "text (secret)"
	}
	return "text"
}

// ShownDefault is k's default as documentation shows it.
func (k Knob) ShownDefault() string {
	switch {
	case k.Shown != "":
		return k.Shown
	case k.Default != "":
		return k.Default
	}
	return "-"
}

// MarkdownTable is docs/configuration.md's table of every knob, generated from Knobs
// (TestREADMEConfigurationTable holds docs/configuration.md to it).
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| variable | flag | default | accepts | meaning |\n| --- | --- | --- | --- | --- |\n")
	for _, k := range Knobs {
		env, flag := "-", "-"
		if k.Env != "" {
			env = k.Env
		}
		if k.Flag != "" {
			flag = "`--" + k.Flag + "`"
		}
		doc := k.Doc
		if k.Secret {
			doc += "; never logged, returned or recorded"
		}
		cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", env, flag, cell(k.ShownDefault()), cell(k.Accepts()), cell(doc))
	}
	return b.String()
}
