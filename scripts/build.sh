#!/usr/bin/env bash
# One-shot build of a lossgrad custom-op package (the msOpGen project convention: ./build.sh in the project root).
# Configures with CMakePresets.json, builds the kernel binaries and the package, and leaves
# build_out/custom_opp_<os>_<arch>.run. It never installs the package: install it yourself with
#   ./build_out/custom_opp_<os>_<arch>.run --install-path=<absolute dir>
# and set ASCEND_CUSTOM_OPP_PATH=<absolute dir>/vendors/<vendor_name> only in the environment of the runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if [[ -z "${ASCEND_HOME_PATH:-}" ]]; then
    echo "build.sh: ASCEND_HOME_PATH is not set; run 'source <cann>/set_env.sh' first" >&2
    exit 1
fi
# An inherited ASCEND_CUSTOM_OPP_PATH perturbs CANN's op build (build_tooling.md §6 #8).
unset ASCEND_CUSTOM_OPP_PATH
JOBS="${JOBS:-$(nproc)}"

cmake_version="$(cmake --version | head -n1 | awk '{print $3}')"
if [[ "$(printf '%s\n3.19\n' "${cmake_version}" | sort -V | head -n1)" == "3.19" ]]; then
    cmake -S . -B build_out --preset=default
else
    # CMake < 3.19 has no presets: pass the preset's cache variables as -D flags instead.
    mapfile -t preset_defs < <(python3 - <<'PY'
import json, os
preset = json.load(open("CMakePresets.json"))["configurePresets"][0]
for key, spec in preset["cacheVariables"].items():
    value = spec["value"] if isinstance(spec, dict) else spec
    print(f"-D{key}={value.replace('${sourceDir}', os.getcwd())}")
PY
    )
    cmake -S . -B build_out -G "Unix Makefiles" "${preset_defs[@]}"
fi

cmake --build build_out --target binary -j "${JOBS}"
cmake --build build_out --target package -j "${JOBS}"

shopt -s nullglob
packages=(build_out/custom_opp_*.run)
if [[ ${#packages[@]} -ne 1 ]]; then
    echo "build.sh: expected one build_out/custom_opp_*.run, found ${#packages[@]}" >&2
    exit 1
fi
echo "build.sh: built ${packages[0]}"
