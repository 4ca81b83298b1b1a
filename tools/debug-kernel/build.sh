#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) sroce's debug kernel: Debian's linux-source-6.12 with
# allnoconfig + kernel.config (a minimal x86_64 virtio guest) + debug.config
# (KASAN, lockdep, kmemleak, UBSAN, debug objects, KUnit, fault injection).
#
#   tools/debug-kernel/build.sh [--kcsan] [--print-key | --is-built]
#
#   --kcsan   the KCSAN flavour: kcsan.config on top (KCSAN instead of
#             KASAN, which exclude each other); its own cache key.
#             SROCE_DEBUG_FLAVOUR=kcsan does the same.
#
# Prints the cache directory on stdout (progress goes to stderr):
#
#   CACHE/bzImage         the kernel image (boot it with qemu -kernel)
#   CACHE/release         its release, e.g. 6.12.118-sroce-debug
#   CACHE/modroot/        make modules_install INSTALL_MOD_PATH=: the
#                         modules (rdma_rxe) under lib/modules/<release>/
#   CACHE/build/          the O= build tree: KDIR for out-of-tree modules
#                         (make -C REPO KDIR=CACHE/build modules)
#   CACHE/build.log       the build's output
#
# CACHE is $SROCE_DEBUG_KERNEL_CACHE (default /var/cache/sroce/debug-kernel)
# /<key>, key = the source's version + a hash of the config fragments and
# the compiler: the kernel is built once and reused until one of those
# changes.  An interrupted build resumes where it stopped.
#
# The source tree ($SROCE_LINUX_SRC, default /var/cache/sroce/linux-source-6.12,
# unpacked by tools/deps.sh) is only read: everything is built with O=.
# The build runs under nice -n 19 with -j$SROCE_DEBUG_KERNEL_JOBS (default 2):
# this machine runs test VMs at the same time.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=${SROCE_LINUX_SRC:-/var/cache/sroce/linux-source-6.12}
CACHE_ROOT=${SROCE_DEBUG_KERNEL_CACHE:-/var/cache/sroce/debug-kernel}
JOBS=${SROCE_DEBUG_KERNEL_JOBS:-2}
FRAGMENTS=("$HERE/kernel.config" "$HERE/debug.config")
if [ "${1:-}" = --kcsan ]; then
	SROCE_DEBUG_FLAVOUR=kcsan
	shift
fi
case ${SROCE_DEBUG_FLAVOUR:-kasan} in
kasan) ;;
kcsan) FRAGMENTS+=("$HERE/kcsan.config") ;;
*) echo "debug-kernel: SROCE_DEBUG_FLAVOUR is kasan or kcsan" >&2; exit 2 ;;
esac
# Bump when the way the cache is laid out or built changes.
FORMAT=1

log() { echo "debug-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

[ -f "$SRC/Makefile" ] || die "no kernel source in $SRC (run 'make deps')"
for tool in gcc make bc bison flex perl lz4 cpio depmod; do
	command -v "$tool" >/dev/null || die "$tool is missing (run 'make deps')"
done

# The source's version: Debian's package version if the package is
# installed (it changes with Debian's patches), else the Makefile's.
src_version() {
	local v
	v=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
	if [ -z "$v" ]; then
		v=$(awk -F' *= *' '$1 == "VERSION" { a = $2 } $1 == "PATCHLEVEL" { b = $2 }
			$1 == "SUBLEVEL" { c = $2 } END { print a "." b "." c }' "$SRC/Makefile")
	fi
	echo "${v//[^A-Za-z0-9.+-]/_}"
}

KEY=$(src_version)-$( { echo "format $FORMAT"; cat "${FRAGMENTS[@]}"; gcc --version | head -n 1; } |
	sha256sum | cut -c1-12)
[ "${1:-}" = --print-key ] && { echo "$KEY"; exit 0; }
CACHE=$CACHE_ROOT/$KEY
B=$CACHE/build
# --is-built: is this kernel in the cache already (no build needed)?
[ "${1:-}" = --is-built ] && { [ -e "$CACHE/done" ]; exit; }

if [ -e "$CACHE/done" ]; then
	echo "$CACHE"
	exit 0
fi

mkdir -p "$CACHE"
# Two builds of the same key wait for each other.
exec {lockfd}>>"$CACHE/.lock"
if ! flock -n "$lockfd"; then
	log "waiting for another build of $KEY"
	flock "$lockfd"
fi
if [ -e "$CACHE/done" ]; then
	echo "$CACHE"
	exit 0
fi

mk() { nice -n 19 make -C "$SRC" O="$B" -j"$JOBS" "$@"; }

# check_config: every setting of the fragments must hold in .config ("=n"
# as "is not set" or absent), so that a symbol Kconfig silently dropped (a
# missing dependency, a renamed option) is an error, not a surprise.  A
# later fragment overrides an earlier one, as in KCONFIG_ALLCONFIG.
check_config() {
	local line sym got bad=0
	local -A want=()
	while read -r line; do
		[[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]] || continue
		want[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	done < <(cat "${FRAGMENTS[@]}")
	for sym in "${!want[@]}"; do
		got=$(sed -n "s/^$sym=//p" "$B/.config")
		if [ "${want[$sym]}" = n ]; then
			[ -z "$got" ] && continue
		elif [ "$got" = "${want[$sym]}" ]; then
			continue
		fi
		log "config: $sym=${want[$sym]} wanted, got ${got:-n}"
		bad=1
	done
	return $bad
}

# run CMD...: its output to build.log; on failure, show the end of it.
run() {
	"$@" >>"$CACHE/build.log" 2>&1 && return 0
	tail -n 40 "$CACHE/build.log" >&2
	die "build failed: $*; log: $CACHE/build.log"
}

start=$SECONDS
log "building $KEY in $B (nice -n 19, -j$JOBS); log: $CACHE/build.log"
mkdir -p "$B"
# allnoconfig with the fragments as KCONFIG_ALLCONFIG: what merge_config.sh -n
# does, without its temporary file in the source tree.
cat "${FRAGMENTS[@]}" >"$B/fragments.config"
if ! cmp -s "$B/fragments.config" "$B/.fragments.used"; then
	run mk KCONFIG_ALLCONFIG="$B/fragments.config" allnoconfig
	cp "$B/fragments.config" "$B/.fragments.used"
fi
check_config || die "the config fragments do not hold in $B/.config (see above)"
run mk bzImage modules
rm -rf "$CACHE/modroot"
run mk INSTALL_MOD_PATH="$CACHE/modroot" modules_install
mk -s --no-print-directory kernelrelease >"$CACHE/release"
cp "$B/arch/x86/boot/bzImage" "$CACHE/bzImage"
log "built $(cat "$CACHE/release") in $((SECONDS - start))s"
touch "$CACHE/done"
echo "$CACHE"
