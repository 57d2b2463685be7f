// TEST SCAFFOLDING (tests/cann/fake_cann/README.md): a minimal stand-in for CANN's "register/op_def_registry.h",
// which brings in ge::*, gert::* and ops::OpDef. Usage seen in hicann/ops-nn
// loss/mse_loss_grad_v2/op_host/{mse_loss_grad_v2_def.cpp, mse_loss_grad_v2_infershape.cpp,
// arch35/mse_loss_grad_v2_tiling_arch35.cpp} and hicann/asc-tools examples/03_msopgen/op_dev/op_host/add_custom.cpp.
#ifndef FAKE_CANN_OP_DEF_REGISTRY_H_
#define FAKE_CANN_OP_DEF_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFFU;
// Numbering as aclDataType / ge::DataType (DT_FLOAT 0, DT_FLOAT16 1, DT_BF16 27).
// DT_MAX is the enum's end marker, which CANN's ops also test an absent optional input's dtype against
// (hicann/ops-nn norm/group_norm_silu/op_host/group_norm_silu_infershape.cpp); its value here is arbitrary.
enum DataType { DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_DOUBLE = 11, DT_BF16 = 27,
                DT_UNDEFINED = 28, DT_MAX = 1000 };
enum Format { FORMAT_NCHW = 0, FORMAT_NHWC = 1, FORMAT_ND = 2 };
} // namespace ge

namespace fe {
// The real class is opaque to operators; the fake carries the figures PlatformAscendC reports.
struct PlatFormInfos {
    uint32_t core_num_aiv = 0;
    uint64_t ub_bytes = 0;
    uint32_t lib_api_workspace = 0;
    int soc_version = 0;
};
} // namespace fe

namespace gert {
class Shape {
public:
    Shape() = default;
    Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    void SetDimNum(size_t n) { dims_.resize(n, 1); }
    void SetDim(size_t i, int64_t v) { if (i < dims_.size()) dims_[i] = v; }
    int64_t GetShapeSize() const { int64_t n = 1; for (int64_t d : dims_) n *= d; return n; }
private:
    std::vector<int64_t> dims_;
};

class StorageShape {
public:
    StorageShape() = default;
    explicit StorageShape(const Shape& s) : origin_(s), storage_(s) {}
    const Shape& GetOriginShape() const { return origin_; }
    const Shape& GetStorageShape() const { return storage_; }
private:
    Shape origin_;
    Shape storage_;
};

class CompileTimeTensorDesc {
public:
    CompileTimeTensorDesc() = default;
    explicit CompileTimeTensorDesc(ge::DataType dt) : dt_(dt) {}
    ge::DataType GetDataType() const { return dt_; }
    ge::Format GetStorageFormat() const { return ge::FORMAT_ND; }
private:
    ge::DataType dt_ = ge::DT_UNDEFINED;
};

// Attribute values by OpDef position; strings, floats and bools only (what our ops declare).
class RuntimeAttrs {
public:
    struct Value { int kind = 0; std::string s; float f = 0.0f; bool b = false; };
    std::vector<Value> values;
    const char* GetStr(size_t i) const { return i < values.size() && values[i].kind == 1 ? values[i].s.c_str() : nullptr; }
    template <typename T> const T* GetAttrPointer(size_t i) const;
    size_t GetAttrNum() const { return values.size(); }
};
template <> inline const float* RuntimeAttrs::GetAttrPointer<float>(size_t i) const
{ return i < values.size() && values[i].kind == 2 ? &values[i].f : nullptr; }
template <> inline const bool* RuntimeAttrs::GetAttrPointer<bool>(size_t i) const
{ return i < values.size() && values[i].kind == 3 ? &values[i].b : nullptr; }
template <> inline const char* RuntimeAttrs::GetAttrPointer<char>(size_t i) const { return GetStr(i); }

class TilingData {
public:
    explicit TilingData(size_t capacity = 0) : buf_(capacity) {}
    void* GetData() { return buf_.empty() ? nullptr : buf_.data(); }
    size_t GetCapacity() const { return buf_.size(); }
    void SetDataSize(size_t n) { size_ = n; }
    size_t GetDataSize() const { return size_; }
private:
    std::vector<uint8_t> buf_;
    size_t size_ = 0;
};

class TilingContext {
public:
    // Test-side state.
    std::vector<StorageShape> input_shapes, output_shapes;
    std::vector<CompileTimeTensorDesc> input_descs, output_descs;
    RuntimeAttrs attrs;
    fe::PlatFormInfos platform;
    TilingData raw{4096};
    uint32_t block_dim = 0;
    uint64_t tiling_key = 0;
    size_t workspaces[1] = {0};

    const char* GetNodeName() const { return "fake_node"; }
    std::vector<bool> absent;  // optional inputs the test leaves out (by IR index)
    const StorageShape* GetInputShape(size_t i) const { return i < input_shapes.size() ? &input_shapes[i] : nullptr; }
    const CompileTimeTensorDesc* GetInputDesc(size_t i) const
    { return i < input_descs.size() ? &input_descs[i] : nullptr; }
    // An absent optional input has neither: nullptr (usage: hicann/ops-nn loss/binary_cross_entropy_grad/op_host/
    // arch35/binary_cross_entropy_grad_tiling_arch35.cpp, loss/cross_entropy_loss/op_host/cross_entropy_loss_tiling.cpp).
    const StorageShape* GetOptionalInputShape(size_t i) const
    { return i < absent.size() && absent[i] ? nullptr : GetInputShape(i); }
    const CompileTimeTensorDesc* GetOptionalInputDesc(size_t i) const
    { return i < absent.size() && absent[i] ? nullptr : GetInputDesc(i); }
    const StorageShape* GetOutputShape(size_t i) const { return i < output_shapes.size() ? &output_shapes[i] : nullptr; }
    const CompileTimeTensorDesc* GetOutputDesc(size_t i) const
    { return i < output_descs.size() ? &output_descs[i] : nullptr; }
    const RuntimeAttrs* GetAttrs() const { return &attrs; }
    fe::PlatFormInfos* GetPlatformInfo() { return &platform; }
    TilingData* GetRawTilingData() { return &raw; }
    ge::graphStatus SetBlockDim(uint32_t n) { block_dim = n; return ge::GRAPH_SUCCESS; }
    ge::graphStatus SetTilingKey(uint64_t k) { tiling_key = k; return ge::GRAPH_SUCCESS; }
    size_t* GetWorkspaceSizes(size_t n) { return n == 1 ? workspaces : nullptr; }
};

class InferShapeContext {
public:
    std::vector<Shape> inputs;
    Shape output;
    const char* GetNodeName() const { return "fake_node"; }
    std::vector<bool> absent;
    const Shape* GetInputShape(size_t i) const { return i < inputs.size() ? &inputs[i] : nullptr; }
    const Shape* GetOptionalInputShape(size_t i) const
    { return i < absent.size() && absent[i] ? nullptr : GetInputShape(i); }
    Shape* GetOutputShape(size_t i) { return i == 0 ? &output : nullptr; }
};

class InferDataTypeContext {
public:
    std::vector<ge::DataType> inputs;
    ge::DataType output = ge::DT_UNDEFINED;
    std::vector<bool> absent;
    ge::DataType GetInputDataType(size_t i) const { return i < inputs.size() ? inputs[i] : ge::DT_UNDEFINED; }
    ge::DataType GetOptionalInputDataType(size_t i) const
    { return i < absent.size() && absent[i] ? ge::DT_UNDEFINED : GetInputDataType(i); }
    ge::graphStatus SetOutputDataType(size_t i, ge::DataType dt)
    { if (i != 0) return ge::GRAPH_FAILED; output = dt; return ge::GRAPH_SUCCESS; }
};
} // namespace gert

namespace ops {
enum Option { OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3 };

using InferShapeFunc = ge::graphStatus (*)(gert::InferShapeContext*);
using InferDataTypeFunc = ge::graphStatus (*)(gert::InferDataTypeContext*);
using TilingFunc = ge::graphStatus (*)(gert::TilingContext*);

class OpParamDef {
public:
    explicit OpParamDef(const char* n) : param_name(n) {}
    OpParamDef& ParamType(Option o) { param_type = o; return *this; }
    OpParamDef& DataType(std::vector<ge::DataType> v) { dtypes = std::move(v); return *this; }
    OpParamDef& Format(std::vector<ge::Format> v) { formats = std::move(v); return *this; }
    // UnknownShapeFormat is left out on purpose: the devkit deprecates it (it breaks -Werror -Wall builds).
    OpParamDef& AutoContiguous() { auto_contiguous = true; return *this; }
    std::string param_name;
    Option param_type = OPTIONAL;
    std::vector<ge::DataType> dtypes;
    std::vector<ge::Format> formats;
    bool auto_contiguous = false;
};

class OpAttrDef {
public:
    explicit OpAttrDef(const char* n) : attr_name(n) {}
    OpAttrDef& AttrType(Option o) { attr_type = o; return *this; }
    OpAttrDef& String(const char* v) { kind = "String"; value = v; return *this; }
    OpAttrDef& Float(float v) { kind = "Float"; value = std::to_string(v); return *this; }
    OpAttrDef& Bool(bool v) { kind = "Bool"; value = v ? "true" : "false"; return *this; }
    std::string attr_name, kind, value;
    Option attr_type = REQUIRED;
};

class OpAICoreConfig {
public:
    OpParamDef& Input(const char* name) { inputs.emplace_back(name); return inputs.back(); }
    OpParamDef& Output(const char* name) { outputs.emplace_back(name); return outputs.back(); }
    OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig& ExtendCfgInfo(const char* key, const char* value)
    { extend.emplace_back(key, value); return *this; }
    std::vector<OpParamDef> inputs, outputs;
    std::vector<std::pair<std::string, std::string>> extend;
};

class OpAICoreDef {
public:
    OpAICoreDef& SetTiling(TilingFunc f) { tiling = f; return *this; }
    OpAICoreDef& AddConfig(const char* unit) { units.emplace_back(unit, OpAICoreConfig{}); has_config.push_back(false);
                                               return *this; }
    OpAICoreDef& AddConfig(const char* unit, OpAICoreConfig& c) { units.emplace_back(unit, c);
                                                                  has_config.push_back(true); return *this; }
    TilingFunc tiling = nullptr;
    std::vector<std::pair<std::string, OpAICoreConfig>> units;
    std::vector<bool> has_config;
};

class OpDef {
public:
    explicit OpDef(const char* n) : op_name(n) {}
    virtual ~OpDef() = default;
    OpParamDef& Input(const char* n) { inputs.emplace_back(n); return inputs.back(); }
    OpParamDef& Output(const char* n) { outputs.emplace_back(n); return outputs.back(); }
    OpAttrDef& Attr(const char* n) { attrs.emplace_back(n); return attrs.back(); }
    OpDef& SetInferShape(InferShapeFunc f) { infer_shape = f; return *this; }
    OpDef& SetInferDataType(InferDataTypeFunc f) { infer_dtype = f; return *this; }
    OpAICoreDef& AICore() { return aicore; }
    std::string op_name;
    std::vector<OpParamDef> inputs, outputs;
    std::vector<OpAttrDef> attrs;
    InferShapeFunc infer_shape = nullptr;
    InferDataTypeFunc infer_dtype = nullptr;
    OpAICoreDef aicore;
};

inline std::vector<std::unique_ptr<OpDef>>& Registered()
{
    static std::vector<std::unique_ptr<OpDef>> defs;
    return defs;
}

template <typename T> struct OpDefRegistrar {
    explicit OpDefRegistrar(const char* name) { Registered().emplace_back(new T(name)); }
};
} // namespace ops

#define OP_ADD(name) static ::ops::OpDefRegistrar<::ops::name> g_fake_op_add_##name(#name)

#endif // FAKE_CANN_OP_DEF_REGISTRY_H_
