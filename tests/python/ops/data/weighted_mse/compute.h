    // out = (((self - target) * c) * gradOutput) * weight; an absent weight (kHasWeight false) is skipped, and its
    // lanes w are never read.
    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x,
                                   const LocalTensor<float>& w, uint32_t n) {
        Sub(r, s, x, n);
        VBarrier();
        Muls(r, r, td_->coef, n);
        VBarrier();
        if constexpr (GRAD_SCALAR) {
            Muls(r, r, gradScalar_, n);
        } else {
            Mul(r, r, g, n);
        }
        if constexpr (kHasWeight) {
            VBarrier();
            Mul(r, r, w, n);
        }
    }
