// Command tapp-chaos starts a local cluster (pkg/localcluster), runs the chaos scenarios of pkg/chaos on it
// and writes the figures into the Chaos section of docs/reliability.md and into <out>/results.json. Run it
// with `make chaos`; --quick runs the short variant. With --ha it starts the HA form of the local cluster
// (three etcd members, two tapp-apiserver replicas), runs the HA scenarios (ha-server-kills, etcd-members)
// and rewrites only the HA part of the Chaos section, with <out>/results-ha.json. The soak (single-replica
// form, --scenarios=soak, --soak-duration, --soak-interval) rewrites the soak part of the section only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tapp-io/tapp-apiserver/pkg/chaos"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

func main() {
	opts := chaos.DefaultOptions()
	quick := flag.Bool("quick", false, "the short variant (the end-to-end suite's sizes)")
	toolsDir := flag.String("tools-dir", "", "directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok (hack/build-tools.sh)")
	serverBinary := flag.String("server-binary", "bin/tapp-apiserver", "the tapp-apiserver binary")
	outDir := flag.String("out", "_output/chaos", "where results.json and the cluster's files go")
	doc := flag.String("doc", "docs/reliability.md", "the document whose Chaos section is rewritten (empty: none)")
	command := flag.String("command", "", "the command to record (make chaos sets it)")
	leaseDuration := flag.Duration("lease-duration", 5*time.Second, "tapp-apiserver --leader-elect-lease-duration (renew deadline and retry period follow at 4/5 and 1/5)")
	timeout := flag.Duration("timeout", 0, "bound of the whole run (default 30m plus the soak's duration)")
	ha := flag.Bool("ha", false, "start the HA form of the local cluster and run the HA scenarios")
	scenarios := flag.String("scenarios", "", "scenarios to run, of controllers, server, kube-apiserver, storage, "+chaos.ScenarioSoak+" and (with --ha) "+
		chaos.ScenarioHAServerKills+", "+chaos.ScenarioEtcdMembers+"; empty: all of the cluster's form; the others are skipped")
	controllerKills := flag.Int("controller-kills", -1, "SIGKILLs of the leading tapp-apiserver (default 50, quick 3)")
	replicas := flag.Int("replicas", -1, "TApp scale-up target of the controller scenario (default 200, quick 20)")
	serverKills := flag.Int("server-kills", -1, "SIGKILLs of tapp-apiserver under write load (default 20, quick 3)")
	restarts := flag.Int("kube-apiserver-restarts", -1, "kube-apiserver restarts during the rollout (default 2, quick 1)")
	haServerKills := flag.Int("ha-server-kills", -1, "SIGKILLs of a tapp-apiserver replica under write load, HA form (default 20, quick 2)")
	memberKills := flag.Int("etcd-member-kills", -1, "SIGKILLs of one etcd member under write load, HA form (default 6, quick 1)")
	soakDuration := flag.Duration("soak-duration", 0, "how long the soak's mixed load runs (default 30m, quick 2m)")
	soakInterval := flag.Duration("soak-interval", 0, "how often the soak samples tapp-apiserver (default 5m, quick 15s)")
	soakWarmup := flag.Duration("soak-warmup", -1, "how long into the soak the slope and the growth bounds begin (default 5m, quick 30s)")
	soakInstances := flag.Int("soak-instances", -1, "TApp instances the controllers keep during the soak (default 200, quick 40)")
	note := flag.String("note", "", "a sentence recorded under the run line of the soak (the machine's other work, for example)")
	seed := flag.Int64("seed", 1, "seed of the random moments")
	render := flag.String("render", "", "only render this results.json into the document (with --command as the run's command)")
	flag.Parse()
	if *render != "" {
		if err := renderOnly(*render, *doc, *command); err != nil {
			fmt.Fprintf(os.Stderr, "tapp-chaos: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if *quick {
		opts = chaos.QuickOptions()
	}
	for _, o := range []struct {
		flag int
		opt  *int
	}{{*controllerKills, &opts.ControllerKills}, {*replicas, &opts.Replicas}, {*serverKills, &opts.ServerKills}, {*restarts, &opts.KubeAPIServerRestarts},
		{*haServerKills, &opts.HAServerKills}, {*memberKills, &opts.EtcdMemberKills}, {*soakInstances, &opts.SoakInstances}} {
		if o.flag >= 0 {
			*o.opt = o.flag
		}
	}
	if *soakDuration > 0 {
		opts.SoakDuration = *soakDuration
	}
	if *soakInterval > 0 {
		opts.SoakInterval = *soakInterval
	}
	if *soakWarmup >= 0 {
		opts.SoakWarmup = *soakWarmup
	}
	if opts.SoakInterval > opts.SoakDuration {
		opts.SoakInterval = opts.SoakDuration
	}
	opts.Seed = *seed
	if *scenarios != "" {
		for _, s := range strings.Split(*scenarios, ",") {
			if chaos.HAScenario(s) == *ha {
				opts.Scenarios = append(opts.Scenarios, s)
			}
		}
		if len(opts.Scenarios) == 0 {
			logf("no scenario of the %s form selected; nothing to do", form(*ha))
			return
		}
	}
	opts.Log = logf
	if *toolsDir == "" {
		fmt.Fprintln(os.Stderr, "tapp-chaos: --tools-dir is required (the directory printed by hack/build-tools.sh); run `make chaos`")
		os.Exit(2)
	}
	if *command == "" {
		*command = strings.Join(os.Args, " ")
	}
	if *timeout == 0 {
		*timeout = 30*time.Minute + opts.SoakDuration
	}
	if err := run(opts, *ha, *toolsDir, *serverBinary, *outDir, *doc, *command, *note, *leaseDuration, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "tapp-chaos: %v\n", err)
		os.Exit(1)
	}
}

func logf(format string, args ...interface{}) {
	fmt.Printf("[chaos %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func form(ha bool) string {
	if ha {
		return "HA"
	}
	return "single-replica"
}

func run(opts chaos.Options, ha bool, toolsDir, serverBinary, outDir, doc, command, note string, lease, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	workDir, resultsFile := filepath.Join(outDir, "cluster"), "results.json"
	if ha {
		workDir, resultsFile = filepath.Join(outDir, "ha-cluster"), "results-ha.json"
	}
	if err := os.RemoveAll(workDir); err != nil {
		return err
	}
	logf("starting the %s local cluster in %s", form(ha), workDir)
	cluster, err := localcluster.Start(ctx, localcluster.Config{
		WorkDir:      workDir,
		ToolsDir:     toolsDir,
		ServerBinary: serverBinary,
		// A shorter Lease than the default 15 s, so that a kill costs seconds, not a quarter of a minute.
		ServerArgs: []string{
			"--leader-elect-lease-duration=" + lease.String(),
			"--leader-elect-renew-deadline=" + (lease * 4 / 5).String(),
			"--leader-elect-retry-period=" + (lease / 5).String(),
		},
		Nodes: 3,
		HA:    ha,
		Log:   logf,
	})
	if err != nil {
		return fmt.Errorf("starting the local cluster: %w (logs in %s)", err, filepath.Join(workDir, "logs"))
	}
	defer cluster.Stop()

	res, runErr := chaos.Run(ctx, cluster, cluster.AdminConfig, opts)
	if res == nil {
		return runErr
	}
	// After the kills and restarts as before them (localcluster.Start checked once): no process of the
	// cluster, nor this program, listens outside loopback and the cluster's own network namespace.
	if err := cluster.CheckLoopbackOnly(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if runErr != nil {
		logf("stopped early: %v", runErr)
	}
	res.Command = command + fmt.Sprintf(" (controllers' Lease %s)", lease)
	res.Note = note
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, resultsFile), data, 0o644); err != nil {
		return err
	}
	extra := ""
	if runErr != nil {
		extra = fmt.Sprintf("\nThe run stopped early: %v\n", runErr)
	}
	if err := write(res, ha, doc, extra); err != nil {
		return err
	}
	if misses := res.Targets(); len(misses) > 0 || runErr != nil {
		return fmt.Errorf("targets missed: %d; %v", len(misses), runErr)
	}
	return nil
}

// renderOnly rewrites the Chaos section of doc from a results.json of an earlier run.
func renderOnly(results, doc, command string) error {
	data, err := os.ReadFile(results)
	if err != nil {
		return err
	}
	var res chaos.Results
	if err := json.Unmarshal(data, &res); err != nil {
		return err
	}
	if res.Command == "" {
		res.Command = command
	}
	return write(&res, res.HA(), doc, "")
}

// write prints the run's parts of the Chaos section and rewrites them in doc: the HA part for the HA form;
// otherwise the section (when a scenario other than the soak ran) and the soak part (when the soak ran).
func write(res *chaos.Results, ha bool, doc, extra string) error {
	type part struct {
		name         string
		section      string
		writeSection func(path, section string) error
	}
	var parts []part
	switch {
	case ha:
		parts = append(parts, part{"HA", res.HAMarkdown(), chaos.WriteHASection})
	default:
		// A run of the soak alone leaves the rest of the section as it is.
		soakOnly := len(res.Options.Scenarios) == 1 && res.Options.Scenarios[0] == chaos.ScenarioSoak
		if !soakOnly || res.ChaosRan() {
			parts = append(parts, part{"single-replica", res.Markdown(), chaos.WriteSection})
		}
		if res.Soak != nil {
			parts = append(parts, part{"soak", res.SoakMarkdown(), chaos.WriteSoakSection})
		}
	}
	if len(parts) == 0 {
		fmt.Print(extra)
		return nil
	}
	// The note of an early stop goes with the last part written.
	parts[len(parts)-1].section += extra
	for _, pt := range parts {
		fmt.Println(pt.section)
		if doc == "" {
			continue
		}
		if err := pt.writeSection(doc, pt.section); err != nil {
			return err
		}
		logf("wrote the %s part of the Chaos section of %s", pt.name, doc)
	}
	return nil
}
