#!/usr/bin/env bash
# Installs what Tegula builds with, from Debian's packages. Idempotent: a
# machine that already has everything installs nothing.
set -euo pipefail

packages=(
  cmake ninja-build
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  clang-22 libfuzzer-22-dev
  libcli11-dev nlohmann-json3-dev
  python3-numpy python3-pytest
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" \
    || missing+=("$package")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi
