#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 600
#
# Kernel ULPs on sroce: an NVMe over RDMA target (nvmet-rdma, a file on
# tmpfs as its namespace) and the host driver (nvme-rdma) connect through
# one sroce device, over IPv4 and IPv6.  Data written through the block
# device is read back through it and found in the backing file.  This
# drives sroce through the kernel verbs: fast-registration MRs, local
# invalidation, RDMA READ and WRITE from kernel memory, rdma_cm.
#
# nvmet and nvme-rdma open their rdma_cm IDs in the initial namespace, so
# the device lives there, on a veth, talking to itself.
. "$(dirname "$0")/../lib.sh"
require_ulp_device

NQN=nqn.2026-12.org.sroce:test
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5b1c3d2e-0d7a-4c39-9a51-3c1f7e2a9b10
HOSTID=5b1c3d2e-0d7a-4c39-9a51-3c1f7e2a9b10
CFS=/sys/kernel/config/nvmet
IMG=/tmp/nvmet.img
MIB=16

# shellcheck disable=SC2317
cleanup() {
	nvme disconnect -n "$NQN" >/dev/null 2>&1
	rm -f "$CFS"/ports/*/subsystems/"$NQN" 2>/dev/null
	rmdir "$CFS"/ports/* 2>/dev/null
	echo 0 >"$CFS/subsystems/$NQN/namespaces/1/enable" 2>/dev/null
	rmdir "$CFS/subsystems/$NQN/namespaces/1" "$CFS/subsystems/$NQN" 2>/dev/null
	rdma link delete sroce0 2>/dev/null
	ip link del veth0 2>/dev/null
	modprobe -r nvme-rdma nvmet-rdma 2>/dev/null
	rm -f "$IMG" /tmp/nvme-*.bin
}
trap cleanup EXIT

if ! modprobe nvmet-rdma 2>/dev/null || ! modprobe nvme-rdma 2>/dev/null; then
	skip "NVMe over RDMA" "this kernel has no nvmet-rdma or nvme-rdma"
	tap_done
fi
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config

ip link add veth0 type veth peer name veth1 &&
	ip addr add 10.0.0.1/24 dev veth0 &&
	ip addr add fd00::1/64 dev veth0 nodad &&
	ip link set veth0 up && ip link set veth1 up
check "sroce0 on veth0 in the initial namespace" \
	rdma link add sroce0 type "$ULP_LINK_TYPE" netdev veth0
poll_until 10 rdma_gid_index sroce0 1 10.0.0.1
poll_until 10 rdma_gid_index sroce0 1 fd00::1

# The target: one subsystem, one namespace backed by a file on tmpfs
# (buffered: tmpfs has no O_DIRECT on 6.1), open to any host.
target_setup() {
	local ns=$CFS/subsystems/$NQN/namespaces/1

	truncate -s "${MIB}M" "$IMG" &&
		mkdir "$CFS/subsystems/$NQN" &&
		echo 1 >"$CFS/subsystems/$NQN/attr_allow_any_host" &&
		mkdir "$ns" &&
		echo "$IMG" >"$ns/device_path" &&
		echo 1 >"$ns/buffered_io" &&
		echo 1 >"$ns/enable"
}

# target_port ID FAMILY ADDRESS: listen on ADDRESS, port 4420.
target_port() {
	local p=$CFS/ports/$1

	mkdir "$p" &&
		echo rdma >"$p/addr_trtype" &&
		echo "$2" >"$p/addr_adrfam" &&
		echo "$3" >"$p/addr_traddr" &&
		echo 4420 >"$p/addr_trsvcid" &&
		ln -s "$CFS/subsystems/$NQN" "$p/subsystems/$NQN"
}

# The block device of our subsystem, once it shows up: under the
# subsystem with native multipath (Debian's default), else under the
# controller.
nvme_blockdev() {
	local d b

	for d in /sys/class/nvme-subsystem/* /sys/class/nvme/*; do
		[ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		for b in "$d"/nvme*n1; do
			b=${b##*/}
			[ -b "/dev/$b" ] && { echo "/dev/$b"; return 0; }
		done
	done
	return 1
}

# round ADDRESS: connect, write patterns of several block sizes through
# the block device, read them back, compare with the backing file too,
# disconnect.
round() {
	local addr=$1 dev

	check "nvme connect -t rdma -a $addr" \
		nvme connect -t rdma -a "$addr" -s 4420 -n "$NQN" \
		--hostnqn="$HOSTNQN" --hostid="$HOSTID"
	if ! poll_until 20 nvme_blockdev; then
		not_ok "NVMe block device over $addr" "none appeared" \
			"$(nvme list 2>&1; dmesg | tail -n 20)"
		return
	fi
	dev=$(nvme_blockdev)
	ok "NVMe block device over $addr: $dev"
	head -c $((MIB * 1024 * 1024)) /dev/urandom >/tmp/nvme-pat.bin
	check "$addr: write ${MIB} MiB, 1 MiB direct I/O" \
		dd if=/tmp/nvme-pat.bin of="$dev" bs=1M oflag=direct status=none
	check "$addr: read back, 1 MiB direct I/O" \
		dd if="$dev" of=/tmp/nvme-back.bin bs=1M count=$MIB iflag=direct status=none
	check "$addr: the data read back is what was written" \
		cmp /tmp/nvme-pat.bin /tmp/nvme-back.bin
	check "$addr: the backing file holds it" cmp /tmp/nvme-pat.bin "$IMG"
	check "$addr: read back, 4 KiB direct I/O" \
		dd if="$dev" of=/tmp/nvme-back4k.bin bs=4k count=$((MIB * 256)) \
		iflag=direct status=none
	check "$addr: the 4 KiB reads match" cmp /tmp/nvme-pat.bin /tmp/nvme-back4k.bin
	check "$addr: unaligned-length buffered write and sync" \
		dd if=/dev/urandom of="$dev" bs=12345 count=7 conv=fsync status=none
	check "nvme disconnect over $addr" nvme disconnect -n "$NQN"
	rm -f /tmp/nvme-*.bin
}

check "nvmet: subsystem with a file-backed namespace" target_setup
check "nvmet: RDMA port on 10.0.0.1:4420" target_port 1 ipv4 10.0.0.1
round 10.0.0.1
check "nvmet: RDMA port on [fd00::1]:4420" target_port 2 ipv6 fd00::1
round fd00::1
tap_done
