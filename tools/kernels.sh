#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel releases sroce is built and tested against, one per line:
# Debian's 6.1 (what linux-headers-amd64 points at) and the newest 6.12
# (+deb12) whose headers, modules and image are all installed; and the same
# two of Debian's cloud flavour (linux-headers-cloud-amd64, the newest
# 6.12.*+deb12-cloud-amd64), which has no rdma_rxe, siw or 9p.
#
#   tools/kernels.sh             the two generic kernels (6.1, 6.12)
#   tools/kernels.sh 6.1         only the generic 6.1 one
#   tools/kernels.sh 6.12        only the generic 6.12 one
#   tools/kernels.sh cloud       the two cloud kernels (6.1, 6.12)
#   tools/kernels.sh 6.1-cloud   only the cloud 6.1 one
#   tools/kernels.sh 6.12-cloud  only the cloud 6.12 one
#   tools/kernels.sh every       all four: generic 6.1, 6.12, cloud 6.1, 6.12
#
# No argument means the generic pair because that is what every caller
# (make both, make check, make test's full suites, bench, fuzz...) builds
# and tests in full; the cloud pair gets its own targets (make cloud).

set -euo pipefail

usable() {
	[ -d "/usr/src/linux-headers-$1" ] && [ -e "/boot/vmlinuz-$1" ] &&
		[ -d "/lib/modules/$1/kernel" ]
}

pick() {
	local pattern=$1 v

	# Release names have no spaces: word splitting is safe.
	for v in $(cd /lib/modules 2>/dev/null && printf '%s\n' * | grep -E "$pattern" | sort -rV); do
		if usable "$v"; then
			echo "$v"
			return 0
		fi
	done
	echo "kernels.sh: no usable kernel matching $pattern (run 'make deps')" >&2
	return 1
}

K61='^6\.1\.[0-9]+-[0-9]+-amd64$'
K612='^6\.12\.[0-9]+\+deb12-amd64$'
K61_CLOUD='^6\.1\.[0-9]+-[0-9]+-cloud-amd64$'
K612_CLOUD='^6\.12\.[0-9]+\+deb12-cloud-amd64$'

case "${1:-all}" in
6.1)		pick "$K61" ;;
6.12)		pick "$K612" ;;
6.1-cloud)	pick "$K61_CLOUD" ;;
6.12-cloud)	pick "$K612_CLOUD" ;;
all)		pick "$K61"; pick "$K612" ;;
cloud)		pick "$K61_CLOUD"; pick "$K612_CLOUD" ;;
every)		pick "$K61"; pick "$K612"; pick "$K61_CLOUD"; pick "$K612_CLOUD" ;;
*)		echo "usage: $0 [6.1|6.12|6.1-cloud|6.12-cloud|all|cloud|every]" >&2; exit 2 ;;
esac
