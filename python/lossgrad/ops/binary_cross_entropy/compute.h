    // out = (g * (s - x)) / max((1 - s) * s, 1e-12) [* w] [* c]: the 950 kernel's order (new_ops_semantics §2.2),
    // an exactly rounded Div. Only the denominator is clamped: s in {0, 1} gives +-g * 1e12, s = x there gives 0.
    // 1 - s is taken as (-s) + 1 (one rounding, as aclnn's Duplicate(1) and Sub), in r before the result is.
    // Banks: d (tmpA_, phase 0) meets g and v; v (tmpB_, phase 1) meets d; r (phase 0) meets s and w.
    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x,
                                   const LocalTensor<float>& w, uint32_t n) {
        LocalTensor<float> d = tmpA_.Get<float>();
        LocalTensor<float> v = tmpB_.Get<float>();
        Sub(d, s, x, n);
        Muls(r, s, -1.0f, n);
        VBarrier();
        Adds(r, r, 1.0f, n);
        if constexpr (GRAD_SCALAR) {
            Muls(d, d, gradScalar_, n);
        } else {
            Mul(d, d, g, n);
        }
        VBarrier();
        Mul(v, r, s, n);
        VBarrier();
#if __NPU_ARCH__ == 1001
        Duplicate(r, 1e-12f, n);  // Atlas 910 has no Maxs (dav_c100 reports it unsupported): Max with r, free here
        VBarrier();
        Max(v, v, r, n);
#else
        Maxs(v, v, 1e-12f, n);
#endif
        VBarrier();
        Div(r, d, v, n);
        if constexpr (kHasWeight) {
            VBarrier();
            Mul(r, r, w, n);
        }
        if (td_->coef != 1.0f) {  // mean (none and sum multiply by 1, which changes nothing)
            VBarrier();
            Muls(r, r, td_->coef, n);
        }
    }
