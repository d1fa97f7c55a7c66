package tesseract

import (
	"bufio"
	"fmt"
	"image"
	"os"
	"strconv"
	"strings"
)

// tsvWord is one word row of Tesseract's TSV output.
type tsvWord struct {
	text string
	box  image.Rectangle // pixels of the image read
	conf float64
	line string // block, paragraph and line number: the words of one line share it
}

// parseWords reads the word rows (level 5) of TSV rows: level, page_num,
// block_num, par_num, line_num, word_num, left, top, width, height, conf,
// text. Rows with no text or a negative confidence are left out.
func parseWords(rows [][]string) []tsvWord {
	var out []tsvWord
	for _, f := range rows {
		if len(f) < 12 || f[0] != "5" {
			continue
		}
		text := strings.TrimSpace(strings.Join(f[11:], "\t"))
		conf, err := strconv.ParseFloat(f[10], 64)
		if text == "" || err != nil || conf < 0 {
			continue
		}
		var n [4]int
		ok := true
		for i := range n {
			if n[i], err = strconv.Atoi(f[6+i]); err != nil {
				ok = false
			}
		}
		if !ok || n[2] <= 0 || n[3] <= 0 {
			continue
		}
		out = append(out, tsvWord{text: text, box: image.Rect(n[0], n[1], n[0]+n[2], n[1]+n[3]), conf: conf,
			line: f[2] + "." + f[3] + "." + f[4]})
	}
	return out
}

// writePNM writes img to path as a binary PGM (gray) or PPM: formats
// Tesseract reads with no decoding cost and no loss.
func writePNM(path string, img image.Image, gray bool) error {
	switch img.(type) {
	case *image.Gray:
		if !gray {
			return fmt.Errorf("write an OCR image: a gray image cannot be written as colour")
		}
	case *image.RGBA:
		if gray {
			return fmt.Errorf("write an OCR image: a colour image cannot be written as gray")
		}
	default:
		return fmt.Errorf("write an OCR image: unsupported image type %T", img)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write an OCR image: %w", err)
	}
	w := bufio.NewWriterSize(f, 256*1024)
	b := img.Bounds()
	magic := "P6"
	if gray {
		magic = "P5"
	}
	fmt.Fprintf(w, "%s\n%d %d\n255\n", magic, b.Dx(), b.Dy())
	switch m := img.(type) {
	case *image.Gray:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			w.Write(m.Pix[m.PixOffset(b.Min.X, y) : m.PixOffset(b.Min.X, y)+b.Dx()])
		}
	case *image.RGBA:
		row := make([]byte, 3*b.Dx())
		for y := b.Min.Y; y < b.Max.Y; y++ {
			src := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := range b.Dx() {
				copy(row[3*x:3*x+3], src[4*x:4*x+3])
			}
			w.Write(row)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write an OCR image: %w", err)
	}
	return f.Close()
}
