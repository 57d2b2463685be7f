# ascend-lossgrad custom-op project: build options and the CANN toolkit location.
#
# Written for this project. The cache variables are the ones CANN users set in an msOpGen project's
# CMakePresets.json (build_tooling.md §1.3): vendor_name, ASCEND_COMPUTE_UNIT, ASCEND_CANN_PACKAGE_PATH,
# ENABLE_SOURCE_PACKAGE, ENABLE_BINARY_PACKAGE, ASCEND_PYTHON_EXECUTABLE. They are settled here, before CANN's own
# ASC CMake package is loaded, because that package only fills in what is still undefined.
include_guard(GLOBAL)

set(vendor_name "lossgrad" CACHE STRING "installed package directory: <install-path>/vendors/<vendor_name>")
set(ASCEND_COMPUTE_UNIT "" CACHE STRING "';'-separated compute units to build kernels for, e.g. ascend910b")
set(ASCEND_CANN_PACKAGE_PATH "" CACHE PATH "CANN toolkit root; empty means $ENV{ASCEND_HOME_PATH}")
set(ASCEND_PYTHON_EXECUTABLE "python3" CACHE STRING "python used by CANN's generators")
set(ENABLE_SOURCE_PACKAGE TRUE CACHE BOOL "ship the kernel sources (online compile)")
set(ENABLE_BINARY_PACKAGE TRUE CACHE BOOL "precompile kernel binaries for each compute unit")
# Every compute unit lossgrad knows (rendered from lossgrad.socs into CMakePresets.json): ascend910b, ascend910_93,
# ascend950, ascend310p, ascend910. Current toolkits accept all of them (ascend950 included: asc-devkit
# cmake/asc/fwk_modules/config.cmake ASC_VALID_SOC_LIST); an older toolkit rejects a unit it does not list.
set(LOSSGRAD_KNOWN_COMPUTE_UNITS "" CACHE STRING "compute units of lossgrad's SoC table")

if(NOT ASCEND_CANN_PACKAGE_PATH)
    if(NOT "$ENV{ASCEND_HOME_PATH}" STREQUAL "")
        set(ASCEND_CANN_PACKAGE_PATH "$ENV{ASCEND_HOME_PATH}" CACHE PATH "" FORCE)
    else()
        message(FATAL_ERROR "lossgrad: no CANN toolkit. Set ASCEND_CANN_PACKAGE_PATH in CMakePresets.json or run "
                            "`source <cann>/set_env.sh` (which sets ASCEND_HOME_PATH) before building.")
    endif()
endif()
if(NOT IS_DIRECTORY "${ASCEND_CANN_PACKAGE_PATH}")
    message(FATAL_ERROR "lossgrad: ASCEND_CANN_PACKAGE_PATH=${ASCEND_CANN_PACKAGE_PATH} is not a directory")
endif()
# CANN's asc-config.cmake includes its modules through $ENV{ASCEND_HOME_PATH} (asc-devkit cmake/asc/asc-config.cmake).
if("$ENV{ASCEND_HOME_PATH}" STREQUAL "")
    set(ENV{ASCEND_HOME_PATH} "${ASCEND_CANN_PACKAGE_PATH}")
endif()

if(NOT ASCEND_COMPUTE_UNIT)
    message(FATAL_ERROR "lossgrad: set ASCEND_COMPUTE_UNIT (CMakePresets.json), one or more of: "
                        "${LOSSGRAD_KNOWN_COMPUTE_UNITS}")
endif()
if(LOSSGRAD_KNOWN_COMPUTE_UNITS)
    foreach(unit IN LISTS ASCEND_COMPUTE_UNIT)
        if(NOT unit IN_LIST LOSSGRAD_KNOWN_COMPUTE_UNITS)
            message(FATAL_ERROR "lossgrad: compute unit '${unit}' is not in lossgrad's SoC table "
                                "(${LOSSGRAD_KNOWN_COMPUTE_UNITS})")
        endif()
    endforeach()
endif()

# Options for every kernel compile of the package (cmake/func.cmake passes them to npu_op_kernel_options).
set(LOSSGRAD_KERNEL_OPTIONS "--cce-auto-sync=on" CACHE STRING
    "kernel compile options; --cce-auto-sync=on is the toolkit default, stated explicitly")

# Where find_package(ASC) looks for CANN's ASC package (asc-config.cmake: find_package(ASC) and the npu_op_*
# functions). The devkit installs asc-config.cmake into <host>-linux/lib64/cmake, outside ascendc_kernel_cmake/
# (asc-devkit cmake/CMakeLists.txt); the module directories (documented: compiler/tikcpp/ascendc_kernel_cmake, CANN
# doc "编译与部署基本流程"; older layouts; the per-host tree, build_tooling.md §2.2) are searched too. The same list
# as lossgrad.cann.targets.ASC_CMAKE_DIRS (a test compares them).
set(LOSSGRAD_ASC_HINTS
    "${ASCEND_CANN_PACKAGE_PATH}/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux/lib64/cmake"
    "${ASCEND_CANN_PACKAGE_PATH}/lib64/cmake"
    "${ASCEND_CANN_PACKAGE_PATH}/compiler/tikcpp/ascendc_kernel_cmake"
    "${ASCEND_CANN_PACKAGE_PATH}/tools/tikcpp/ascendc_kernel_cmake"
    "${ASCEND_CANN_PACKAGE_PATH}/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux/tikcpp/ascendc_kernel_cmake")

set(ASCEND_AUTOGEN_PATH "${CMAKE_BINARY_DIR}/autogen")
file(MAKE_DIRECTORY "${ASCEND_AUTOGEN_PATH}")
