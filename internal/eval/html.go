package eval

import (
	"fmt"
	"html/template"
	"io"
)

// summaryTemplate is summary.html: one file, no scripts, no outside resources.
var summaryTemplate = template.Must(template.New("summary").Funcs(template.FuncMap{
	"pct":  pct,
	"secs": secs,
	"cell": func(res *Results, task, model string) TaskScore {
		s, _ := res.summary(model)
		return s.Tasks[task]
	},
	"rows": func(res *Results, model string) []Row {
		var out []Row
		for _, r := range res.Runs {
			if r.Model == model {
				out = append(out, r)
			}
		}
		return out
	},
	"why": failure,
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>guiagent eval: {{.Suite}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}
.pass{background:#e3f6e3}.fail{background:#fbe3e3}.setup{background:#fff3d6}.none{color:#999}
.num{text-align:right}
</style></head><body>
<h1>{{.Suite}}</h1>
<p>{{len .Runs}} runs · {{len .Tasks}} tasks · {{len .Models}} models · {{.Repeat}} repeats · {{.Parallel}} at a time · {{secs .WallMillis}} · started {{.Started.Format "2006-01-02 15:04:05 MST"}}{{if .Interrupted}} · <strong>interrupted: partial results</strong>{{end}}</p>
<h2>Models</h2>
<table><tr><th>model</th><th>pass rate</th><th>pass@k</th><th>pass^k</th><th>k</th><th>scored</th><th>setup errors</th><th>median steps</th><th>median calls</th><th>median tokens</th><th>median time</th><th>median model time</th></tr>
{{range .Summary}}<tr><td>{{.Model}}</td><td class="num">{{pct .PassRate}} ({{.Passed}}/{{.Scored}})</td><td class="num">{{pct .PassAtK}}</td><td class="num">{{pct .PassHatK}}</td><td class="num">{{.K}}</td><td class="num">{{.Scored}}</td><td class="num">{{.SetupErrors}}</td><td class="num">{{.MedianSteps}}</td><td class="num">{{.MedianModelCalls}}</td><td class="num">{{.MedianTokens}}</td><td class="num">{{secs .MedianWallMillis}}</td><td class="num">{{secs .MedianModelMillis}}</td></tr>
{{end}}</table>
<h2>Tasks by model</h2>
<table><tr><th>task</th>{{range .Models}}<th>{{.}}</th>{{end}}</tr>
{{$res := .}}{{range $t := .Tasks}}<tr><td>{{$t}}</td>{{range $m := $res.Models}}{{$c := cell $res $t $m}}<td class="{{if $c.SetupErrors}}setup{{else if eq $c.Scored 0}}none{{else if eq $c.Passed $c.Scored}}pass{{else}}fail{{end}}">{{$c.Passed}}/{{$c.Scored}}{{if $c.SetupErrors}} · {{$c.SetupErrors}} setup errors{{end}}</td>{{end}}</tr>
{{end}}</table>
{{range $m := .Models}}<h2>{{$m}}</h2>
<table><tr><th>task</th><th>#</th><th>result</th><th>ending</th><th>steps</th><th>calls</th><th>tokens in/out</th><th>time</th><th>model time</th><th>why</th><th>record</th></tr>
{{range rows $res $m}}<tr class="{{if .Pass}}pass{{else if eq .Ending "setup_error"}}setup{{else}}fail{{end}}"><td>{{.Task}}</td><td class="num">{{.Repeat}}</td><td>{{if .Pass}}pass{{else}}fail{{end}}</td><td>{{.Ending}}</td><td class="num">{{.Steps}}</td><td class="num">{{.ModelCalls}}</td><td class="num">{{.InputTokens}}/{{.OutputTokens}}</td><td class="num">{{secs .WallMillis}}</td><td class="num">{{secs .ModelMillis}}</td><td>{{if not .Pass}}{{why .}}{{end}}</td><td>{{if .Report}}<a href="{{.Report}}">report</a>{{end}} <a href="{{.Dir}}/setup.log">setup log</a>{{if .Trajectory}} <a href="{{.Trajectory}}">trajectory</a>{{end}}</td></tr>
{{end}}</table>
{{end}}</body></html>
`))

// WriteHTML writes the one-file HTML summary of res.
func WriteHTML(w io.Writer, res *Results) error { return summaryTemplate.Execute(w, res) }

// secs shows milliseconds (int64 or float64) as seconds.
func secs(ms any) string {
	var v float64
	switch m := ms.(type) {
	case int64:
		v = float64(m)
	case float64:
		v = m
	}
	return fmt.Sprintf("%.1f s", v/1000)
}
