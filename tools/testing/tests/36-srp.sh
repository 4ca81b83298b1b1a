#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 600
#
# SRP on sroce: the LIO SRP target (ib_srpt, a 64 MiB ramdisk LUN) and the
# SRP initiator (ib_srp) log in to each other over RDMA/CM through one
# sroce device, over IPv4 and IPv6.  The disk that appears passes direct
# 1 MiB and 4 KiB writes read back and compared, and fio verify runs
# (4 KiB random, 1 MiB sequential); then logout, target teardown and
# module unload.
#
# SRP posts a REG_MR per mapped segment and LOCAL_INV for each before
# the next use: two local operations in a row, which stopped sroce's
# send queue until "sroce: a local operation retires at once".
#
# ib_srpt and ib_srp work in the initial namespace; the device sits on a
# veth there, talking to itself, as in 33-nvmeof.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../ulp.sh
. "$(dirname "$0")/../ulp.sh"
require_ulp_device

CFS=/sys/kernel/config/target
CM_PORT=5555
MIB=64

# shellcheck disable=SC2317
srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/*; do
		[ -e "$p/delete" ] && echo 1 >"$p/delete"
	done
	poll_until 30 bash -c '! ls /sys/class/srp_remote_ports/* >/dev/null 2>&1'
}

# shellcheck disable=SC2317
target_teardown() {
	local e
	for e in "$CFS"/srpt/*/*/enable; do
		[ -e "$e" ] && echo 0 >"$e"
	done
	rm -f "$CFS"/srpt/*/*/acls/*/*/* 2>/dev/null
	rmdir "$CFS"/srpt/*/*/acls/*/* "$CFS"/srpt/*/*/acls/* 2>/dev/null
	rm -f "$CFS"/srpt/*/*/lun/*/* 2>/dev/null
	rmdir "$CFS"/srpt/*/*/lun/* 2>/dev/null
	rmdir "$CFS"/srpt/*/* "$CFS"/srpt/* "$CFS"/srpt 2>/dev/null
	rmdir "$CFS"/core/rd_mcp_0/rd0 "$CFS"/core/rd_mcp_0 2>/dev/null
	[ ! -e "$CFS/srpt" ] && [ ! -e "$CFS/core/rd_mcp_0" ]
}

# shellcheck disable=SC2317
cleanup() {
	srp_logout 2>/dev/null
	modprobe -r ib_srp 2>/dev/null
	target_teardown 2>/dev/null
	modprobe -r ib_srpt target_core_mod 2>/dev/null
	rdma link delete sroce0 2>/dev/null
	ip link del veth0 2>/dev/null
	rm -f /tmp/srp-*.bin
}
trap cleanup EXIT

if ! modprobe target_core_mod 2>/dev/null ||
   ! modprobe ib_srpt 2>/dev/null || ! modprobe ib_srp 2>/dev/null; then
	skip "SRP" "this kernel has no ib_srpt, ib_srp or target_core_mod"
	tap_done
fi
mountpoint -q "${CFS%/target}" || mount -t configfs none "${CFS%/target}"
# No udev here: the SCSI disk driver is not loaded on demand.
modprobe sd_mod 2>/dev/null

ip link add veth0 type veth peer name veth1 &&
	ip addr add 10.0.0.1/24 dev veth0 &&
	ip addr add fd00::1/64 dev veth0 nodad &&
	ip link set veth0 up && ip link set veth1 up
check "sroce0 on veth0" rdma link add sroce0 type "$ULP_LINK_TYPE" netdev veth0
poll_until 10 rdma_gid_index sroce0 1 10.0.0.1
poll_until 10 rdma_gid_index sroce0 1 fd00::1

# The target port is named after the port's link-local GID (its low 64
# bits); an RDMA/CM initiator is named by its IP address.
gid0=$(cat /sys/class/infiniband/sroce0/ports/1/gids/0)
TPORT=${gid0#fe80:0000:0000:0000:}
V6FULL=$($PYTHON -c 'import ipaddress; print(ipaddress.ip_address("fd00::1").exploded)')

target_setup() {
	local t=$CFS/srpt/$TPORT/$TPORT ini

	mkdir -p "$CFS/core/rd_mcp_0/rd0" &&
		echo "rd_pages=$((MIB * 256))" >"$CFS/core/rd_mcp_0/rd0/control" &&
		echo 1 >"$CFS/core/rd_mcp_0/rd0/enable" &&
		mkdir -p "$CFS/srpt" || return 1
	# Where the port is set: configfs since 5.x, a module parameter before.
	if [ -e "$CFS/srpt/discovery_auth/rdma_cm_port" ]; then
		echo $CM_PORT >"$CFS/srpt/discovery_auth/rdma_cm_port" || return 1
	else
		modprobe -r ib_srpt && modprobe ib_srpt rdma_cm_port=$CM_PORT || return 1
	fi
	mkdir "$CFS/srpt/$TPORT" && mkdir "$t" &&
		mkdir "$t/lun/lun_0" &&
		ln -s "$CFS/core/rd_mcp_0/rd0" "$t/lun/lun_0/rd0" || return 1
	for ini in 10.0.0.1 "$V6FULL"; do
		mkdir "$t/acls/$ini" && mkdir "$t/acls/$ini/lun_0" &&
			ln -s "$t/lun/lun_0" "$t/acls/$ini/lun_0/lun_0" || return 1
	done
	echo 1 >"$t/enable"
}
check "ib_srpt: a ${MIB} MiB ramdisk LUN on port $TPORT, RDMA/CM port $CM_PORT" \
	target_setup

# round DEST: log in to DEST (ip:port), check the disk, log out.
round() {
	local dest=$1 src=$2 guid gid dev
	local p=/sys/class/infiniband_srp/srp-sroce0-1

	guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
	gid=$(cat /sys/class/infiniband/sroce0/ports/1/gids/0 | tr -d :)
	check "ib_srp: log in to $dest" bash -c "echo 'id_ext=$guid,ioc_guid=$guid,initiator_ext=${gid:0:16},src=$src,dest=$dest' >$p/add_target"
	if ! poll_until 30 srp_disk; then
		not_ok "SRP disk over $dest" "none appeared" "$(dmesg | tail -n 20)"
		srp_logout
		return
	fi
	dev=$(srp_disk)
	ok "SRP disk over $dest: $dev"
	head -c $((16 << 20)) /dev/urandom >/tmp/srp-pat.bin
	check "$dest: write 16 MiB, 1 MiB direct I/O" \
		dd if=/tmp/srp-pat.bin of="$dev" bs=1M oflag=direct status=none
	check "$dest: read back, 4 KiB direct I/O, compare" bash -c \
		"dd if=$dev of=/tmp/srp-back.bin bs=4k count=4096 iflag=direct status=none &&
		 cmp /tmp/srp-pat.bin /tmp/srp-back.bin"
	check "$dest: 4 KiB direct writes, 1 MiB reads, compare" bash -c \
		"dd if=/tmp/srp-pat.bin of=$dev bs=4k count=1024 seek=4096 oflag=direct status=none &&
		 dd if=$dev of=/tmp/srp-back.bin bs=1M skip=16 count=4 iflag=direct status=none &&
		 cmp /tmp/srp-back.bin <(head -c $((4 << 20)) /tmp/srp-pat.bin)"
	ulp_fio "srp4k over $dest" "$dev" randwrite 4k 16M 16
	ulp_fio "srp1m over $dest" "$dev" write 1M ${MIB}M 4
	check "$dest: log out" srp_logout
	rm -f /tmp/srp-*.bin
}

round 10.0.0.1:$CM_PORT 10.0.0.1
round "[fd00::1]:$CM_PORT" "[fd00::1]"

check "ib_srp unloads" modprobe -r ib_srp
check "the SRP target comes down" target_teardown
check "ib_srpt unloads" modprobe -r ib_srpt
check "sroce0 deleted" rdma link delete sroce0
tap_done
