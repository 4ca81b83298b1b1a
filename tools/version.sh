#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print sroce's version: the one "modinfo sroce" and the load message show,
# the DKMS package version and the .deb's.
#
# From "git describe --tags --always --dirty", made a valid Debian version
# (it must start with a digit and must not have a "-"):
#
#   v1.2[-dirty]                1.2[+dirty]
#   v1.2-5-g2ba0045[-dirty]     1.2+5.g2ba0045[.dirty]
#   2ba0045[-dirty] (no tag)    0.0+146.g2ba0045[.dirty]   (146 commits)
#
# Outside a git checkout (a release tarball, the DKMS source in /usr/src)
# the VERSION file at the top of the tree, which "make deb" writes, else
# the fixed 0.0+unknown.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
FALLBACK=0.0+unknown

from_git() {
	local d tag rest

	git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 || return 1
	# Only this tree's own history: not that of a repository it sits in.
	[ "$(git -C "$top" rev-parse --show-toplevel)" = "$top" ] || return 1
	d=$(git -C "$top" describe --tags --always --dirty 2>/dev/null) || return 1
	if tag=$(git -C "$top" describe --tags --abbrev=0 2>/dev/null); then
		rest=${d#"$tag"}
		tag=${tag#v}
		tag=${tag//-/\~}
		rest=${rest#-}
		rest=${rest//-/.}
		echo "$tag${rest:++$rest}"
	else
		echo "0.0+$(git -C "$top" rev-list --count HEAD).g${d//-/.}"
	fi
}

if v=$(from_git) && [ -n "$v" ]; then
	echo "$v"
elif [ -s "$top/VERSION" ]; then
	head -n 1 "$top/VERSION"
else
	echo "$FALLBACK"
fi
