// Exhaustive sweep of the plan check (tests/op_host/test_plan_check.py): every broadcast pattern of the three inputs
// over spaces of rank 0 to 4, each axis's extent from a set such as {1, 2, 3, 5, 16, 17, 33} (one assignment per
// extent and pattern, shifted from axis to axis, so every extent meets every axis), for the ops, SoCs, dtype mixes
// and UB budgets read from stdin. Compute() runs the plan check on every plan it makes; a plan that fails it is
// reported. Plain C++17, no CANN.
//
// stdin:  <n_extents> then the extents (at most 16)
//         <n_ops> then per op: <op id> <n inputs> <role of kernel input 0> <1> ...  (roles: 0 grad, 1 self,
//                              2 target, 3 and up optional: each optional input is swept absent (a null tensor)
//                              and present with target's shape and dtype)
//         <n_socs> then per SoC: <cores> <ub bytes> <npu arch>
//         <n_mixes> then per mix: <grad> <self> <target> <out> dtype numbers (ge::DataType)
//         <n_budgets> then the budgets (0: the SoC's)
//         <max rank> <max elements of the space>
// stdout: "planned <n> refused <n> failed <n>", then one line per failure (at most 20).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "lossgrad_tiling_core.h"

using namespace lossgrad_tiling;

namespace {

int64_t kExtents[16] = {};
int kNumExtents = 0;

struct Op {
    int id;
    int n;
    int roles[kNumInputs];
};

struct SocFacts {
    uint32_t cores;
    uint64_t ub;
    int32_t arch;
};

struct Shape {
    int rank = 0;
    int64_t dims[kMaxRank] = {};
};

// The canonical shape of an input: the pattern's extents, leading 1s dropped.
Shape InputShape(int rank, const int64_t* extents, unsigned pattern, int input)
{
    Shape s;
    int64_t full[kMaxRank] = {};
    for (int k = 0; k < rank; ++k) {
        full[k] = (pattern >> (3 * k + input) & 1U) != 0 ? extents[k] : 1;
    }
    int first = 0;
    while (first < rank && full[first] == 1) {
        ++first;
    }
    for (int k = first; k < rank; ++k) {
        s.dims[s.rank++] = full[k];
    }
    return s;
}

Shape Broadcast(const Shape& a, const Shape& b)
{
    Shape r;
    r.rank = a.rank > b.rank ? a.rank : b.rank;
    for (int k = 0; k < r.rank; ++k) {
        const int ka = k - (r.rank - a.rank), kb = k - (r.rank - b.rank);
        const int64_t x = ka >= 0 ? a.dims[ka] : 1, y = kb >= 0 ? b.dims[kb] : 1;
        r.dims[k] = x == 1 ? y : x;
    }
    return r;
}

void Describe(char* buf, size_t cap, const Shape& s)
{
    size_t n = static_cast<size_t>(std::snprintf(buf, cap, "("));
    for (int k = 0; k < s.rank && n < cap; ++k) {
        n += static_cast<size_t>(std::snprintf(buf + n, cap - n, "%lld%s", static_cast<long long>(s.dims[k]),
                                               k + 1 < s.rank || s.rank == 1 ? "," : ""));
    }
    if (n < cap) {
        std::snprintf(buf + n, cap - n, ")");
    }
}

} // namespace

int main()
{
    int n = 0;
    std::vector<Op> ops;
    std::vector<SocFacts> socs;
    std::vector<int> mixes; // 4 per mix
    std::vector<uint64_t> budgets;
    int max_rank = 4;
    if (std::scanf("%d", &kNumExtents) != 1 || kNumExtents < 1 || kNumExtents > 16) {
        return 2;
    }
    for (int i = 0; i < kNumExtents; ++i) {
        long long e = 0;
        if (std::scanf("%lld", &e) != 1) {
            return 2;
        }
        kExtents[i] = e;
    }
    if (std::scanf("%d", &n) != 1) {
        return 2;
    }
    for (int i = 0; i < n; ++i) {
        Op op{};
        if (std::scanf("%d %d", &op.id, &op.n) != 2 || op.n < 3 || op.n > kNumInputs) {
            return 2;
        }
        for (int k = 0; k < op.n; ++k) {
            if (std::scanf("%d", &op.roles[k]) != 1) {
                return 2;
            }
        }
        ops.push_back(op);
    }
    if (std::scanf("%d", &n) != 1) {
        return 2;
    }
    for (int i = 0; i < n; ++i) {
        SocFacts s{};
        unsigned long long ub = 0;
        if (std::scanf("%u %llu %d", &s.cores, &ub, &s.arch) != 3) {
            return 2;
        }
        s.ub = ub;
        socs.push_back(s);
    }
    if (std::scanf("%d", &n) != 1) {
        return 2;
    }
    for (int i = 0; i < 4 * n; ++i) {
        int d = 0;
        if (std::scanf("%d", &d) != 1) {
            return 2;
        }
        mixes.push_back(d);
    }
    if (std::scanf("%d", &n) != 1) {
        return 2;
    }
    for (int i = 0; i < n; ++i) {
        unsigned long long b = 0;
        if (std::scanf("%llu", &b) != 1) {
            return 2;
        }
        budgets.push_back(b);
    }
    unsigned long long max_elems = 0;
    if (std::scanf("%d %llu", &max_rank, &max_elems) != 2 || max_rank < 0 || max_rank > 4) {
        return 2;
    }

    unsigned long long planned = 0, refused = 0, failed = 0;
    static Result result;
    for (int rank = 0; rank <= max_rank; ++rank) {
        const unsigned patterns = 1U << (3 * rank);
        const int assignments = rank == 0 ? 1 : kNumExtents;
        for (unsigned pattern = 0; pattern < patterns; ++pattern) {
            for (int a = 0; a < assignments; ++a) {
                int64_t extents[kMaxRank] = {};
                unsigned long long elems = 1;
                for (int k = 0; k < rank; ++k) {
                    extents[k] = kExtents[(a + 3 * k) % kNumExtents];  // shifted per axis
                    elems *= static_cast<unsigned long long>(extents[k]);
                }
                if (elems > max_elems) {
                    continue;
                }
                Shape by_role[3];
                for (int r = 0; r < 3; ++r) {
                    by_role[r] = InputShape(rank, extents, pattern, r);
                }
                for (const Op& op : ops) {
                    // KL (op 3) writes self's shape; the others the broadcast of all three.
                    const Shape out = op.id == 3 ? by_role[1]
                                                 : Broadcast(Broadcast(by_role[0], by_role[1]), by_role[2]);
                    const bool has_optional = op.n > 3;
                    for (int present = 0; present <= (has_optional ? 1 : 0); ++present) {
                    for (const SocFacts& soc : socs) {
                        for (size_t m = 0; m < mixes.size(); m += 4) {
                            for (uint64_t budget : budgets) {
                                Inputs in{};
                                in.op = static_cast<OpId>(op.id);
                                in.num_inputs = op.n;
                                for (int i = 0; i < op.n; ++i) {
                                    const int role = op.roles[i] < 3 ? op.roles[i] : 2;  // optional: target's
                                    if (op.roles[i] >= 3 && present == 0) {
                                        in.absent |= 1U << i;  // a null tensor: no shape, no dtype
                                        continue;
                                    }
                                    in.inputs[i].rank = by_role[role].rank;
                                    std::memcpy(in.inputs[i].dims, by_role[role].dims, sizeof(in.inputs[i].dims));
                                    in.inputs[i].dtype = static_cast<DataType>(mixes[m + static_cast<size_t>(role)]);
                                }
                                in.output.rank = out.rank;
                                std::memcpy(in.output.dims, out.dims, sizeof(out.dims));
                                in.output.dtype = static_cast<DataType>(mixes[m + 3]);
                                in.reduction = Reduction::kSum;
                                in.beta = 1.0;
                                in.core_num = soc.cores;
                                in.ub_bytes = budget != 0 ? budget : soc.ub;
                                in.npu_arch = soc.arch;
                                const Status st = Compute(in, &result);
                                if (st == Status::kOk) {
                                    ++planned;
                                } else if (st == Status::kInternal &&
                                           std::strstr(result.message, "safety check") != nullptr) {
                                    if (++failed <= 20) {
                                        char g[96], s[96], t[96];
                                        Describe(g, sizeof(g), by_role[0]);
                                        Describe(s, sizeof(s), by_role[1]);
                                        Describe(t, sizeof(t), by_role[2]);
                                        std::printf("FAIL op %d arch %d cores %u ub %llu dtypes %d,%d,%d>%d grad %s "
                                                    "self %s target %s: %s\n", op.id, soc.arch, soc.cores,
                                                    static_cast<unsigned long long>(in.ub_bytes), mixes[m],
                                                    mixes[m + 1], mixes[m + 2], mixes[m + 3], g, s, t,
                                                    result.message);
                                    }
                                } else {
                                    ++refused;
                                }
                            }
                        }
                    }
                    }
                }
            }
        }
    }
    std::printf("planned %llu refused %llu failed %llu\n", planned, refused, failed);
    return failed == 0 ? 0 : 1;
}
