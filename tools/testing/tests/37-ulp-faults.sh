#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 900
#
# The kernel ULPs on sroce over a lossy wire, and losing their device.
#
# Two devices on the two ends of a veth, so that the traffic crosses it:
# sroce0 on veth0 10.0.0.1 (the targets, the NFS server) and sroce1 on
# veth1 10.0.0.2 (the initiators), both in the initial namespace, where
# nvme-rdma, nvmet-rdma, ib_srp and ib_srpt open their rdma_cm IDs; policy
# routing sends each direction out of its own veth (lib.sh's
# topo_routed_veth, as make bench's veth topology).  The NFS client mounts
# from namespace ns1 instead, through sroce2 on a second veth pair.  netem drops 2 % of the packets each way
# and reorders 2 %: NVMe-oF, SRP and NFS writes and reads must finish
# with the data intact and the kernel log clean.  Then each device is
# taken away from under a connected ULP (rdma link delete, netdev
# removal): the ULP sees the device go, nothing hangs or leaks.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../ulp.sh
. "$(dirname "$0")/../ulp.sh"
require_ulp_device

NQN=nqn.2026-12.org.sroce:faults
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:7d2a1c44-6b1e-4f0a-8c55-2b9d4e6f0a11
CFS=/sys/kernel/config
NETEM="loss 2% delay 1ms reorder 2% 50%"
# What crosses the lossy wire through each ULP, in MiB: "make test" moves
# a little (each loss costs the ULP's ACK timeout, 0.5-2 s), "make
# ulp-stress" (long/37-ulp-faults-long.sh) much more.
MIB=${SROCE_ULP_FAULTS_MIB:-2}

# shellcheck disable=SC2317
cleanup() {
	local r
	nvme disconnect -n "$NQN" >/dev/null 2>&1
	for r in /sys/class/srp_remote_ports/*; do
		[ -e "$r/delete" ] && echo 1 >"$r/delete"
	done
	umount -f /tmp/ulpf-mnt 2>/dev/null
	rpc.nfsd 0 2>/dev/null; exportfs -ua 2>/dev/null
	pkill -x rpc.mountd 2>/dev/null; pkill -x rpcbind 2>/dev/null
	rm -f "$CFS"/nvmet/ports/*/subsystems/* 2>/dev/null
	rmdir "$CFS"/nvmet/ports/* 2>/dev/null
	echo 0 >"$CFS/nvmet/subsystems/$NQN/namespaces/1/enable" 2>/dev/null
	rmdir "$CFS/nvmet/subsystems/$NQN/namespaces/1" "$CFS/nvmet/subsystems/$NQN" 2>/dev/null
	modprobe -r nvme-rdma nvmet-rdma ib_srp 2>/dev/null
	rdma link delete sroce1 2>/dev/null; rdma link delete sroce0 2>/dev/null
	run_ns ns1 rdma link delete sroce2 2>/dev/null
	ip link del veth2 2>/dev/null
	ip netns del ns1 2>/dev/null
	topo_routed_veth_clean
	umount /var/lib/nfs 2>/dev/null
	rm -rf /tmp/ulpf-*
}
trap cleanup EXIT

# --- the wire
topo() {
	topo_routed_veth || return 1
	# The NFS client's wire: veth2 10.0.1.1 <-> ns1/veth3 10.0.1.2.
	ip netns add ns1 && ip link add veth2 type veth peer name veth3 netns ns1 &&
		ip addr add 10.0.1.1/24 dev veth2 && ip link set veth2 up &&
		_topo_addr ns1 veth3 10.0.1.2 fd01::2 && poll_until 10 _topo_ready ns1
}
check "two veths, policy routing across the first" topo
check "sroce0 on veth0, sroce1 on veth1, sroce2 on veth2, sroce3 in ns1" bash -c "
	rdma link add sroce0 type $ULP_LINK_TYPE netdev veth0 &&
	rdma link add sroce1 type $ULP_LINK_TYPE netdev veth1 &&
	rdma link add sroce2 type $ULP_LINK_TYPE netdev veth2 &&
	ip netns exec ns1 rdma link add sroce3 type $ULP_LINK_TYPE netdev veth3"
poll_until 10 rdma_gid_index sroce1 1 10.0.0.2
poll_until 10 rdma_gid_index sroce3 1 10.0.1.2
check "netem: $NETEM on veth0, veth1, veth2 and veth3" bash -c "
	tc qdisc add dev veth0 root netem $NETEM &&
	tc qdisc add dev veth1 root netem $NETEM &&
	tc qdisc add dev veth2 root netem $NETEM &&
	ip netns exec ns1 tc qdisc add dev veth3 root netem $NETEM"

head -c $((MIB << 20)) /dev/urandom >/tmp/ulpf-pat.bin

# The sroce counters that are not 0, of every device: how the ULPs'
# traffic fared (retransmissions, duplicates, NAKs).
sroce_counters() {
	local d f v
	for d in /sys/class/infiniband/sroce*; do
		for f in "$d"/ports/1/hw_counters/*; do
			v=$(cat "$f" 2>/dev/null) && [ "$v" != 0 ] &&
				printf '%s:%s=%s ' "${d##*/}" "${f##*/}" "$v"
		done
	done
	echo
}

# blk_io DEV TAG: write the pattern with 1 MiB and 4 KiB direct I/O, read
# it back both ways, compare.
blk_io() {
	local dev=$1 tag=$2

	check "$tag: ${MIB} MiB written, 1 MiB direct I/O" \
		dd if=/tmp/ulpf-pat.bin of="$dev" bs=1M oflag=direct status=none
	check "$tag: read back in 1 MiB direct I/O, intact" bash -c \
		"dd if=$dev of=/tmp/ulpf-back.bin bs=1M count=$MIB iflag=direct status=none &&
		 cmp /tmp/ulpf-pat.bin /tmp/ulpf-back.bin"
	# Small I/O pays a retransmit timeout for most losses: an eighth of
	# the data in 4 KiB writes and reads.
	check "$tag: 4 KiB direct writes and reads, intact" bash -c \
		"dd if=/tmp/ulpf-pat.bin of=$dev bs=4k count=$((MIB * 32)) oflag=direct status=none &&
		 dd if=$dev of=/tmp/ulpf-back.bin bs=4k count=$((MIB * 32)) iflag=direct status=none &&
		 cmp /tmp/ulpf-back.bin <(head -c $((MIB << 17)) /tmp/ulpf-pat.bin)"
	diag "$tag: counters so far: $(sroce_counters)"
}

# --- NVMe over RDMA: target on 10.0.0.1, host from 10.0.0.2
nvme_dev() {
	local d b
	for d in /sys/class/nvme-subsystem/* /sys/class/nvme/*; do
		[ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		for b in "$d"/nvme*n1; do
			[ -b "/dev/${b##*/}" ] && { echo "/dev/${b##*/}"; return 0; }
		done
	done
	return 1
}
nvme_target() {
	local s=$CFS/nvmet/subsystems/$NQN p=$CFS/nvmet/ports/1

	truncate -s "${MIB}M" /tmp/ulpf-nvme.img && mkdir "$s" &&
		echo 1 >"$s/attr_allow_any_host" && mkdir "$s/namespaces/1" &&
		echo /tmp/ulpf-nvme.img >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/buffered_io" &&
		echo 1 >"$s/namespaces/1/enable" && mkdir "$p" &&
		echo rdma >"$p/addr_trtype" && echo ipv4 >"$p/addr_adrfam" &&
		echo 10.0.0.1 >"$p/addr_traddr" && echo 4420 >"$p/addr_trsvcid" &&
		ln -s "$s" "$p/subsystems/$NQN"
}
nvme_target_down() {
	local s=$CFS/nvmet/subsystems/$NQN p=$CFS/nvmet/ports/1

	rm "$p/subsystems/$NQN" && rmdir "$p" &&
		echo 0 >"$s/namespaces/1/enable" &&
		rmdir "$s/namespaces/1" "$s"
}
if modprobe nvmet-rdma 2>/dev/null && modprobe nvme-rdma 2>/dev/null; then
	mountpoint -q $CFS || mount -t configfs none $CFS
	check "nvmet on 10.0.0.1:4420" nvme_target
	check "nvme connect from 10.0.0.2 over the lossy wire" \
		nvme connect -t rdma -a 10.0.0.1 -s 4420 -w 10.0.0.2 -n "$NQN" \
		--hostnqn="$HOSTNQN" --reconnect-delay=1 --ctrl-loss-tmo=5
	if poll_until 30 nvme_dev; then
		blk_io "$(nvme_dev)" "NVMe-oF, 2% loss"
		# The device goes from under the connected host: nvme-rdma
		# must see it go and drop the controller, nothing may hang.
		check "rdma link delete sroce1 with NVMe-oF connected" \
			timeout 60 rdma link delete sroce1
		wait_for "the NVMe controller goes away" 60 bash -c '! ls /sys/class/nvme/nvme* >/dev/null 2>&1'
		nvme disconnect -n "$NQN" >/dev/null 2>&1
		check "nvmet comes down" nvme_target_down
	else
		not_ok "NVMe-oF block device" "none appeared" "$(dmesg | tail -n 20)"
	fi
	rdma link show sroce1 >/dev/null 2>&1 ||
		check "sroce1 again" rdma link add sroce1 type "$ULP_LINK_TYPE" netdev veth1
else
	skip "NVMe-oF over a lossy wire" "no nvmet-rdma or nvme-rdma"
fi

# --- SRP: ib_srpt on sroce0, ib_srp from sroce1
# srp_acl TPG ADDR: let the initiator at ADDR in.  ib_srpt names an RDMA/CM
# initiator by its own cm_id's source address, which on the passive side
# of this kernel's srpt is the target's address: allow both.
srp_acl() {
	local a
	for a in "$2" 10.0.0.1; do
		mkdir "$1/acls/$a" "$1/acls/$a/lun_0" &&
			ln -s "$1/lun/lun_0" "$1/acls/$a/lun_0/lun_0" || return 1
	done
}
srp_target() {
	local gid tport t

	gid=$(cat /sys/class/infiniband/sroce0/ports/1/gids/0)
	tport=${gid#fe80:0000:0000:0000:}
	t=$CFS/target/srpt/$tport/$tport
	mkdir -p "$CFS/target/core/rd_mcp_1/rd0" &&
		echo "rd_pages=$((MIB * 256))" >"$CFS/target/core/rd_mcp_1/rd0/control" &&
		echo 1 >"$CFS/target/core/rd_mcp_1/rd0/enable" &&
		mkdir -p "$CFS/target/srpt" &&
		echo 5555 >"$CFS/target/srpt/discovery_auth/rdma_cm_port" &&
		mkdir "$CFS/target/srpt/$tport" "$t" "$t/lun/lun_0" &&
		ln -s "$CFS/target/core/rd_mcp_1/rd0" "$t/lun/lun_0/rd0" &&
		srp_acl "$t" 10.0.0.2 && echo 1 >"$t/enable"
}
srp_teardown() {
	local e
	for e in "$CFS"/target/srpt/*/*/enable; do [ -e "$e" ] && echo 0 >"$e"; done
	rm -f "$CFS"/target/srpt/*/*/acls/*/*/* "$CFS"/target/srpt/*/*/lun/*/* 2>/dev/null
	rmdir "$CFS"/target/srpt/*/*/acls/*/* "$CFS"/target/srpt/*/*/acls/* \
		"$CFS"/target/srpt/*/*/lun/* "$CFS"/target/srpt/*/* \
		"$CFS"/target/srpt/* "$CFS"/target/srpt \
		"$CFS"/target/core/rd_mcp_1/rd0 "$CFS"/target/core/rd_mcp_1 2>/dev/null
	modprobe -r ib_srp ib_srpt
}
if modprobe ib_srpt 2>/dev/null && modprobe ib_srp 2>/dev/null; then
	modprobe sd_mod 2>/dev/null
	check "ib_srpt on sroce0" srp_target
	guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
	check "ib_srp logs in from 10.0.0.2 over the lossy wire" bash -c \
		"echo 'id_ext=$guid,ioc_guid=$guid,src=10.0.0.2,dest=10.0.0.1:5555' \
		>/sys/class/infiniband_srp/srp-sroce1-1/add_target"
	if poll_until 30 srp_disk; then
		blk_io "$(srp_disk)" "SRP, 2% loss"
		check "veth1 deleted with SRP logged in" timeout 60 ip link del veth1
		wait_for "sroce1 goes with its netdev" 60 \
			bash -c '! rdma link show sroce1 >/dev/null 2>&1'
		wait_for "the SRP remote port goes away" 60 \
			bash -c '! ls /sys/class/srp_remote_ports/port-* >/dev/null 2>&1'
	else
		not_ok "SRP disk" "none appeared" "$(dmesg | tail -n 20)"
	fi
	check "SRP target and initiator come down" srp_teardown
else
	skip "SRP over a lossy wire" "no ib_srpt or ib_srp"
fi

# --- NFS: the server on sroce2 (10.0.1.1), the client in ns1 on sroce3
if modprobe nfsd 2>/dev/null && modprobe rpcrdma 2>/dev/null &&
   command -v rpc.nfsd >/dev/null; then
	check "nfsd with an RDMA listener on 10.0.1.1" nfsd_start /tmp/ulpf-export 4
	sleep 11	# the NFSv4 grace period
	check "NFSv4.2 from ns1 over the lossy wire: written and read back intact" \
		timeout 300 ip netns exec ns1 bash -c "
		mkdir -p /tmp/ulpf-mnt &&
		mount -t nfs -o proto=rdma,port=20049,vers=4.2 10.0.1.1:/ /tmp/ulpf-mnt &&
		dd if=/tmp/ulpf-pat.bin of=/tmp/ulpf-mnt/f bs=1M oflag=direct status=none &&
		dd if=/tmp/ulpf-pat.bin of=/tmp/ulpf-mnt/g bs=64k conv=fsync status=none &&
		echo 3 >/proc/sys/vm/drop_caches &&
		cmp /tmp/ulpf-pat.bin /tmp/ulpf-mnt/f && cmp /tmp/ulpf-pat.bin /tmp/ulpf-mnt/g &&
		cmp /tmp/ulpf-pat.bin /tmp/ulpf-export/f &&
		umount /tmp/ulpf-mnt"
	diag "NFS: counters so far: $(sroce_counters)"
	check "rdma link delete sroce2 under a running nfsd" timeout 60 rdma link delete sroce2
	check "nfsd stops" timeout 60 bash -c "$(declare -f nfsd_stop); nfsd_stop"
	# The client's transport may take a moment to let go of rpcrdma.
	wait_for "rpcrdma and nfsd unload" 30 bash -c \
		'modprobe -qr rpcrdma; modprobe -qr nfsd; ! lsmod | grep -qE "^(rpcrdma|nfsd) "'
else
	skip "NFS over a lossy wire" "no nfsd, rpcrdma or nfs-kernel-server"
fi

# gone DEV [NS]: delete DEV unless its netdev took it away already.
gone() {
	local d
	for d in "$@"; do
		rdma link show "$d" >/dev/null 2>&1 || continue
		rdma link delete "$d" || return 1
	done
}
check "the rest of the devices go" bash -c "$(declare -f gone); gone sroce0 sroce1 &&
	ip netns exec ns1 rdma link delete sroce3"
check "nvme-rdma and nvmet-rdma unload" modprobe -r nvme-rdma nvmet-rdma
tap_done
