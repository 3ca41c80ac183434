# dm-flaz: the module (Kbuild), flazctl, and the test bed.
KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
FLAZ_CACHE ?= $(CURDIR)/.cache
export FLAZ_CACHE

.PHONY: all module flazctl install test demo bench upstream clean

all: module flazctl

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

flazctl:
	$(MAKE) -C tools/flazctl

# The module into /lib/modules/$(KVER)/updates, then flazctl and its man page.
install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KVER)
	$(MAKE) -C tools/flazctl install

# The whole suite: KUnit in UML, e2e in QEMU on Debian's 6.12 and 6.1 (and the core of it on
# 6.12 PREEMPT_RT and Debian 13 backports' newest 7.x), DKMS.
test:
	tests/run-all.sh

demo:
	tests/setup.sh
	tests/qemu/demo.sh

# Figures, not pass/fail: flaz vs dm-cache vs bcache vs no cache in one VM (QEMU), then the hit
# path's CPU cost at native speed (UML).
bench:
	tests/setup.sh
	tests/qemu/bench.sh
	tests/uml/bench.sh

# The module as a patch series for the kernel tree KTREE (default: Debian's linux-source-6.12),
# in UPSTREAM_OUT: drivers/md/dm-flaz/ with its Kconfig, its KUnit tests, and
# Documentation/admin-guide/device-mapper/dm-flaz.rst. make test builds the UML kernel from it.
KTREE ?=
UPSTREAM_OUT ?= $(CURDIR)/upstream-series
upstream:
	tools/upstream/series.sh "$(KTREE)" "$(UPSTREAM_OUT)"

clean:
	[ ! -d $(KDIR) ] || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools/flazctl clean
	rm -rf upstream-series
