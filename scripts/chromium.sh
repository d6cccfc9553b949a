#!/usr/bin/env bash
# Installs Debian's Chromium and ChromeDriver for the dashboard's browser
# test (internal/dashboard), unless both are already there. Idempotent and
# quiet: prints one line when it installs, nothing when there is nothing to do.
#
#   scripts/chromium.sh
#
# The test itself finds /usr/bin/chromium and /usr/bin/chromedriver (or
# CHROMIUM / CHROMEDRIVER) and skips, saying why, when they are missing.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
	exit 0
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "chromium.sh: not root and no sudo: install chromium and chromium-driver yourself" >&2
		exit 1
	fi
	sudo=(sudo)
fi
echo "installing: chromium chromium-driver"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# apt's chatter (debconf notices included) is shown only when it fails.
if ! { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq chromium chromium-driver; } >"$log" 2>&1; then
	cat "$log" >&2
	exit 1
fi
