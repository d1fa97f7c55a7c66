# guiagent in a container: a static binary serving MCP over Streamable HTTP,
# driving a private virtual display (Xvfb) inside the container.
#
#   docker build -t guiagent .
#   docker run --rm -p 60008:60008 -e GUI_AGENT_HTTP_TOKEN="$(openssl rand -hex 32)" guiagent
#
# The token is required: the server listens on every interface of the
# container, and refuses to start without GUI_AGENT_HTTP_TOKEN.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/guiagent ./cmd/guiagent

FROM debian:bookworm-slim
COPY scripts/debian-packages.sh /usr/local/share/guiagent/debian-packages.sh
RUN /usr/local/share/guiagent/debian-packages.sh install runtime && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/guiagent /usr/local/bin/guiagent
RUN useradd --create-home --uid 10001 guiagent
USER guiagent
WORKDIR /home/guiagent
# Run records, the held-input ledgers and logs stay in the container's
# $XDG_STATE_HOME/guiagent unless a volume is mounted there.
ENV XDG_STATE_HOME=/home/guiagent/.local/state
EXPOSE 60008
ENTRYPOINT ["guiagent"]
CMD ["serve", "--http", "--addr", "0.0.0.0:60008", "--allow-remote", "--virtual-display", "1280x800"]
