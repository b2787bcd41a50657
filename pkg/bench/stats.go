package bench

import (
	"math"
	"sort"
	"time"
)

// Latency summarises a sample of durations, in milliseconds.
type Latency struct {
	Count int     `json:"count"`
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

func summarize(samples []time.Duration) Latency {
	if len(samples) == 0 {
		return Latency{}
	}
	s := append([]time.Duration(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Latency{
		Count: len(s),
		Min:   ms(s[0]),
		P50:   ms(percentile(s, 50)),
		P90:   ms(percentile(s, 90)),
		P99:   ms(percentile(s, 99)),
		Max:   ms(s[len(s)-1]),
		Mean:  ms(sum / time.Duration(len(s))),
	}
}

// percentile is the nearest-rank percentile of a sorted sample.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// Spread is min/median/max of a figure over repeats.
type Spread struct {
	Values []float64 `json:"values"`
	Min    float64   `json:"min"`
	Median float64   `json:"median"`
	Max    float64   `json:"max"`
}

func spread(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	median := s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Values: values, Min: s[0], Median: round(median, 3), Max: s[len(s)-1]}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round(a/b, 3)
}
