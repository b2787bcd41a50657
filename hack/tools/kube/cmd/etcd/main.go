// Command etcd is the etcd server kube-apiserver stores the local cluster in, built from
// go.etcd.io/etcd/server/v3 at the version kube-apiserver v1.36.3 is tested with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
