# parley's Jupyter Kernel Gateway image (DockerJupyterServer), for machines that can reach an
# image registry and PyPI; otherwise `parley sandbox build --jupyter` builds the same image from
# Debian's packages. The gateway runs as the non-root user `sandbox` (uid/gid 1000); its token
# comes from the environment variable KG_AUTH_TOKEN.
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
    pip install --no-cache-dir -qqq "jupyter_kernel_gateway>=2.5" ipykernel; \
    \
    if ! id -u sandbox >/dev/null 2>&1; then \
        groupadd --gid 1000 sandbox; \
        useradd --uid 1000 --gid 1000 --home-dir /home/sandbox --create-home --shell /bin/sh sandbox; \
    fi; \
    mkdir -p /workspace; chown 1000:1000 /workspace
ENV LANG=C.UTF-8 PYTHONUNBUFFERED=1
WORKDIR /workspace
USER sandbox
EXPOSE 8888
CMD ["python", "-m", "kernel_gateway", "--KernelGatewayApp.ip=0.0.0.0", "--KernelGatewayApp.port=8888"]
