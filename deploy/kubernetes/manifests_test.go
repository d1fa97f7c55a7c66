package kubernetes

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/hosting"
	_ "github.com/guiagent/guiagent/internal/llm/providers" // the providers the binary links
	"github.com/guiagent/guiagent/internal/mcpserver"
)

// kustomization is the part of kustomize's Kustomization the manifests use;
// decoding is strict, so a field it does not know is an error.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels,omitempty"`
	Resources       []string `json:"resources"`
	SecretGenerator []struct {
		Name  string   `json:"name"`
		Files []string `json:"files"`
	} `json:"secretGenerator,omitempty"`
	ConfigMapGenerator []struct {
		Name     string   `json:"name"`
		Literals []string `json:"literals"`
	} `json:"configMapGenerator,omitempty"`
	Patches []struct {
		Path string `json:"path"`
	} `json:"patches,omitempty"`
}

// decoder decodes apps/v1, v1 and networking/v1 objects strictly: unknown
// and duplicate fields are errors.
func decoder() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, corev1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}

// deployment is one kustomization folder, decoded.
type deployment struct {
	k       kustomization
	objects map[string]runtime.Object // by file name
}

func load(t *testing.T, dir string) deployment {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d := deployment{objects: map[string]runtime.Object{}}
	if err := yaml.UnmarshalStrict(b, &d.k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	if d.k.APIVersion != "kustomize.config.k8s.io/v1beta1" || d.k.Kind != "Kustomization" {
		t.Errorf("%s/kustomization.yaml: apiVersion %q kind %q", dir, d.k.APIVersion, d.k.Kind)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	dec := decoder()
	for _, f := range files {
		name := filepath.Base(f)
		if name == "kustomization.yaml" {
			continue
		}
		listed := slices.Contains(d.k.Resources, name) || slices.ContainsFunc(d.k.Patches, func(p struct {
			Path string `json:"path"`
		}) bool {
			return p.Path == name
		})
		if !listed {
			t.Errorf("%s is in %s but not in its kustomization (resources or patches)", name, dir)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := dec.Decode(b, nil, nil)
		if err != nil {
			t.Errorf("%s: strict decoding: %v", f, err)
			continue
		}
		d.objects[name] = obj
	}
	for _, r := range d.k.Resources {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			t.Errorf("%s/kustomization.yaml lists %s: %v", dir, r, err)
		}
	}
	return d
}

func only[T runtime.Object](t *testing.T, d deployment) T {
	t.Helper()
	var found []T
	for _, o := range d.objects {
		if v, ok := o.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("want one %T, found %d", zero, len(found))
	}
	return found[0]
}

// serverEnv is what the container's environment gives guiagent: literal
// values, the ConfigMap's literals, and stand-ins for the Secret's keys.
func serverEnv(t *testing.T, k kustomization, c corev1.Container) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			t.Fatalf("envFrom other than a ConfigMap: %+v", from)
		}
		var found bool
		for _, g := range k.ConfigMapGenerator {
			if g.Name == from.ConfigMapRef.Name {
				found = true
				for _, l := range g.Literals {
					key, v, _ := strings.Cut(l, "=")
					env[key] = v
				}
			}
		}
		if !found {
			t.Errorf("envFrom names ConfigMap %q, which the kustomization does not generate", from.ConfigMapRef.Name)
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "stand-in-secret-0123456789abcdef"
		case e.ValueFrom != nil:
			t.Errorf("env %s comes from neither a value nor a Secret", e.Name)
		default:
			env[e.Name] = e.Value
		}
	}
	return env
}

// The StatefulSet, its headless Service, the Secret references, the probes,
// the security context and the NetworkPolicy agree with each other and with
// the server: its flag parser accepts the arguments, the port is the one it
// listens on, and the probe paths answer without a token.
func TestManifests(t *testing.T) {
	d := load(t, ".")
	sts := only[*appsv1.StatefulSet](t, d)
	svc := only[*corev1.Service](t, d)
	np := only[*networkingv1.NetworkPolicy](t, d)
	pod := sts.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]

	// The headless Service names the StatefulSet's pods.
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || sts.Spec.ServiceName != svc.Name {
		t.Errorf("service %q clusterIP %q; StatefulSet serviceName %q: want a headless Service the StatefulSet names", svc.Name, svc.Spec.ClusterIP, sts.Spec.ServiceName)
	}
	for k, v := range svc.Spec.Selector {
		if pod.Labels[k] != v || sts.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods (%v) or the StatefulSet selector lacks", k, v, pod.Labels)
		}
	}

	// The server accepts its arguments and environment, and listens on the port.
	env := serverEnv(t, d.k, c)
	cfg, rest, err := config.Load("serve", c.Args[1:], func(k string) string { return env[k] })
	if err != nil || c.Args[0] != "serve" || len(rest) != 0 {
		t.Fatalf("guiagent %v with the manifest's environment: %v (rest %v)", c.Args, err, rest)
	}
	_, portStr, _ := net.SplitHostPort(cfg.HTTPAddr)
	port, _ := strconv.Atoi(portStr)
	mcpPort := containerPort(t, c, "mcp")
	if !cfg.HTTP || mcpPort != int32(port) {
		t.Errorf("the server listens on %s (http %v), the container port mcp is %d", cfg.HTTPAddr, cfg.HTTP, mcpPort)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != mcpPort || svc.Spec.Ports[0].TargetPort != intstr.FromString("mcp") {
		t.Errorf("service ports %+v: want one port %d targeting mcp", svc.Spec.Ports, mcpPort)
	}

	checkSecrets(t, d.k, c)
	checkProbes(t, c)
	checkSecurity(t, pod.Spec, c, cfg)
	checkResources(t, c)
	checkNetworkPolicy(t, np, pod.Labels, mcpPort)
}

func containerPort(t *testing.T, c corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named %s", c.Name, name)
	return 0
}

// checkSecrets: the token and the API key come from keys the kustomization's
// Secret really has.
func checkSecrets(t *testing.T, k kustomization, c corev1.Container) {
	t.Helper()
	keys := map[string]map[string]bool{}
	for _, g := range k.SecretGenerator {
		keys[g.Name] = map[string]bool{}
		for _, f := range g.Files {
			key, _, _ := strings.Cut(f, "=")
			keys[g.Name][key] = true
		}
	}
	for _, want := range []string{"GUI_AGENT_HTTP_TOKEN", "GUI_AGENT_API_KEY"} {
		var ref *corev1.SecretKeySelector
		for _, e := range c.Env {
			if e.Name == want && e.ValueFrom != nil {
				ref = e.ValueFrom.SecretKeyRef
			}
		}
		if ref == nil {
			t.Errorf("%s does not come from a Secret", want)
			continue
		}
		if !keys[ref.Name][ref.Key] {
			t.Errorf("%s comes from Secret %s key %s, which the kustomization's secretGenerator does not make (%v)", want, ref.Name, ref.Key, keys)
		}
	}
}

// checkProbes: liveness and readiness point at the server's real endpoints,
// which answer 200 without a token.
func checkProbes(t *testing.T, c corev1.Container) {
	t.Helper()
	srv, err := mcpserver.New(mcpserver.Options{Screen: fake.New(fake.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.NewHTTPHandler(hosting.HTTPOptions{Token: "probe-test-token-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe, "startup": c.StartupProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: want an HTTP GET probe", name)
			continue
		}
		if p.HTTPGet.Port != intstr.FromString("mcp") {
			t.Errorf("%s probe port %v, want the mcp port", name, p.HTTPGet.Port.String())
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), http.MethodGet, "http://127.0.0.1:60008"+p.HTTPGet.Path, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("%s probe GET %s: the server answers %d %q", name, p.HTTPGet.Path, rec.Code, rec.Body.String())
		}
	}
	if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != hosting.ReadyzPath {
		t.Errorf("readiness probe %s, want %s (it checks the desktop)", c.ReadinessProbe.HTTPGet.Path, hosting.ReadyzPath)
	}
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != hosting.HealthzPath {
		t.Errorf("liveness probe %s, want %s (a slow desktop must not restart the pod)", c.LivenessProbe.HTTPGet.Path, hosting.HealthzPath)
	}
}

// checkSecurity: non-root, no privilege escalation, no capabilities, a
// read-only root filesystem with emptyDirs where guiagent and Xvfb write.
func checkSecurity(t *testing.T, spec corev1.PodSpec, c corev1.Container, cfg config.Config) {
	t.Helper()
	psc, sc := spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod security context %+v: want runAsNonRoot and a non-zero runAsUser", psc)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container security context %+v: want a read-only root filesystem, no privilege escalation, all capabilities dropped", sc)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("the pod mounts a service account token it never uses")
	}
	emptyDirs := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.EmptyDir != nil {
			emptyDirs[v.Name] = true
		}
	}
	writable := map[string]bool{}
	for _, m := range c.VolumeMounts {
		if emptyDirs[m.Name] && !m.ReadOnly {
			writable[m.MountPath] = true
		}
	}
	// Xvfb's socket and lock, and the run records with the state directory.
	under := func(dir string) bool {
		for m := range writable {
			if dir == m || strings.HasPrefix(dir, strings.TrimSuffix(m, "/")+"/") {
				return true
			}
		}
		return false
	}
	for _, dir := range []string{"/tmp", cfg.RunsDir, cfg.StateDir} {
		if !under(dir) {
			t.Errorf("%s must be a writable emptyDir on a read-only root filesystem (mounted: %v)", dir, writable)
		}
	}
}

func checkResources(t *testing.T, c corev1.Container) {
	t.Helper()
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := c.Resources.Requests[r]
		lim, okLim := c.Resources.Limits[r]
		if !okReq || !okLim || req.Cmp(lim) > 0 {
			t.Errorf("%s: request %v limit %v: want both, request <= limit", r, req.String(), lim.String())
		}
	}
}

// checkNetworkPolicy: it selects the pods, lets in the MCP port only, and
// lets out DNS and HTTPS (the model endpoint) only.
func checkNetworkPolicy(t *testing.T, np *networkingv1.NetworkPolicy, podLabels map[string]string, mcpPort int32) {
	t.Helper()
	for k, v := range np.Spec.PodSelector.MatchLabels {
		if podLabels[k] != v {
			t.Errorf("the NetworkPolicy selects %s=%s, the pods have %v", k, v, podLabels)
		}
	}
	if len(np.Spec.PodSelector.MatchLabels) == 0 || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Errorf("the NetworkPolicy must select the pods and restrict both Ingress and Egress: %+v", np.Spec)
	}
	for _, in := range np.Spec.Ingress {
		if len(in.Ports) == 0 {
			t.Errorf("an ingress rule allows every port")
		}
		for _, p := range in.Ports {
			if p.Port == nil || p.Port.IntVal != mcpPort {
				t.Errorf("ingress allows port %v, want only %d", p.Port, mcpPort)
			}
		}
	}
	if len(np.Spec.Ingress) == 0 {
		t.Errorf("no ingress rule: the MCP port is closed")
	}
	for _, out := range np.Spec.Egress {
		if len(out.Ports) == 0 || len(out.To) == 0 {
			t.Errorf("an egress rule allows every port or every destination: %+v", out)
		}
		for _, p := range out.Ports {
			if p.Port == nil || (p.Port.IntVal != 53 && p.Port.IntVal != 443) {
				t.Errorf("egress allows port %v, want only DNS (53) and the model endpoint (443)", p.Port)
			}
		}
		for _, to := range out.To {
			if to.IPBlock != nil && (to.IPBlock.CIDR == "0.0.0.0/0" || to.IPBlock.CIDR == "::/0") {
				t.Errorf("egress to %s is everywhere, not the model endpoint", to.IPBlock.CIDR)
			}
		}
	}
}

// The per-session overlay patches the StatefulSet into one pod per node
// serving a desktop per session; the server accepts its arguments.
func TestPerSessionOverlay(t *testing.T) {
	base := load(t, ".")
	d := load(t, "per-session")
	if !slices.Contains(d.k.Resources, "../") {
		t.Errorf("the overlay does not build on the base: resources %v", d.k.Resources)
	}
	patch := only[*appsv1.StatefulSet](t, d)
	sts := only[*appsv1.StatefulSet](t, base)
	if patch.Name != sts.Name || len(patch.Spec.Template.Spec.Containers) != 1 || patch.Spec.Template.Spec.Containers[0].Name != sts.Spec.Template.Spec.Containers[0].Name {
		t.Fatalf("the patch does not address the base StatefulSet's container")
	}
	c := sts.Spec.Template.Spec.Containers[0]
	pc := patch.Spec.Template.Spec.Containers[0]
	c.Args, c.Resources = pc.Args, pc.Resources
	env := serverEnv(t, base.k, c)
	cfg, _, err := config.Load("serve", c.Args[1:], func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("guiagent %v: %v", c.Args, err)
	}
	if cfg.DesktopPerSession.W == 0 || cfg.MaxDesktops < 2 {
		t.Errorf("the overlay's server has desktop-per-session %v and max-desktops %d", cfg.DesktopPerSession, cfg.MaxDesktops)
	}
	checkResources(t, c)
	aff := patch.Spec.Template.Spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != corev1.LabelHostname {
		t.Errorf("the overlay must keep one pod per node (required anti-affinity on %s): %+v", corev1.LabelHostname, aff)
	}
}
