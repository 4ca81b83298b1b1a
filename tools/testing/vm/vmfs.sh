# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# How a test VM reaches the host's files: sourced by vm/qemu.sh and
# vm/mkinitramfs.sh (on the host).
#
# Debian's generic kernels have virtio-9p (9pnet_virtio, 9p): QEMU serves
# the host's / and the results directory itself (-virtfs).  Debian's cloud
# kernels have no 9p but have virtio-fs (virtiofs, and fuse on 6.1): each
# share is served by a virtiofsd process of QEMU's (qemu-system-common)
# over vhost-user, which needs the guest's RAM in shared memory.  The
# choice is made from the kernel's config, not its name, so that any
# kernel with either works.

# vm_fs KVER: print "9p" or "virtiofs", what the guest of kernel KVER uses.
# SROCE_VM_FS=9p|virtiofs forces one (to compare the two on a kernel that
# has both).  A kernel with no /boot/config-KVER (the debug kernel, not
# installed on the host: it has 9p built in) gets 9p.
vm_fs() {
	local cfg=/boot/config-$1

	if [ -n "${SROCE_VM_FS:-}" ]; then
		case $SROCE_VM_FS in
		9p|virtiofs) echo "$SROCE_VM_FS"; return 0 ;;
		*) echo "SROCE_VM_FS: 9p or virtiofs, not '$SROCE_VM_FS'" >&2; return 1 ;;
		esac
	fi
	if [ ! -r "$cfg" ] ||
		{ grep -Eq '^CONFIG_NET_9P_VIRTIO=[ym]$' "$cfg" &&
		  grep -Eq '^CONFIG_9P_FS=[ym]$' "$cfg"; }; then
		echo 9p
	elif grep -Eq '^CONFIG_VIRTIO_FS=[ym]$' "$cfg"; then
		echo virtiofs
	else
		echo "$cfg: neither virtio-9p nor virtio-fs; the test VM cannot boot it" >&2
		return 1
	fi
}

# vm_fs_modules FS: the modules the initramfs loads to mount FS (those
# built into a kernel are skipped by mkinitramfs.sh).
vm_fs_modules() {
	case $1 in
	9p)       echo virtio_pci 9pnet_virtio 9p ;;
	virtiofs) echo virtio_pci virtiofs ;;
	esac
}
