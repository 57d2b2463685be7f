    // out = ((-t * e) / (e + 1)) * (g * c), e = exp(-(s * t)) (negations are exact): the 950 kernel's order, an exactly
    // rounded Div. An overflowing e gives inf / inf = NaN, as aclnn's and PyTorch's eager kernels do. Banks: e (tmpA_)
    // is read with s's partner x, with m and with r; m (tmpB_) only with e.
    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x, uint32_t n) {
        LocalTensor<float> e = tmpA_.Get<float>();
        LocalTensor<float> m = tmpB_.Get<float>();
        Mul(e, s, x, n);
        Muls(m, x, -1.0f, n);
        VBarrier();
        Muls(e, e, -1.0f, n);
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
