package kubectltapp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// Shell completion: cobra's `completion` command writes the script for kubectl-tapp; kubectl (1.26+)
// completes `kubectl tapp ...` by running kubectl_complete-tapp, which is this binary under that name
// (cmd/kubectl-tapp turns it into `kubectl-tapp __complete ...`). The functions below complete TApp names,
// instance ids, container names and template names from the cluster, with the command's connection flags.

// CompletionExecutable is the name kubectl runs to complete the plugin's arguments.
const CompletionExecutable = "kubectl_complete-tapp"

// tappNames returns the names of the TApps of the namespace that start with prefix.
func (o *Options) tappNames(cmd *cobra.Command, prefix string) []string {
	s, err := o.connect()
	if err != nil {
		return nil
	}
	list, err := s.tapps.List(cmd.Context(), metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var names []string
	for _, t := range list.Items {
		if strings.HasPrefix(t.Name, prefix) {
			names = append(names, t.Name)
		}
	}
	return names
}

// getTApp reads TApp name for a completion, or nil.
func (o *Options) getTApp(cmd *cobra.Command, name string) *tkestackv1.TApp {
	s, err := o.connect()
	if err != nil {
		return nil
	}
	tapp, err := s.tapps.Get(cmd.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return tapp
}

// InstanceCompletions returns the ids of tapp's instances that start with prefix and are not in exclude,
// each with its template and state as the description.
func InstanceCompletions(tapp *tkestackv1.TApp, prefix string, exclude []string) []string {
	skip := map[string]bool{}
	for _, id := range exclude {
		skip[id] = true
	}
	var ids []string
	for i := 0; i < int(tapp.Spec.Replicas); i++ {
		id := strconv.Itoa(i)
		if skip[id] || !strings.HasPrefix(id, prefix) {
			continue
		}
		state := "pod " + tapp.Name + "-" + id
		if policy.IsKilled(tapp, id) {
			state = "killed"
		}
		ids = append(ids, fmt.Sprintf("%s\ttemplate %s, %s", id, templateOf(tapp, id), state))
	}
	return ids
}

// completeTApp completes the first argument with TApp names.
func (o *Options) completeTApp(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return o.tappNames(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeInstanceArgs completes TAPP then one instance ID.
func (o *Options) completeInstanceArgs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) != 1 {
		return o.completeTApp(cmd, args, toComplete)
	}
	if tapp := o.getTApp(cmd, args[0]); tapp != nil {
		return InstanceCompletions(tapp, toComplete, nil), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completePortForwardArgs completes TAPP, ID, then the container ports (numbers and names) of the template
// the instance runs.
func (o *Options) completePortForwardArgs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) < 2 {
		return o.completeInstanceArgs(cmd, args, toComplete)
	}
	tapp := o.getTApp(cmd, args[0])
	if tapp == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	spec, ok := templateSpecs(tapp)[templateOf(tapp, args[1])]
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return ContainerPortCompletions(spec, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// ContainerPortCompletions returns the TCP container ports of spec, by number and by name, that start with
// prefix.
func ContainerPortCompletions(spec *corev1.PodSpec, prefix string) []string {
	var out []string
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				continue
			}
			for _, port := range []string{strconv.Itoa(int(p.ContainerPort)), p.Name} {
				if port != "" && strings.HasPrefix(port, prefix) {
					out = append(out, fmt.Sprintf("%s\tcontainer %s", port, c.Name))
				}
			}
		}
	}
	return out
}

// completeInstancesArgs completes TAPP then instance IDs not given yet.
func (o *Options) completeInstancesArgs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return o.completeTApp(cmd, args, toComplete)
	}
	if tapp := o.getTApp(cmd, args[0]); tapp != nil {
		return InstanceCompletions(tapp, toComplete, args[1:]), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completeSetImageArgs completes TAPP then CONTAINER= with the containers of the selected templates.
func (o *Options) completeSetImageArgs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return o.completeTApp(cmd, args, toComplete)
	}
	tapp := o.getTApp(cmd, args[0])
	if tapp == nil || strings.Contains(toComplete, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	template, _ := cmd.Flags().GetString("template")
	seen := map[string]bool{}
	var out []string
	for name, spec := range templateSpecs(tapp) {
		if template != AllTemplates && template != name {
			continue
		}
		for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
			if !seen[c.Name] && strings.HasPrefix(c.Name+"=", toComplete) {
				seen[c.Name] = true
				out = append(out, c.Name+"=")
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeContainers completes -c with the containers of the instance's pod template.
func (o *Options) completeContainers(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) < 2 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	tapp := o.getTApp(cmd, args[0])
	if tapp == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	spec, ok := templateSpecs(tapp)[templateOf(tapp, args[1])]
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, c := range spec.Containers {
		if strings.HasPrefix(c.Name, toComplete) {
			out = append(out, c.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeTemplates completes --template of set image.
func (o *Options) completeTemplates(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	names := []string{tkestack.DefaultTemplateName, AllTemplates}
	if len(args) > 0 {
		if tapp := o.getTApp(cmd, args[0]); tapp != nil {
			names = append(names, sortedPoolNames(tapp)...)
		}
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// templateSpecs maps every template name ("default" for spec.template) to its pod spec.
func templateSpecs(tapp *tkestackv1.TApp) map[string]*corev1.PodSpec {
	specs := map[string]*corev1.PodSpec{tkestack.DefaultTemplateName: &tapp.Spec.Template.Spec}
	for name := range tapp.Spec.TemplatePool {
		t := tapp.Spec.TemplatePool[name]
		specs[name] = &t.Spec
	}
	return specs
}

// addCompletions gives every command of the tree that takes TAPP (and IDs) and has no completion of its own
// one from its Use line.
func (o *Options) addCompletions(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		o.addCompletions(sub)
	}
	if cmd.ValidArgsFunction != nil {
		return
	}
	fields := strings.Fields(cmd.Use)
	switch {
	case len(fields) >= 3 && fields[1] == "TAPP" && fields[2] == "ID...":
		cmd.ValidArgsFunction = o.completeInstancesArgs
	case len(fields) >= 3 && fields[1] == "TAPP" && fields[2] == "ID":
		cmd.ValidArgsFunction = o.completeInstanceArgs
	case len(fields) >= 2 && fields[1] == "TAPP":
		cmd.ValidArgsFunction = o.completeTApp
	case cmd.HasSubCommands() || len(fields) == 1:
		cmd.ValidArgsFunction = cobra.NoFileCompletions
	}
}
