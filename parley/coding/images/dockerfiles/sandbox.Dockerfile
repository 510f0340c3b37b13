# parley's sandbox image, for machines that can reach an image registry (`parley sandbox build`
# uses it when python:3-slim is present or can be pulled; otherwise it builds the same image from
# Debian's packages). Code runs as the non-root user `sandbox` (uid/gid 1000) in /workspace.
# BASE may be any Debian-based image with Python 3 (`parley sandbox build --base`); what it
# already has (procps, the sandbox user) is not installed again.
ARG BASE=python:3-slim
FROM ${BASE}
ARG PACKAGES=""
RUN set -eu; \
    missing=""; \
    for p in procps ca-certificates ${PACKAGES}; do \
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"; \
    done; \
    if [ -n "$missing" ]; then \
        apt-get update -qq; \
        apt-get install -y -qq --no-install-recommends $missing >/dev/null; \
        rm -rf /var/lib/apt/lists/*; \
    fi; \
    if ! id -u sandbox >/dev/null 2>&1; then \
        groupadd --gid 1000 sandbox; \
        useradd --uid 1000 --gid 1000 --home-dir /home/sandbox --create-home --shell /bin/sh sandbox; \
    fi; \
    mkdir -p /workspace; chown 1000:1000 /workspace
ENV LANG=C.UTF-8 PYTHONUNBUFFERED=1
WORKDIR /workspace
CMD ["/bin/sh"]
