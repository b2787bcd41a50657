package kubectltapp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// AllTemplates is the --template value of set image that names spec.template and every templatePool entry.
const AllTemplates = "all"

// ImageChange is one container image set image changes.
type ImageChange struct {
	// Template is "default" (spec.template) or a templatePool key.
	Template string
	// Init is true for an init container.
	Init      bool
	Container string
	From, To  string
}

// ParseImageArgs parses CONTAINER=IMAGE arguments ("*" for every container), as kubectl set image does.
func ParseImageArgs(args []string) (map[string]string, error) {
	images := map[string]string{}
	for _, arg := range args {
		container, image, ok := strings.Cut(arg, "=")
		if !ok || container == "" || image == "" {
			return nil, fmt.Errorf("%q is not CONTAINER=IMAGE", arg)
		}
		if _, dup := images[container]; dup {
			return nil, fmt.Errorf("container %q is given twice", container)
		}
		images[container] = image
	}
	if len(images) == 0 {
		return nil, fmt.Errorf("no CONTAINER=IMAGE given")
	}
	return images, nil
}

// ImagePatch returns the JSON patch (RFC 6902) that sets the images of the containers named in images
// (container name → image; "*" for every container) in the templates selected by template ("default",
// a templatePool key, or AllTemplates), and the changes it makes. Each replace is preceded by a test of the
// container's name at that index, so the patch fails rather than change another container if the TApp
// changed meanwhile. Containers and init containers are both matched. It is an error when a template is
// unknown or when a named container is in none of the selected templates.
func ImagePatch(tapp *tkestackv1.TApp, template string, images map[string]string) ([]byte, []ImageChange, error) {
	type selected struct {
		name, path string
		spec       *corev1.PodSpec
	}
	var templates []selected
	pool := sortedPoolNames(tapp)
	switch template {
	case tkestack.DefaultTemplateName:
		templates = append(templates, selected{template, "/spec/template", &tapp.Spec.Template.Spec})
	case AllTemplates:
		templates = append(templates, selected{tkestack.DefaultTemplateName, "/spec/template", &tapp.Spec.Template.Spec})
		for _, name := range pool {
			t := tapp.Spec.TemplatePool[name]
			templates = append(templates, selected{name, "/spec/templatePool/" + jsonPointerEscape(name), &t.Spec})
		}
	default:
		t, ok := tapp.Spec.TemplatePool[template]
		if !ok {
			names := append([]string{tkestack.DefaultTemplateName}, pool...)
			return nil, nil, fmt.Errorf("TApp %s/%s has no template %q: its templates are %s (or --template=%s)",
				tapp.Namespace, tapp.Name, template, strings.Join(names, ", "), AllTemplates)
		}
		templates = append(templates, selected{template, "/spec/templatePool/" + jsonPointerEscape(template), &t.Spec})
	}
	type operation struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value string `json:"value"`
	}
	var ops []operation
	var changes []ImageChange
	found := map[string]bool{}
	for _, t := range templates {
		for _, list := range []struct {
			field      string
			init       bool
			containers []corev1.Container
		}{{"initContainers", true, t.spec.InitContainers}, {"containers", false, t.spec.Containers}} {
			for i, c := range list.containers {
				image, ok := images[c.Name]
				if ok {
					found[c.Name] = true
				} else if image, ok = images["*"]; ok {
					found["*"] = true
				} else {
					continue
				}
				if c.Image == image {
					continue
				}
				path := t.path + "/spec/" + list.field + "/" + strconv.Itoa(i)
				ops = append(ops, operation{"test", path + "/name", c.Name}, operation{"replace", path + "/image", image})
				changes = append(changes, ImageChange{Template: t.name, Init: list.init, Container: c.Name, From: c.Image, To: image})
			}
		}
	}
	var missing []string
	for name := range images {
		if !found[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		var have []string
		for _, t := range templates {
			have = append(have, fmt.Sprintf("%s: %s", t.name, strings.Join(containerNames(t.spec), ", ")))
		}
		return nil, nil, fmt.Errorf("TApp %s/%s: no container %q in template(s) %s (containers: %s)", tapp.Namespace, tapp.Name,
			missing, templateList(templates, func(i int) string { return templates[i].name }), strings.Join(have, "; "))
	}
	if len(ops) == 0 {
		return nil, nil, nil
	}
	patch, err := json.Marshal(ops)
	return patch, changes, err
}

func templateList[T any](items []T, name func(int) string) string {
	names := make([]string, len(items))
	for i := range items {
		names[i] = name(i)
	}
	return strings.Join(names, ", ")
}

func containerNames(spec *corev1.PodSpec) []string {
	var names []string
	for _, c := range spec.InitContainers {
		names = append(names, c.Name+" (init)")
	}
	for _, c := range spec.Containers {
		names = append(names, c.Name)
	}
	return names
}

// jsonPointerEscape escapes a JSON pointer reference token (RFC 6901).
func jsonPointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// RolloutNote says which instances a change of the named templates rolls and how, for set image's output.
func RolloutNote(tapp *tkestackv1.TApp, changed map[string]bool) string {
	var ids []string
	for i := 0; i < int(tapp.Spec.Replicas); i++ {
		id := strconv.Itoa(i)
		if policy.IsKilled(tapp, id) || !changed[templateOf(tapp, id)] {
			continue
		}
		if i < int(tapp.Spec.UpdateStrategy.Partition) {
			continue
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return "no instance runs the changed template(s) at or above the partition: no pod changes until one does"
	}
	note := fmt.Sprintf("the TApp controller updates instance(s) %s to the new image(s) (in place, as only images change), within the update budgets of spec.updateStrategy", strings.Join(ids, ","))
	if tapp.Spec.UpdateStrategy.Partition > 0 {
		note += fmt.Sprintf("; instances below partition %d keep their images", tapp.Spec.UpdateStrategy.Partition)
	}
	if tapp.Spec.UpdateStrategy.Paused {
		note += fmt.Sprintf("; the rollout is paused: run `kubectl tapp rollout resume %s`", tapp.Name)
	}
	return note + fmt.Sprintf("; follow it with `kubectl tapp rollout status %s`", tapp.Name)
}

// templateOf is the template name instance id runs, where "default" is spec.template.
func templateOf(tapp *tkestackv1.TApp, id string) string {
	name := policy.TemplateNameFor(tapp, id)
	if name == "" {
		return tkestack.DefaultTemplateName
	}
	return name
}

func newSetCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set SUBCOMMAND",
		Short: "Change a TApp's templates, as kubectl set does for a workload",
	}
	cmd.AddCommand(newSetImageCommand(o))
	return cmd
}

func newSetImageCommand(o *Options) *cobra.Command {
	template := tkestack.DefaultTemplateName
	cmd := &cobra.Command{
		Use:   "image TAPP CONTAINER=IMAGE...",
		Short: "Set container images in a TApp's template (the default one, a templatePool entry, or all)",
		Long: `Sets the image of each named container (or of every container with *=IMAGE) in spec.template
(--template=default), in one spec.templatePool entry (--template=NAME) or in all of them (--template=all),
with one JSON patch that also tests each container's name. Init containers are matched too. Every named
container must be in a selected template. The TApp controller then rolls the instances running a changed
template, as it does for any template change; the output says which.`,
		Example: `  # Set the image of container nginx of the default template of TApp web
  kubectl tapp set image web nginx=nginx:1.27

  # Every container of every template
  kubectl tapp set image web '*=nginx:1.27' --template=all

  # Container app of the templatePool entry canary
  kubectl tapp set image web app=example/app:v2 --template=canary`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: o.completeSetImageArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			images, err := ParseImageArgs(args[1:])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			s, tapp, err := o.connectTo(ctx, args[0])
			if err != nil {
				return err
			}
			patch, changes, err := ImagePatch(tapp, template, images)
			if err != nil {
				return err
			}
			if len(changes) == 0 {
				fmt.Fprintf(o.Out, "%s%s images unchanged\n", resourcePrefix, tapp.Name)
				return nil
			}
			patched, err := s.tapps.Patch(ctx, tapp.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
			if err != nil {
				return err
			}
			changed := map[string]bool{}
			for _, c := range changes {
				kind := "container"
				if c.Init {
					kind = "init container"
				}
				fmt.Fprintf(o.Out, "%s%s template %s %s %s image updated: %s -> %s\n", resourcePrefix, tapp.Name, c.Template, kind, c.Container, c.From, c.To)
				changed[c.Template] = true
			}
			fmt.Fprintln(o.Out, RolloutNote(patched, changed))
			return nil
		},
	}
	cmd.Flags().StringVar(&template, "template", template, `the template to change: "default" (spec.template), a spec.templatePool key, or "all"`)
	_ = cmd.RegisterFlagCompletionFunc("template", o.completeTemplates)
	return cmd
}
