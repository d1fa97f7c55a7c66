package windows

import "testing"

// BenchmarkBGRAToRGBA1080p converts one 1920x1080 capture in place.
func BenchmarkBGRAToRGBA1080p(b *testing.B) {
	pix := make([]byte, 1920*1080*4)
	b.SetBytes(int64(len(pix)))
	for b.Loop() {
		bgraToRGBA(pix)
	}
}

// BenchmarkBuildLayout builds a three-monitor mixed-DPI layout, which every
// input and capture call does.
func BenchmarkBuildLayout(b *testing.B) {
	ms := []physMonitor{
		{Name: "a", Rect: physRect{0, 0, 3840, 2160}, DPI: 144, Primary: true},
		{Name: "b", Rect: physRect{-1920, 0, 1920, 1080}, DPI: 96},
		{Name: "c", Rect: physRect{3840, 0, 2560, 1440}, DPI: 120},
	}
	for b.Loop() {
		if _, err := buildLayout(ms); err != nil {
			b.Fatal(err)
		}
	}
}
