package bench

import "testing"

func TestParseHeapReading(t *testing.T) {
	metrics := "# HELP go_memstats_heap_alloc_bytes x\ngo_memstats_heap_alloc_bytes 1.2e+08\ngo_memstats_heap_alloc_bytes_total 9\n" +
		"go_memstats_heap_inuse_bytes 1.9111168e+08\ngo_memstats_heap_idle_bytes 5\n"
	h, err := parseHeapReading(metrics)
	if err != nil {
		t.Fatal(err)
	}
	if h.Inuse != 191111680 || h.Live != 120000000 {
		t.Errorf("got %+v, want in use 191111680 and live 120000000", h)
	}
	if _, err := parseHeapReading("go_memstats_heap_inuse_bytes 1\n"); err == nil {
		t.Errorf("metrics without the live heap were accepted")
	}
}
