# tapp-apiserver: an aggregated Kubernetes API server for TApp, YurtAppDaemon and NodePool.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -o errexit -o nounset -o pipefail -c

GO ?= go
BIN_DIR := bin
OUTPUT_DIR := _output
STANDALONE_DIR := $(OUTPUT_DIR)/standalone
SECURE_PORT ?= 8443
GO_TEST_FLAGS ?= -count=1

FUZZ_TIME ?= 60s

.PHONY: fuzz chaos all build image run run-standalone tools helm e2e bench test unit integration verify verify-gofmt verify-vet verify-codegen verify-module-pins verify-deploy codegen deploy-manifests clean

all: build

## build: compile bin/tapp-apiserver and the kubectl plugin bin/kubectl-tapp (and its completion link bin/kubectl_complete-tapp)
build:
	$(GO) build -o $(BIN_DIR)/tapp-apiserver ./cmd/tapp-apiserver
	$(GO) build -o $(BIN_DIR)/kubectl-tapp ./cmd/kubectl-tapp
	ln -sf kubectl-tapp $(BIN_DIR)/kubectl_complete-tapp

## image: the container image without a container daemon (cmd/tapp-image, pkg/ociimage): static tapp-apiserver and
## kubectl-tapp on an empty base, user 65532, as the OCI layout $(IMAGE_DIR)/oci and the docker/podman/ctr-loadable
## tarball $(IMAGE_DIR)/tapp-apiserver.tar; the same commit gives the same digest. The last line printed is the
## reference to deploy, $(IMAGE_REPOSITORY):<tag>@<digest> (docs/install.md). IMAGE_PLATFORMS=linux/amd64 builds one.
IMAGE_DIR := $(OUTPUT_DIR)/image
IMAGE_REPOSITORY ?= tapp-apiserver
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_VERSION ?= $(shell git describe --tags --always --dirty)
IMAGE_TAG ?= $(IMAGE_VERSION)
IMAGE_REVISION ?= $(shell git rev-parse HEAD)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct)
image:
	@$(GO) run ./cmd/tapp-image --out $(IMAGE_DIR) --repository $(IMAGE_REPOSITORY) --tag $(IMAGE_TAG) \
		--version $(IMAGE_VERSION) --revision $(IMAGE_REVISION) --source-date-epoch $(SOURCE_DATE_EPOCH) \
		--platforms $(IMAGE_PLATFORMS)

## run: a local control plane with tapp-apiserver behind the aggregator (hack/local-up.sh; Ctrl-C stops it, and
## run again restarts it on its data in _output/local); ARGS=--ha for two replicas on a three-member etcd,
## ARGS=--fresh to remove the earlier cluster first
run:
	./hack/local-up.sh $(ARGS)

## run-standalone: serve without a cluster on https://127.0.0.1:$(SECURE_PORT); kubeconfig in $(STANDALONE_DIR)/kubeconfig
run-standalone: build
	mkdir -p $(STANDALONE_DIR)
	$(BIN_DIR)/tapp-apiserver --standalone \
		--secure-port $(SECURE_PORT) \
		--cert-dir $(STANDALONE_DIR)/certs \
		--embedded-etcd-data-dir $(STANDALONE_DIR)/etcd \
		--write-kubeconfig $(STANDALONE_DIR)/kubeconfig

## tools: build kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and kwok into the cache
tools:
	./hack/build-tools.sh

## helm: build the Helm v3 and v4 clients the chart tests use into the cache (hack/build-helm.sh)
helm:
	./hack/build-helm.sh

## test: static checks, unit, integration and end-to-end tests (what CI runs)
test: verify unit integration e2e

## unit: unit tests of the API, registry and server packages
unit:
	$(GO) test $(GO_TEST_FLAGS) ./cmd/... ./pkg/...

## integration: the in-process server with embedded etcd, driven through client-go
integration:
	$(GO) test $(GO_TEST_FLAGS) ./test/integration/...

## e2e: the end-to-end suite on a local cluster behind kube-apiserver's aggregator (tools are built once into a cache)
e2e: build
	./hack/install-iproute2.sh
	tools_dir=$$(./hack/build-tools.sh | tail -n 1); \
	helm_dir=$$(./hack/build-helm.sh | tail -n 1); \
	TAPP_E2E_TOOLS_DIR=$$tools_dir TAPP_E2E_HELM_DIR=$$helm_dir TAPP_E2E_SERVER_BINARY=$(CURDIR)/$(BIN_DIR)/tapp-apiserver \
	TAPP_E2E_PLUGIN_BINARY=$(CURDIR)/$(BIN_DIR)/kubectl-tapp \
		$(GO) test -tags e2e $(GO_TEST_FLAGS) -timeout 45m ./test/e2e/...

## bench: benchmarks on the local cluster (API path vs a CRD, memory, scale-up and rolling update at each controller budget,
## resize, claim expansion, rolling update under a modelled node cost, fan-out, growth from 1000 to 10000; docs/benchmarks.md);
## results in $(OUTPUT_DIR)/bench/results.json and results.md; BENCH_FLAGS=--scale=0.1 for a quick run
BENCH_FLAGS ?=
bench: build
	./hack/install-iproute2.sh
	tools_dir=$$(./hack/build-tools.sh | tail -n 1); \
	$(GO) build -o $(BIN_DIR)/tapp-bench ./cmd/tapp-bench && \
	$(BIN_DIR)/tapp-bench --tools-dir "$$tools_dir" --server-binary $(BIN_DIR)/tapp-apiserver --out $(OUTPUT_DIR)/bench \
		--command "make bench$(if $(BENCH_FLAGS), BENCH_FLAGS='$(BENCH_FLAGS)')" $(BENCH_FLAGS)

## chaos: the chaos suite on a local cluster (SIGKILLs of tapp-apiserver during rollouts and under write load,
## kube-apiserver restarts, wrong stores, then a 30-minute soak under mixed load sampling tapp-apiserver's memory,
## goroutines and open files), then on the HA form (replica kills, etcd member kills: tapp-chaos --ha); rewrites
## the Chaos section of docs/reliability.md; CHAOS_FLAGS=--quick for a short run, --scenarios=... to pick
## (--scenarios=soak --soak-duration=30m --soak-interval=5m for the soak alone)
CHAOS_FLAGS ?=
chaos: build
	./hack/install-iproute2.sh
	tools_dir=$$(./hack/build-tools.sh | tail -n 1); \
	$(GO) build -o $(BIN_DIR)/tapp-chaos ./cmd/tapp-chaos || exit 1; \
	$(BIN_DIR)/tapp-chaos --tools-dir "$$tools_dir" --server-binary $(BIN_DIR)/tapp-apiserver --out $(OUTPUT_DIR)/chaos \
		--command "make chaos$(if $(CHAOS_FLAGS), CHAOS_FLAGS='$(CHAOS_FLAGS)')" $(CHAOS_FLAGS); single=$$?; \
	$(BIN_DIR)/tapp-chaos --ha --tools-dir "$$tools_dir" --server-binary $(BIN_DIR)/tapp-apiserver --out $(OUTPUT_DIR)/chaos \
		--command "make chaos$(if $(CHAOS_FLAGS), CHAOS_FLAGS='$(CHAOS_FLAGS)') (HA form)" $(CHAOS_FLAGS) || exit 1; \
	exit $$single

## fuzz: run every native fuzz target for FUZZ_TIME each (make test runs their seed corpora only)
fuzz:
	@for pkg in $$($(GO) list ./pkg/...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzzing $$target in $$pkg for $(FUZZ_TIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZ_TIME) $$pkg || exit 1; \
		done; \
	done

## verify: formatting, vet, generated code, module pins, and artifacts/deploy against the chart
verify: verify-gofmt verify-vet verify-module-pins verify-codegen verify-deploy

verify-gofmt:
	@out=$$(gofmt -l cmd pkg test hack 2>/dev/null); if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

verify-vet:
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/e2e/...

verify-codegen:
	./hack/verify-codegen.sh

verify-module-pins:
	./hack/verify-module-pins.sh

verify-deploy:
	./hack/verify-deploy.sh

## deploy-manifests: render the chart's default profile into artifacts/deploy (hack/render-deploy.sh)
deploy-manifests:
	./hack/render-deploy.sh

## codegen: regenerate deepcopy, defaulters, conversions, OpenAPI, clientset, listers, informers, apply configurations
codegen:
	./hack/update-codegen.sh

clean:
	rm -rf $(BIN_DIR) $(OUTPUT_DIR)
