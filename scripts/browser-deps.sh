#!/usr/bin/env bash
# browser-deps.sh installs a headless browser for the browser tests
# (internal/benchcmp's TestBrowser*): Debian's chromium, when no chromium or
# chrome is on PATH yet. It never fails the caller: when the install is not
# possible (not root, no apt-get, no network) it prints why and exits 0, and
# the browser tests then skip with a message that says no chromium is present.
#
# Usage:
#
#   scripts/browser-deps.sh              install chromium if it is missing
#   scripts/browser-deps.sh -h | --help  this text
#
# Any other argument is bad usage (exit 2), refused before anything is
# installed.
set -uo pipefail

# Its arguments are read before anything is looked for: it read none, and
# --help or a mistyped flag ran it, an apt-get install on a root machine
# without chromium.
case ${1:-} in
-h | --help)
	sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit 0
	;;
esac
if (($# > 0)); then
	echo "browser-deps: unknown argument '$1'; it takes none but -h or --help" >&2
	exit 2
fi

for b in chromium chromium-browser google-chrome google-chrome-stable; do
	if command -v "$b" >/dev/null 2>&1; then
		echo "browser-deps: $b is present ($(command -v "$b"))"
		exit 0
	fi
done

if ! command -v apt-get >/dev/null 2>&1; then
	echo "browser-deps: no chromium and no apt-get to install it; browser tests will skip"
	exit 0
fi
sudo=()
if ((EUID != 0)); then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo=(sudo -n)
	else
		echo "browser-deps: no chromium, and not root (nor passwordless sudo) to install it; browser tests will skip"
		exit 0
	fi
fi

echo "browser-deps: installing Debian's chromium"
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get update -q; then
	echo "browser-deps: apt-get update failed; browser tests will skip"
	exit 0
fi
if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends chromium; then
	echo "browser-deps: apt-get install chromium failed; browser tests will skip"
	exit 0
fi
echo "browser-deps: installed $(command -v chromium)"
