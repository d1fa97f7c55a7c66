package imaging
import ("context";"syscall";"testing";"time";"github.com/guiagent/guiagent/internal/geom")
func cpuNow() time.Duration { var r syscall.Rusage; syscall.Getrusage(0,&r); return time.Duration(r.Utime.Nano()+r.Stime.Nano()) }
func TestCPUTmp(t *testing.T){
 for _, c := range []struct{d geom.Display; o Options}{{geom.Display{ID:"0",Bounds:geom.Rect{W:1920,H:1080}},Options{MaxLongEdge:1280}},{geom.Display{ID:"0",Bounds:geom.Rect{W:3840,H:2160}},Options{}}} {
  ps:=c.d.PhysicalSize(); s:=newTestScreen(c.d,busyScreen(ps.W,ps.H,1)); p:=NewPipeline()
  var tc,ts,te time.Duration
  p.Shoot(context.Background(),s,c.d,geom.Rect{},c.o,"")
  c0:=cpuNow(); n:=20
  for range n { sh,_:=p.Shoot(context.Background(),s,c.d,geom.Rect{},c.o,""); tc+=sh.Timing.Capture; ts+=sh.Timing.Scale; te+=sh.Timing.Encode }
  t.Logf("%v: CPU %.1f ms/shot; wall capture %.1f scale %.1f encode %.1f", c.d.Bounds, float64((cpuNow()-c0).Microseconds())/1000/float64(n), float64(tc.Microseconds())/1000/float64(n), float64(ts.Microseconds())/1000/float64(n), float64(te.Microseconds())/1000/float64(n))
 }
}
