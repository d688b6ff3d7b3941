# chorus - replicated block storage for Linux.
#
# `make help` lists the targets. The kernel module is built out of tree by
# Kbuild (see the Kbuild file); userspace with CMake; tests run in the VM lab.

ROOT   := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD  := $(ROOT)/build
KVER   ?= $(shell $(ROOT)/tools/kver 2>/dev/null)
KDIR   ?= /lib/modules/$(KVER)/build
JOBS   ?= $(shell nproc)
# -j$(JOBS) for a sub-make, unless this make already hands out jobs to its
# sub-makes (make -jN: a jobserver in MAKEFLAGS, which a forced -j would reset).
SUBJOBS = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS))
CMAKE_BUILD_TYPE ?= RelWithDebInfo
PREFIX ?= /usr/local
DESTDIR ?=
# make install's defaults: the admin's directories. The Debian packages
# (debian/rules) install to the distribution's, /lib/udev/rules.d and
# /lib/systemd/system.
UDEVRULESDIR ?= /etc/udev/rules.d
SYSTEMDUNITDIR ?= /etc/systemd/system
# Extra cmake -D options for the userspace build (debian/rules: no unit tests).
CMAKE_ARGS ?=
# The userspace build goes through ccache when there is one (make deps
# installs it): a fresh clone on a machine that built chorus before, as CI's
# is, rebuilds in seconds instead of four minutes. Paths are taken relative
# to the checkout, so one clone's objects serve another's. CCACHE= turns it
# off (debian/rules does: a package is built from nothing).
CCACHE ?= $(shell command -v ccache 2>/dev/null)
# The one version number is the one in userspace/CMakeLists.txt.
VERSION := $(shell grep -m1 -o 'chorus-userspace VERSION [0-9.]*' \
	$(ROOT)/userspace/CMakeLists.txt | cut -d' ' -f3)

.DEFAULT_GOAL := all
.PHONY: help all deps module userspace selftests insn-profile man dkms-source dkms-check lint lint-kernel lint-cpp lint-man \
	unit fuzz fuzz-check vmtest check check-debug check-all-variants check-cluster check-cluster-rdma debug-kernel module-debug demo bench failover-bench cluster-bench etcd-idle-bench install install-tools deb check-deb clean

help:
	@echo 'chorus - targets'
	@echo '  make deps       install the Debian packages everything needs (idempotent)'
	@echo '  make            build chorus.ko, chorusctl, chorusd and the selftests'
	@echo '  make check      deps + build + lint + unit tests + fuzz-check + VM tests (what CI runs)'
	@echo '  make check-debug  the VM tests on the debug lab kernel (lockdep, KASAN, KFENCE,'
	@echo '                  kmemleak): the gate for changes to kernel/ (FILTER=name)'
	@echo '  make debug-kernel  build the debug lab kernel only (cached; resumes if stopped)'
	@echo '  make demo       deps + build + a 3-node cluster and a multipath host; the owner killed'
	@echo '  make module     build chorus.ko only (KVER=$(KVER))'
	@echo '  make userspace  build chorusctl, chorusd and the unit tests (build/bin)'
	@echo '  make selftests  build the kselftest-harness VM tests (build/selftests)'
	@echo '  make man        the man pages, from Documentation/ (build/man)'
	@echo '  make dkms-source  the module source with dkms.conf in $$(DESTDIR)/usr/src/chorus-$(VERSION)'
	@echo '  make dkms-check  dkms builds and installs chorus.ko in a scratch tree (no system change)'
	@echo '  make lint       checkpatch --strict, W=1 + sparse, clang-format, man pages'
	@echo '  make unit       run the GoogleTest unit tests (ctest)'
	@echo '  make fuzz       the libFuzzer targets of the wire checks, FUZZ_SECONDS=$(FUZZ_SECONDS)'
	@echo '                  each (tests/fuzz; FUZZ_TARGETS=fuzz_hdr ...)'
	@echo '  make fuzz-check  the same for $(FUZZ_CHECK_SECONDS) s each: what make check runs'
	@echo '  make vmtest     run the VM tests (tests/selftests/run; FILTER=name)'
	@echo '  make bench      fio: chorus vs bare disk, DRBD and nvmet in 2 VMs'
	@echo '  make insn-profile  the lab QEMU plugin counting guest instructions per address'
	@echo '                  -> Documentation/benchmarks.md (BENCH_ARGS=--targets ...)'
	@echo '  make check-all-variants  the VM tests with every case in every variant (make'
	@echo '                  check runs a variant only where it changes the case; FILTER=name)'
	@echo '  make check-cluster  every case of cluster, cluster_disk and cluster_iscsi over TCP (make check runs 4 of 12)'
	@echo '  make check-cluster-rdma  every case of cluster and cluster_disk with its volumes and its'
	@echo '                  NVMe-oF host over RDMA (soft-RoCE; make check runs it over TCP)'
	@echo '  make failover-bench  owner VM killed 20 times in a 3-node cluster with a host: time to the'
	@echo '                  first write on the new owner (FAILOVER_ARGS=--kills N --ttl S --protocol iscsi --kill access)'
	@echo '  make cluster-bench  a host through 3 nodes over NVMe/TCP and NVMe/RDMA: 1 and 3'
	@echo '                  volumes, direct and forwarded, the bank test, against plain nvmet'
	@echo '                  (CLUSTER_BENCH_ARGS=--transports tcp,rdma --runtime S --size M)'
	@echo '  make etcd-idle-bench  the CPU an idle 3-node cluster takes under TCG per etcd'
	@echo '                  heartbeat (ETCD_IDLE_ARGS=--seconds S --settings "HB:EL[:PROCS] ...")'
	@echo '  make install    install module, chorusctl, chorusd, udev rule, systemd unit'
	@echo '                  (PREFIX=$(PREFIX), DESTDIR=, KVER=$(KVER))'
	@echo '  make install-tools  the same without the module'
	@echo '  make deb        Debian packages chorus-dkms and chorus-tools in build/deb,'
	@echo '                  checked by lintian (DEB_JOBS=1)'
	@echo '  make check-deb  make deb, then install both packages on two lab VMs, run the README example, purge'
	@echo '                  (CHECK_DEB_ARGS=--upgrade-dkms: upgrade chorus-dkms too, +8 min)'
	@echo '  make clean      remove build outputs'
	@echo 'VM lab by hand: tools/vm/lab help'

deps:
	@$(ROOT)/tools/deps

all: module userspace selftests insn-profile

module:
	@test -n "$(KVER)" || { echo 'no 6.1 kernel installed: run make deps'; exit 1; }
	$(MAKE) $(SUBJOBS) -C $(KDIR) M=$(ROOT) W=1 modules

userspace:
	cmake -S $(ROOT)/userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE) \
		-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE) \
		$(CMAKE_ARGS)
	CCACHE_BASEDIR=$(ROOT) CCACHE_NOHASHDIR=true cmake --build $(BUILD)/userspace -j$(JOBS)

selftests:
	@$(ROOT)/tools/kernel-files $(BUILD)/kernel-files
	$(MAKE) $(SUBJOBS) -C $(ROOT)/tests/selftests OUT=$(BUILD)/selftests \
		KERNEL_FILES=$(BUILD)/kernel-files

man:
	$(ROOT)/tools/man/build $(BUILD)/man

# The lab's QEMU plugin counting guest instructions per code address (tools/vm/insn-profile).
insn-profile: $(BUILD)/tools/insn_profile.so

$(BUILD)/tools/insn_profile.so: $(ROOT)/tools/vm/insn-profile/insn_profile.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden -pthread -o $@ $<

# What DKMS needs to build chorus.ko for any kernel: Kbuild, kernel/, include/.
dkms-source:
	install -d $(DESTDIR)/usr/src/chorus-$(VERSION)/kernel
	install -m 0644 $(ROOT)/Kbuild $(DESTDIR)/usr/src/chorus-$(VERSION)/
	install -m 0644 $(ROOT)/kernel/*.c $(ROOT)/kernel/*.h \
		$(DESTDIR)/usr/src/chorus-$(VERSION)/kernel/
	cp -r $(ROOT)/include $(DESTDIR)/usr/src/chorus-$(VERSION)/
	sed 's/@VERSION@/$(VERSION)/' $(ROOT)/tools/dkms/dkms.conf.in \
		> $(DESTDIR)/usr/src/chorus-$(VERSION)/dkms.conf

dkms-check:
	$(ROOT)/tools/dkms/check $(VERSION) $(KVER)

lint: lint-kernel lint-cpp lint-man

lint-man: man userspace
	@$(ROOT)/tools/man/check $(BUILD)/man $(BUILD)/bin/chorusctl

lint-kernel:
	@$(ROOT)/tools/lint-kernel

lint-cpp:
	@echo 'lint: clang-format on userspace and tests/unit'
	@cd $(ROOT) && files=$$(git ls-files -co --exclude-standard 'userspace/*.cc' \
		'userspace/*.h' 'tests/unit/*.cc' 'tests/unit/*.h') && \
		test -n "$$files" && clang-format --dry-run -Werror $$files

# In parallel: most of the tests' time is the etcd servers they start and wait
# for (free ports each), not CPU: 85 s one at a time, 40 s with -j2 (stop 43).
unit: userspace
	ctest --test-dir $(BUILD)/userspace --output-on-failure -j$(JOBS)

# The fuzzers build with clang, outside `make all`; tests/fuzz/run reports.
FUZZ_SECONDS ?= 60
FUZZ_CHECK_SECONDS ?= 2
fuzz:
	$(ROOT)/tests/fuzz/run --seconds $(FUZZ_SECONDS) --out $(BUILD)/fuzz $(FUZZ_TARGETS)

fuzz-check:
	$(ROOT)/tests/fuzz/run --seconds $(FUZZ_CHECK_SECONDS) --out $(BUILD)/fuzz $(FUZZ_TARGETS)

vmtest: module userspace selftests
	$(ROOT)/tests/selftests/run $(if $(FILTER),--filter $(FILTER))

check: deps
	$(MAKE) all
	$(MAKE) lint
	$(MAKE) unit
	$(MAKE) fuzz-check
	$(MAKE) vmtest

# The debug lab kernel (tools/vm/debug-kernel/build: cached outside the checkout, resumes)
# and chorus.ko built for it in build/modules/<release>/, where tools/insmod-chorus looks
# first in a guest running that release.
debug-kernel:
	@$(ROOT)/tools/vm/debug-kernel/build

DEBUG_KVER = $(shell $(ROOT)/tools/vm/debug-kernel/build --print-kver)
DEBUG_MOD  = $(BUILD)/modules/$(DEBUG_KVER)

module-debug:
	@test -n "$(DEBUG_KVER)" || { echo 'no debug lab kernel: make debug-kernel'; exit 1; }
	mkdir -p $(DEBUG_MOD)/kernel
	cp $(ROOT)/Kbuild $(DEBUG_MOD)/
	cp $(ROOT)/kernel/*.[ch] $(DEBUG_MOD)/kernel/
	cp -a $(ROOT)/include $(DEBUG_MOD)/
	$(MAKE) -C /lib/modules/$(DEBUG_KVER)/build M=$(DEBUG_MOD) W=1 modules

check-debug: deps
	$(MAKE) all
	$(MAKE) debug-kernel
	$(MAKE) module-debug
	KVER=$$($(ROOT)/tools/vm/debug-kernel/build --print-kver) \
		CHORUS_SELFTEST_TIMEOUT_SCALE=$${CHORUS_SELFTEST_TIMEOUT_SCALE:-4} \
		CHORUS_LAB_BOOT_TIMEOUT=$${CHORUS_LAB_BOOT_TIMEOUT:-300} \
		$(ROOT)/tests/selftests/run --no-build $(if $(FILTER),--filter $(FILTER))

demo: deps
	$(MAKE) all
	$(ROOT)/tools/demo

bench: all
	$(ROOT)/tools/bench/run $(BENCH_ARGS)

check-all-variants: all
	CHORUS_SELFTEST_ALL_VARIANTS=1 $(ROOT)/tests/selftests/run --no-build $(if $(FILTER),--filter $(FILTER))

# Soft-RoCE under TCG with four VMs runs the suite at about half the speed of
# TCP (stop 35: two cases ran out of their timeouts with every write verified):
# case timeouts, waits and pause bounds (scaled()) twice as long.
check-cluster: all
	CHORUS_SELFTEST_ALL_VARIANTS=1 $(ROOT)/tests/selftests/run --filter cluster,cluster_disk,cluster_iscsi

check-cluster-rdma: all
	CHORUS_CLUSTER_TRANSPORT=rdma CHORUS_SELFTEST_ALL_VARIANTS=1 \
		CHORUS_SELFTEST_TIMEOUT_SCALE=$${CHORUS_SELFTEST_TIMEOUT_SCALE:-2} \
		$(ROOT)/tests/selftests/run --filter cluster,cluster_disk

failover-bench: all
	$(ROOT)/tools/bench/failover $(FAILOVER_ARGS)

cluster-bench: all
	$(ROOT)/tools/bench/cluster-host $(CLUSTER_BENCH_ARGS)

etcd-idle-bench: all
	$(ROOT)/tools/bench/etcd-idle $(ETCD_IDLE_ARGS)

install: module install-tools
	install -D -m 0644 $(ROOT)/chorus.ko $(DESTDIR)/lib/modules/$(KVER)/extra/chorus.ko
	$(if $(DESTDIR),,depmod $(KVER))

install-tools: userspace man
	install -D -m 0755 $(BUILD)/bin/chorusctl $(DESTDIR)$(PREFIX)/sbin/chorusctl
	install -D -m 0755 $(BUILD)/bin/chorusd $(DESTDIR)$(PREFIX)/sbin/chorusd
	install -D -m 0644 $(ROOT)/tools/udev/60-chorus.rules \
		$(DESTDIR)$(UDEVRULESDIR)/60-chorus.rules
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@PREFIX@|$(PREFIX)|g' $(ROOT)/userspace/chorusd/chorusd.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/chorusd.service
	install -D -m 0644 $(ROOT)/tools/completion/chorusctl \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/chorusctl
	for page in $(BUILD)/man/*.[1-9]; do \
		install -D -m 0644 $$page \
			$(DESTDIR)$(PREFIX)/share/man/man$${page##*.}/$${page##*/}; \
	done

# Packages are built from a copy of the tree in build/deb (tools/deb/build),
# so that the checkout gets no debian/ build debris and the .debs land there.
DEB_JOBS ?= 1
deb:
	$(ROOT)/tools/deb/build --jobs $(DEB_JOBS)

# Not part of make check (its time budget is full): one lab VM, about 12 min,
# most of it DKMS compiling chorus.ko in the guest under TCG.
check-deb: deb
	$(ROOT)/tools/deb/check $(CHECK_DEB_ARGS)

clean:
	-$(MAKE) -C $(KDIR) M=$(ROOT) clean
	rm -rf $(BUILD)
