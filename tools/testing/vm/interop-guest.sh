#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest side of tools/testing/interop.sh: PID 1 of one of the two VMs
# of a pair after switch_root (started by OUTDIR/.vm/boot.sh).  Like
# guest.sh, but it sets up the link to the other VM and an RDMA device on
# it, and runs the interop tests (tools/testing/interop/NAME.sh) in step
# with the other VM.
#
# Shares: /run/sroce/out ("results", this VM's own OUTDIR/A or /B) and
# /run/sroce/sync ("sync", mounted here, the same host dir in both VMs);
# 9p or virtio-fs, as the kernel line's sroce_fs says (vm/qemu.sh).
#
# Writes into /run/sroce/out, like guest.sh:
#   .vm/booted, tests/NAME.tap, tests/NAME.done, dmesg.txt, kmemleak.txt,
#   .vm/finished
#   tests/setup.tap, setup.done   TAP of the set-up (NIC, addresses, RDMA
#                                 device, GIDs, ping of the peer)
#   tests/NAME.pcap               client side only: tcpdump of the RoCE
#                                 traffic of a test that failed (of every
#                                 test with SROCE_KEEP_PCAP=1)
#
# Settings from boot.sh: as guest.sh (SROCE_REPO, SROCE_MODULE_DIR,
# SROCE_MODINDEX, SROCE_TESTS, SROCE_TEST_TIMEOUT) plus SROCE_ROLE
# (server|client), SROCE_DEV_TYPE (sroce|rxe), SROCE_PEER_DEV_TYPE,
# SROCE_LOCAL_ADDR[6], SROCE_PEER_ADDR[6], SROCE_SERVER_ADDR[6].
#
# Sync between the VMs, in /run/sroce/sync: "NAME.server" / "NAME.client"
# files; barrier NAME waits for the other VM's file.  "abort", written by
# the host when one VM is gone, ends every wait.

set -u

OUT=/run/sroce/out
SYNC=/run/sroce/sync
TESTS_DIR=$SROCE_REPO/tools/testing/interop
ENVFILE=/run/sroce/interop.env
# shellcheck source=done.sh
. "$SROCE_REPO/tools/testing/vm/done.sh"

poweroff_now() {
	sync
	# Power off through ACPI; a kernel without ACPI (the debug kernel)
	# cannot, so it reboots instead, which ends QEMU (-no-reboot).
	if [ -d /sys/firmware/acpi ]; then
		echo o >/proc/sysrq-trigger
	else
		echo b >/proc/sysrq-trigger
	fi
	sleep 60
}
trap poweroff_now EXIT

cut -d' ' -f1 /proc/uptime >"$OUT/.vm/booted"

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C.UTF-8 TERM=dumb
export SROCE_REPO SROCE_MODULE_DIR SROCE_MODINDEX

if [ "$SROCE_ROLE" = server ]; then PEER_ROLE=client; else PEER_ROLE=server; fi
if [ "$SROCE_DEV_TYPE" = sroce ]; then DEV=sroce0; else DEV=rxe0; fi

kmsg() { echo "sroce-harness: $*" >/dev/kmsg; }

# barrier NAME TIMEOUT: say we reached NAME, wait for the peer to.
barrier() {
	local deadline=$((SECONDS + $2))
	echo "$SECONDS" >"$SYNC/$1.$SROCE_ROLE"
	until [ -e "$SYNC/$1.$PEER_ROLE" ]; do
		[ -e "$SYNC/abort" ] && return 2
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.5
	done
}

setup_system() {
	mkdir -p /dev/shm /dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /dev/shm
	mount -t devpts devpts /dev/pts
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	modprobe -q configfs 2>/dev/null
	[ -d /sys/kernel/config ] && mount -t configfs configfs /sys/kernel/config
	ip link set lo up
	hostname "sroce-$SROCE_ROLE"
	ulimit -l unlimited
	mkdir -p "$SYNC"
	if grep -qw sroce_fs=virtiofs /proc/cmdline; then
		mount -t virtiofs sync "$SYNC"
	else
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 sync "$SYNC"
	fi
}

# The virtio-net interface (eth0 with net.ifnames=0, but find it by driver).
find_nic() {
	local d drv
	for d in /sys/class/net/*; do
		drv=$(readlink "$d/device/driver" 2>/dev/null) || continue
		[ "${drv##*/}" = virtio_net ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

nic_up() { [ "$(cat "/sys/class/net/$1/operstate" 2>/dev/null)" = up ]; }
port_active() { [ "$(cat "/sys/class/infiniband/$DEV/ports/1/state" 2>/dev/null)" = "4: ACTIVE" ]; }
# iputils' ping if installed, or busybox's (the host may have only that).
if command -v ping >/dev/null; then PING=(ping); else PING=(busybox ping); fi
ping4() { "${PING[@]}" -4 -c 1 -W 3 "$SROCE_PEER_ADDR"; }
ping6() { "${PING[@]}" -6 -c 1 -W 3 "$SROCE_PEER_ADDR6"; }

# setup: TAP on stdout; leaves the settings for the tests in $ENVFILE.
setup() {
	local nic="" g4="" g6="" rc

	# shellcheck source=../lib.sh
	. "$SROCE_REPO/tools/testing/lib.sh"
	if mountpoint -q "$SYNC"; then ok "sync share mounted"; else
		not_ok "sync share mounted" "tag 'sync' on $SYNC"; fi
	check "modprobe virtio_net" modprobe virtio_net
	if poll_until 10 find_nic; then
		nic=$(find_nic)
		ok "virtio-net interface is $nic"
	else
		not_ok "virtio-net interface found" "$(ls -l /sys/class/net/)"
	fi
	if [ -n "$nic" ]; then
		check "addresses $SROCE_LOCAL_ADDR/24 $SROCE_LOCAL_ADDR6/64 on $nic" \
			eval "ip addr add $SROCE_LOCAL_ADDR/24 dev $nic &&
			      ip addr add $SROCE_LOCAL_ADDR6/64 dev $nic nodad &&
			      ip link set $nic up"
		wait_for "$nic has carrier" 20 nic_up "$nic"
	fi
	if [ "$SROCE_DEV_TYPE" = sroce ]; then
		if sroce_install; then ok "sroce module is installed"; else
			not_ok "sroce module is installed" "$(cat "$SROCE_STATE/install-error" 2>/dev/null)"; fi
		check "modprobe sroce" modprobe sroce
		check "rdma link add $DEV type sroce netdev $nic" \
			rdma link add "$DEV" type sroce netdev "$nic"
	else
		check "modprobe rdma_rxe" modprobe rdma_rxe
		check "rdma link add $DEV type rxe netdev $nic" \
			rdma link add "$DEV" type rxe netdev "$nic"
	fi
	wait_for "$DEV port 1 is ACTIVE" 30 port_active
	if poll_until 15 rdma_gid_index "$DEV" 1 "$SROCE_LOCAL_ADDR"; then
		g4=$(rdma_gid_index "$DEV" 1 "$SROCE_LOCAL_ADDR")
		ok "RoCE v2 GID of $SROCE_LOCAL_ADDR is index $g4"
	else
		not_ok "RoCE v2 GID of $SROCE_LOCAL_ADDR found" \
			"$(head -n 4 /sys/class/infiniband/"$DEV"/ports/1/gids/{0..3} 2>&1)"
	fi
	if poll_until 15 rdma_gid_index "$DEV" 1 "$SROCE_LOCAL_ADDR6"; then
		g6=$(rdma_gid_index "$DEV" 1 "$SROCE_LOCAL_ADDR6")
		ok "RoCE v2 GID of $SROCE_LOCAL_ADDR6 is index $g6"
	else
		not_ok "RoCE v2 GID of $SROCE_LOCAL_ADDR6 found" \
			"$(head -n 4 /sys/class/infiniband/"$DEV"/ports/1/gids/{0..3} 2>&1)"
	fi
	{
		printf 'export %s=%q\n' SROCE_NIC "$nic" SROCE_DEV "$DEV" \
			SROCE_GID4 "$g4" SROCE_GID6 "$g6"
	} >"$ENVFILE"
	# Both VMs set up (the other may boot later), then the wire.
	rc=0
	barrier setup 400 || rc=$?
	case $rc in
	0) ok "peer VM is set up" ;;
	1) not_ok "peer VM is set up" "no $SYNC/setup.$PEER_ROLE after 400 s" ;;
	*) not_ok "peer VM is set up" "the host says the peer VM is gone" ;;
	esac
	wait_for "ping $SROCE_PEER_ADDR" 30 ping4
	wait_for "ping -6 $SROCE_PEER_ADDR6" 30 ping6
	tap_done
}

test_timeout() {
	local t
	t=$(head -n 20 "$1" | sed -n 's/^# timeout: *\([0-9][0-9]*\) *$/\1/p' | head -n 1)
	echo "${t:-$SROCE_TEST_TIMEOUT}"
}

TCPDUMP_PID=
# Client side: capture the RoCE v2 traffic of one test.
capture_start() {
	local i
	[ "$SROCE_ROLE" = client ] && [ -n "${SROCE_NIC:-}" ] || return 0
	rm -f /tmp/capture.pcap /tmp/capture.err
	tcpdump -i "$SROCE_NIC" -Z root -U -w /tmp/capture.pcap -c 2000 \
		udp port 4791 2>/tmp/capture.err &
	TCPDUMP_PID=$!
	# It must be listening before the test sends anything.
	for i in $(seq 1 40); do
		grep -q 'listening on' /tmp/capture.err 2>/dev/null && return 0
		kill -0 "$TCPDUMP_PID" 2>/dev/null || break
		sleep 0.25
	done
	echo "# harness: tcpdump did not start: $(cat /tmp/capture.err)" >>"$1"
}

# capture_stop NAME FAILED: keep the capture of a failed test.
capture_stop() {
	[ -n "$TCPDUMP_PID" ] || return 0
	kill -INT "$TCPDUMP_PID" 2>/dev/null
	wait "$TCPDUMP_PID" 2>/dev/null
	TCPDUMP_PID=
	if { [ "$2" = 1 ] || [ "${SROCE_KEEP_PCAP:-0}" = 1 ]; } && [ -s /tmp/capture.pcap ]; then
		cp /tmp/capture.pcap "$OUT/tests/$1.pcap"
		echo "# harness: capture in $1.pcap ($(grep -E 'packets? captured' /tmp/capture.err))" \
			>>"$OUT/tests/$1.tap"
	fi
	rm -f /tmp/capture.pcap
}

# run_test NAME INDEX PREV_TIMEOUT: wait for the peer, then run it.
run_test() {
	local name=$1 idx=$2 prev=$3 script=$TESTS_DIR/$1.sh tap=$OUT/tests/$1.tap
	local t start secs rc=0 timedout=0 dir failed=0 brc=0

	t=$(test_timeout "$script")
	start=$SECONDS
	: >"$tap"
	# The peer may still be in the previous test, up to its timeout.
	barrier "start.$name" $((prev + 60)) || brc=$?
	if [ $brc -ne 0 ]; then
		{
			echo "not ok 1 - the peer VM reached $name"
			[ $brc = 2 ] && echo "# the host says the peer VM is gone"
			echo "1..1"
		} >>"$tap"
		write_done "$OUT/tests/$name.done" "rc=1 secs=$((SECONDS - start)) timedout=0"
		return
	fi
	mkdir -p "$SYNC/$name"
	capture_start "$tap"
	dir=$(mktemp -d "/tmp/$name.XXXXXX")
	kmsg "start $name (timeout ${t}s)"
	(
		# shellcheck disable=SC1090
		. "$ENVFILE"
		export SROCE_ROLE SROCE_DEV_TYPE SROCE_PEER_DEV_TYPE SROCE_NIC SROCE_DEV
		export SROCE_GID4 SROCE_GID6 SROCE_LOCAL_ADDR SROCE_LOCAL_ADDR6
		export SROCE_PEER_ADDR SROCE_PEER_ADDR6 SROCE_SERVER_ADDR SROCE_SERVER_ADDR6
		export SROCE_SYNC=$SYNC/$name SROCE_PORT_BASE=$((18000 + 50 * idx))
		cd "$dir" && exec timeout --kill-after=5 "$t" /bin/bash "$script"
	) >>"$tap" 2>&1 </dev/null || rc=$?
	secs=$((SECONDS - start))
	if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ $secs -ge "$t" ]; then
		timedout=1
		echo "# harness: killed after the test's timeout of ${t}s" >>"$tap"
	fi
	kmsg "end $name rc=$rc"
	{ [ $rc -ne 0 ] || grep -q '^not ok' "$tap"; } && failed=1
	capture_stop "$name" "$failed"
	rm -rf "$dir"
	write_done "$OUT/tests/$name.done" "rc=$rc secs=$secs timedout=$timedout"
}

main() {
	local name i=0 prev=300 start

	setup_system
	mkdir -p "$OUT/tests"
	start=$SECONDS
	# A subshell: tap_done exits.
	(setup) >"$OUT/tests/setup.tap" 2>&1 </dev/null
	write_done "$OUT/tests/setup.done" "rc=$? secs=$((SECONDS - start)) timedout=0"
	# shellcheck disable=SC1090
	. "$ENVFILE" 2>/dev/null
	for name in $SROCE_TESTS; do
		i=$((i + 1))
		run_test "$name" "$i" "$prev"
		prev=$(test_timeout "$TESTS_DIR/$name.sh")
	done
	barrier end 120
	rdma link delete "$DEV" 2>/dev/null
	[ -e /sys/kernel/debug/kmemleak ] && {
		echo scan >/sys/kernel/debug/kmemleak
		cat /sys/kernel/debug/kmemleak >"$OUT/kmemleak.txt"
	}
	dmesg >"$OUT/dmesg.txt"
	touch "$OUT/.vm/finished"
}

main
