#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one test VM and wait for it to power off.
#
#   tools/testing/vm/qemu.sh KERNEL_VERSION OUTDIR TIMEOUT
#
# The guest sees the host's / read-only (9p tag "hostroot") and OUTDIR
# read-write (9p tag "results"); OUTDIR/.vm/boot.sh is what it runs after
# switch_root.  The serial console goes to OUTDIR/console.log, so a panic
# is on record even when the guest never gets to save its dmesg.  After
# TIMEOUT seconds qemu is killed: a hung guest cannot hang CI.
#
# Exit status: qemu's, or 124 if the timeout killed it.
#
# TCG, not KVM: KVM hangs on this class of machine.  Two vCPUs on two host
# cores with multi-threaded TCG; never run two of these at once.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

[ $# -eq 3 ] || { echo "usage: $0 KERNEL_VERSION OUTDIR TIMEOUT" >&2; exit 2; }
KVER=$1 OUTDIR=$2 TIMEOUT=$3

INITRD=$("$HERE/mkinitramfs.sh" "$KVER")

# loglevel=5: warnings and worse reach the console (and console.log);
# everything is in dmesg anyway.  mitigations=off makes TCG a bit faster.
# No panic on oops: the harness wants to see it and go on to the end.
CMDLINE="console=ttyS0 loglevel=5 panic=-1 mitigations=off net.ifnames=0"
CMDLINE+=" rdinit=/init printk.devkmsg=on"

exec timeout --kill-after=10 "$TIMEOUT" \
	qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu max -m 2G -smp 2 \
	-no-reboot -nic none \
	-display none -vga none -monitor none \
	-serial "file:$OUTDIR/console.log" \
	-kernel "/boot/vmlinuz-$KVER" -initrd "$INITRD" -append "$CMDLINE" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$OUTDIR,mount_tag=results,security_model=none,multidevs=remap" \
	</dev/null
