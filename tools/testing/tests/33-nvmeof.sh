#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 900
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
# shellcheck source=../ulp.sh
. "$(dirname "$0")/../ulp.sh"
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
# The link-loss case takes veth0 down and up: keep its IPv6 address.
sysctl -qw net.ipv6.conf.veth0.keep_addr_on_down=1
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

# --- Two controllers at once (one per port: two paths to the namespace),
# two I/O queues each, fio verifying at queue depth 16 while one
# controller is reset, then while port 1 is taken away and given back,
# then while the link goes down for a while.  Native multipath keeps the
# I/O going on the other path; the one that went away must come back.

# connect ADDR: a controller to ADDR with 2 I/O queues, quick reconnects.
connect() {
	nvme connect -t rdma -a "$1" -s 4420 -n "$NQN" --hostnqn="$HOSTNQN" \
		--hostid="$HOSTID" --nr-io-queues=2 --queue-size=32 \
		--reconnect-delay=1 --ctrl-loss-tmo=60 --keep-alive-tmo=5
}

# ctrl_of ADDR: the controller (nvmeN) connected to ADDR.
ctrl_of() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		grep -q "traddr=$1," "$c/address" 2>/dev/null && { echo "${c##*/}"; return 0; }
	done
	return 1
}

# live ADDR: the controller to ADDR is live.
live() {
	local c
	c=$(ctrl_of "$1") && [ "$(cat "/sys/class/nvme/$c/state")" = live ]
}

# fio_bg NAME: fio verifying 4 KiB random writes at depth 16, for a while.
fio_bg() {
	fio --name="$1" --filename="$dev" --rw=randwrite --bs=4k --size=8M \
		--ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --time_based --runtime=20 \
		--group_reporting >"/tmp/nvme-$1.log" 2>&1 &
	fio_pid=$!
}

fio_done() {
	if wait "$fio_pid"; then
		ok "$1: fio verified every block"
		diag "$(grep -E 'WRITE:|READ:' "/tmp/nvme-$2.log")"
	else
		not_ok "$1: fio verified every block" "$(tail -n 20 "/tmp/nvme-$2.log")"
	fi
}

if ! command -v fio >/dev/null; then
	skip "NVMe-oF under resets and link loss" "fio is not installed"
	tap_done
fi
check "two controllers at once (IPv4 and IPv6 paths)" \
	bash -c "$(declare -f connect); NQN=$NQN HOSTNQN=$HOSTNQN HOSTID=$HOSTID;
		connect 10.0.0.1 && connect fd00::1"
poll_until 20 live 10.0.0.1 && poll_until 20 live fd00::1
poll_until 20 nvme_blockdev
dev=$(nvme_blockdev)
# nvme-rdma makes one I/O queue per online CPU at most (the debug
# kernel's VM has one: no ACPI, and the MP table lists one CPU).
q=$(( $(nproc) < 2 ? 2 : 3 ))
check_output "each controller has $((q - 1)) I/O queue(s) and its admin queue" "^$q $q\$" \
	bash -c "echo \$(cat /sys/class/nvme/$(ctrl_of 10.0.0.1)/queue_count \
		/sys/class/nvme/$(ctrl_of fd00::1)/queue_count)"

# Steady I/O first, as the other ULP tests do it: what fio sees here is
# the throughput to compare with rdma_rxe (SROCE_ULP_DRIVER=rxe).
ulp_fio nvme4k "$dev" randwrite 4k 8M 16
ulp_fio nvme1m "$dev" write 1M ${MIB}M 4

fio_bg reset
sleep 4
c=$(ctrl_of 10.0.0.1)
check "nvme reset $c with I/O in flight" nvme reset "/dev/$c"
wait_for "controller to 10.0.0.1 live again after the reset" 30 live 10.0.0.1
fio_done "reset" reset

fio_bg portflap
sleep 4
check "port 1 taken away with I/O in flight" rm "$CFS/ports/1/subsystems/$NQN"
sleep 4
check "port 1 given back" ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN"
wait_for "controller to 10.0.0.1 reconnects" 40 live 10.0.0.1
fio_done "port down and up" portflap

# rdma_rxe (SROCE_ULP_DRIVER=rxe, 6.12) never gets its controllers back
# after this (keep-alive expires, "no usable path"), and the fio hangs:
# for a comparison run, say so and go on.
if [ "$ULP_LINK_TYPE" = rxe ]; then
	skip "link down and up" "rdma_rxe's controllers do not come back from it"
	check "nvme disconnect of both controllers" nvme disconnect -n "$NQN"
	tap_done
fi
fio_bg linkflap
sleep 3
check "veth0 down with I/O in flight" ip link set veth0 down
sleep 8
check "veth0 up again" ip link set veth0 up
poll_until 10 rdma_gid_index sroce0 1 10.0.0.1
wait_for "both controllers live again (keep-alive, reconnect)" 60 \
	bash -c "$(declare -f ctrl_of live); NQN=$NQN; live 10.0.0.1 && live fd00::1"
fio_done "link down and up" linkflap

check "nvme disconnect of both controllers" nvme disconnect -n "$NQN"
check "the host has no controller left" bash -c '! ls /sys/class/nvme/nvme* >/dev/null 2>&1'
tap_done
