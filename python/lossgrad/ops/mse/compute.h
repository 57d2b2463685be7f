    // out = ((self - target) * c) * gradOutput, in the aclnn kernels' order.
    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x, uint32_t n) {
        Sub(r, s, x, n);
        VBarrier();
        Muls(r, r, td_->coef, n);
        VBarrier();
        if constexpr (GRAD_SCALAR) {
            Muls(r, r, gradScalar_, n);
        } else {
            Mul(r, r, g, n);
        }
    }
