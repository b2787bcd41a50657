package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestWriteSection(t *testing.T) {
	const section = "## Chaos\n\nfigures\n"
	for _, tc := range []struct {
		name, before, want string
	}{
		{"new file", "", "# Reliability\n\nHow tapp-apiserver behaves under failure, measured.\n\n" + section},
		{"appended after another section", "# R\n\n## Hostile and careless clients\n\ntheirs\n",
			"# R\n\n## Hostile and careless clients\n\ntheirs\n\n" + section},
		{"replaced, the sections around it kept", "# R\n\n## Chaos\n\nold\n\n### sub\n\nold too\n\n## Hostile and careless clients\n\ntheirs\n",
			"# R\n\n" + section + "\n## Hostile and careless clients\n\ntheirs\n"},
		{"replaced at the end", "# R\n\n## Before\n\nx\n\n## Chaos\n\nold\n",
			"# R\n\n## Before\n\nx\n\n" + section},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reliability.md")
			if tc.before != "" {
				if err := os.WriteFile(path, []byte(tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteSection(path, section); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func pod(name string, uid types.UID, deleting bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return p
}

func TestIdentityWatch(t *testing.T) {
	type event struct {
		pod  *corev1.Pod
		gone bool
		// wanted, when not nil, is set before the event.
		wanted map[string]bool
	}
	for _, tc := range []struct {
		name                                 string
		events                               []event
		wantGaps, wantDeleted, wantRecreated int
	}{
		{name: "created, updated, asked to go", events: []event{
			{pod: pod("a", "1", false), wanted: map[string]bool{"a": true}},
			{pod: pod("a", "1", false)},
			{pod: pod("a", "1", true), wanted: map[string]bool{}},
			{pod: pod("a", "1", true), gone: true},
		}},
		{name: "deleted while wanted and recreated", events: []event{
			{pod: pod("a", "1", false), wanted: map[string]bool{"a": true}},
			{pod: pod("a", "1", true)},
			{pod: pod("a", "1", false), gone: true},
			{pod: pod("a", "2", false)},
		}, wantGaps: 1, wantDeleted: 1, wantRecreated: 1},
		{name: "a second pod while the first is live", events: []event{
			{pod: pod("a", "1", false), wanted: map[string]bool{"a": true}},
			{pod: pod("a", "2", false)},
		}, wantRecreated: 1},
		{name: "killed, then wanted again and created", events: []event{
			{pod: pod("a", "1", false), wanted: map[string]bool{"a": true}},
			{pod: pod("a", "1", true), wanted: map[string]bool{}},
			{pod: pod("a", "2", false), wanted: map[string]bool{"a": true}},
		}},
		{name: "unnamed objects ignored", events: []event{
			{pod: pod("other", "1", true), wanted: map[string]bool{"a": true}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newIdentityWatch(func(o metav1.Object) (string, bool) { return o.GetName(), o.GetName() != "other" })
			for _, e := range tc.events {
				if e.wanted != nil {
					wanted := e.wanted
					w.setWanted(func(k string) bool { return wanted[k] })
				}
				w.observe(e.pod, e.gone || podGone(e.pod))
			}
			c := w.counts()
			if c.Gaps != tc.wantGaps || len(c.Deletions) != tc.wantDeleted || len(c.Recreations) != tc.wantRecreated {
				t.Errorf("gaps %d, deletions %v, recreations %v; want %d, %d, %d", c.Gaps, c.Deletions, c.Recreations,
					tc.wantGaps, tc.wantDeleted, tc.wantRecreated)
			}
		})
	}
}

func TestTargetsAndMarkdown(t *testing.T) {
	res := &Results{
		Options:     DefaultOptions(),
		Controllers: &ControllerKillResult{Kills: 50, Phases: []PhaseResult{{Name: "scale", Converged: true}}},
		Server:      &ServerKillResult{Kills: 20, Acknowledged: 10},
		Started:     time.Unix(0, 0),
	}
	if m := res.Targets(); len(m) != 0 {
		t.Errorf("targets missed on a clean run: %v", m)
	}
	res.Command = "make chaos"
	md := res.Markdown()
	for _, want := range []string{SectionHeading + "\n", "Every target was met", "| acknowledged writes lost | 0 | 0 |", "### kube-apiserver restart during a rollout\n\nNot run."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	res.Server.Lost, res.Controllers.FinalState = 1, "instance 3 has 0 pods"
	res.Controllers.Pods.Deletions = []string{"3"}
	if m := res.Targets(); len(m) != 3 {
		t.Errorf("targets missed = %v, want 3", m)
	}
}

func TestHATargetsAndMarkdown(t *testing.T) {
	res := &Results{
		Options:     DefaultOptions(),
		HAServer:    &ServerKillResult{Kills: 20, Acknowledged: 10},
		EtcdMembers: &EtcdMemberResult{MemberKills: 6, Acknowledged: 10, QuorumWrites: 5, Answered5xx: 5, Pods: 3},
		Command:     "make chaos (HA form)",
		Started:     time.Unix(0, 0),
	}
	if !res.HA() {
		t.Fatal("an HA run is not HA")
	}
	if m := res.Targets(); len(m) != 0 {
		t.Errorf("targets missed on a clean run: %v", m)
	}
	md := res.HAMarkdown()
	for _, want := range []string{HAHeading + "\n", "Every target was met", "#### Server kills in HA mode", "#### etcd member kill",
		"| no quorum: writes answered 5xx / succeeded / hung / other | 5 / 0 / 0 / 0 | all 5xx |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	res.HAServer.RVBackwards = 1
	res.EtcdMembers.Answered5xx, res.EtcdMembers.Hung = 4, 1
	res.EtcdMembers.PodsDeleted = []string{"survivor-0"}
	res.EtcdMembers.Abandoned = []string{"w0-3: create not acknowledged"}
	if m := res.Targets(); len(m) != 4 {
		t.Errorf("targets missed = %v, want 4", m)
	}
}

// The single-replica part and the HA part of the Chaos section are rewritten independently.
func TestWriteHASection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reliability.md")
	const hostile = "## Hostile and careless clients\n\ntheirs\n"
	if err := os.WriteFile(path, []byte("# R\n\n## Chaos\n\nsingle\n\n"+hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	steps := []struct {
		write func() error
		want  string
	}{
		{func() error { return WriteHASection(path, HAHeading+"\n\nha 1\n") },
			"# R\n\n## Chaos\n\nsingle\n\n" + HAHeading + "\n\nha 1\n\n" + hostile},
		{func() error { return WriteHASection(path, HAHeading+"\n\n#### sub\n\nha 2\n") },
			"# R\n\n## Chaos\n\nsingle\n\n" + HAHeading + "\n\n#### sub\n\nha 2\n\n" + hostile},
		{func() error { return WriteSection(path, "## Chaos\n\nsingle 2\n\n### sub\n\nx\n") },
			"# R\n\n## Chaos\n\nsingle 2\n\n### sub\n\nx\n\n" + HAHeading + "\n\n#### sub\n\nha 2\n\n" + hostile},
	}
	for i, st := range steps {
		if err := st.write(); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != st.want {
			t.Errorf("step %d: got\n%q\nwant\n%q", i, got, st.want)
		}
	}
}
