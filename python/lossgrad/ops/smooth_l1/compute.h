    // gradInput = f(self - target) * gradOut * c with f(x) = -1 (x < -beta), +1 (x > beta), x / beta otherwise. aclnn
    // sums it as ((pos + neg) + lin) with lin zeroed outside [-beta, beta]: that is clamp(x / beta, -1, 1) + 0 bit for
    // bit (|x| > beta gives |x * (1/beta)| >= 1 after rounding; + 0 turns a -0 into +0 as the sum does). A NaN stays
    // in aclnn's linear branch; Max/Min's NaN result is undocumented, so the kernel puts it back with a compare and
    // a select (ClampUnitKeepNaN; not on 910, see there). beta == 0: f is L1's sign (0 at x == 0 and at NaN).
    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x, uint32_t n) {
        LocalTensor<float> d = tmpA_.Get<float>();
        LocalTensor<float> lin = tmpB_.Get<float>();
        float c = td_->coef;
        Sub(d, s, x, n);
        VBarrier();
        if (td_->flags & LOSSGRAD_FLAG_BETA_ZERO) {
#if __NPU_ARCH__ == 1001
            NegSign(r, d, lin.ReinterpretCast<half>(), Ones(), n);
            c = -c;  // NegSign's negation
            VBarrier();
#else
            LocalTensor<uint8_t> pos = maskA_.Get<uint8_t>();
            LocalTensor<uint8_t> neg = maskB_.Get<uint8_t>();
            Compares(pos, d, 0.0f, CMPMODE::GT, n);
            Compares(neg, d, 0.0f, CMPMODE::LT, n);
            VBarrier();
            SignOfMasks(r, pos, neg, lin, n);
#endif
        } else {
            if (td_->betaScale != 1.0f) {
                Muls(r, d, td_->betaScale, n);  // beta below ~2.9e-39: scale up so 1/beta stays finite
                VBarrier();
                Muls(r, r, td_->invBeta, n);
            } else {
                Muls(r, d, td_->invBeta, n);
            }
            VBarrier();
#if __NPU_ARCH__ != 1001
            ClampUnitKeepNaN(r, lin, maskA_.Get<uint8_t>(), n);
#else
            ClampUnit(r, Ones(), n);
#endif
            VBarrier();
            Adds(r, r, 0.0f, n);
        }
        VBarrier();
        if constexpr (GRAD_SCALAR) {
            Muls(r, r, gradScalar_, n);
        } else {
            Mul(r, r, g, n);
        }
        VBarrier();
        Muls(r, r, c, n);
    }
