#!/usr/bin/env bash
# tests/run.sh - from a fresh Debian 12 machine to a tested build, in one command.
#
# Installs the Debian packages that are missing (apt-get, as root or through
# sudo), configures with CMake, builds and runs the whole CTest suite.
# Environment:
#   KS_BUILD=DIR          build directory (default: build)
#   KS_SANITIZE=LIST      comma-separated: address, undefined, thread
#   KS_CMAKE_ARGS="..."   more CMake arguments (e.g. -DKS_CUDA=OFF)
#   KS_JOBS=N             parallel build and test jobs (default: nproc)
#   KS_TEST=0             install, configure and build only
#   KS_TARGETS="..."      build only these targets (default: all), e.g.
#                         tsan_tests: what the tests labelled tsan need
#                         (with KS_TEST=0; then ctest -L LABEL yourself)
set -euo pipefail

cd "$(dirname "$0")/.."
build=${KS_BUILD:-build}
jobs=${KS_JOBS:-$(nproc)}

packages=(cmake make gcc pkg-config libsimgrid-dev liblua5.4-dev lua5.4 libhdf5-dev hdf5-tools
          libcmocka-dev libjansson-dev liburing-dev fio jq gnuplot-nox python3-h5py python3-numpy time gdb
          chromium)
bash tests/install.sh tests/run.sh "${packages[@]}"

args=(-DKS_WERROR=ON)
IFS=',' read -ra sans <<< "${KS_SANITIZE:-}"
for s in "${sans[@]}"; do
    case "$s" in
        address) args+=(-DKS_SANITIZE_ADDRESS=ON) ;;
        undefined) args+=(-DKS_SANITIZE_UNDEFINED=ON) ;;
        thread) args+=(-DKS_SANITIZE_THREAD=ON) ;;
        "") ;;
        *) echo "tests/run.sh: unknown sanitizer '$s'" >&2; exit 2 ;;
    esac
done
# shellcheck disable=SC2206
args+=(${KS_CMAKE_ARGS:-})

cmake -S . -B "$build" "${args[@]}"
targets=()
for t in ${KS_TARGETS:-}; do
    targets+=(--target "$t")
done
cmake --build "$build" -j "$jobs" ${targets[@]+"${targets[@]}"}
[ "${KS_TEST:-1}" = 0 ] && exit 0
# the suite's strength: its tests by kind (tests/kinds.cmake)
tests/kinds_count.sh "$build"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
