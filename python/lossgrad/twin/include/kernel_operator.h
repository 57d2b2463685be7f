// lossgrad twin: a strict host implementation of the Ascend C vector API subset, so that the same kernel sources
// compile with g++ and run, checked, on a CPU. See docs/twin.md for what is modelled and checked.
#pragma once

#include "twin/config.h"
#include "twin/types.h"
#include "twin/core.h"
#include "twin/system.h"
#include "twin/tensor.h"
#include "twin/pipe.h"
#include "twin/data_copy.h"
#include "twin/vec_common.h"
#include "twin/vec_binary.h"
#include "twin/vec_level0.h"
#include "twin/vec_unary.h"
#include "twin/vec_logic.h"
#include "twin/vec_cast.h"
#include "twin/vec_cmpsel.h"
#include "twin/vec_reduce.h"
#include "twin/adv_sign.h"
#include "twin/vec_brcb.h"
#include "twin/utils.h"
#include "twin/debug.h"
#include "twin/sync_all.h"
