#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel releases sroce is built and tested against, one per line:
# Debian's 6.1 (what linux-headers-amd64 points at) and the newest 6.12
# (+deb12) whose headers, modules and image are all installed.
#
#   tools/kernels.sh          both releases
#   tools/kernels.sh 6.1      only the 6.1 one
#   tools/kernels.sh 6.12     only the 6.12 one

set -euo pipefail

usable() {
	[ -d "/usr/src/linux-headers-$1" ] && [ -e "/boot/vmlinuz-$1" ] &&
		[ -d "/lib/modules/$1/kernel" ]
}

pick() {
	local pattern=$1 v

	for v in $(ls -1 /lib/modules 2>/dev/null | grep -E "$pattern" | sort -rV); do
		if usable "$v"; then
			echo "$v"
			return 0
		fi
	done
	echo "kernels.sh: no usable kernel matching $pattern (run 'make deps')" >&2
	return 1
}

case "${1:-all}" in
6.1)	pick '^6\.1\.[0-9]+-[0-9]+-amd64$' ;;
6.12)	pick '^6\.12\.[0-9]+\+deb12-amd64$' ;;
all)	pick '^6\.1\.[0-9]+-[0-9]+-amd64$'; pick '^6\.12\.[0-9]+\+deb12-amd64$' ;;
*)	echo "usage: $0 [6.1|6.12|all]" >&2; exit 2 ;;
esac
