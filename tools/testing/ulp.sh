# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced, after lib.sh, by the tests of the kernel's RDMA storage and file
# protocols (tests/3[3-7]-*.sh): what more than one of them sets up.

# ulp_fio NAME TARGET RW BS SIZE DEPTH: a fio run of RW (write, randwrite)
# in BS blocks over SIZE of TARGET (a file or block device; a directory
# gets a file of its own), direct I/O at queue depth DEPTH, every block
# read back and verified; one assertion, and fio's bandwidth lines as
# diagnostics.
ulp_fio() {
	local name=$1 target=$2 rw=$3 bs=$4 size=$5 depth=$6 where

	if ! command -v fio >/dev/null; then
		skip "fio $name" "fio is not installed"
		return
	fi
	where=(--filename="$target")
	[ -d "$target" ] && where=(--directory="$target")
	check_output "fio $name: $bs $rw, depth $depth, verified" 'WRITE: bw=' \
		fio --name="$name" "${where[@]}" --rw="$rw" --bs="$bs" \
		--size="$size" --ioengine=libaio --iodepth="$depth" --direct=1 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --group_reporting
	diag "$(grep -E 'WRITE:|READ:' <<<"$CHECK_OUTPUT")"
}

# srp_disk: the SCSI disk behind the first SRP remote port, once it shows
# up (there is no udev in the test VM: load sd_mod first).
srp_disk() {
	local h d
	for h in /sys/class/srp_remote_ports/port-*; do
		h=${h##*/port-}
		h=${h%%:*}
		for d in /sys/class/scsi_device/"$h":*/device/block/*; do
			[ -b "/dev/${d##*/}" ] && { echo "/dev/${d##*/}"; return 0; }
		done
	done
	return 1
}

# nfsd_start EXPORT THREADS: the kernel NFS server exporting EXPORT
# (fsid=0: NFSv4 clients mount "/"), with a 10 s NFSv4 grace period (the
# shortest), its state on tmpfs (the guest's root is read-only), rpcbind
# and mountd for NFSv3, and an RDMA listener on port 20049.
nfsd_start() {
	mkdir -p "$1" &&
		mount -t tmpfs -o mode=755 tmpfs /var/lib/nfs &&
		mkdir -p /var/lib/nfs/v4recovery /var/lib/nfs/rpc_pipefs &&
		touch /var/lib/nfs/etab /var/lib/nfs/rmtab &&
		{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
		echo 10 >/proc/fs/nfsd/nfsv4leasetime &&
		echo 10 >/proc/fs/nfsd/nfsv4gracetime &&
		{ rpcbind -w 2>/dev/null || rpcbind; } &&
		exportfs -o rw,no_root_squash,fsid=0,insecure,no_subtree_check,sync \
			"*:$1" &&
		rpc.mountd && rpc.nfsd "$2" &&
		echo "rdma 20049" >/proc/fs/nfsd/portlist
}

# nfsd_stop: nfsd's threads, exports, helpers and mounts go; returns how
# stopping the threads went.
nfsd_stop() {
	local rc=0

	rpc.nfsd 0 || rc=1
	exportfs -ua
	pkill -x rpc.mountd
	pkill -x rpcbind
	umount /proc/fs/nfsd /var/lib/nfs
	return $rc
}
