// Package kubernetes holds guiagent's Kubernetes manifests (a StatefulSet of
// desktop servers behind a headless Service, a NetworkPolicy, a kustomization,
// and the per-session overlay) and the test that decodes every one of them
// strictly with the Kubernetes API types and checks them against the server.
package kubernetes
