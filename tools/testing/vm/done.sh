# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The two ends of tests/NAME.done, "rc=N secs=N timedout=0|1", which a
# guest writes when a test is over and the host polls for over 9p.
# Sourced by vm/guest.sh and vm/interop-guest.sh (write_done) and by
# run.sh and interop.sh (read_done).

# write_done FILE TEXT: write FILE under another name first, then rename
# it, so that the host never sees it empty.
write_done() {
	echo "$2" >"$1.tmp"
	mv "$1.tmp" "$1"
}

# read_done FILE: set the caller's rc, secs and timedout from FILE.  A field
# that is missing (or a file that is empty) leaves the caller's default:
# the file is read over 9p while the guest may still be writing it.
# shellcheck disable=SC2034 # rc, secs and timedout are the caller's
read_done() {
	local kv fields=()

	{ read -r -a fields <"$1"; } 2>/dev/null
	for kv in "${fields[@]}"; do
		case $kv in
		rc=*) rc=${kv#rc=} ;;
		secs=*) secs=${kv#secs=} ;;
		timedout=*) timedout=${kv#timedout=} ;;
		esac
	done
}
