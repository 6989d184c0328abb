#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (tests/browser, tests/packaging.test.ts): headless,
# with WebGPU on SwiftShader when there is no GPU. playwright-core drives it; it downloads no browser.
# Debian/Ubuntu only; needs root (or sudo). Idempotent: does nothing when a chromium is on the PATH.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "setup:browser: $("$b" --version 2>/dev/null | head -1) already installed"
    exit 0
  fi
done
if [ ! -f /etc/debian_version ]; then
  echo "setup:browser: not a Debian/Ubuntu system; install Chromium by hand and set WEBDPL_CHROMIUM to its binary" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium >/dev/null
echo "setup:browser: installed $(chromium --version 2>/dev/null | head -1)"
