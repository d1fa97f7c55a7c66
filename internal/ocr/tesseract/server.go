package tesseract

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// server is one running tesseract process that reads image paths from its
// standard input, one per line (-c stream_filelist=1), and writes each
// page's TSV to its standard output as soon as the page is done. After each
// batch of images the server is sent a small blank sentinel image: the
// sentinel's page row marks the end of the batch's rows.
type server struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	lines    chan string   // standard output, line by line; closed at its end
	exited   chan struct{} // closed when the process has ended
	stderr   *tail
	base     string // its image files are base-K.pnm, rewritten for each batch
	sentinel string
	pages    int // pages it has read, the sentinels included
	waitErr  error
}

// startServer starts binary with args (which must read a file list from
// standard input and write TSV to standard output). Its images go to files
// named base-K.pnm.
func startServer(binary string, args []string, base, sentinel string) (*server, error) {
	cmd := exec.Command(binary, args...)
	// One thread per process: the engine runs a process per core itself, and
	// OpenMP's spinning threads only slow a shared machine down.
	cmd.Env = append(cmd.Environ(), "OMP_THREAD_LIMIT=1")
	s := &server{cmd: cmd, lines: make(chan string, 256), exited: make(chan struct{}), stderr: &tail{max: 4096},
		base: base, sentinel: sentinel}
	cmd.Stderr = s.stderr
	var err error
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// file is the path of the server's k-th image file.
func (s *server) file(k int) string {
	return s.base + "-" + strconv.Itoa(k) + ".pnm"
}

// read has the server read the n images now in its files 0 to n-1 and
// returns each one's TSV rows (the header lines left out).
func (s *server) read(ctx context.Context, n int) ([][][]string, error) {
	var list strings.Builder
	for k := range n {
		list.WriteString(s.file(k) + "\n")
	}
	list.WriteString(s.sentinel + "\n")
	if _, err := io.WriteString(s.stdin, list.String()); err != nil {
		return nil, s.failure(fmt.Errorf("send images to tesseract: %w", err))
	}
	first := s.pages + 1 // tesseract numbers the pages of its whole stream
	pages := make([][][]string, n)
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case l, ok := <-s.lines:
			if !ok {
				return nil, s.failure(errors.New("tesseract closed its output"))
			}
			f := strings.Split(l, "\t")
			if len(f) < 12 || f[0] == "level" {
				continue
			}
			p, err := strconv.Atoi(f[1])
			if err != nil {
				continue
			}
			switch k := p - first; {
			case k >= 0 && k < n:
				pages[k] = append(pages[k], f)
			case k == n && f[0] == "1":
				s.pages += n + 1
				return pages, nil
			}
		}
	}
}

// failure describes err with how the process ended and what it last said.
func (s *server) failure(err error) error {
	select {
	case <-s.exited:
		err = fmt.Errorf("%w (tesseract exited: %v)", err, s.waitErr)
	case <-time.After(200 * time.Millisecond):
	}
	if msg := strings.TrimSpace(s.stderr.String()); msg != "" {
		err = fmt.Errorf("%w; it said: %s", err, msg)
	}
	return err
}

// ended reports whether the process has ended.
func (s *server) ended() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// stop ends the process and waits for it.
func (s *server) stop() {
	go drain(s.lines)
	s.stdin.Close() // a server reading its list ends at the end of it
	select {
	case <-s.exited:
	case <-time.After(2 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.removeFiles()
}

// kill ends the process at once (a read was abandoned half way).
func (s *server) kill() {
	go drain(s.lines)
	s.cmd.Process.Kill()
	<-s.exited
	s.removeFiles()
}

// removeFiles removes the server's image files (as many as its largest
// batch had).
func (s *server) removeFiles() {
	files, _ := filepath.Glob(s.base + "-*.pnm")
	for _, f := range files {
		os.Remove(f)
	}
}

// drain reads lines to their end, so the goroutine writing them ends.
func drain(lines <-chan string) {
	for range lines {
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Tesseract reports each page on standard error; only the rest is news.
	var keep []string
	for _, l := range strings.Split(string(t.b), "\n") {
		if !strings.HasPrefix(l, "Page ") && strings.TrimSpace(l) != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > 5 {
		keep = keep[len(keep)-5:]
	}
	return strings.Join(keep, "; ")
}
