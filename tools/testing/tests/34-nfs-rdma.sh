#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 900
#
# NFS over RDMA on sroce: the kernel's NFS server (nfsd, svcrdma) listens
# on RDMA port 20049 and the kernel's client (rpcrdma) mounts it with
# -o rdma,port=20049, NFSv3, v4.1 and v4.2, over IPv4 and IPv6: first
# in loopback (client and server on the address of one device), then
# from a second device in another network namespace.  Every file written
# is read back after the client's caches are dropped and compared with
# what was written, and with the server's copy: O_DIRECT and buffered,
# small and 1 MiB I/O, a file larger than the writer's page cache (a
# memory cgroup caps it), many files at once.  Then umount, nfsd stop
# and unloading rpcrdma, nfsd and nfs must all be clean.
#
# This is the test that found sroce's send queue stopping on two local
# operations in a row (rpcrdma's LOCAL_INV chains, a REG_MR per chunk
# segment): the first write of a new file hung in frwr_unmap_sync.
#
# The guest's root is read-only: nfsd's state (/var/lib/nfs) and the
# export live on tmpfs.  The export is fsid=0, so NFSv4 clients mount
# "/" and NFSv3 clients the export's path.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../ulp.sh
. "$(dirname "$0")/../ulp.sh"
require_ulp_device

EXPORT=/tmp/nfs-export
MNT=/tmp/nfs-mnt
PORT=20049

# shellcheck disable=SC2317
cleanup() {
	umount -f "$MNT" 2>/dev/null
	run_ns ns1 true 2>/dev/null
	rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	pkill -x rpc.mountd 2>/dev/null
	pkill -x rpcbind 2>/dev/null
	umount /proc/fs/nfsd 2>/dev/null
	rdma link delete sroce1 2>/dev/null
	rdma link delete sroce0 2>/dev/null
	ip link del veth0 2>/dev/null
	ip netns del ns1 2>/dev/null
	umount /var/lib/nfs 2>/dev/null
	rm -rf "$EXPORT" /tmp/nfs-*.bin
}
trap cleanup EXIT

if ! modprobe nfsd 2>/dev/null || ! modprobe rpcrdma 2>/dev/null ||
   ! modprobe nfs 2>/dev/null; then
	skip "NFS over RDMA" "this kernel has no nfsd, nfs or rpcrdma"
	tap_done
fi
for tool in rpc.nfsd rpc.mountd exportfs rpcbind mount.nfs; do
	command -v "$tool" >/dev/null || {
		skip "NFS over RDMA" "$tool is not installed (make deps)"
		tap_done
	}
done

# The topology: sroce0 on veth0 in the initial namespace (the server, and
# the loopback client); sroce1 on veth1 in ns1 (the remote client).
ip netns add ns1 &&
	ip link add veth0 type veth peer name veth1 netns ns1 &&
	ip addr add 10.0.0.1/24 dev veth0 &&
	ip addr add fd00::1/64 dev veth0 nodad &&
	ip link set veth0 up &&
	_topo_addr ns1 veth1 10.0.0.2 fd00::2 &&
	poll_until 10 _topo_ready ns1
check "sroce0 on veth0 (the server's side)" \
	rdma link add sroce0 type "$ULP_LINK_TYPE" netdev veth0
check "sroce1 on veth1 in ns1 (a remote client)" \
	run_ns ns1 rdma link add sroce1 type "$ULP_LINK_TYPE" netdev veth1
poll_until 10 rdma_gid_index sroce0 1 fd00::1
poll_until 10 rdma_gid_index sroce1 1 fd00::2

check "nfsd: started, exporting $EXPORT" nfsd_start "$EXPORT" 8
check_output "nfsd listens on RDMA port $PORT" "rdma $PORT" cat /proc/fs/nfsd/portlist
# Let the grace period pass: v4 OPENs wait for it.
sleep 11

# nfs_io DIR TAG: write files into DIR (an NFS mount), drop the caches,
# read them back and compare; the server's copy in $EXPORT must match.
# Prints what failed; returns non-zero then.
nfs_io() {
	local dir=$1 tag=$2 f

	head -c $((8 << 20)) /dev/urandom >/tmp/nfs-pat.bin
	dd if=/tmp/nfs-pat.bin of="$dir/$tag-direct" bs=1M oflag=direct status=none ||
		{ echo "1 MiB O_DIRECT write"; return 1; }
	dd if=/tmp/nfs-pat.bin of="$dir/$tag-small" bs=4k count=256 oflag=direct status=none ||
		{ echo "4 KiB O_DIRECT write"; return 1; }
	dd if=/tmp/nfs-pat.bin of="$dir/$tag-buffered" bs=64k conv=fsync status=none ||
		{ echo "buffered write"; return 1; }
	dd if=/tmp/nfs-pat.bin of="$dir/$tag-odd" bs=12345 count=97 conv=fsync status=none ||
		{ echo "odd-sized buffered write"; return 1; }
	echo 3 >/proc/sys/vm/drop_caches
	cmp /tmp/nfs-pat.bin "$dir/$tag-direct" || { echo "1 MiB read back"; return 1; }
	cmp -n $((1 << 20)) /tmp/nfs-pat.bin "$dir/$tag-small" || { echo "4 KiB read back"; return 1; }
	dd if="$dir/$tag-direct" of=/tmp/nfs-back.bin bs=4k iflag=direct status=none &&
		cmp /tmp/nfs-pat.bin /tmp/nfs-back.bin || { echo "4 KiB O_DIRECT reads"; return 1; }
	cmp /tmp/nfs-pat.bin "$dir/$tag-buffered" || { echo "buffered read back"; return 1; }
	cmp -n $((12345 * 97)) /tmp/nfs-pat.bin "$dir/$tag-odd" || { echo "odd-sized read back"; return 1; }
	for f in direct small buffered odd; do
		cmp "$dir/$tag-$f" "$EXPORT/$tag-$f" || { echo "server's copy of $tag-$f"; return 1; }
	done
	rm -f "$dir/$tag"-* /tmp/nfs-back.bin
}

# mount_opts VERS ADDR: the mount options for NFS version VERS over RDMA
# to ADDR (proto=rdma6 for an IPv6 server).
mount_opts() {
	local o="proto=rdma,port=$PORT,vers=$1,hard,timeo=600"
	[[ $2 == *:* ]] && o="proto=rdma6,port=$PORT,vers=$1,hard,timeo=600"
	[ "$1" = 3 ] && o="$o,nolock"
	echo "$o"
}

# mount_src VERS ADDR: what to mount (v4 sees the fsid=0 export as /).
mount_src() {
	local host=$2
	[[ $host == *:* ]] && host="[$host]"
	if [ "$1" = 3 ]; then echo "$host:$EXPORT"; else echo "$host:/"; fi
}

# round NS VERS ADDR: mount from namespace NS ("-" for the initial one),
# check the mount is over RDMA, do the I/O, unmount.  From ns1 all of it
# runs in one "ip netns exec", whose mount namespace the mount lives in.
round() {
	local ns=$1 vers=$2 addr=$3 where out rc script

	script="mkdir -p $MNT &&
		mount -t nfs -o $(mount_opts "$vers" "$addr") $(mount_src "$vers" "$addr") $MNT &&
		grep -q ' $MNT nfs.*proto=rdma' /proc/mounts || { echo 'not mounted over RDMA'; exit 1; }
		$(declare -f nfs_io); EXPORT=$EXPORT
		nfs_io $MNT v$vers; rc=\$?
		umount $MNT || { echo umount; exit 1; }
		exit \$rc"

	where="loopback"
	[ "$ns" = - ] || where="from $ns"
	# Output to a file: a stuck mount or dd outlives a killed shell and
	# would keep a $(...) waiting for ever.
	if [ "$ns" = - ]; then
		timeout -k 10 300 bash -c "$script" >/tmp/nfs-round.log 2>&1
	else
		timeout -k 10 300 ip netns exec "$ns" bash -c "$script" >/tmp/nfs-round.log 2>&1
	fi
	rc=$?
	out=$(cat /tmp/nfs-round.log)
	if [ $rc -eq 0 ]; then
		ok "NFSv$vers over RDMA to $addr, $where: data read back intact"
	else
		not_ok "NFSv$vers over RDMA to $addr, $where: data read back intact" \
			"rc=$rc: $out" "$(dmesg | tail -n 15)"
	fi
}

for vers in 3 4.1 4.2; do
	round - "$vers" 10.0.0.1
	round - "$vers" fd00::1
done
# rdma_rxe (SROCE_ULP_DRIVER=rxe) has its UDP socket in the initial
# namespace only: a client in ns1 never connects (6.12).
if [ "$ULP_LINK_TYPE" = rxe ]; then
	skip "NFS from ns1" "rdma_rxe listens in the initial namespace only"
else
	for vers in 3 4.1 4.2; do
		round ns1 "$vers" 10.0.0.1
	done
	round ns1 4.2 fd00::1
fi

# big_and_parallel: one NFSv4.2 mount from ns1: a 64 MiB file written
# buffered by a writer whose memory cgroup holds 16 MiB (so the file goes
# out while it is written), then 8 files of 2 MiB written at once.
big_and_parallel() {
	local cg=/sys/fs/cgroup/sroce-nfs i sum

	mkdir -p "$MNT" &&
		mount -t nfs -o "$(mount_opts 4.2 10.0.0.1)" "$(mount_src 4.2 10.0.0.1)" "$MNT" || return 1
	head -c $((64 << 20)) /dev/urandom >/tmp/nfs-big.bin
	# memory.high, not memory.max: the writer is throttled and its page
	# cache reclaimed at 16 MiB, where a hard limit would OOM-kill it
	# while NFS writeback catches up.
	if mkdir -p "$cg" 2>/dev/null && echo 16M >"$cg/memory.high" 2>/dev/null; then
		bash -c "echo \$\$ >$cg/cgroup.procs &&
			exec dd if=/tmp/nfs-big.bin of=$MNT/big bs=1M conv=fsync status=none" ||
			{ echo "capped 64 MiB write"; umount "$MNT"; return 1; }
	else
		echo "(no memory cgroup: the 64 MiB write is not capped)" >&2
		dd if=/tmp/nfs-big.bin of="$MNT/big" bs=1M conv=fsync status=none ||
			{ echo "64 MiB write"; umount "$MNT"; return 1; }
	fi
	rmdir "$cg" 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	cmp /tmp/nfs-big.bin "$MNT/big" || { echo "64 MiB read back"; umount "$MNT"; return 1; }
	cmp /tmp/nfs-big.bin "$EXPORT/big" || { echo "server's 64 MiB copy"; umount "$MNT"; return 1; }
	for i in 0 1 2 3 4 5 6 7; do
		dd if=/tmp/nfs-big.bin of="$MNT/par$i" bs=256k skip=$((i * 8)) count=8 \
			oflag=direct status=none &
	done
	wait
	echo 3 >/proc/sys/vm/drop_caches
	for i in 0 1 2 3 4 5 6 7; do
		cmp "$MNT/par$i" <(dd if=/tmp/nfs-big.bin bs=256k skip=$((i * 8)) count=8 status=none) ||
			{ echo "parallel file $i"; umount "$MNT"; return 1; }
	done
	sum=$(cat "$MNT"/par* | md5sum)
	rm -f "$MNT"/big "$MNT"/par* /tmp/nfs-big.bin
	umount "$MNT" || { echo umount; return 1; }
	[ -n "$sum" ]
}
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
echo "+memory" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
check "NFSv4.2 loopback: 64 MiB through a 16 MiB page cache, 8 files at once" \
	big_and_parallel

# fio over NFSv4.2: 4 KiB random and 1 MiB sequential writes, verified.
mkdir -p "$MNT"
mount -t nfs -o "$(mount_opts 4.2 10.0.0.1)" "$(mount_src 4.2 10.0.0.1)" "$MNT"
ulp_fio nfs4k "$MNT" randwrite 4k 8M 8
ulp_fio nfs1m "$MNT" write 1M 32M 4
rm -f "$MNT"/nfs*
umount "$MNT"

# Teardown: nothing mounted, nfsd stops, every module unloads.
check "no NFS mount is left" bash -c "! grep -qE ' nfs4? ' /proc/mounts"
check "nfsd stops" nfsd_stop
check "sroce1 deleted" run_ns ns1 rdma link delete sroce1
check "sroce0 deleted" rdma link delete sroce0
check "rpcrdma unloads" modprobe -r rpcrdma
check "nfsd and nfs unload" modprobe -r nfsd nfsv4 nfsv3 nfs
tap_done
