    // aclnn's order (new_ops_semantics §4.2; the 950 DAG and A2/A3's l0 chain agree), in float32, with
    // g' = gradOutput * c formed first ("against overflow"):
    //   logTarget false: (g' * ln t - g' * s) + (g' * t) / t   (the "+1" as (g' t) / t: NaN at t = 0, as aclnn)
    //   logTarget true:  (g' * (t - s)) * exp(t) + g' * exp(t)
    // The reduction onto target's shape sums these terms (reduce.h.j2). Two scratch tiles, a (tmpA_, bank phase 1)
    // and b (tmpB_, phase 0): a third costs more in tile length than the bank conflicts it would save. With none or
    // sum (g' is g, phase 1) every instruction reads its sources from opposite phases but aclnn's A = g' * s (grad
    // and self share phase 1, opspec.ROLES); with mean or batchmean g' is formed in a (logTarget) or b, and R = P * E
    // (logTarget), or X = g' * L and M = g' * t, read one phase twice.
    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x, uint32_t n) {
        LocalTensor<float> a = tmpA_.Get<float>();
        LocalTensor<float> b = tmpB_.Get<float>();
        const bool logTarget = (td_->flags & LOSSGRAD_FLAG_LOG_TARGET) != 0;
        const bool scaled = !GRAD_SCALAR && td_->coef != 1.0f;  // none and sum: g' is g (a product by 1 is exact)
        LocalTensor<float> gp = scaled ? (logTarget ? a : b) : g;
        float gc = 1.0f;
        if constexpr (GRAD_SCALAR) {
            gc = gradScalar_ * td_->coef;  // one float32 product, as the vector Muls would round it
        } else if (scaled) {
            Muls(gp, g, td_->coef, n);
            VBarrier();
        }
        if (logTarget && !scaled) {
            Exp(b, x, n);     // E
            Sub(r, x, s, n);  // D = t - s
            VBarrier();
            GradTimes(a, r, gp, gc, n);  // P = g' * D
            VBarrier();
            GradTimes(r, b, gp, gc, n);  // F = g' * E
            Mul(a, a, b, n);             // R = P * E
            VBarrier();
            Add(r, a, r, n);  // R + F
        } else if (logTarget) {  // g' in a
            Exp(b, x, n);     // E
            Sub(r, x, s, n);  // D = t - s
            VBarrier();
            Mul(r, a, r, n);  // P = g' * D
            VBarrier();
            Mul(r, r, b, n);  // R = P * E
            Mul(a, a, b, n);  // F = g' * E
            VBarrier();
            Add(r, r, a, n);  // R + F
        } else {
            Ln(r, x, n);                 // L
            GradTimes(a, s, gp, gc, n);  // A = g' * s
            VBarrier();
            GradTimes(r, r, gp, gc, n);  // X = g' * L
            VBarrier();
            Sub(r, r, a, n);  // D = X - A
            VBarrier();
            GradTimes(a, x, gp, gc, n);  // M = g' * t
            VBarrier();
            Div(a, a, x, n);  // Q = M / t
            VBarrier();
            Add(r, r, a, n);  // D + Q
        }
    }

    // dst = g' * src: a Mul by the g' lanes, or a Muls by the scalar g' of a one-value gradOutput.
    __aicore__ inline void GradTimes(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                     const LocalTensor<float>& gp, float gc, uint32_t n) {
        if constexpr (GRAD_SCALAR) {
            Muls(dst, src, gc, n);
        } else {
            Mul(dst, gp, src, n);
        }
    }
