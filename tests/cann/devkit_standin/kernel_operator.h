// TEST SCAFFOLDING (tests/cann/fake_cann/README.md rules apply): "kernel_operator.h" as a real toolkit gives it to a
// build that op_build does not generate code for, modelled on lossgrad's twin so the REAL rendered kernels compile
// and run here. It forwards to the twin's header (#include_next) and then removes what the devkit does not give:
//
// - The real devkit headers define, for tiling, only REGISTER_TILING_DEFAULT / REGISTER_TILING_FOR_TILINGKEY /
//   REGISTER_NONE_TILING, TILING_KEY_VAR (g_tilingKey unless predefined), TILING_KEY_IS, TILING_KEY_LIST and
//   KERNEL_TASK_TYPE(_DEFAULT) (asc-devkit impl/basic_api/utils/kernel_utils_macros.h). No devkit header defines
//   GET_TILING_DATA or its _WITH_STRUCT / _MEMBER / _PTR_WITH_STRUCT forms: the package build's op_build generates
//   them. So they are removed here in every mode.
// - REGISTER_TILING_DEFAULT and TILING_KEY_IS are documented as unsupported in kernel-launch projects, and
//   REGISTER_TILING_DEFAULT also on Atlas training parts (asc-devkit docs/zh Kernel-Tiling REGISTER_TILING_DEFAULT.md,
//   TILING_KEY_IS.md: the legacy launch flow compiles with TILING_KEY_VAR=0, so TILING_KEY_IS(k) would be k == 0).
//   They are removed too, so a kernel that still depends on them fails to compile here. A package build on 1001
//   (-DLG_STANDIN_PACKAGE) keeps TILING_KEY_IS, which the docs support there.
#include_next "kernel_operator.h"

#undef GET_TILING_DATA
#undef GET_TILING_DATA_WITH_STRUCT
#undef GET_TILING_DATA_MEMBER
#undef GET_TILING_DATA_PTR_WITH_STRUCT
#undef REGISTER_TILING_DEFAULT
#undef REGISTER_TILING_FOR_TILINGKEY
#if !defined(LG_STANDIN_PACKAGE)
#undef TILING_KEY_IS
#undef TILING_KEY_VAR
#endif
