// Test driver: compiles one generated op_host/<entry_name>.cpp (LG_OP_SOURCE) against tests/cann/fake_cann and
// prints, as JSON, what its OpDef registered and what its InferShape/InferDataType/TilingFunc did for one call.
//
// usage: op_host_driver IN0 IN1 IN2 OUT DTYPE REDUCTION BETA LOG_TARGET SOC
//   shapes are "2x3" ("-" for a 0-d scalar); DTYPE is a ge::DataType number; BETA is a float or "unset";
//   LOG_TARGET is 0, 1 or "unset"; SOC is a platform_ascendc::SocVersion number.
#include LG_OP_SOURCE

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace lossgrad_tiling {
extern Inputs g_last_inputs;
extern int g_calls;
} // namespace lossgrad_tiling

#define LG_CAT2(a, b) a##b
#define LG_CAT(a, b) LG_CAT2(a, b)

namespace {
gert::Shape ParseShape(const std::string& text)
{
    gert::Shape s;
    if (text == "-") {
        return s;
    }
    size_t start = 0;
    size_t n = 0;
    while (start <= text.size()) {
        const size_t end = text.find('x', start);
        const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        s.SetDimNum(n + 1);
        s.SetDim(n, std::atoll(part.c_str()));
        ++n;
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    return s;
}

void PrintShape(const gert::Shape& s)
{
    std::printf("[");
    for (size_t i = 0; i < s.GetDimNum(); ++i) {
        std::printf("%s%lld", i ? "," : "", static_cast<long long>(s.GetDim(i)));
    }
    std::printf("]");
}

void PrintParam(const ops::OpParamDef& p)
{
    std::printf("{\"name\":\"%s\",\"param\":%d,\"dtypes\":[", p.param_name.c_str(), static_cast<int>(p.param_type));
    for (size_t i = 0; i < p.dtypes.size(); ++i) {
        std::printf("%s%d", i ? "," : "", static_cast<int>(p.dtypes[i]));
    }
    std::printf("],\"formats\":%zu,\"auto_contiguous\":%s}", p.formats.size(), p.auto_contiguous ? "true" : "false");
}

void PrintParams(const std::vector<ops::OpParamDef>& ps)
{
    std::printf("[");
    for (size_t i = 0; i < ps.size(); ++i) {
        std::printf("%s", i ? "," : "");
        PrintParam(ps[i]);
    }
    std::printf("]");
}

void PrintTensor(const lossgrad_tiling::TensorDesc& t)
{
    std::printf("{\"dtype\":%d,\"dims\":[", static_cast<int>(t.dtype));
    for (int32_t d = 0; d < t.rank; ++d) {
        std::printf("%s%lld", d ? "," : "", static_cast<long long>(t.dims[d]));
    }
    std::printf("]}");
}

gert::RuntimeAttrs::Value Str(const char* s)
{
    gert::RuntimeAttrs::Value v;
    v.kind = 1;
    v.s = s;
    return v;
}
} // namespace

int main(int argc, char** argv)
{
    if (argc != 10 && argc != 11) {
        std::fprintf(stderr, "usage: %s IN0 IN1 IN2 OUT DTYPE REDUCTION BETA LOG_TARGET SOC [LIB_API_WORKSPACE]\n",
                     argv[0]);
        return 2;
    }
    const ge::DataType dtype = static_cast<ge::DataType>(std::atoi(argv[5]));

    // What the OpDef registered.
    const auto& defs = ops::Registered();
    if (defs.size() != 1) {
        std::fprintf(stderr, "expected one registered OpDef, got %zu\n", defs.size());
        return 3;
    }
    const ops::OpDef& def = *defs[0];
    std::printf("{\"op_type\":\"%s\",\"inputs\":", def.op_name.c_str());
    PrintParams(def.inputs);
    std::printf(",\"outputs\":");
    PrintParams(def.outputs);
    std::printf(",\"attrs\":[");
    for (size_t i = 0; i < def.attrs.size(); ++i) {
        const ops::OpAttrDef& a = def.attrs[i];
        std::printf("%s{\"name\":\"%s\",\"kind\":\"%s\",\"value\":\"%s\",\"optional\":%s}", i ? "," : "", a.attr_name.c_str(),
                    a.kind.c_str(), a.value.c_str(), a.attr_type == ops::OPTIONAL ? "true" : "false");
    }
    std::printf("],\"has_infer_shape\":%s,\"has_infer_dtype\":%s,\"has_tiling\":%s,\"units\":[",
                def.infer_shape ? "true" : "false", def.infer_dtype ? "true" : "false",
                def.aicore.tiling ? "true" : "false");
    for (size_t i = 0; i < def.aicore.units.size(); ++i) {
        const auto& u = def.aicore.units[i];
        std::printf("%s{\"unit\":\"%s\",\"inputs\":", i ? "," : "", u.first.c_str());
        PrintParams(u.second.inputs);
        std::printf(",\"outputs\":");
        PrintParams(u.second.outputs);
        std::printf(",\"extend\":{");
        for (size_t k = 0; k < u.second.extend.size(); ++k) {
            std::printf("%s\"%s\":\"%s\"", k ? "," : "", u.second.extend[k].first.c_str(),
                        u.second.extend[k].second.c_str());
        }
        std::printf("}}");
    }
    std::printf("]");

    // InferShape / InferDataType on the call's input shapes.
    // Kernel inputs after the first three are optional ones: LG_OPTIONAL lists their shapes ("2x3,-"), "-" or a
    // missing entry leaves the input out (a null tensor: GetOptionalInput* return nullptr).
    std::vector<std::string> optional;
    if (const char* env = std::getenv("LG_OPTIONAL")) {
        std::string list(env);
        for (size_t at = 0; at <= list.size();) {
            const size_t comma = std::min(list.find(',', at), list.size());
            optional.push_back(list.substr(at, comma - at));
            at = comma + 1;
        }
    }
    const size_t num_inputs = def.inputs.size();
    auto present = [&](size_t k) { return k < 3 || (k - 3 < optional.size() && optional[k - 3] != "-"); };
    auto shape_of = [&](size_t k) { return k < 3 ? std::string(argv[k + 1]) : optional[k - 3]; };
    gert::InferShapeContext shape_ctx;
    for (size_t k = 0; k < num_inputs; ++k) {
        shape_ctx.inputs.push_back(present(k) ? ParseShape(shape_of(k).c_str()) : ParseShape("1"));
        shape_ctx.absent.push_back(!present(k));
    }
    const ge::graphStatus shape_status = LG_CAT(LG_CLASS, InferShape)(&shape_ctx);
    std::printf(",\"infer_shape\":{\"ok\":%s,\"shape\":", shape_status == ge::GRAPH_SUCCESS ? "true" : "false");
    PrintShape(shape_ctx.output);
    gert::InferDataTypeContext dtype_ctx;
    dtype_ctx.inputs = {ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT16};
    dtype_ctx.absent = {false, false, false};
    for (size_t k = 3; k < num_inputs; ++k) {  // an optional input given: float16 as well
        dtype_ctx.inputs.push_back(ge::DT_FLOAT16);
        dtype_ctx.absent.push_back(!present(k));
    }
    const ge::graphStatus dtype_status = LG_CAT(LG_CLASS, InferDataType)(&dtype_ctx);
    std::printf("},\"infer_dtype_mixed\":{\"ok\":%s,\"dtype\":%d}", dtype_status == ge::GRAPH_SUCCESS ? "true" : "false",
                static_cast<int>(dtype_ctx.output));

    // TilingFunc.
    gert::TilingContext ctx;
    for (size_t k = 0; k < num_inputs; ++k) {
        ctx.input_shapes.emplace_back(present(k) ? ParseShape(shape_of(k).c_str()) : ParseShape("1"));
        ctx.input_descs.emplace_back(dtype);
        ctx.absent.push_back(!present(k));
    }
    ctx.output_shapes.emplace_back(ParseShape(argv[4]));
    ctx.output_descs.emplace_back(dtype);
    ctx.attrs.values.push_back(Str(argv[6]));
    for (size_t i = 1; i < def.attrs.size(); ++i) {
        gert::RuntimeAttrs::Value v;
        if (def.attrs[i].kind == "Float" && std::string(argv[7]) != "unset") {
            v.kind = 2;
            v.f = static_cast<float>(std::atof(argv[7]));
        } else if (def.attrs[i].kind == "Bool" && std::string(argv[8]) != "unset") {
            v.kind = 3;
            v.b = std::atoi(argv[8]) != 0;
        }
        ctx.attrs.values.push_back(v);
    }
    ctx.platform.core_num_aiv = 40;
    ctx.platform.ub_bytes = 196608;
    ctx.platform.lib_api_workspace = argc == 11 ? static_cast<uint32_t>(std::strtoul(argv[10], nullptr, 10)) : 1000u;
    ctx.platform.soc_version = std::atoi(argv[9]);
    const ge::graphStatus tiling_status = optiling::LG_CAT(LG_CLASS, Tiling)(&ctx);
    const lossgrad_tiling::Inputs& in = lossgrad_tiling::g_last_inputs;
    std::printf(",\"tiling\":{\"ok\":%s,\"calls\":%d,\"block_dim\":%u,\"tiling_key\":%llu,\"workspace\":%zu,"
                "\"data_size\":%zu,\"op\":%d,\"reduction\":%d,\"beta\":%.9g,\"log_target\":%s,\"core_num\":%u,"
                "\"ub_bytes\":%llu,\"npu_arch\":%d,\"num_inputs\":%d,\"absent\":%u,\"inputs\":[",
                tiling_status == ge::GRAPH_SUCCESS ? "true" : "false", lossgrad_tiling::g_calls, ctx.block_dim,
                static_cast<unsigned long long>(ctx.tiling_key), ctx.workspaces[0], ctx.raw.GetDataSize(),
                static_cast<int>(in.op), static_cast<int>(in.reduction), in.beta, in.log_target ? "true" : "false",
                in.core_num, static_cast<unsigned long long>(in.ub_bytes), in.npu_arch, in.num_inputs,
                static_cast<unsigned>(in.absent));
    for (int i = 0; i < in.num_inputs; ++i) {
        std::printf("%s", i ? "," : "");
        PrintTensor(in.inputs[i]);
    }
    std::printf("],\"output\":");
    PrintTensor(in.output);
    std::printf("}}\n");
    return 0;
}
