#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make test-dkms: check the DKMS package on this host (root; the host
# loads no module).  Not part of "make test".
#
#   1. make deb: build/sroce-dkms_<version>_all.deb
#   2. dpkg -i it: "dkms status" must show sroce <version> installed for
#      each kernel "tools/kernels.sh every" lists (6.1 and 6.12, generic
#      and cloud), and "modinfo -k <release> sroce" must find <version> in
#      /lib/modules/<release>/updates/dkms/, signed (the DKMS MOK key)
#   3. each of those kernels boots in a VM with that module: the harness
#      lays none of its own over /lib/modules (SROCE_MODULE_FROM=system),
#      so modprobe takes DKMS's; tools/testing/dkms/ checks that, then runs
#      10-load, 11-link, 32-rdmacm (rdma_cm traffic), 33-nvmeof and
#      40-integrity (verbs traffic, every byte checked) on it.
#      SROCE_DKMS_VM=0 leaves this step out; ~4 minutes a kernel.
#   4. dpkg -P it: the modules, the DKMS tree and /usr/src copy are gone
#
# The package is always removed at the end, on failure and on ^C too:
# VMs of the test harness boot this host's /lib/modules, and a sroce in
# updates/dkms must not stay there.  Ends with "N passed, N failed".

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
out=$top/build/test-dkms
PKG=sroce-dkms

passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
not_ok() { echo "NOT OK: $*"; failed=$((failed + 1)); }
die() { echo "test-dkms: $*" >&2; exit 1; }

installed() {
	dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q 'ok installed\|half-\|unpacked'
}

[ "$(id -u)" = 0 ] || die "must be root (dpkg -i)"
command -v dkms >/dev/null || die "dkms not installed (make deps)"
if installed; then
	die "$PKG is installed already; remove it first (dpkg -P $PKG)"
fi
mapfile -t KERNELS < <("$top/tools/kernels.sh" every)
[ ${#KERNELS[@]} -gt 0 ] || die "no kernel with headers (make deps)"

remove() {
	installed || return 0
	echo "== dpkg -P $PKG"
	dpkg -P "$PKG" >"$out/remove.log" 2>&1 || { cat "$out/remove.log"; return 1; }
	cat "$out/remove.log"
}

cleanup() {
	local rc=$?

	trap - EXIT
	if installed; then
		echo "test-dkms: removing $PKG" >&2
		remove || echo "test-dkms: dpkg -P $PKG FAILED: remove it by hand" >&2
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$out"
echo "== make deb"
deb=$(bash "$top/tools/deb.sh" | tail -n 1)
version=$(dpkg-deb -f "$deb" Version)
echo "$(basename "$deb"): $(stat -c %s "$deb") bytes, version $version"

echo "== dpkg -i $(basename "$deb")"
if dpkg -i "$deb" >"$out/install.log" 2>&1; then
	ok "dpkg -i"
else
	not_ok "dpkg -i (build/test-dkms/install.log)"
fi
cat "$out/install.log"

echo "== dkms status"
dkms status -m sroce | tee "$out/status"
for k in "${KERNELS[@]}"; do
	if grep -qF "sroce/$version, $k, x86_64: installed" "$out/status"; then
		ok "dkms: installed for $k"
	else
		not_ok "dkms: not installed for $k"
	fi

	info=$(modinfo -k "$k" -F filename sroce 2>&1) || true
	v=$(modinfo -k "$k" -F version sroce 2>&1) || true
	echo "modinfo -k $k sroce: $info, version $v"
	if [[ $info == /lib/modules/$k/updates/dkms/sroce.ko* ]] && [ "$v" = "$version" ]; then
		ok "modinfo: $k has $version in updates/dkms"
	else
		not_ok "modinfo: $k: want $version in /lib/modules/$k/updates/dkms/"
	fi
	# Debian's dkms signs with /var/lib/dkms/mok.key, made at the first
	# build (Documentation/install.rst, Secure Boot).
	signer=$(modinfo -k "$k" -F signer sroce 2>/dev/null) || true
	if [ -n "$signer" ]; then
		ok "modinfo: $k: signed by \"$signer\""
	else
		not_ok "modinfo: $k: sroce is not signed"
	fi
done

# vm_smoke K: boot kernel K on the DKMS-built module and run the smoke.
vm_smoke() {
	local k=$1 log=$out/vm-$1.log

	echo "== VM $k, sroce from updates/dkms (log: build/test-dkms/vm-$k.log)"
	mkdir -p "$out/no-modules"
	if SROCE_MODULE_FROM=system SROCE_DKMS_VERSION=$version \
		SROCE_TESTS_DIR=$top/tools/testing/dkms \
		"$top/tools/testing/run.sh" --kernel "$k" --module-dir "$out/no-modules" \
		--out "$out/vm" >"$log" 2>&1; then
		ok "VM $k: $(tail -n 1 "$log")"
	else
		not_ok "VM $k: $(tail -n 1 "$log")"
		# What failed; never the end of the run (set -e, pipefail).
		grep -E 'not ok|FAIL' "$log" | head -n 20 || true
	fi
}

if [ "${SROCE_DKMS_VM:-1}" != 0 ]; then
	for k in "${KERNELS[@]}"; do
		vm_smoke "$k"
	done
fi

remove || not_ok "dpkg -P"
echo "== after removal"
left=$(dkms status -m sroce)
[ -z "$left" ] && ok "dkms status is empty" || not_ok "dkms status still shows: $left"
[ ! -e "/usr/src/sroce-$version" ] && ok "/usr/src/sroce-$version gone" ||
	not_ok "/usr/src/sroce-$version left"
for k in "${KERNELS[@]}"; do
	mapfile -t kos < <(find "/lib/modules/$k/updates" -name 'sroce.ko*' 2>/dev/null)
	info=$(modinfo -k "$k" -F filename sroce 2>&1) && found=1 || found=0
	echo "modinfo -k $k sroce: $info"
	if [ ${#kos[@]} -eq 0 ] && [ $found = 0 ]; then
		ok "$k: no sroce module left"
	else
		not_ok "$k: sroce left: ${kos[*]} $info"
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
