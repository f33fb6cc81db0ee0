//! The primitives that are not elementwise ([`other_ops!`](crate::other_ops)).

/// The primitives that are not elementwise, for the macro's op table: name,
/// the names users write (method and `nabla::` function), value inputs,
/// static parameters, how an output-only tail reads each input (`[S]`
/// shape, `[V]` value, `no`: never in a tail), and what each input's
/// reverse step `rules::<op>::vjp_<k>` reads of the inputs and the output
/// (one `[..]` per input: `V` value, `S` shape, `_` nothing). Their kernels
/// and rules are hand-written in the runtime's `primitives` modules, their
/// entry points in `entry.rs` (`nabla::rules` in generated code).
///
/// ```
/// macro_rules! names {
///     ($($name:ident [$($n:ident)*] $v:literal, $p:literal, tail $t:tt, reads $([$($r:tt)*])+;)*) => {
///         [$(stringify!($name)),*]
///     };
/// }
/// assert!(nabla_ops::other_ops!(names).contains(&"matmul"));
/// ```
#[macro_export]
macro_rules! other_ops {
    ($callback:ident $($args:tt)*) => {
        $callback! {
            $($args)*
            add_scalar [add_scalar] 1, 1, tail [S], reads [_ _];
            mul_scalar [mul_scalar] 1, 1, tail [S], reads [_ _];
            add_const [] 1, 2, tail no, reads [S _];
            mul_const [] 1, 2, tail no, reads [S _];
            sum [sum] 1, 0, tail [S], reads [S _];
            sum_axes [sum_axes] 1, 2, tail [S], reads [S _];
            max [max] 1, 0, tail no, reads [V V];
            max_axes [max_axes] 1, 2, tail no, reads [V V];
            min [min] 1, 0, tail no, reads [V V];
            min_axes [min_axes] 1, 2, tail no, reads [V V];
            prod [prod] 1, 0, tail no, reads [V V];
            prod_axes [prod_axes] 1, 2, tail no, reads [V V];
            mean [mean] 1, 0, tail [S], reads [S _];
            mean_axes [mean_axes] 1, 2, tail [S], reads [S _];
            cumsum [cumsum] 1, 1, tail no, reads [S _];
            matmul [matmul] 2, 0, tail [V V], reads [V V _] [V V _];
            dot [dot] 2, 0, tail no, reads [V V _] [V V _];
            outer [outer] 2, 0, tail no, reads [_ V _] [V _ _];
            reshape [reshape] 1, 1, tail [S], reads [S _];
            flatten [flatten] 1, 0, tail [S], reads [S _];
            permute [permute] 1, 1, tail [S], reads [_ _];
            transpose [transpose] 1, 0, tail [S], reads [_ _];
            broadcast_to [broadcast_to] 1, 1, tail [S], reads [S _];
            expand_dims [expand_dims] 1, 1, tail [S], reads [S _];
            squeeze [squeeze] 1, 1, tail [S], reads [S _];
            slice_axis [slice_axis] 1, 2, tail no, reads [S _];
            index_select [index_select] 1, 2, tail no, reads [S _];
            index_add [index_add] 1, 3, tail no, reads [_ _];
        }
    };
}

/// The `Array` methods that call one of the library's `#[differentiable]`
/// composites of the same name (`x.softmax(-1)` is `nabla::softmax(&x,
/// -1)`): the one list the macro reads to lower such a call and the
/// runtime checks its `Array` methods against.
///
/// ```
/// macro_rules! names {
///     ($($name:ident)*) => {
///         [$(stringify!($name)),*]
///     };
/// }
/// assert!(nabla_ops::composite_methods!(names).contains(&"softmax"));
/// ```
#[macro_export]
macro_rules! composite_methods {
    ($callback:ident $($args:tt)*) => {
        $callback! {
            $($args)*
            softmax log_softmax logsumexp_axes var_axes gelu gelu_tanh silu softplus
        }
    };
}
