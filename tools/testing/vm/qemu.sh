#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one test VM and wait for it to power off.
#
#   tools/testing/vm/qemu.sh KERNEL_VERSION OUTDIR TIMEOUT [QEMU_ARG...]
#
# The guest sees the host's / read-only (tag "hostroot") and OUTDIR
# read-write (tag "results"); OUTDIR/.vm/boot.sh is what it runs after
# switch_root.  The shares are virtio-9p, or virtio-fs for a kernel without
# 9p (Debian's cloud kernels; vmfs.sh decides from the kernel's config).  The serial console goes to OUTDIR/console.log, so a panic
# is on record even when the guest never gets to save its dmesg.  After
# TIMEOUT seconds qemu is killed: a hung guest cannot hang CI.
#
# Exit status: qemu's, or 124 if the timeout killed it.
#
# Any QEMU_ARGs are appended to qemu's command line (interop.sh adds a NIC
# that way).  SROCE_VM_SHARES="TAG=DIR..." adds read-write shares of host
# directories, 9p or virtio-fs like the others, for the guest to mount by
# TAG (interop.sh's "sync").  SROCE_VM_SMP and SROCE_VM_MEM set the vCPUs
# and memory (default 2 and 2G).
#
# virtio-fs: one virtiofsd a share, started here and stopped when QEMU
# ends.  The host's / is served from a read-only bind mount in a mount
# namespace of its own (virtiofsd has no read-only mode; 9p's readonly=on
# is QEMU's), with cache=always: the host's files do not change under a
# test VM, and without it (cache=none: direct I/O) 6.1's virtio-fs hangs in
# virtio_fs_enqueue_req when finit_module reads a .ko (its buffer is
# vmalloc'ed; SROCE_VIRTIOFS_CACHE=auto|none to try others).  The
# writable shares use cache=none: the host polls the
# results as they are written, and the two VMs of a pair see each other's
# files in "sync" at once.
#
# SROCE_KERNEL_IMAGE boots that image instead of /boot/vmlinuz-KERNEL_VERSION,
# and SROCE_MODULES_ROOT/lib/modules/KERNEL_VERSION stands in for the guest's
# /lib/modules/KERNEL_VERSION (a kernel that is not installed on the host:
# the debug kernel, see tools/debug-kernel/; vm/init makes the link);
# SROCE_KERNEL_CMDLINE is added to the kernel's command line.
#
# TCG, not KVM: KVM hangs on this class of machine.  Two vCPUs on two host
# cores with multi-threaded TCG; never run two of these at once.  A kernel
# given by SROCE_KERNEL_IMAGE (the debug kernel, which has no ACPI) gets a
# socket per vCPU: it finds its CPUs in SeaBIOS's MP table, which lists
# only the first CPU of a package, so with QEMU's default of one socket of
# N cores it booted with one CPU.  The stock kernels keep one socket (they
# read ACPI): as on most machines, their CPUs share a cache, which 6.12's
# unbound workqueues go by (a pod per socket would keep sroce's work items
# on the CPU that queued them).

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=vmfs.sh
. "$HERE/vmfs.sh"

[ $# -ge 3 ] || { echo "usage: $0 KERNEL_VERSION OUTDIR TIMEOUT [QEMU_ARG...]" >&2; exit 2; }
KVER=$1 OUTDIR=$2 TIMEOUT=$3
shift 3
SMP=${SROCE_VM_SMP:-2} MEM=${SROCE_VM_MEM:-2G}
TOPOLOGY=$SMP
[ -z "${SROCE_KERNEL_IMAGE:-}" ] || TOPOLOGY="$SMP,sockets=$SMP,cores=1,threads=1"
VIRTIOFSD=${SROCE_VIRTIOFSD:-/usr/lib/qemu/virtiofsd}

FS=$(vm_fs "$KVER")
INITRD=$("$HERE/mkinitramfs.sh" "$KVER")

# loglevel=5: warnings and worse reach the console (and console.log);
# everything is in dmesg anyway.  mitigations=off makes TCG a bit faster.
# No panic on oops: the harness wants to see it and go on to the end.
CMDLINE="console=ttyS0 loglevel=5 panic=-1 mitigations=off net.ifnames=0"
# tsc=reliable: TCG's CPU says AMD without a constant TSC, and the kernel
# takes such TSCs on more than one CPU for unsynchronized: 6.1 then runs
# on the HPET (an emulated MMIO read for every clock read, which slows
# everything timed: 32-rdmacm took 69 s, 28 s on the TSC) and the debug
# kernel, which finds no HPET without ACPI, on jiffies.  The vCPUs' TSCs
# all come from the host's.
CMDLINE+=" tsc=reliable"
CMDLINE+=" rdinit=/init printk.devkmsg=on"
# SROCE_KERNEL_CMDLINE: more kernel parameters (the debug kernel's).
CMDLINE+=${SROCE_KERNEL_CMDLINE:+ $SROCE_KERNEL_CMDLINE}
# Not kernel parameters: the kernel hands them to /init as variables.
# sroce_repo: init keeps the repository visible if it lives under /tmp,
# which the guest covers with its own tmpfs.  sroce_fs: how to mount the
# shares (9p or virtiofs).
CMDLINE+=" sroce_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
CMDLINE+=" sroce_fs=$FS"
[ -z "${SROCE_MODULES_ROOT:-}" ] || CMDLINE+=" sroce_modroot=$SROCE_MODULES_ROOT"

QEMU=(qemu-system-x86_64
	-accel "tcg,thread=multi" -cpu max -m "$MEM" -smp "$TOPOLOGY"
	-no-reboot -nic none
	-display none -vga none -monitor none
	-serial "file:$OUTDIR/console.log"
	-kernel "${SROCE_KERNEL_IMAGE:-/boot/vmlinuz-$KVER}" -initrd "$INITRD" -append "$CMDLINE")

# SHARES: TAG=DIR of the writable shares.
read -r -a SHARES <<<"results=$OUTDIR ${SROCE_VM_SHARES:-}"

if [ "$FS" = 9p ]; then
	QEMU+=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap")
	for share in "${SHARES[@]}"; do
		QEMU+=(-virtfs "local,path=${share#*=},mount_tag=${share%%=*},security_model=none,multidevs=remap")
	done
	exec timeout --kill-after=10 "$TIMEOUT" "${QEMU[@]}" "$@" </dev/null
fi

# ------------------------------------------------------------ virtio-fs ----

[ -x "$VIRTIOFSD" ] || { echo "qemu.sh: $VIRTIOFSD missing (qemu-system-common)" >&2; exit 2; }
# Sockets in a short path: a socket's path is at most 107 bytes.
VFS=$(mktemp -d /tmp/sroce-vfs.XXXXXX)
VFS_PIDS=()
QPID=

# Under set -e: a kill of a process already gone must not end it early.
cleanup() {
	local p
	[ -z "$QPID" ] || kill "$QPID" 2>/dev/null || true
	for p in "${VFS_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${VFS_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$VFS"
}
trap cleanup EXIT

# virtiofsd TAG DIR CACHE [ro]: serve DIR as TAG; its log in OUTDIR/.vm/.
virtiofsd() {
	local tag=$1 dir=$2 sock=$VFS/$1.sock log=$OUTDIR/.vm/virtiofsd-$1.log
	local opts="-o cache=$3 -o announce_submounts"

	mkdir -p "$OUTDIR/.vm"
	if [ "${4:-}" = ro ]; then
		# unshare execs: the pid is virtiofsd's.
		mkdir "$VFS/$tag.ro"
		unshare --mount --propagation private sh -c \
			'mount --rbind "$1" "$2" && mount -o remount,bind,ro "$2" &&
			 exec "$3" --socket-path="$4" -o source="$2" $5' \
			sh "$dir" "$VFS/$tag.ro" "$VIRTIOFSD" "$sock" "$opts" >"$log" 2>&1 &
	else
		# shellcheck disable=SC2086 # $opts is words
		"$VIRTIOFSD" --socket-path="$sock" -o source="$dir" $opts >"$log" 2>&1 &
	fi
	VFS_PIDS+=($!)
	QEMU+=(-chardev "socket,id=fs-$tag,path=$sock"
	       -device "vhost-user-fs-pci,chardev=fs-$tag,tag=$tag")
}

virtiofsd hostroot / "${SROCE_VIRTIOFS_CACHE:-always}" ro
for share in "${SHARES[@]}"; do
	virtiofsd "${share%%=*}" "${share#*=}" none
done
# QEMU connects at once: every socket must be there (5 s at most).
for i in $(seq 50); do
	[ "$(find "$VFS" -maxdepth 1 -name '*.sock' | wc -l)" -lt ${#VFS_PIDS[@]} ] || break
	[ "$i" -lt 50 ] || { echo "qemu.sh: virtiofsd did not start, see $OUTDIR/.vm/virtiofsd-*.log" >&2; exit 2; }
	sleep 0.1
done

# vhost-user needs the guest's RAM shared with virtiofsd.
QEMU+=(-object "memory-backend-memfd,id=mem,size=$MEM,share=on" -numa "node,memdev=mem")

# Not exec'ed: the virtiofsds go when QEMU does.  A TERM (run.sh, interop.sh
# stopping a VM) goes to timeout, which passes it on to QEMU.
timeout --kill-after=10 "$TIMEOUT" "${QEMU[@]}" "$@" </dev/null &
QPID=$!
trap 'kill "$QPID" 2>/dev/null' INT TERM
rc=0
wait "$QPID" || rc=$?
# A trapped signal ends the first wait early.
while kill -0 "$QPID" 2>/dev/null; do
	rc=0
	wait "$QPID" || rc=$?
done
QPID=
exit "$rc"
