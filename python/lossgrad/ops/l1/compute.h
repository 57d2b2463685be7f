    // gradInput = sign(self - target) * (gradOutput * c), with sign(0) = sign(NaN) = 0, as aclnn computes it. Atlas
    // 910 takes the sign without compare/select (NegSign, compare.h) and folds its negation into the coefficient.
    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x, uint32_t n) {
        LocalTensor<float> tmp = tmpA_.Get<float>();
#if __NPU_ARCH__ == 1001
        Sub(r, s, x, n);
        VBarrier();
        NegSign(tmp, r, tmp.ReinterpretCast<half>(), Ones(), n);
        const float c = -td_->coef;
        VBarrier();
        if constexpr (GRAD_SCALAR) {
            Muls(r, tmp, gradScalar_ * c, n);
        } else {
            Muls(r, g, c, n);
            VBarrier();
            Mul(r, tmp, r, n);
        }
#else
        Sign(r, s, x, tmp, n);
        VBarrier();
        if constexpr (GRAD_SCALAR) {
            Muls(r, r, gradScalar_ * td_->coef, n);
        } else {
            Muls(tmp, g, td_->coef, n);
            VBarrier();
            Mul(r, r, tmp, n);
        }
#endif
    }
#if __NPU_ARCH__ != 1001

    // r <- +1 where a > b, -1 where a < b, 0 otherwise (equal or unordered): two Compares and two Selects
    // (SignOfMasks, compare.h); tmp is the Selects' constants.
    __aicore__ inline void Sign(const LocalTensor<float>& r, const LocalTensor<float>& a, const LocalTensor<float>& b,
                                const LocalTensor<float>& tmp, uint32_t n) {
        LocalTensor<uint8_t> gt = maskA_.Get<uint8_t>();
        LocalTensor<uint8_t> lt = maskB_.Get<uint8_t>();
        Compare(gt, a, b, CMPMODE::GT, n);
        Compare(lt, a, b, CMPMODE::LT, n);
        VBarrier();
        SignOfMasks(r, gt, lt, tmp, n);
    }
#endif
