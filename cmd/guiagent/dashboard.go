package main

import (
	"io"
	"net"
	"net/http"
)

// dashboard returns the live dashboard handler and a listen callback that
// prints its one-time login link. Filled in when internal/web lands.
func (a *app) dashboard(token string, stderr io.Writer) (http.Handler, func(net.Addr)) {
	return nil, nil
}
