//! The `Value` methods of every op of the registry for the run-time
//! transforms' values, a callback of `nabla_ops::unary_ops!` and
//! `binary_ops!` (as `registry::value_methods!` is for the others): `dyn`
//! (`Dyn`, the op at the innermost transform, through `lift!`), `rev`
//! (`Rev`, recording the op's VJP rule) and `staged` (`Staged`, appending
//! the op to a recorded program).

macro_rules! dyn_methods {
    ($form:ident $($entries:tt)*) => {
        $crate::vocab::value::each_method!(dyn_methods $form $($entries)*);
    };
    (@dyn $(#[$doc:meta])* $name:ident $kind:ident [$($p:ident: $pt:ty),*] $method:ident, ($($q:ident),*)) => {
        #[track_caller]
        fn $method(&self $(, $p: $pt)*) -> Self {
            let x = self;
            $crate::dynamic::lift!(x => $crate::Value::$method(x $(, $p)*))
        }
    };
    (@dyn $(#[$doc:meta])* $name:ident $kind:ident [] $method:ident,) => {
        #[track_caller]
        fn $method(&self, o: &Self) -> Self {
            let x = self;
            $crate::dynamic::lift!(x, o => $crate::Value::$method(x, o))
        }
    };
    (@rev $(#[$doc:meta])* $name:ident $kind:ident [$($p:ident: $pt:ty),*] $method:ident, ($($q:ident),*)) => {
        fn $method(&self $(, $p: $pt)*) -> Self {
            let y = $crate::Value::$method(&self.value $(, $p)*);
            self.unary(y, move |x, y, ct| $crate::primitives::unary::$name::vjp(x, y $(, $p)*, ct))
        }
    };
    (@rev $(#[$doc:meta])* $name:ident $kind:ident [] $method:ident,) => {
        fn $method(&self, o: &Self) -> Self {
            let y = $crate::Value::$method(&self.value, &o.value);
            self.binary(
                o,
                y,
                $crate::primitives::binary::$name::vjp_0::<Dyn>,
                $crate::primitives::binary::$name::vjp_1::<Dyn>,
            )
        }
    };
    (@staged $(#[$doc:meta])* $name:ident $kind:ident [$($p:ident: $pt:ty),*] $method:ident, ($($q:ident),*)) => {
        fn $method(&self $(, $p: $pt)*) -> Self {
            self.unary_elem(
                || {
                    let params: &[String] = &[$(format!("{:?}", $p)),*];
                    if params.is_empty() {
                        stringify!($name).to_string()
                    } else {
                        format!("{}[{}]", stringify!($name), params.join(", "))
                    }
                },
                move |x| $crate::Value::$method(x $(, $p)*),
                Some($crate::dynamic::fuse::Elem::Unary(
                    nabla_kernels::ops::UnaryOp::$kind($($p),*),
                )),
            )
        }
    };
    (@staged $(#[$doc:meta])* $name:ident $kind:ident [] $method:ident,) => {
        fn $method(&self, o: &Self) -> Self {
            self.binary_elem(
                o,
                || stringify!($name).to_string(),
                |a, b| $crate::Value::$method(a, b),
                Some($crate::dynamic::fuse::Elem::Binary(nabla_kernels::ops::BinaryOp::$kind)),
            )
        }
    };
}
pub(crate) use dyn_methods;
