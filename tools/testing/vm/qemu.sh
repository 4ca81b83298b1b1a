#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one test VM and wait for it to power off.
#
#   tools/testing/vm/qemu.sh KERNEL_VERSION OUTDIR TIMEOUT [QEMU_ARG...]
#
# The guest sees the host's / read-only (9p tag "hostroot") and OUTDIR
# read-write (9p tag "results"); OUTDIR/.vm/boot.sh is what it runs after
# switch_root.  The serial console goes to OUTDIR/console.log, so a panic
# is on record even when the guest never gets to save its dmesg.  After
# TIMEOUT seconds qemu is killed: a hung guest cannot hang CI.
#
# Exit status: qemu's, or 124 if the timeout killed it.
#
# Any QEMU_ARGs are appended to qemu's command line (interop.sh adds a NIC
# and a second 9p share that way).  SROCE_VM_SMP and SROCE_VM_MEM set the
# vCPUs and memory (default 2 and 2G).
#
# SROCE_KERNEL_IMAGE boots that image instead of /boot/vmlinuz-KERNEL_VERSION,
# and SROCE_MODULES_ROOT/lib/modules/KERNEL_VERSION stands in for the guest's
# /lib/modules/KERNEL_VERSION (a kernel that is not installed on the host:
# the debug kernel, see tools/debug-kernel/; vm/init makes the link);
# SROCE_KERNEL_CMDLINE is added to the kernel's command line.
#
# TCG, not KVM: KVM hangs on this class of machine.  Two vCPUs on two host
# cores with multi-threaded TCG; never run two of these at once.  Each vCPU
# is its own socket: SeaBIOS's MP table lists only the first CPU of a
# package, and the debug kernel (no ACPI) finds its CPUs in that table, so
# with QEMU's default of one socket of N cores it booted with one CPU.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

[ $# -ge 3 ] || { echo "usage: $0 KERNEL_VERSION OUTDIR TIMEOUT [QEMU_ARG...]" >&2; exit 2; }
KVER=$1 OUTDIR=$2 TIMEOUT=$3
shift 3
SMP=${SROCE_VM_SMP:-2} MEM=${SROCE_VM_MEM:-2G}

INITRD=$("$HERE/mkinitramfs.sh" "$KVER")

# loglevel=5: warnings and worse reach the console (and console.log);
# everything is in dmesg anyway.  mitigations=off makes TCG a bit faster.
# No panic on oops: the harness wants to see it and go on to the end.
CMDLINE="console=ttyS0 loglevel=5 panic=-1 mitigations=off net.ifnames=0"
CMDLINE+=" rdinit=/init printk.devkmsg=on"
# SROCE_KERNEL_CMDLINE: more kernel parameters (the debug kernel's).
CMDLINE+=${SROCE_KERNEL_CMDLINE:+ $SROCE_KERNEL_CMDLINE}
# Not kernel parameters: the kernel hands them to /init as variables.
# sroce_repo: init keeps the repository visible if it lives under /tmp,
# which the guest covers with its own tmpfs.
CMDLINE+=" sroce_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
[ -z "${SROCE_MODULES_ROOT:-}" ] || CMDLINE+=" sroce_modroot=$SROCE_MODULES_ROOT"

exec timeout --kill-after=10 "$TIMEOUT" \
	qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu max -m "$MEM" -smp "$SMP,sockets=$SMP,cores=1,threads=1" \
	-no-reboot -nic none \
	-display none -vga none -monitor none \
	-serial "file:$OUTDIR/console.log" \
	-kernel "${SROCE_KERNEL_IMAGE:-/boot/vmlinuz-$KVER}" -initrd "$INITRD" -append "$CMDLINE" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$OUTDIR,mount_tag=results,security_model=none,multidevs=remap" \
	"$@" </dev/null
