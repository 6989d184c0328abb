#!/usr/bin/env bash
# Installs Mesa's lavapipe (a software Vulkan driver) new enough for Dawn: Mesa 25 from Debian's
# bookworm-backports suite. Stock bookworm Mesa 22.3 is rejected by Dawn
# ("shaderUniform*ArrayDynamicIndexing required"). Debian/Ubuntu only; needs root (or sudo).
# Idempotent: does nothing when a lavapipe of version >= 24 is already installed.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

have_version() { dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true; }
v=$(have_version)
major=${v%%.*}; major=${major#*:}
if [[ -n $v && ${major:-0} =~ ^[0-9]+$ && $major -ge 24 ]]; then
  echo "setup:gpu: mesa-vulkan-drivers $v already installed"
  exit 0
fi
if [ ! -f /etc/debian_version ]; then
  echo "setup:gpu: not a Debian/Ubuntu system; install a Vulkan driver (Mesa >= 24 lavapipe, or your GPU's) by hand" >&2
  exit 1
fi
. /etc/os-release
codename=${VERSION_CODENAME:-bookworm}
export DEBIAN_FRONTEND=noninteractive
if [ "${ID:-debian}" = debian ]; then
  src=/etc/apt/sources.list.d/webdpl-backports.sources
  if ! grep -rqs "${codename}-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$codename" | $SUDO tee "$src" >/dev/null
  fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq -t "${codename}-backports" mesa-vulkan-drivers libvulkan1 >/dev/null
else
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
fi
echo "setup:gpu: installed mesa-vulkan-drivers $(have_version)"
