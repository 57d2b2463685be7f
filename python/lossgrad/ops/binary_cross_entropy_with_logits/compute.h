    // out = ((((p * t) + 1) - t) * sig - p * t) * g [* w] [* c], sig = 1 / (1 + exp(-x)): the 950 kernel's order
    // (new_ops_semantics §3.2), an exactly rounded Div of a Duplicate of 1. Without posWeight aclnn passes
    // OnesLike(self), so p * t is t: the same form with t (bit-identical), not sig - t. exp(-x) = inf gives sig = 0.
    // Banks: e (tmpA_, phase 0) meets b (tmpB_, phase 1); b meets t and the p * t in r (phase 0); r meets g and w.
    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& x, const LocalTensor<float>& t,
                                   const LocalTensor<float>& w, const LocalTensor<float>& p, uint32_t n) {
        LocalTensor<float> e = tmpA_.Get<float>();
        LocalTensor<float> b = tmpB_.Get<float>();
        Muls(e, x, -1.0f, n);
        Duplicate(b, 1.0f, n);
        VBarrier();
        Exp(e, e, n);
        VBarrier();
        Adds(e, e, 1.0f, n);
        VBarrier();
        Div(e, b, e, n);  // sig
        if constexpr (kHasPosWeight) {
            Mul(r, p, t, n);
        }
        const LocalTensor<float>& a = kHasPosWeight ? r : t;  // p * t
        VBarrier();
        Adds(b, a, 1.0f, n);
        VBarrier();
        Sub(b, b, t, n);
        VBarrier();
        Mul(b, b, e, n);
        VBarrier();
        Sub(r, b, a, n);
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
        if (td_->coef != 1.0f) {  // mean (none and sum multiply by 1, which changes nothing)
            VBarrier();
            Muls(r, r, td_->coef, n);
        }
    }
