//! Reproducible results under threads: what is bitwise reproducible by
//! default, and the switch for the rest (docs/design.md, "Debugging
//! numerics").

/// Makes every kernel's result independent of the number of threads and,
/// on a GPU, of scheduling (as `torch.use_deterministic_algorithms`), for
/// the whole process; it starts as `NABLA_DETERMINISTIC=1` in the
/// environment says, else off.
///
/// Without it, results are already the same bits run to run for a fixed
/// thread count, and elementwise ops, reductions, products, convolutions
/// and fused passes are the same whatever the thread count (sums add
/// fixed-size pieces in a fixed order). On, the linear-algebra
/// factorisations plan for a fixed thread count instead of the pool's size,
/// and GPU scatter-adds (the backward pass of `index_select`, `take`,
/// `embedding`) run on the host in index order instead of with atomic adds.
///
/// ```
/// use nabla::{Array, DType};
/// nabla::set_deterministic(true);
/// let a = Array::eye(3, DType::F64) * 2.0;
/// let (q, r) = nabla::linalg::qr(&a); // the same bits with 1 thread or 64
/// nabla::set_deterministic(false);
/// assert_eq!(q.matmul(&r).to_vec::<f64>(), a.to_vec::<f64>());
/// ```
pub fn set_deterministic(on: bool) {
    nabla_kernels::determinism::set_deterministic(on)
}

/// Whether [`set_deterministic`] is on.
///
/// ```
/// nabla::set_deterministic(false);
/// assert!(!nabla::deterministic_enabled());
/// ```
pub fn deterministic_enabled() -> bool {
    nabla_kernels::determinism::deterministic()
}
