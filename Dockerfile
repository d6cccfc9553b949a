# Production image of cmd/server: one static binary serving the function named
# by FUNCTION_TARGET on $PORT (Cloud Run sets both). Built by cloudbuild.yaml;
# locally: docker build -t alpipe-server . && docker run -e FUNCTION_TARGET=IngestCSV -p 8080:8080 alpipe-server

# The toolchain matches go.mod's go directive exactly (checked by
# test/deploy), so the build never downloads another toolchain.
FROM golang:1.26.8-bookworm AS build

WORKDIR /src
# No cgo: cmd/server links no embedded engine (DuckDB is the CLI's), and a
# static binary runs on a base image without libc. No VCS stamping: the build
# context has no .git.
ENV CGO_ENABLED=0 \
    GOOS=linux \
    GOFLAGS=-buildvcs=false

COPY go.mod go.sum ./
COPY . .

# Only the modules cmd/server imports are downloaded (a blanket
# `go mod download` would fetch DuckDB's libraries for every platform).
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/server ./cmd/server \
 && go version -m /out/server | grep -q 'CGO_ENABLED=0'

# Distroless static: CA certificates, tzdata and a nonroot user, no shell and
# no package manager. Pinned by digest (gcr.io/distroless/static-debian12:nonroot
# as of 2026-08-26); refresh with `crane digest gcr.io/distroless/static-debian12:nonroot`.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab

COPY --from=build /out/server /server

# uid 65532: the process cannot write outside /tmp nor bind privileged ports.
USER nonroot:nonroot

ENTRYPOINT ["/server"]
