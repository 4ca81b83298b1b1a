#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the tiny busybox initramfs that boots a test VM.
#
#   tools/testing/vm/mkinitramfs.sh KERNEL_VERSION
#
# Prints the path of the initramfs (an uncompressed newc cpio: the fastest
# to unpack under TCG).  The result is cached in build/vm/<version>/ and only
# rebuilt when one of its inputs changes: this script, ./init, busybox or
# the kernel modules it carries.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
BUSYBOX=/bin/busybox
# shellcheck source=vmfs.sh
. "$HERE/vmfs.sh"

log() { echo "mkinitramfs: $*" >&2; }

[ $# -eq 1 ] || { echo "usage: $0 KERNEL_VERSION" >&2; exit 2; }
KVER=$1
# What /init needs to reach the host's root, over virtio-9p or virtio-fs
# (vmfs.sh).  Modules built into a kernel (virtio_pci in 6.12, all of them
# in the debug kernel) are skipped.  SROCE_MODULES_ROOT: the kernel's
# modules are under SROCE_MODULES_ROOT/lib/modules/<version> (see qemu.sh).
FS=$(vm_fs "$KVER") || exit 1
read -r -a MODULES <<<"$(vm_fs_modules "$FS")"
MODROOT=${SROCE_MODULES_ROOT:-}
[ -d "$MODROOT/lib/modules/$KVER" ] || { log "no $MODROOT/lib/modules/$KVER"; exit 1; }
# A dynamically linked busybox would find no libc in the initramfs.
if [ ! -x "$BUSYBOX" ] || readelf -l "$BUSYBOX" 2>/dev/null | grep -q INTERP; then
	log "$BUSYBOX is missing or not static: apt-get install busybox-static"
	exit 1
fi

# The .ko files to insmod, in order, without duplicates (modprobe lists a
# shared dependency once for every module that needs it).
module_files() {
	local m
	for m in "${MODULES[@]}"; do
		modprobe -d "${MODROOT:-/}" -S "$KVER" --show-depends "$m" |
			awk '$1 == "insmod" { print $2 }'
	done | awk '!seen[$0]++'
}

mapfile -t KOS < <(module_files)

# Cache key: the content of everything that ends up in the image.
cache_key() {
	# Hash contents only: the same file reached by another path is a hit.
	cat "$HERE/init" "${BASH_SOURCE[0]}" "$HERE/vmfs.sh" "$BUSYBOX" "${KOS[@]}" |
		sha256sum | cut -d' ' -f1
}

CACHE="$REPO/build/vm/$KVER"
IMAGE="$CACHE/initramfs.cpio"
KEY=$(cache_key)
if [ -e "$IMAGE" ] && [ "$(cat "$CACHE/initramfs.key" 2>/dev/null)" = "$KEY" ]; then
	echo "$IMAGE"
	exit 0
fi

log "building $IMAGE"
mkdir -p "$CACHE"
STAGE=$(mktemp -d "$CACHE/stage.XXXXXX")
trap 'rm -rf "$STAGE" "$STAGE.cpio"' EXIT

mkdir -p "$STAGE/bin" "$STAGE/modules"
cp "$BUSYBOX" "$STAGE/bin/busybox"
install -m 755 "$HERE/init" "$STAGE/init"
: >"$STAGE/modules/order"
for ko in "${KOS[@]}"; do
	name=$(basename "$ko")
	case "$ko" in
	# busybox insmod cannot read compressed modules.
	*.xz)  name=${name%.xz};  xz -dc "$ko" >"$STAGE/modules/$name" ;;
	*.zst) name=${name%.zst}; zstd -qdc "$ko" >"$STAGE/modules/$name" ;;
	*)     cp "$ko" "$STAGE/modules/$name" ;;
	esac
	echo "$name" >>"$STAGE/modules/order"
done

(cd "$STAGE" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0) >"$STAGE.cpio"
mv "$STAGE.cpio" "$IMAGE"
echo "$KEY" >"$CACHE/initramfs.key"
echo "$IMAGE"
