package manager

import (
	"reflect"
	"testing"
)

func TestEnabled(t *testing.T) {
	all := Names()
	first := all[0]
	var rest []string
	rest = append(rest, all[1:]...)
	cases := []struct {
		flags []string
		want  []string
	}{
		{[]string{"*"}, all},
		{nil, nil},
		{[]string{first}, []string{first}},
		{[]string{"*", "-" + first}, rest},
		{[]string{"-" + first, "*"}, rest},
	}
	for _, c := range cases {
		o := NewOptions()
		o.Controllers = c.flags
		if got := o.Enabled(); !reflect.DeepEqual(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("Enabled(%v) = %v, want %v", c.flags, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	o := NewOptions()
	if errs := o.Validate(); len(errs) != 0 {
		t.Fatalf("defaults: %v", errs)
	}
	o.Controllers = []string{"nosuch"}
	o.Workers = 0
	o.LeaderElection.RenewDeadline = o.LeaderElection.LeaseDuration
	if errs := o.Validate(); len(errs) != 3 {
		t.Fatalf("want 3 errors, got %v", errs)
	}
}
