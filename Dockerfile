# syntax=docker/dockerfile:1
# Podium container image: a static binary on distroless, running as a non-root user.
#
#   docker build -t podium .
#   docker run -p 8080:8080 -e ADMIN_PASSWORD=change-me -v podium-data:/data podium
#
# deploy/compose.yaml adds Prometheus and Grafana; docs/operations.md has the rest.

FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/podium ./cmd/podium \
 && mkdir -p /out/data

# distroless/static: no shell, no package manager; "nonroot" is uid/gid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/podium /podium
# The data directory must belong to the server's user (a fresh named volume copies it).
COPY --from=build --chown=65532:65532 /out/data /data
ENV DATA_DIR=/data \
    PORT=8080
VOLUME ["/data"]
EXPOSE 8080
USER 65532:65532
# The image has no curl: the binary checks its own /healthz (PORT from the environment).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/podium", "healthcheck"]
# SIGTERM: stop accepting, finish requests, write a snapshot (docs/behaviour.md#state-durability-and-recovery).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/podium"]
