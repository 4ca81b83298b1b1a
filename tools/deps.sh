#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install, with apt, everything sroce needs to build, check and test on a
# fresh Debian 12 machine.  Idempotent: packages already present are kept.
#
# The 6.12 kernels are the newest linux-headers-6.12.*+deb12-amd64 and
# linux-headers-6.12.*+deb12-cloud-amd64 whose linux-image of the same
# version is in the archive; they are looked up at run time because the
# archive drops old point releases.  The cloud flavour (what Debian's cloud
# images run: no rdma_rxe, siw or 9p) is tested too, 6.1's through the
# linux-*-cloud-amd64 metapackages.

set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

log() { echo "deps: $*" >&2; }

# apt-cache needs lists; refresh them once a day at most.
lists_fresh() {
	local stamp=/var/lib/apt/periodic/update-success-stamp
	[ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -n 1)" ] ||
		{ [ -e "$stamp" ] && [ -n "$(find "$stamp" -mmin -1440)" ]; }
}

if ! lists_fresh; then
	log "apt-get update"
	apt-get update -q >/dev/null
fi

has_candidate() {
	local out

	out=$(apt-cache policy "$1" 2>/dev/null)
	[[ $out == *"Candidate: "[0-9]* ]]
}

# newest_612 FLAVOUR: the release of the newest 6.12 kernel of FLAVOUR
# ("amd64" or "cloud-amd64") with headers and an image in the archive.
newest_612() {
	local flavour=$1 v
	for v in $(apt-cache search --names-only "^linux-headers-6\\.12\\.[0-9]+\\+deb12-$flavour\$" |
		   awk '{print $1}' | sed 's/^linux-headers-//' | sort -rV); do
		if has_candidate "linux-image-$v" ||
		   has_candidate "linux-image-$v-unsigned"; then
			echo "$v"
			return 0
		fi
	done
	return 1
}

# kernel_612 FLAVOUR: add the image and headers packages of that 6.12
# kernel to KERNEL_612 (not in a subshell: a kernel not found ends the script).
KERNEL_612=()
kernel_612() {
	local v image

	v=$(newest_612 "$1") || { log "no 6.12 $1 kernel with headers and image found"; exit 1; }
	log "6.12 $1 kernel: $v"
	image=linux-image-$v
	has_candidate "$image" || image=linux-image-$v-unsigned
	KERNEL_612+=("$image" "linux-headers-$v")
}

kernel_612 amd64
kernel_612 cloud-amd64

PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev dwarves xz-utils lz4
	linux-image-amd64 linux-headers-amd64
	linux-image-cloud-amd64 linux-headers-cloud-amd64
	"${KERNEL_612[@]}"
	linux-source-6.12
	qemu-system-x86 busybox-static kmod cpio
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
	perftest rdmacm-utils python3-pyverbs infiniband-diags
	iproute2 tcpdump sparse nvme-cli
	nfs-kernel-server nfs-common rpcbind targetcli-fb dbus-daemon
	open-iscsi srptools fio
	python3-matplotlib
	trace-cmd linux-perf bpftrace
	dkms dh-dkms debhelper fakeroot dpkg-dev openssl
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	apt-get install "${APT_OPTS[@]}" --no-install-recommends "${missing[@]}"
else
	log "all packages present"
fi

# linux-source ships a tarball; unpack it once for checkpatch and the debug
# kernel.  Keyed by the tarball so an upgrade unpacks afresh.
src_tar=$(ls /usr/src/linux-source-6.12.tar.xz 2>/dev/null || true)
if [ -n "$src_tar" ]; then
	dest=/var/cache/sroce/linux-source-6.12
	stamp=$dest/.unpacked-$(stat -c %Y "$src_tar")
	if [ ! -e "$stamp" ]; then
		log "unpacking $src_tar into $dest"
		rm -rf "$dest"
		mkdir -p "$dest"
		tar -C "$dest" --strip-components=1 -xf "$src_tar"
		touch "$stamp"
	fi
fi
log "done"
