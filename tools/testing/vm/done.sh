# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by run.sh and interop.sh on the host.  The guest writes
# tests/NAME.done as "rc=N secs=N timedout=0|1" when a test is over.

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
