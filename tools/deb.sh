#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build build/sroce-dkms_<version>_all.deb from this tree with
# debian/ and dh-dkms (make deps installs them).  The version is
# tools/version.sh's; it goes to debian/changelog, to a VERSION file in the
# DKMS sources (which have no git), and through dkms.conf to modinfo.
#
# Prints the path of the .deb on the last line.  Builds in
# build/deb/sroce-<version>/, a copy of the files git knows (tracked or
# not ignored), so objects of an in-tree build never get into the package.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
build=$top/build

log() { echo "deb: $*" >&2; }
die() { log "$*"; exit 1; }

for t in dpkg-buildpackage dh dh_dkms; do
	command -v "$t" >/dev/null || die "$t not installed (make deps)"
done

version=$("$top/tools/version.sh")
[[ $version =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || die "bad version '$version'"
stage=$build/deb/sroce-$version
rm -rf "$build/deb" "$build"/sroce-dkms_*.deb
mkdir -p "$stage"

# The files the package is made of.
PATHS=(Kbuild Kconfig COPYING dkms.conf drivers include debian tools/systemd)
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$top" ls-files -z -co --exclude-standard -- "${PATHS[@]}" |
		tar -C "$top" --null -T - -cf - | tar -C "$stage" -xf -
else
	(cd "$top" && cp -a --parents "${PATHS[@]}" "$stage/")
fi
echo "$version" >"$stage/VERSION"

# The changelog carries the version; its date is the commit's, for a
# reproducible package (dpkg-buildpackage takes SOURCE_DATE_EPOCH from it).
when=$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)
described=$(git -C "$top" describe --tags --always --dirty 2>/dev/null || echo "no git")
maint=$(sed -n 's/^Maintainer: //p' "$stage/debian/control")
cat >"$stage/debian/changelog" <<EOF
sroce ($version) unstable; urgency=medium

  * Built from git: $described.

 -- $maint  $(LC_ALL=C date -R -u -d "@$when")
EOF

log "building sroce-dkms $version in $stage"
(cd "$stage" && dpkg-buildpackage -b -us -uc) >"$build/deb/build.log" 2>&1 ||
	{ tail -n 30 "$build/deb/build.log" >&2; die "dpkg-buildpackage failed; see $build/deb/build.log"; }

deb=sroce-dkms_${version}_all.deb
[ -f "$build/deb/$deb" ] || die "no $deb in $build/deb"
mv "$build/deb/$deb" "$build/$deb"
log "$(du -h "$build/$deb" | cut -f1) $deb"
echo "$build/$deb"
