#!/usr/bin/env bash
# Installs the system packages the tests use, if any is missing: a real Prometheus and promtool
# (prometheus), Alertmanager (prometheus-alertmanager), blackbox_exporter
# (prometheus-blackbox-exporter), jsonnet (the mixin), openssl (TLS tests) and unzip.
# Debian/Ubuntu. Works as root without sudo (containers, CI images) and as a user with sudo.
set -euo pipefail

packages=()
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || packages+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || packages+=(prometheus-alertmanager)
command -v prometheus-blackbox-exporter >/dev/null 2>&1 || packages+=(prometheus-blackbox-exporter)
command -v jsonnet >/dev/null 2>&1 || packages+=(jsonnet)
command -v openssl >/dev/null 2>&1 || packages+=(openssl)
command -v unzip >/dev/null 2>&1 || packages+=(unzip)
# --with-image: also what CI's container image step uses (podman builds and runs the Dockerfile with
# runc; mmdebstrap makes the base image from Debian's packages, no registry needed).
if [ "${1:-}" = "--with-image" ]; then
  command -v podman >/dev/null 2>&1 || packages+=(podman)
  command -v runc >/dev/null 2>&1 || packages+=(runc)
  command -v mmdebstrap >/dev/null 2>&1 || packages+=(mmdebstrap)
fi

if [ "${#packages[@]}" -eq 0 ]; then
  echo "system packages for the tests: all present"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-test-deps: need root or sudo to install: ${packages[*]}" >&2
    exit 1
  fi
  as_root=(sudo)
fi

echo "installing system packages: ${packages[*]}"
# sudo resets the environment: pass DEBIAN_FRONTEND through env.
${as_root[@]+"${as_root[@]}"} apt-get update -qq
${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
