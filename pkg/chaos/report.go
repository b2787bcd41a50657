package chaos

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// SectionHeading is the heading of the section of docs/reliability.md that Markdown renders; WriteSection
// replaces that section only.
const SectionHeading = "## Chaos"

// Targets says whether the run met the targets, and if not, why.
func (r *Results) Targets() []string {
	return append(r.chaosTargets(), r.Soak.misses()...)
}

// chaosTargets are the missed targets of every scenario but the soak.
func (r *Results) chaosTargets() []string {
	var misses []string
	if c := r.Controllers; c != nil {
		if n := len(c.Pods.Deletions) + len(c.Children.Deletions); n > 0 {
			misses = append(misses, fmt.Sprintf("controller kills: %d unexpected deletions: %v %v", n, c.Pods.Deletions, c.Children.Deletions))
		}
		if n := len(c.Pods.Recreations) + len(c.Children.Recreations) + len(c.UpdateRecreated); n > 0 {
			misses = append(misses, fmt.Sprintf("controller kills: %d recreations: %v %v %v", n, c.Pods.Recreations, c.Children.Recreations, c.UpdateRecreated))
		}
		if c.Pods.Gaps > 0 {
			misses = append(misses, fmt.Sprintf("controller kills: %d instances had no pod while wanted", c.Pods.Gaps))
		}
		if c.FinalState != "" {
			misses = append(misses, "controller kills: final state: "+c.FinalState)
		}
		if len(c.LeftBehind) > 0 {
			misses = append(misses, fmt.Sprintf("controller kills: left behind: %v", c.LeftBehind))
		}
		for _, p := range c.Phases {
			if !p.Converged {
				misses = append(misses, fmt.Sprintf("controller kills: phase %q did not converge: %s", p.Name, p.Problem))
			}
		}
	}
	misses = append(misses, r.Server.misses("server kills")...)
	misses = append(misses, r.HAServer.misses("server kills in HA mode")...)
	if e := r.EtcdMembers; e != nil {
		if e.Lost > 0 {
			misses = append(misses, fmt.Sprintf("etcd member kills: %d acknowledged writes lost: %v", e.Lost, e.LostWrites))
		}
		if len(e.Abandoned) > 0 {
			misses = append(misses, fmt.Sprintf("etcd member kills: errors beyond retries (writes given up): %v", e.Abandoned))
		}
		if n := e.QuorumWrites - e.Answered5xx; n > 0 {
			misses = append(misses, fmt.Sprintf("etcd member kills: %d of %d writes without quorum not answered 5xx (%d succeeded, %d hung, others: %v)",
				n, e.QuorumWrites, e.Succeeded, e.Hung, e.OtherErrors))
		}
		if n := len(e.PodsDeleted) + len(e.PodsReplaced); n > 0 {
			misses = append(misses, fmt.Sprintf("etcd member kills: pods deleted %v, replaced %v", e.PodsDeleted, e.PodsReplaced))
		}
	}
	if k := r.KubeAPIServer; k != nil {
		if n := len(k.Pods.Deletions) + len(k.Pods.Recreations) + len(k.UIDChanged); n > 0 {
			misses = append(misses, fmt.Sprintf("kube-apiserver restarts: %d duplicate actions: deleted %v, recreated %v, UID changed %v",
				n, k.Pods.Deletions, k.Pods.Recreations, k.UIDChanged))
		}
		if !k.Converged {
			misses = append(misses, "kube-apiserver restarts: the rollout did not finish: "+k.Problem)
		}
	}
	if st := r.Storage; st != nil {
		for _, ph := range st.Phases {
			if ph.Served {
				misses = append(misses, fmt.Sprintf("storage: %s: the wrong store was served", ph.Name))
			}
			if n := len(ph.Deleted) + len(ph.DeletedAfter); n > 0 {
				misses = append(misses, fmt.Sprintf("storage: %s: %d workloads deleted: %v %v", ph.Name, n, ph.Deleted, ph.DeletedAfter))
			}
		}
	}
	return misses
}

// misses are the server scenario's missed targets, nil for a scenario not run.
func (s *ServerKillResult) misses(scenario string) []string {
	if s == nil {
		return nil
	}
	var misses []string
	if s.Lost > 0 {
		misses = append(misses, fmt.Sprintf("%s: %d acknowledged writes lost: %v", scenario, s.Lost, s.LostWrites))
	}
	if len(s.Abandoned) > 0 {
		misses = append(misses, fmt.Sprintf("%s: writes never answered: %v", scenario, s.Abandoned))
	}
	if s.RVBackwards > 0 {
		misses = append(misses, fmt.Sprintf("%s: %d resourceVersions went backwards: %v", scenario, s.RVBackwards, s.RVBackwardsAt))
	}
	return misses
}

// HA says whether the run was of the HA form's scenarios.
func (r *Results) HA() bool { return r.HAServer != nil || r.EtcdMembers != nil }

// Markdown renders the Chaos section of docs/reliability.md.
func (r *Results) Markdown() string {
	var b strings.Builder
	p := func(format string, args ...interface{}) { fmt.Fprintf(&b, format, args...) }
	o := r.Options
	p("%s\n\n", SectionHeading)
	p("`make chaos` (cmd/tapp-chaos, pkg/chaos) starts a local cluster (pkg/localcluster: etcd, kube-apiserver,\n")
	p("kube-controller-manager, kube-scheduler, kwok nodes, tapp-apiserver in cluster mode with its embedded etcd\n")
	p("and controllers), drives each scenario below and rewrites this section. Everything runs on 127.0.0.1 and\n")
	p("every loop is bounded. A short variant of each scenario runs in the end-to-end suite\n")
	p("(test/e2e/chaos_test.go) and asserts the targets. The soak that ends the run has a part of its own\n")
	p("(*Soak*, below).\n\n")
	r.writeRunSummary(&b, r.Took, r.chaosTargets())

	p("### Controller kills\n\n")
	if c := r.Controllers; c != nil {
		p("%d SIGKILLs of tapp-apiserver, which runs the controllers (one replica in the local cluster: a kill is a\n", c.Kills)
		p("kill of the leader and the same process is started again on the same data, without releasing the Lease).\n")
		p("Each kill waits until the new process leads, then a random moment (0–2 s) into its leadership. The kills\n")
		p("are spread over the phases below; every phase's writes are retried while the API is down, and the phase\n")
		p("must converge within %s. Counted from a pod watch (TApp instances) and a Deployment watch (the\n", o.PhaseTimeout)
		p("YurtAppDaemon's children, one per pool):\n\n")
		p("| phase | kills | converged | took |\n|---|---:|---|---:|\n")
		for _, ph := range c.Phases {
			p("| %s | %d | %v | %s |\n", ph.Name, ph.Kills, yesNo(ph.Converged), ph.Took.Round(100*time.Millisecond))
		}
		p("\n| count | result | target |\n|---|---:|---:|\n")
		p("| instances that had no pod while wanted | %d | 0 |\n", c.Pods.Gaps)
		p("| pods deleted that the spec did not ask to delete | %d | 0 |\n", len(c.Pods.Deletions))
		p("| pods recreated instead of updated in place (new UID, same name) | %d | 0 |\n", len(c.Pods.Recreations)+len(c.UpdateRecreated))
		p("| YurtAppDaemon children deleted while their pool was selected | %d | 0 |\n", len(c.Children.Deletions))
		p("| YurtAppDaemon children recreated | %d | 0 |\n", len(c.Children.Recreations))
		p("| objects left behind after deleting the TApp, YurtAppDaemon and pools | %d | 0 |\n", len(c.LeftBehind))
		p("| final state (every instance exactly one pod on its template, every pool one child) | %s | correct |\n", correct(c.FinalState))
		p("| pod / Deployment watch events | %d / %d | |\n\n", c.Pods.Events, c.Children.Events)
		p("From SIGKILL (min / median / max): /readyz %s; both groups through the aggregator %s; the new process\n", c.Ready, c.Serving)
		p("holding the controllers' Lease %s.\n\n", c.Leading)
	} else {
		p("Not run.\n\n")
	}

	p("### Server kills under write load\n\n")
	if s := r.Server; s != nil {
		p("%d SIGKILLs of tapp-apiserver (its embedded etcd dies with it) at random moments 0.5–2.5 s apart, while %d\n", s.Kills, s.Writers)
		p("clients create, update (%d times) and delete TApps through kube-apiserver's aggregator, each keeping a\n", updatesPerObject)
		p("ledger of acknowledged writes; a write whose answer was lost is settled by reading the object back. One\n")
		p("watch of the namespace is re-established from its last resourceVersion after every break.\n\n")
		p("| count | result | target |\n|---|---:|---:|\n")
		p("| acknowledged writes | %d | |\n", s.Acknowledged)
		p("| writes with an unknown outcome (connection broken), settled by reading back | %d | |\n", s.Unknown)
		p("| acknowledged writes lost | %d | 0 |\n", s.Lost)
		p("| TApps written | %d | |\n", s.Objects)
		p("| watch events / re-established watches / relists after 410 | %d / %d / %d | |\n", s.WatchEvents, s.Rewatches, s.Relists)
		p("| resourceVersion going backwards in the watch | %d | 0 |\n\n", s.RVBackwards)
		p("From SIGKILL to ready (min / median / max): /readyz %s; both groups through the aggregator %s.\n\n", s.Ready, s.Serving)
		p("HA mode (two replicas on the three-member etcd): see *HA topology* below.\n\n")
	} else {
		p("Not run.\n\n")
	}

	p("### kube-apiserver restart during a rollout\n\n")
	if k := r.KubeAPIServer; k != nil {
		p("A TApp of %d instances rolls an in-place image update (maxUnavailable 1) while kube-apiserver is\n", k.Replicas)
		p("restarted (SIGTERM, same flags, same etcd; %d restarts): the first a random moment (0–1 s) after the\n", k.Restarts)
		p("first instance is updated, each further one 0–1 s after the previous one is back. Every instance's pod\n")
		p("UID is compared before and after, and a pod watch counts deletions and new UIDs.\n\n")
		p("| count | result | target |\n|---|---:|---:|\n")
		p("| duplicate creates (a new UID for an instance) | %d | 0 |\n", len(k.Pods.Recreations)+len(k.UIDChanged))
		p("| deletes (no delete was asked for) | %d | 0 |\n", len(k.Pods.Deletions))
		p("| rollout finished, every instance on the new image | %s | yes |\n", yesNo(k.Converged))
		p("| tapp-apiserver exits (controllers' Lease not renewed in time), restarted as a kubelet would | %d | |\n\n", k.TAppAPIServerExits)
		p("Instances already updated when each restart began: %v of %d. kube-apiserver restart (min / median / max): %s.\n\n",
			k.UpdatedAtRestart, k.Replicas, k.Restart)
	} else {
		p("Not run.\n\n")
	}

	p("### Lost and rewound store\n\n")
	if st := r.Storage; st != nil {
		p("A TApp of 4 instances with a volume claim each and a YurtAppDaemon with one Deployment. tapp-apiserver is\n")
		p("stopped and started on a wrong store, watched for %s, then stopped and started on its own store\n", st.Window)
		p("again and watched 10 s more; nobody accepts the wrong store (`tapp-apiserver storage accept`), so\n")
		p("nothing may be deleted. *store wiped*: an empty data directory. *store rewound*: a copy of the data\n")
		p("directory taken before a second TApp (2 instances with claims) was created and the high-water mark moved\n")
		p("past it (docs/storage.md).\n\n")
		p("| store | workloads watched | served | answered 503 | deleted on the wrong store | deleted after | own store served again after |\n")
		p("|---|---:|---|---|---:|---:|---:|\n")
		for _, ph := range st.Phases {
			p("| %s | %d | %s | %s | %d | %d | %s |\n", ph.Name, ph.Watched, yesNo(ph.Served), yesNo(ph.Refused),
				len(ph.Deleted), len(ph.DeletedAfter), ph.Recovered.Round(100*time.Millisecond))
		}
		p("\nTargets: never served, 0 deleted.\n\n")
	} else {
		p("Not run.\n\n")
	}

	p("### Notes\n\n")
	p("- The controllers' Lease of the `make chaos` cluster is shorter than the default 15 s (see the run line\n")
	p("  above), so that 50 kills fit in minutes: a killed leader does not release its Lease, and the new process\n")
	p("  waits it out before it leads (the gap from SIGKILL to leading above). The end-to-end variants run with\n")
	p("  the default.\n")
	p("- The first kill of each phase lands while the controllers act on that phase's write; later ones land a\n")
	p("  random moment into each new leadership, while the new leader, which syncs every object when it starts,\n")
	p("  finishes what is left (possibly nothing by then).\n")
	p("- The YurtAppDaemon's pools are NodePools without nodes and its Deployments have 0 replicas: its phases\n")
	p("  count children, one per selected pool, not pods.\n")
	if s := r.Server; s != nil {
		p("- A restarted server's watch cache starts at etcd's revision of the moment, so a watch resumed from an\n")
		p("  older resourceVersion can be answered 410 Gone; the client then relists, as client-go's informers do\n")
		p("  (%d relists in %d kills). No resourceVersion went backwards across a relist either.\n", s.Relists, s.Kills)
	}
	if k := r.KubeAPIServer; k != nil && k.TAppAPIServerExits > 0 {
		p("- A kube-apiserver restart that outlasts the controllers' renew deadline (4/5 of the Lease here) makes\n")
		p("  tapp-apiserver exit on purpose, as it does whenever its Lease is lost (after %d of %d restarts); the\n", k.TAppAPIServerExits, k.Restarts)
		p("  scenario starts it again, as the kubelet restarts the container in a real cluster. The counts above\n")
		p("  include its return.\n")
	}
	return b.String()
}

// HAHeading is the heading of the part of the Chaos section that HAMarkdown renders; WriteHASection
// replaces that part only.
const HAHeading = "### HA topology"

// HAMarkdown renders the HA part of the Chaos section: the scenarios of the HA form.
func (r *Results) HAMarkdown() string {
	var b strings.Builder
	p := func(format string, args ...interface{}) { fmt.Fprintf(&b, format, args...) }
	p("%s\n\n", HAHeading)
	p("`make chaos` then starts the HA form of the local cluster (`tapp-chaos --ha`: three etcd members, a real\n")
	p("cluster with mutual TLS, for tapp-apiserver's storage; two tapp-apiserver replicas behind one Service with an\n")
	p("EndpointSlice per replica, kube-apiserver routing to the endpoints; controllers leader-elected between the\n")
	p("replicas) and drives the scenarios below; it rewrites this part only. A short variant runs in the\n")
	p("end-to-end suite (TestChaosHA).\n\n")
	r.writeRunSummary(&b, r.Took, r.chaosTargets())

	p("#### Server kills in HA mode\n\n")
	if s := r.HAServer; s != nil {
		p("%d SIGKILLs of a tapp-apiserver replica, the two replicas in turn, each started again at once, at random\n", s.Kills)
		p("moments 0.5–2.5 s apart, while %d clients create, update (%d times) and delete TApps through\n", s.Writers, updatesPerObject)
		p("kube-apiserver's aggregator with the ledger of the single-replica scenario; one watch of the namespace is\n")
		p("re-established from its last resourceVersion after every break.\n\n")
		p("| count | result | target |\n|---|---:|---:|\n")
		p("| acknowledged writes | %d | |\n", s.Acknowledged)
		p("| writes with an unknown outcome (connection broken), settled by reading back | %d | |\n", s.Unknown)
		p("| acknowledged writes lost | %d | 0 |\n", s.Lost)
		p("| writes never answered (given up after %d attempts) | %d | 0 |\n", maxAttempts, len(s.Abandoned))
		p("| TApps written | %d | |\n", s.Objects)
		p("| watch events / re-established watches / relists after 410 | %d / %d / %d | |\n", s.WatchEvents, s.Rewatches, s.Relists)
		p("| resourceVersion going backwards in the watch | %d | 0 |\n\n", s.RVBackwards)
		p("From SIGKILL to the replica answering /readyz again (min / median / max): %s.\n\n", s.Ready)
	} else {
		p("Not run.\n\n")
	}

	p("#### etcd member kill\n\n")
	if e := r.EtcdMembers; e != nil {
		p("First, %d SIGKILLs of one etcd member at a time (members in turn), each started again on its data 1–3 s\n", e.MemberKills)
		p("later, while %d clients write TApps with the ledger above. Then two of the three members are killed while\n", e.Writers)
		p("a TApp of %d instances runs; %d creates are tried (client timeout %s, longer than the servers' 60 s\n", e.Pods, e.QuorumWrites, quorumClientTimeout)
		p("request timeout) and the two stay down %s in all; then they are started again and a create is\n", e.QuorumLossWindow.Round(time.Second))
		p("retried until it succeeds. A pod watch (kube-apiserver's own etcd stays up) counts deletions.\n\n")
		p("| count | result | target |\n|---|---:|---:|\n")
		p("| one member down: acknowledged writes | %d | |\n", e.Acknowledged)
		p("| one member down: failed attempts retried by the clients | %d | |\n", e.Errors)
		p("| one member down: errors beyond retries (writes given up after %d attempts) | %d | 0 |\n", maxAttempts, len(e.Abandoned))
		p("| one member down: acknowledged writes lost | %d | 0 |\n", e.Lost)
		p("| no quorum: writes answered 5xx / succeeded / hung / other | %d / %d / %d / %d | all 5xx |\n", e.Answered5xx, e.Succeeded, e.Hung, len(e.OtherErrors))
		p("| no quorum: longest request | %s | within the request timeout |\n", e.LongestRequest.Round(10*time.Millisecond))
		p("| no quorum: pods deleted / replaced | %d / %d | 0 |\n", len(e.PodsDeleted), len(e.PodsReplaced))
		p("| quorum back: time to the first successful write | %s | |\n", e.FirstWriteAfter.Round(10*time.Millisecond))
		p("| quorum back: members healthy after | %s | |\n", e.MembersHealthyIn.Round(10*time.Millisecond))
		p("| replicas that exited meanwhile (started again) | %d | |\n\n", e.ReplicaExits)
		p("One member killed, until it is healthy again (min / median / max): %s.\n", e.MemberRestart)
		if len(e.QuorumWriteErrors) > 0 {
			p("Answers without quorum: `%s`.\n", strings.Join(e.QuorumWriteErrors, "`; `"))
		}
		p("\n")
	} else {
		p("Not run.\n\n")
	}
	return b.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func correct(problem string) string {
	if problem == "" {
		return "correct"
	}
	return "wrong: " + strings.ReplaceAll(problem, "\n", " ")
}

// WriteSection replaces the Chaos section of the Markdown file at path with section (from its heading to
// the next heading of the same level), appending it when there is none; the rest of the file is kept as it
// is. The file is created if missing.
func WriteSection(path, section string) error {
	return writeBlock(path, SectionHeading, section, func(line string) bool {
		return strings.HasPrefix(line, "## ") || line == HAHeading || line == SoakHeading
	})
}

// WriteHASection replaces the HA part of the Chaos section (from HAHeading to the next heading of level 3 or
// less), appending it at the end of the Chaos section when there is none; the rest is kept as it is.
func WriteHASection(path, section string) error {
	return writeBlock(path, HAHeading, section, func(line string) bool {
		return strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### ")
	})
}

// writeBlock replaces the block of the Markdown file at path that starts with the line heading and ends
// before the first line ends says so. A missing block is put at the end of the Chaos section, or at the
// end of the file.
func writeBlock(path, heading, section string, ends func(line string) bool) error {
	raw, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	doc := string(raw)
	if doc == "" {
		doc = "# Reliability\n\nHow tapp-apiserver behaves under failure, measured.\n"
	}
	section = strings.TrimRight(section, "\n") + "\n"
	lines := strings.SplitAfter(doc, "\n")
	start, end := -1, len(lines)
	for i, l := range lines {
		t := strings.TrimRight(l, "\n")
		if start < 0 && t == heading {
			start = i
			continue
		}
		if start >= 0 && ends(t) {
			end = i
			break
		}
	}
	if start < 0 && heading != SectionHeading {
		// At the end of the Chaos section, when there is one.
		inChaos := false
		for i, l := range lines {
			t := strings.TrimRight(l, "\n")
			if t == SectionHeading {
				inChaos = true
				continue
			}
			if inChaos && strings.HasPrefix(t, "## ") {
				before := strings.TrimRight(strings.Join(lines[:i], ""), "\n") + "\n\n"
				return os.WriteFile(path, []byte(before+section+"\n"+strings.Join(lines[i:], "")), 0o644)
			}
		}
	}
	var out string
	if start < 0 {
		out = strings.TrimRight(doc, "\n") + "\n\n" + section
	} else {
		rest := strings.Join(lines[end:], "")
		if rest != "" {
			section += "\n"
		}
		out = strings.Join(lines[:start], "") + section + rest
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

// writeRunSummary writes which run the figures come from, how long its part took, and the targets it missed,
// if any.
func (r *Results) writeRunSummary(b *strings.Builder, took time.Duration, misses []string) {
	fmt.Fprintf(b, "Latest run: `%s`, %s, took %s (seed %d).\n\n", r.Command, r.Started.UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second), r.Options.Seed)
	if len(misses) == 0 {
		b.WriteString("**Every target was met.**\n\n")
		return
	}
	b.WriteString("**Targets missed:**\n\n")
	for _, m := range misses {
		fmt.Fprintf(b, "- %s\n", m)
	}
	b.WriteString("\n")
}
