// Test driver for tests/op_host/test_tiling_parity.py: runs lossgrad_tiling::Compute on cases read from stdin, one
// per line, and writes one result line per case to stdout, in order.
//
// in:  OP  {RANK DTYPE DIM...} x 3 inputs (kernel order), then the output  REDUCTION  BETA_BITS (hex of the double)
//      LOG_TARGET  CORE_NUM  UB_BYTES  NPU_ARCH
// out: "ok BLOCK_DIM TILING_KEY WORKSPACE TILING_SIZE HEX_TILING_DATA"  or  "err STATUS MESSAGE"
//
// With "--threads N" every case is also computed by N threads at once (each thread all cases, in a different
// order); the program fails (exit 3) unless every thread's results equal the sequential ones.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lossgrad_tiling_core.h"

namespace {
bool ReadTensor(std::istringstream& in, lossgrad_tiling::TensorDesc* t)
{
    long long rank = 0;
    long long dtype = 0;
    if (!(in >> rank >> dtype)) {
        return false;
    }
    *t = lossgrad_tiling::TensorDesc{};
    t->rank = static_cast<int32_t>(rank);
    t->dtype = static_cast<lossgrad_tiling::DataType>(dtype);
    for (long long d = 0; d < rank; ++d) {
        long long dim = 0;
        if (!(in >> dim)) {
            return false;
        }
        if (d < lossgrad_tiling::kMaxRank) { // rank > 8 is passed on (the core must refuse it) without its dims
            t->dims[d] = static_cast<int64_t>(dim);
        }
    }
    return true;
}

bool ParseCase(const std::string& line, lossgrad_tiling::Inputs* inputs)
{
    std::istringstream in(line);
    *inputs = lossgrad_tiling::Inputs{};
    long long op = 0;
    long long reduction = 0;
    std::string beta_hex;
    int log_target = 0;
    unsigned long long core_num = 0;
    unsigned long long ub_bytes = 0;
    long long npu_arch = 0;
    bool ok = static_cast<bool>(in >> op);
    for (int i = 0; ok && i < lossgrad_tiling::kNumInputs; ++i) {
        ok = ReadTensor(in, &inputs->inputs[i]);
    }
    ok = ok && ReadTensor(in, &inputs->output);
    ok = ok && static_cast<bool>(in >> reduction >> beta_hex >> log_target >> core_num >> ub_bytes >> npu_arch);
    if (!ok) {
        return false;
    }
    const uint64_t bits = std::stoull(beta_hex, nullptr, 16);
    double beta = 0.0;
    std::memcpy(&beta, &bits, sizeof(beta));
    inputs->op = static_cast<lossgrad_tiling::OpId>(op);
    inputs->reduction = static_cast<lossgrad_tiling::Reduction>(reduction);
    inputs->beta = beta;
    inputs->log_target = log_target != 0;
    inputs->core_num = static_cast<uint32_t>(core_num);
    inputs->ub_bytes = static_cast<uint64_t>(ub_bytes);
    inputs->npu_arch = static_cast<int32_t>(npu_arch);
    return true;
}

std::string Run(const lossgrad_tiling::Inputs& inputs)
{
    lossgrad_tiling::Result result{};
    const lossgrad_tiling::Status status = lossgrad_tiling::Compute(inputs, &result);
    char head[128];
    std::string out;
    if (status != lossgrad_tiling::Status::kOk || result.status != status) {
        result.message[lossgrad_tiling::kMessageBytes - 1] = '\0';
        std::snprintf(head, sizeof(head), "err %d ", static_cast<int>(result.status));
        out = head;
        out += result.message;
        return out;
    }
    std::snprintf(head, sizeof(head), "ok %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu32 " ", result.block_dim,
                  result.tiling_key, result.workspace_bytes, result.tiling_size);
    out = head;
    static const char kHex[] = "0123456789abcdef";
    for (uint32_t i = 0; i < result.tiling_size && i < lossgrad_tiling::kMaxTilingDataBytes; ++i) {
        out += kHex[result.tiling_data[i] >> 4];
        out += kHex[result.tiling_data[i] & 0xF];
    }
    return out;
}
} // namespace

int main(int argc, char** argv)
{
    const int threads = argc == 3 && std::strcmp(argv[1], "--threads") == 0 ? std::atoi(argv[2]) : 0;
    std::ios::sync_with_stdio(false);
    std::vector<lossgrad_tiling::Inputs> cases;
    std::string line;
    while (std::getline(std::cin, line)) {
        lossgrad_tiling::Inputs inputs{};
        if (!ParseCase(line, &inputs)) {
            std::fprintf(stderr, "bad case line: %s\n", line.c_str());
            return 2;
        }
        cases.push_back(inputs);
    }
    std::vector<std::string> results;
    results.reserve(cases.size());
    for (const lossgrad_tiling::Inputs& c : cases) {
        results.push_back(Run(c));
    }
    if (threads > 0) {
        std::vector<std::vector<std::string>> got(static_cast<size_t>(threads));
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&cases, &got, t, threads]() {
                std::vector<std::string>& mine = got[static_cast<size_t>(t)];
                mine.resize(cases.size());
                const size_t n = cases.size();
                for (size_t k = 0; k < n; ++k) { // each thread starts at a different case
                    const size_t i = (k + n * static_cast<size_t>(t) / static_cast<size_t>(threads)) % n;
                    mine[i] = Run(cases[i]);
                }
            });
        }
        for (std::thread& th : pool) {
            th.join();
        }
        for (const std::vector<std::string>& mine : got) {
            if (mine != results) {
                std::fprintf(stderr, "concurrent results differ from the sequential ones\n");
                return 3;
            }
        }
    }
    std::string out;
    for (const std::string& r : results) {
        out += r;
        out += '\n';
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
