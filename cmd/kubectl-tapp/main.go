// Command kubectl-tapp is the kubectl plugin `kubectl tapp` (pkg/kubectltapp): put it on PATH and run
// `kubectl tapp --help`. Under the name kubectl_complete-tapp (a link to it) it answers kubectl's shell
// completion of `kubectl tapp ...` (kubectl 1.26+).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	utilexec "k8s.io/utils/exec"

	"github.com/tapp-io/tapp-apiserver/pkg/kubectltapp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := kubectltapp.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if filepath.Base(os.Args[0]) == kubectltapp.CompletionExecutable {
		cmd.SetArgs(append([]string{cobraCompleteCommand}, os.Args[1:]...))
	}
	if err := cmd.ExecuteContext(ctx); err != nil {
		// A command run by exec that exits non-zero: kubectl's message and exit code.
		var exit utilexec.ExitError
		if errors.As(err, &exit) && exit.Exited() {
			fmt.Fprintf(os.Stderr, "command terminated with exit code %d\n", exit.ExitStatus())
			os.Exit(exit.ExitStatus())
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// cobraCompleteCommand is cobra's hidden command that prints the completions of the arguments after it.
const cobraCompleteCommand = "__complete"
