//! The registry's elementwise ops as methods of the distributed value
//! types, written once: `nabla_ops::unary_ops!(registry_methods)` inside
//! `impl Value for T` gives `T::$method(&self, params..)` calling
//! `self.unary_op(name, |x| x.$method(params..))`, and
//! `binary_ops!(registry_methods)` gives `self.binary_op(o, name, |a, b|
//! a.$method(b))`. Each value type defines `unary_op` and `binary_op`
//! (the op's rule from `rules.rs`, then its local computation).

/// See the module docs.
macro_rules! registry_methods {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident $(($($p:ident: $pt:ty),*))? {
            method: $method:ident, func: $func:ident,
            $($body:tt)*
        }
    )*) => {
        $(registry_methods!(@one $method $(($($p: $pt),*))?);)*
    };
    (@one $method:ident ($($p:ident: $pt:ty),*)) => {
        #[track_caller]
        fn $method(&self $(, $p: $pt)*) -> Self {
            self.unary_op(stringify!($method), move |x: &$crate::Array| <$crate::Array as $crate::Value>::$method(x $(, $p)*))
        }
    };
    (@one $method:ident) => {
        #[track_caller]
        fn $method(&self, o: &Self) -> Self {
            self.binary_op(o, stringify!($method), |a: &$crate::Array, b: &$crate::Array| <$crate::Array as $crate::Value>::$method(a, b))
        }
    };
}
pub(crate) use registry_methods;
