package desktop

import "context"

// Evaluator is a backend whose page can evaluate JavaScript (the browser):
// Evaluate runs expression in the active tab's page, awaits a promise it
// returns, and gives the value as JSON would hold it. Only what a person
// allowed asks it (guiagent run --allow-javascript for a Midscene script's
// javascript items); no tool offers it to a model.
type Evaluator interface {
	Evaluate(ctx context.Context, expression string) (any, error)
}

// CookieSetter is a backend with cookies (the browser): SetCookies stores
// each cookie, given as the DevTools protocol's CookieParam object (name,
// value, domain or url, path, expires, httpOnly, secure, sameSite), in the
// browser context guiagent works in.
type CookieSetter interface {
	SetCookies(ctx context.Context, cookies []map[string]any) error
}
