#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare, on the host, the module files the guest lays over
# /lib/modules/<version>: the freshly built .ko files under updates/ and the
# modules.dep/alias/symbols indexes that depmod makes with them added.
#
#   tools/testing/vm/modindex.sh KERNEL_VERSION MODULE_DIR
#
# Prints the directory (build/vm/<version>/modindex); exits 1 if
# MODULE_DIR/<version>/ has no .ko file.
#
# Why on the host: depmod must read every module of the kernel.  Over 9p
# under TCG that takes 35 s for 6.1 and much longer for 6.12, whose modules
# are xz-compressed; natively it takes 1 s and 7 s, and the result is cached
# until a .ko changes.  The guest side is sroce_install in ../lib.sh.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)

log() { echo "modindex: $*" >&2; }

[ $# -eq 2 ] || { echo "usage: $0 KERNEL_VERSION MODULE_DIR" >&2; exit 2; }
KVER=$1
SRC=$2/$KVER
# SROCE_MODULES_ROOT: the kernel's modules are not in /lib/modules (qemu.sh).
STOCK=${SROCE_MODULES_ROOT:-}/lib/modules/$KVER

shopt -s nullglob
KOS=("$SRC"/*.ko)
[ ${#KOS[@]} -gt 0 ] || { log "no .ko file in $SRC"; exit 1; }

CACHE=$REPO/build/vm/$KVER
LAYER=$CACHE/modindex
KEY=$( { cat "${BASH_SOURCE[0]}" "$STOCK/modules.order"; sha256sum "${KOS[@]}"; } |
	sha256sum | cut -d' ' -f1)
if [ -d "$LAYER" ] && [ "$(cat "$CACHE/modindex.key" 2>/dev/null)" = "$KEY" ]; then
	echo "$LAYER"
	exit 0
fi

log "running depmod for $KVER with ${KOS[*]##*/}"
mkdir -p "$CACHE"
STAGE=$(mktemp -d "$CACHE/modindex.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

# A module tree depmod can scan: the stock modules through a symlink (depmod
# follows it, and modules.dep keeps the "kernel/..." paths relative), ours
# in updates/, which depmod's default search order prefers.
TREE=$STAGE/lib/modules/$KVER
mkdir -p "$TREE/updates"
ln -s "$STOCK/kernel" "$TREE/kernel"
cp "$STOCK"/modules.order "$STOCK"/modules.builtin* "$TREE/"
cp "${KOS[@]}" "$TREE/updates/"
depmod -b "$STAGE" "$KVER"

# The layer must not carry the symlink: in the guest it would point back at
# the overlay it is part of.
rm "$TREE/kernel"
rm -rf "$LAYER"
mv "$TREE" "$LAYER"
echo "$KEY" >"$CACHE/modindex.key"
echo "$LAYER"
