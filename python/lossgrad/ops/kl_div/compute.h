    // aclnn's op_api keeps all-float16 inputs in float16 and casts every other mix to float32 (TC, from the registry's
    // aclnn_compute "float32_unless_all_float16"; ops-nn loss/kl_div_loss_grad/op_api/aclnn_kl_div_backward.cpp).
    // Its kernel computes each term in float32 and writes it as TC, so in float16 every term is rounded to float16
    // (beyond +-65504 it is +-Inf) before ReduceSum, which sums the float16 terms in float32 and rounds once to
    // float16; the result is then cast to out's dtype (Emit rounds through TC; docs/semantics.md, "Rounding").

    // Contribution of each broadcast element: T * gradOutput with T = exp(target) when log_target, else target.
    // self's values never enter (only its shape); out = -c * contribution, summed over broadcast axes of self.
    __aicore__ inline void Contribution(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                        const LocalTensor<float>& x, uint32_t n) {
        const LocalTensor<float>& t = (td_->flags & LOSSGRAD_FLAG_LOG_TARGET) ? r : x;
        if (td_->flags & LOSSGRAD_FLAG_LOG_TARGET) {
            Exp(r, x, n);
            VBarrier();
        }
        if constexpr (GRAD_SCALAR) {
            Muls(r, t, gradScalar_, n);
        } else {
            Mul(r, t, g, n);
        }
    }

    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x, uint32_t n) {
        (void)s;
        Contribution(r, g, x, n);
        VBarrier();
        Muls(r, r, -td_->coef, n);
    }
