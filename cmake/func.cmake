# ascend-lossgrad custom-op project: the functions the top-level CMakeLists.txt calls.
#
# Written for this project. Packaging goes through CANN's own npu_op_* CMake API from the installed toolkit rather
# than through copies of CANN's build scripts (copied CANN CMake breaks on toolkit upgrades, build_tooling.md §6 #9):
#   npu_op_code_gen      compiles op_host/*.cpp and runs CANN's op_build on it, generating aclnn_<op>.{h,cpp},
#                        op_proto.* and aic-<unit>-ops-info.ini (the two-stage aclnn API comes from the OpDef);
#   npu_op_library       builds cust_opapi (ACLNN), cust_op_proto (GRAPH) and cust_optiling (TILING);
#   npu_op_kernel_*      compiles each kernel for each compute unit and dtype combination;
#   npu_op_package(_add) packs everything into custom_opp_<os>_<arch>.run (npu_op_package is called by the
#                        top-level CMakeLists.txt).
# Usage as documented in CANN's "编译与部署基本流程" (按算子划分的目录结构) and implemented in asc-devkit
# cmake/asc/fwk_modules/func.cmake.
include_guard(GLOBAL)

# lossgrad_add_ops(PACKAGE <pkg> KERNEL_BASE <dir> OP_TYPES <T>... KERNEL_FILES <f>... HOST_SOURCES <src>...)
# OP_TYPES and KERNEL_FILES are parallel lists: the kernel source of OP_TYPES[i] is KERNEL_BASE/KERNEL_FILES[i].
function(lossgrad_add_ops)
    cmake_parse_arguments(ARG "" "PACKAGE;KERNEL_BASE" "OP_TYPES;KERNEL_FILES;HOST_SOURCES;HOST_OPTIONS" ${ARGN})
    foreach(required PACKAGE KERNEL_BASE OP_TYPES KERNEL_FILES HOST_SOURCES)
        if(NOT ARG_${required})
            message(FATAL_ERROR "lossgrad_add_ops: ${required} is required")
        endif()
    endforeach()
    list(LENGTH ARG_OP_TYPES n_types)
    list(LENGTH ARG_KERNEL_FILES n_files)
    if(NOT n_types EQUAL n_files)
        message(FATAL_ERROR "lossgrad_add_ops: OP_TYPES and KERNEL_FILES differ in length")
    endif()
    foreach(cmd npu_op_code_gen npu_op_library npu_op_kernel_options npu_op_kernel_sources npu_op_kernel_library
                npu_op_package_add)
        if(NOT COMMAND ${cmd})
            message(FATAL_ERROR "lossgrad: CANN's ASC CMake package does not provide ${cmd}(); this CANN is too old "
                                "for lossgrad's package build (it needs the npu_op_* API of CANN 8.5/9.x)")
        endif()
    endforeach()

    # 1. Host: op_build generates the aclnn sources from the OpDef registrations.
    npu_op_code_gen(
        SRC ${ARG_HOST_SOURCES}
        PACKAGE ${ARG_PACKAGE}
        OUT_DIR ${ASCEND_AUTOGEN_PATH}
        COMPILE_OPTIONS ${ARG_HOST_OPTIONS})
    file(GLOB aclnn_srcs "${ASCEND_AUTOGEN_PATH}/aclnn_*.cpp")
    file(GLOB proto_srcs "${ASCEND_AUTOGEN_PATH}/op_proto.cc" "${ASCEND_AUTOGEN_PATH}/group_op_proto/*.cc")
    file(GLOB fallback_srcs "${ASCEND_AUTOGEN_PATH}/fallback_*.cpp")
    if(NOT aclnn_srcs)
        message(FATAL_ERROR "lossgrad: op_build generated no aclnn_*.cpp in ${ASCEND_AUTOGEN_PATH}")
    endif()
    set_source_files_properties(${aclnn_srcs} ${proto_srcs} ${fallback_srcs} PROPERTIES GENERATED TRUE)

    # 2. Host libraries: the aclnn API, the graph prototype, the tiling (OpDef + InferShape + TilingFunc + core).
    npu_op_library(cust_opapi ACLNN ${aclnn_srcs})
    npu_op_library(cust_op_proto GRAPH ${ARG_HOST_SOURCES} ${proto_srcs})
    npu_op_library(cust_optiling TILING ${ARG_HOST_SOURCES} ${fallback_srcs})
    foreach(lib cust_opapi cust_op_proto cust_optiling)
        target_compile_options(${lib} PRIVATE -fvisibility=hidden ${ARG_HOST_OPTIONS})
    endforeach()

    # 3. Kernels: one source per op type; CANN compiles it per compute unit and dtype combination.
    # Compiler-inserted pipeline synchronisation stated explicitly, on (the toolkit's default for custom-op projects,
    # asc-devkit docs/zh 核内同步/关键特性说明.md): the twin models it as run_kernel(auto_sync=True), and the kernels
    # are also verified with auto_sync=False, so they do not depend on it. npu_op_kernel_options writes the option
    # into the compile-options file that op_build's kernel compile reads (asc-devkit cmake/asc/fwk_modules/func.cmake).
    npu_op_kernel_options(ascendc_kernels ALL OPTIONS ${LOSSGRAD_KERNEL_OPTIONS})
    # KERNEL_DIR ./ (relative to SRC_BASE, the documented directory form): CANN's copy step ships a listed
    # KERNEL_FILE alone but a KERNEL_DIR whole (asc-devkit cmake/asc/fwk_modules/util/ascendc_copy_kernel_src.py), and
    # the kernels include the shared lossgrad_tiling_data.h next to them, which the source package needs for an
    # online compile (graph mode, ATC).
    math(EXPR last "${n_types} - 1")
    foreach(i RANGE ${last})
        list(GET ARG_OP_TYPES ${i} op_type)
        list(GET ARG_KERNEL_FILES ${i} kernel_file)
        npu_op_kernel_sources(ascendc_kernels OP_TYPE ${op_type} KERNEL_DIR ./ KERNEL_FILE ${kernel_file})
    endforeach()
    npu_op_kernel_library(ascendc_kernels SRC_BASE ${ARG_KERNEL_BASE} TILING_LIBRARY cust_optiling)

    # 4. Package.
    npu_op_package_add(${ARG_PACKAGE} LIBRARY cust_optiling cust_opapi cust_op_proto ascendc_kernels)
endfunction()
