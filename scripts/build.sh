#!/usr/bin/env bash
# Builds the alpipe CLI with its version and commit stamped in (-ldflags -X),
# so that `alpipe version` names them even where Go records no VCS
# information: GOFLAGS=-buildvcs=false (the team's machines) or go run.
#
#   scripts/build.sh               # bin/alpipe
#   scripts/build.sh -o FILE
#
# The version is the tag at HEAD (vX.Y.Z) or, as Go's own stamp would say,
# the pseudo-version v0.0.0-<commit time, UTC>-<12 hex of the commit>, with
# +dirty when the tree differs from the commit. Without git (a copy of the
# tree without .git) nothing is stamped, and `alpipe version` says so.
set -euo pipefail
cd "$(dirname "$0")/.."

out=bin/alpipe
if [[ $# -eq 2 && $1 == "-o" ]]; then
	out=$2
elif [[ $# -ne 0 ]]; then
	echo "usage: scripts/build.sh [-o FILE]" >&2
	exit 2
fi

ldflags=""
if rev=$(git rev-parse HEAD 2>/dev/null); then
	export TZ=UTC
	when=$(git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)
	# As go build's vcs.modified: any change, untracked files included.
	modified=false
	[[ -z $(git status --porcelain) ]] || modified=true
	version=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null) ||
		version="v0.0.0-$(git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S)-${rev:0:12}"
	[[ $modified == false ]] || version+="+dirty"
	ldflags="-X main.version=$version -X main.commit=$rev -X main.commitTime=$when -X main.modified=$modified"
fi
go build -v -ldflags="$ldflags" -o "$out" ./cmd/alpipe
