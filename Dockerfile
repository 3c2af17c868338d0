# runner with bubblewrap inside, for Kubernetes Jobs and other container runners.
# bwrap needs user namespaces in the container (e.g. `docker run --security-opt
# seccomp=unconfined --security-opt apparmor=unconfined`, or a pod allowed to unshare);
# where they are blocked runner falls back to Landlock, and says which it got.
#   docker build -t runner . && docker run --rm -v "$PWD:/w" -w /w runner run scenarios/
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_docs \
      -ldflags "-s -w -X github.com/agentrunner/runner/runner/version.Version=${VERSION}" \
      -o /out/runner .

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap ca-certificates git python3 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/runner /usr/local/bin/runner
RUN useradd --create-home runner
USER runner
WORKDIR /home/runner
ENTRYPOINT ["runner"]
CMD ["--help"]
