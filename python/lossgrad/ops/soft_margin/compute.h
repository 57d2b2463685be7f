    // out = ((-t * e) / (e + 1)) * (g * c), e = exp(-(s * t)) (negations are exact): the 950 kernel's order, an exactly
    // rounded Div. An overflowing e gives inf / inf = NaN, as aclnn's and PyTorch's eager kernels do. Banks: m (tmpB_,
    // phase 0) is read with s and e, e (tmpA_, phase 1) with m and r.
    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x, uint32_t n) {
        LocalTensor<float> e = tmpA_.Get<float>();
        LocalTensor<float> m = tmpB_.Get<float>();
        Muls(m, x, -1.0f, n);
        VBarrier();
        Mul(e, s, m, n);
        VBarrier();
        Exp(e, e, n);
        VBarrier();
        Mul(m, m, e, n);
        Adds(e, e, 1.0f, n);
        VBarrier();
        Div(r, m, e, n);
        VBarrier();
        if constexpr (GRAD_SCALAR) {
            Muls(r, r, gradScalar_ * td_->coef, n);
        } else {
            Muls(e, g, td_->coef, n);
            VBarrier();
            Mul(r, r, e, n);
        }
    }
