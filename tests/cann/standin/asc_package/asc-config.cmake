# TEST STAND-IN for CANN's ASC package (asc-config.cmake): only the npu_op_* functions lossgrad's package CMake calls,
# with the argument checks and the side effect the copy step depends on, as asc-devkit
# cmake/asc/fwk_modules/func.cmake implements them: npu_op_kernel_sources appends one section per call to
# <autogen>/<target>_custom_source_files.ini (kernel_dir=, kernel_file=, compute_unit=), which CANN's copy step
# (tests/cann/_cann_support.standin_copy_kernel_sources) reads to ship the kernel sources. Written for the tests.
set(ASC_FOUND TRUE)

function(npu_op_package name)
endfunction()

function(npu_op_code_gen)
    cmake_parse_arguments(ARG "" "PACKAGE;OUT_DIR" "SRC;COMPILE_OPTIONS" ${ARGN})
    set_property(GLOBAL PROPERTY ASCENDC_AUTO_GEN_PATH "${ARG_OUT_DIR}")
    file(WRITE "${ARG_OUT_DIR}/aclnn_standin.cpp" "// stand-in for op_build's generated aclnn sources\n")
endfunction()

function(npu_op_library name kind)
    add_library(${name} SHARED ${ARGN})  # configured, never built by the tests
endfunction()

function(npu_op_kernel_options target)
endfunction()

function(npu_op_kernel_sources target)
    cmake_parse_arguments(K "" "KERNEL_FILE;KERNEL_DIR;OP_TYPE" "COMPUTE_UNIT" ${ARGN})
    if((DEFINED K_KERNEL_FILE AND NOT DEFINED K_OP_TYPE) OR (NOT DEFINED K_KERNEL_FILE AND DEFINED K_OP_TYPE))
        message(FATAL_ERROR "op_type and kernel_file must exist at the same time")
    endif()
    get_property(gen GLOBAL PROPERTY ASCENDC_AUTO_GEN_PATH)
    if("${gen}" STREQUAL "")
        message(FATAL_ERROR "npu_op_code_gen must come first")
    endif()
    if(NOT DEFINED K_OP_TYPE)
        set(K_OP_TYPE ALL)
    endif()
    set(section "[standin_${K_OP_TYPE}]\n")
    if(DEFINED K_KERNEL_DIR)
        if(IS_ABSOLUTE "${K_KERNEL_DIR}")
            message(FATAL_ERROR "op kernel dir should be relative path to kernel base dir")
        endif()
        string(APPEND section "kernel_dir=${K_KERNEL_DIR}\n")
    endif()
    if(DEFINED K_KERNEL_FILE)
        string(APPEND section "kernel_file=${K_KERNEL_FILE}\n")
    endif()
    file(APPEND "${gen}/${target}_custom_source_files.ini" "${section}")
endfunction()

function(npu_op_kernel_library target)
    cmake_parse_arguments(K "" "SRC_BASE;TILING_LIBRARY" "" ${ARGN})
    get_property(gen GLOBAL PROPERTY ASCENDC_AUTO_GEN_PATH)
    file(WRITE "${gen}/${target}_src_base.txt" "${K_SRC_BASE}")
endfunction()

function(npu_op_package_add name)
endfunction()
