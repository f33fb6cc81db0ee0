//! The primitives that are not elementwise ([`other_ops!`](crate::other_ops)).

/// The primitives that are not elementwise, for the macro's op table: name,
/// the names users write (method and `nabla::` function), value inputs,
/// static parameters, and how an output-only tail reads each input (`[S]`
/// shape, `[V]` value, `no`: never in a tail). Their kernels and rules are
/// hand-written in the runtime's `ops` modules.
///
/// ```
/// macro_rules! names {
///     ($($name:ident [$($n:ident)*] $v:literal, $p:literal, tail $t:tt;)*) => {
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
            add_scalar [add_scalar] 1, 1, tail [S];
            mul_scalar [mul_scalar] 1, 1, tail [S];
            sum [sum] 1, 0, tail [S];
            sum_axes [sum_axes] 1, 2, tail [S];
            max [max] 1, 0, tail no;
            max_axes [max_axes] 1, 2, tail no;
            min [min] 1, 0, tail no;
            min_axes [min_axes] 1, 2, tail no;
            prod [prod] 1, 0, tail no;
            prod_axes [prod_axes] 1, 2, tail no;
            mean [mean] 1, 0, tail [S];
            mean_axes [mean_axes] 1, 2, tail [S];
            cumsum [cumsum] 1, 1, tail no;
            matmul [matmul] 2, 0, tail [V V];
            dot [dot] 2, 0, tail no;
            outer [outer] 2, 0, tail no;
            reshape [reshape] 1, 1, tail [S];
            flatten [flatten] 1, 0, tail [S];
            permute [permute] 1, 1, tail [S];
            transpose [transpose] 1, 0, tail [S];
            broadcast_to [broadcast_to] 1, 1, tail [S];
            expand_dims [expand_dims] 1, 1, tail [S];
            squeeze [squeeze] 1, 1, tail [S];
            slice_axis [slice_axis] 1, 2, tail no;
            index_select [index_select] 1, 2, tail no;
        }
    };
}
