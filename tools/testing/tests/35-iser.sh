#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 600
#
# iSER on sroce: a LIO iSCSI target made with targetcli-fb (a 64 MiB
# ramdisk LUN, a portal with iSER enabled) and the open-iscsi initiator
# with its "iser" interface, through one sroce device: discovery, login,
# a disk that passes direct writes read back and compared and fio verify
# runs (4 KiB random, 1 MiB sequential), logout, target teardown and
# module unload.
#
# The guest's root is read-only: /etc/iscsi (the initiator's node
# database) and targetcli's state are on tmpfs.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../ulp.sh
. "$(dirname "$0")/../ulp.sh"
require_ulp_device

IQN=iqn.2026-12.org.sroce:iser
PORTAL=10.0.0.1:3260
TGT=/iscsi/$IQN/tpg1

# shellcheck disable=SC2317
cleanup() {
	iscsiadm -m node -T "$IQN" --logout >/dev/null 2>&1
	pkill -x iscsid 2>/dev/null
	pkill -x dbus-daemon 2>/dev/null
	targetcli clearconfig confirm=True >/dev/null 2>&1
	rmdir /sys/kernel/config/target/iscsi 2>/dev/null
	modprobe -r ib_isert iscsi_target_mod target_core_mod ib_iser 2>/dev/null
	rdma link delete sroce0 2>/dev/null
	ip link del veth0 2>/dev/null
	umount /etc/iscsi /etc/rtslib-fb-target 2>/dev/null
	rm -f /tmp/iser-*.bin
}
trap cleanup EXIT

for tool in targetcli iscsiadm iscsid; do
	command -v "$tool" >/dev/null || {
		skip "iSER" "$tool is not installed (make deps)"
		tap_done
	}
done
if ! modprobe ib_isert 2>/dev/null || ! modprobe ib_iser 2>/dev/null; then
	skip "iSER" "this kernel has no ib_isert or ib_iser"
	tap_done
fi
modprobe sd_mod 2>/dev/null	# no udev: not loaded on demand
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config

# Writable copies of the initiator's and targetcli's configuration.
etc_on_tmpfs() {
	local d=$1 tmp

	tmp=$(mktemp -d) && cp -a "$d/." "$tmp/" &&
		mount -t tmpfs -o mode=755 tmpfs "$d" && cp -a "$tmp/." "$d/"
}
etc_on_tmpfs /etc/iscsi && etc_on_tmpfs /etc/rtslib-fb-target
mkdir -p /run/lock/iscsi
# targetcli asks the system D-Bus for tcmu-runner's backstores and fails
# without a bus: give it an empty one of its own.
if command -v dbus-daemon >/dev/null; then
	DBUS_SYSTEM_BUS_ADDRESS=$(dbus-daemon --session --fork --print-address)
	export DBUS_SYSTEM_BUS_ADDRESS
fi

ip link add veth0 type veth peer name veth1 &&
	ip addr add 10.0.0.1/24 dev veth0 &&
	ip link set veth0 up && ip link set veth1 up
check "sroce0 on veth0" rdma link add sroce0 type "$ULP_LINK_TYPE" netdev veth0
poll_until 10 rdma_gid_index sroce0 1 10.0.0.1

target_setup() {
	targetcli set global auto_save_on_exit=false &&
		targetcli /backstores/ramdisk create name=rd0 size=64M &&
		targetcli /iscsi create "$IQN" &&
		{ targetcli "$TGT/portals" delete 0.0.0.0 3260 || true; } &&
		targetcli "$TGT/portals" create 10.0.0.1 3260 &&
		targetcli "$TGT/portals/$PORTAL" enable_iser boolean=true &&
		targetcli "$TGT/luns" create /backstores/ramdisk/rd0 &&
		targetcli "$TGT" set attribute authentication=0 \
			demo_mode_write_protect=0 generate_node_acls=1 \
			cache_dynamic_acls=1
}
check "targetcli: a 64 MiB ramdisk LUN behind an iSER portal on $PORTAL" target_setup
check_output "the portal has iSER on" 'iser' targetcli "$TGT/portals" ls

check "iscsid starts" iscsid
check "discovery (SendTargets) finds $IQN on $PORTAL" \
	bash -c "iscsiadm -m discovery -t st -p $PORTAL -I iser | grep -q '$IQN'"
check "login over the iser interface" \
	iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser --login
check_output "the session's transport is iser" 'iser' \
	iscsiadm -m session

# The disk of our session, once it shows up.
iser_disk() {
	local d
	for d in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -b "/dev/${d##*/}" ] && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}
if poll_until 30 iser_disk; then
	dev=$(iser_disk)
	ok "iSER disk: $dev"
	head -c $((16 << 20)) /dev/urandom >/tmp/iser-pat.bin
	check "write 16 MiB, 1 MiB direct I/O" \
		dd if=/tmp/iser-pat.bin of="$dev" bs=1M oflag=direct status=none
	check "read back, 4 KiB direct I/O, compare" bash -c \
		"dd if=$dev of=/tmp/iser-back.bin bs=4k count=4096 iflag=direct status=none &&
		 cmp /tmp/iser-pat.bin /tmp/iser-back.bin"
	ulp_fio iser4k "$dev" randwrite 4k 16M 16
	ulp_fio iser1m "$dev" write 1M 64M 4
else
	not_ok "iSER disk" "none appeared" "$(dmesg | tail -n 20)"
fi

check "logout" iscsiadm -m node -T "$IQN" -p "$PORTAL" --logout
check "no session is left" bash -c '! iscsiadm -m session >/dev/null 2>&1'
pkill -x iscsid
check "targetcli: the target comes down" targetcli clearconfig confirm=True
# targetcli leaves the fabric's configfs root, which holds its module.
rmdir /sys/kernel/config/target/iscsi 2>/dev/null
check "ib_isert, the iSCSI target and ib_iser unload" \
	modprobe -r ib_isert iscsi_target_mod ib_iser
# LIO's core too, once the HBA directories targetcli leaves are gone.
rmdir /sys/kernel/config/target/core/*_* 2>/dev/null
modprobe -r target_core_mod 2>/dev/null
check "sroce0 deleted" rdma link delete sroce0
tap_done
