#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make test-dkms, in the VM: the sroce that modprobe finds is the one the
# DKMS package built for this kernel (the harness lays no module of its
# own over /lib/modules: SROCE_MODULE_FROM=system), at the package's
# version, and it loads and unloads.  The tests after this one (links to
# ../tests/) then run on it.
. "$(dirname "$0")/../lib.sh"

want=/lib/modules/$KVER/updates/dkms/sroce.ko
file=$(modinfo -n sroce 2>&1)
check "modprobe finds DKMS's module: $file" \
	bash -c "[[ '$file' == $want* ]]"
check "modprobe sroce" modprobe sroce
check "its version is the package's ($SROCE_DKMS_VERSION)" \
	test "$(cat /sys/module/sroce/version 2>&1)" = "${SROCE_DKMS_VERSION:-?}"
check "the load message names it" \
	bash -c "dmesg | grep -q 'sroce: loaded, version ${SROCE_DKMS_VERSION:-?}'"
check "modprobe -r sroce" modprobe -r sroce
tap_done
