//! The Nabla runtime: [`Array`], its primitives with their derivative
//! rules, the value traits the rules are generic over, and PyTorch-style
//! imperative autograd.
//!
//! Most users depend on the `nabla` facade crate, which re-exports all of
//! this next to the `#[differentiable]` macro and the transforms.
//!
//! ```
//! use nabla::{Array, DType};
//! let w = Array::from_vec(vec![1.0f64, 2.0], &[2]).requires_grad();
//! let loss = (&w * &w).sum();
//! loss.backward();
//! assert_eq!(w.grad().to_vec::<f64>(), vec![2.0, 4.0]);
//! ```

#![warn(missing_docs)]

mod array;
pub mod autograd;
pub mod composite;
pub mod cuda;
pub mod custom;
mod determinism;
pub mod dynamic;
#[doc(hidden)]
pub mod entry;
pub mod functions;
pub mod fused;
mod interp;
pub mod io;
pub mod linalg;
pub mod optim;
pub mod primitives;
pub mod random;
mod registry;
pub mod revolve;
mod storage;
pub mod testing;
pub mod transform;
pub mod tree;
mod vocab;

/// The modules under the paths generated code names.
#[doc(hidden)]
pub use entry as rules;
#[doc(hidden)]
pub use transform::{compose, grad as transforms};

pub use array::nans::{debug_nans, debug_nans_enabled};
pub use array::{Array, Scalar};
pub use autograd::{LeafId, is_grad_enabled, no_grad};
pub use composite::{
    avg_pool2d, conv, cross_entropy, cumprod, einsum, embedding, gelu, gelu_tanh, layer_norm,
    log_softmax, logsumexp, logsumexp_axes, max_pool2d, mse_loss, norm, pad, rms_norm, scatter_add,
    silu, softmax, softplus, sort, take_along_axis, tril, triu, var_axes,
};
pub use determinism::{deterministic_enabled, set_deterministic};
pub use functions::*;
pub use interp::batched::Batched;
pub use interp::dual::Dual;
pub use nabla_kernels::elementwise::CompareOp;
pub use primitives::index::where_;
pub use primitives::shape::{concat, stack};
pub use random::{manual_seed, rand, rand_on, randn, randn_on};
pub use storage::buffers::{buffer_cap, keep_freed_buffers, release_buffers, set_buffer_cap};
pub use storage::{DType, Device, Element};
pub use transform::compose::{hessian, jacfwd, jacrev, vmap};
pub use transform::grad::{checkpoint, grad, jvp, value_and_grad, vjp};
pub use tree::Tree;
pub use vocab::value::{ArrayValue, ElementwiseRule, Shape, Value};

/// A name bound by a pattern of a `match` in differentiable code, copied
/// out of the (static) scrutinee; used by generated code only.
#[doc(hidden)]
#[macro_export]
macro_rules! __match_bind {
    ($scrut:expr, $pat:pat, $names:expr) => {{
        // A clone of the scrutinee is matched, so the names have the
        // types they have in the user's `match` (references into a
        // borrowed scrutinee stay references) and nothing moves out of it.
        #[allow(clippy::clone_on_copy)]
        let scrutinee = ::core::clone::Clone::clone(&$scrut);
        match scrutinee {
            $pat => $names,
            #[allow(unreachable_patterns)]
            _ => ::core::unreachable!("the arm was chosen by the same pattern"),
        }
    }};
}
