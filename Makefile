# SPDX-License-Identifier: GPL-2.0-only
#
# sroce: a software RoCEv2 RDMA device.
#
#   make                 build against the running kernel (or KDIR=...)
#   make both            build against both Debian kernels (6.1 and 6.12)
#   make cloud           build against Debian's two cloud kernels (6.1, 6.12)
#   make check           W=1, sparse (C=2) and checkpatch --strict, both kernels
#   make check-cloud     W=1 and sparse (C=2) on the two cloud kernels
#   make deps            install everything a Debian 12 machine needs (apt)
#   make test            build, check and run the VM test suite (T=name for one)
#   make test-cloud      the VM test suite on the cloud kernels (virtio-fs;
#                        T=name for some)
#   make fuzz            the RoCEv2 fuzzer, long, both kernels (FUZZ_PACKETS=,
#                        default 200000 a kernel; FUZZ_SEED=)
#   make run             boot a VM, create sroce0 and show it working
#   make bench           sroce against rdma_rxe, both kernels (BENCH_KERNELS=,
#                        BENCH_REPEAT=); about an hour; build/bench/report.md
#   make bench-smoke     a few benchmark points, once, on one kernel
#   make soak            RC WRITE/READ/SEND through netem faults, every byte
#                        checked, both kernels (SROCE_SOAK_BYTES=, default 4G)
#   make soak-debug      the same on the debug kernel (default 32M)
#   make debug-kernel    build (or reuse) the KASAN/lockdep/kmemleak kernel
#   make test-debug      the VM test suite on the debug kernel (T=name for some)
#   make kcsan-kernel    build (or reuse) the KCSAN flavour of it
#   make test-kcsan      the VM test suite on the KCSAN kernel (T=name for some)
#   make kunit           the KUnit suites (sroce_kunit.ko) in the debug kernel
#   make churn           20-churn with 100 cycles, both kernels (CHURN_CYCLES=)
#   make interop         sroce against rdma_rxe on the wire: both kernels,
#                        sroce as server and as client ("make test": two)
#   make interop-cloud   the same with sroce on the cloud kernels, rdma_rxe
#                        on the generic kernel of the same version
#   make ulp-stress      37-ulp-faults with 64 MiB a ULP, both kernels
#   make stacked         22-stacked: RoCE over a bridge, macvlan, bond (with
#                        failover) and a VLAN on a bond, both kernels
#                        ("make test": 6.1)
#   make load NETDEV=X   on a host that can load modules: load and create sroce0
#   make install         modules_install to /lib/modules/<release>/updates,
#                        depmod, the sroce@.service unit (KDIR=,
#                        INSTALL_MOD_PATH=); make uninstall undoes it
#   make deb             build/sroce-dkms_<version>_all.deb (DKMS, dh-dkms)
#   make test-dkms       the .deb on this host: dpkg -i, dkms status and
#                        modinfo for the four kernels, each booted in a VM
#                        on the DKMS-built module (a smoke), dpkg -P (root)
#   make version         print the version (tools/version.sh)
#   make clean

TOP      := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD    := $(TOP)/build
KDIR     ?= /lib/modules/$(shell uname -r)/build
KERNELS   = $(shell $(TOP)/tools/kernels.sh)
# Debian's cloud flavour: no rdma_rxe, siw, iSER, SRP or 9p.
CLOUD_KERNELS = $(shell $(TOP)/tools/kernels.sh cloud)
# What "make sparse" checks: the generic pair, or the cloud one (check-cloud).
SPARSE_KERNELS = $(KERNELS)
SRC612   ?= /var/cache/sroce/linux-source-6.12
CHECKPATCH = $(SRC612)/scripts/checkpatch.pl
SOURCES   = $(shell cd $(TOP) && git ls-files -co --exclude-standard \
		'drivers/*.c' 'drivers/*.h' 'include/*.h' 2>/dev/null)
NETDEV   ?= eth0
T        ?=
BENCH_KERNELS ?=
BENCH_REPEAT  ?=
FUZZ_PACKETS  ?=
FUZZ_SEED     ?=
CHURN_CYCLES  ?= 100
ULP_MIB       ?= 64
# tools/version.sh: git describe, as a Debian version (modinfo, the .deb).
VERSION  := $(shell $(TOP)/tools/version.sh)

# build_one KDIR: build sroce.ko for the kernel tree KDIR into
# build/<release>/.  Each release gets its own tree of symlinks to the
# sources, so that objects for different kernels never meet.
define build_one
	set -e; kdir='$(1)'; \
	rel=$$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' $$kdir/include/generated/utsrelease.h 2>/dev/null); [ -n "$$rel" ] || \
		{ echo "no kernel headers in $$kdir (try 'make deps' or KDIR=)"; exit 1; }; \
	out=$(BUILD)/$$rel; mkdir -p $$out; \
	cp -rsf $(TOP)/Kbuild $(TOP)/drivers $(TOP)/include $$out/; \
	find -L $$out -type l -delete 2>/dev/null || true; \
	$(MAKE) -C $$kdir M=$$out W=1 SROCE_WERROR=y SROCE_VERSION='$(VERSION)' \
		$(SPARSE_ARGS) modules; \
	cp $$out/drivers/infiniband/sw/sroce/*.ko $$out/
endef

DEBUG_KERNEL = $(TOP)/tools/debug-kernel

.PHONY: all modules both check sparse checkpatch deps test run load unload clean help
.PHONY: cloud check-cloud test-cloud interop-cloud
.PHONY: debug-kernel test-debug kcsan-kernel test-kcsan kunit bench bench-smoke fuzz soak soak-debug churn
.PHONY: interop ulp-stress stacked install uninstall deb test-dkms version

all modules:
	@$(call build_one,$(KDIR))

# build_each RELEASES: build for each of them.
define build_each
	@for v in $(1); do \
		echo "== build $$v"; \
		$(MAKE) --no-print-directory -C $(TOP) modules KDIR=/lib/modules/$$v/build || exit 1; \
	done
endef

both:
	$(call build_each,$(KERNELS))

cloud:
	$(call build_each,$(CLOUD_KERNELS))

check: sparse checkpatch

# checkpatch reads only the sources: once for all kernels, in "make check".
check-cloud:
	@$(MAKE) --no-print-directory -C $(TOP) sparse SPARSE_KERNELS="$(CLOUD_KERNELS)"

# Sparse at C=2 rebuilds every file; any sparse diagnostic fails the check.
sparse:
	@command -v sparse >/dev/null || { echo "sparse not installed (make deps)"; exit 1; }
	@set -e; for v in $(SPARSE_KERNELS); do \
		echo "== sparse $$v"; \
		log=$(BUILD)/sparse-$$v.log; \
		$(MAKE) --no-print-directory -C $(TOP) modules \
			KDIR=/lib/modules/$$v/build SPARSE_ARGS=C=2 2>&1 | tee $$log; \
		if grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' $$log; then \
			echo "sparse: diagnostics on $$v"; exit 1; fi; \
	done

# The compat header is the one place where kernel versions are compared,
# by design (see its comment); checkpatch's version warnings are waived
# there and nowhere else, with the unused argument of a shim that is empty
# on one side.
COMPAT_H = include/sroce/compat.h
# The TRACE_EVENT() language has lines end with '(' and arguments not
# aligned to them, as every trace header in the kernel; those two layout
# checks are waived for the driver's one trace header.
TRACE_H = drivers/infiniband/sw/sroce/trace.h
checkpatch:
	@test -f $(CHECKPATCH) || { echo "checkpatch.pl not found in $(SRC612) (make deps)"; exit 1; }
	@echo "== checkpatch --strict"
	@mkdir -p $(BUILD); cd $(TOP); { \
	perl $(CHECKPATCH) --no-tree --strict --terse --show-types \
		-f $(filter-out $(COMPAT_H) $(TRACE_H),$(SOURCES)); \
	perl $(CHECKPATCH) --no-tree --strict --terse --show-types \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON,MACRO_ARG_UNUSED \
		-f $(COMPAT_H); \
	perl $(CHECKPATCH) --no-tree --strict --terse --show-types \
		--ignore OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT -f $(TRACE_H); \
	} | tee $(BUILD)/checkpatch.log; \
	! grep -qE ': (ERROR|WARNING|CHECK):' $(BUILD)/checkpatch.log

deps:
	@bash $(TOP)/tools/deps.sh

test:
	@bash $(TOP)/tools/testing/make-test.sh $(if $(T),--tests "$(T)")

# The whole VM suite (or T=) on the cloud kernels, booted with virtio-fs;
# "make test" runs only a smoke there.
test-cloud: cloud
	@bash $(TOP)/tools/testing/run.sh $(foreach v,$(CLOUD_KERNELS),--kernel $(v)) \
		$(if $(T),--tests "$(T)") --out $(BUILD)/cloud-results

run:
	@bash $(TOP)/tools/testing/make-run.sh

# tests/17-fuzz.sh with many packets, one VM a kernel, progress as it
# goes; build/fuzz-results/<VER>/.  "make test" runs a short pass.
fuzz: both
	@FUZZ_PACKETS="$(FUZZ_PACKETS)" FUZZ_SEED="$(FUZZ_SEED)" \
		bash $(TOP)/tools/testing/fuzz.sh

# Boots an rdma_rxe VM then a sroce VM per kernel; see
# Documentation/benchmarks.rst.  Not part of "make test", but the smoke is.
BENCH = BENCH_KERNELS="$(BENCH_KERNELS)" BENCH_REPEAT="$(BENCH_REPEAT)" \
	bash $(TOP)/tools/testing/bench/bench.sh
bench: both
	@$(BENCH)

bench-smoke: both
	@$(BENCH) --smoke

# 5 % loss, 5 % reorder, 1 % duplication, 0.1 % corruption each way; a
# table of time, rate and retransmission counters at the end (see
# tools/testing/README.rst).  "make test" runs a short READ-only form
# (tests/47-read-loss.sh); SROCE_SOAK_BYTES=64M for a short run.
soak: both
	@bash $(TOP)/tools/testing/soak.sh

soak-debug:
	@bash $(TOP)/tools/testing/soak.sh --debug

# The kernel is cached in /var/cache/sroce/debug-kernel/<key>/ (printed).
debug-kernel:
	@bash $(DEBUG_KERNEL)/build.sh

test-debug:
	@bash $(DEBUG_KERNEL)/test-debug.sh $(if $(T),--tests "$(T)")

# The KCSAN flavour (KCSAN and KASAN exclude each other): its own cache key.
kcsan-kernel:
	@bash $(DEBUG_KERNEL)/build.sh --kcsan

test-kcsan:
	@bash $(DEBUG_KERNEL)/test-debug.sh --kcsan $(if $(T),--tests "$(T)")

# Builds sroce.ko and sroce_kunit.ko for the debug kernel (built first if
# needed), loads the suites in a VM; the last line counts the test cases.
kunit:
	@bash $(TOP)/tools/testing/kunit.sh

# The long churn: tests/20-churn.sh through tools/testing/long/ (a longer
# timeout), build/churn-results/<VER>/.
churn: both
	@$(MAKE) --no-print-directory -C $(TOP)/tools/testing/hostile
	@SROCE_TESTS_DIR=$(TOP)/tools/testing/long SROCE_CHURN_CYCLES=$(CHURN_CYCLES) \
		bash $(TOP)/tools/testing/run.sh --tests 20-churn-long \
		--out $(BUILD)/churn-results

# All four pairs: sroce-rxe and rxe-sroce on each kernel.
interop: both
	@bash $(TOP)/tools/testing/interop.sh

# sroce on a cloud kernel (no rdma_rxe there) against rdma_rxe on the
# generic kernel of its version (interop.sh picks it), four pairs.
interop-cloud: cloud
	@bash $(TOP)/tools/testing/interop.sh $(foreach v,$(CLOUD_KERNELS),--kernel $(v)) \
		--out $(BUILD)/interop-cloud-results

# The kernel ULPs over the lossy wire with more data than "make test"
# moves (ULP_MIB=, default 64), build/ulp-stress-results/<VER>/.
ulp-stress: both
	@SROCE_TESTS_DIR=$(TOP)/tools/testing/long SROCE_ULP_FAULTS_MIB=$(ULP_MIB) \
		bash $(TOP)/tools/testing/run.sh --tests 37-ulp-faults-long \
		--out $(BUILD)/ulp-stress-results

# RoCE over stacked netdevs, under traffic (several minutes a kernel),
# build/stacked-results/<VER>/.
stacked: both
	@$(MAKE) --no-print-directory -C $(TOP)/tools/testing/integrity
	@bash $(TOP)/tools/testing/run.sh --tests 22-stacked \
		--out $(BUILD)/stacked-results

load:
	@bash $(TOP)/tools/load.sh load $(NETDEV)

# For people building from git (the .deb is the other way, not both):
# sroce.ko into $(INSTALL_MOD_PATH)/lib/modules/<KDIR's release>/updates/,
# which depmod prefers to the kernel's own modules, and the unit template.
INSTALL_MOD_PATH ?=
UNITDIR  ?= /etc/systemd/system
KREL      = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
		$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
SROCE_UPDATES = $(INSTALL_MOD_PATH)/lib/modules/$(KREL)/updates/drivers/infiniband/sw/sroce
DEPMOD_ARGS = $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KREL)

install: modules
	@if [ -z "$(INSTALL_MOD_PATH)" ] && dpkg-query -W -f='$${Status}' sroce-dkms 2>/dev/null | \
		grep -q ' installed'; then \
		echo "the sroce-dkms package is installed: remove it first (apt remove sroce-dkms)"; \
		exit 1; fi
	$(MAKE) --no-print-directory -C $(KDIR) M=$(BUILD)/$(KREL) INSTALL_MOD_DIR=updates \
		modules_install
	depmod $(DEPMOD_ARGS)
	install -D -m 644 $(TOP)/tools/systemd/sroce@.service \
		$(INSTALL_MOD_PATH)$(UNITDIR)/sroce@.service
	@echo "installed $$(ls $(SROCE_UPDATES)) for $(KREL), version $(VERSION)"

uninstall:
	@test -n "$(KREL)" || { echo "no kernel headers in $(KDIR) (KDIR=)"; exit 1; }
	rm -rf $(SROCE_UPDATES)
	rm -f $(INSTALL_MOD_PATH)$(UNITDIR)/sroce@.service
	depmod $(DEPMOD_ARGS)

deb:
	@bash $(TOP)/tools/deb.sh

# Installs and removes the package on this host: see the script's top.
test-dkms:
	@nice -n 19 bash $(TOP)/tools/test-dkms.sh

version:
	@echo $(VERSION)

unload:
	@bash $(TOP)/tools/load.sh unload

clean:
	rm -rf $(BUILD)

help:
	@sed -n '3,42p' $(TOP)/Makefile
