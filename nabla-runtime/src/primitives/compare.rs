//! Comparisons (`gt ge lt le eq ne`), producing bool masks. They have no
//! derivative and are never recorded.

use crate::Array;
use crate::primitives::binary::check_binary;
use crate::storage::Data;
use nabla_kernels::elementwise::{CompareOp, compare};

#[track_caller]
fn cmp(a: &Array, b: &Array, op: CompareOp, name: &str) -> Array {
    if !(a.dtype() == crate::DType::I64 && b.dtype() == crate::DType::I64) {
        check_binary(name, a, b);
    }
    crate::array::on_gpus!(name, [a, b], |g| nabla_kernels::cuda::compare(
        &g[0], &g[1], op
    ));
    let out = match (&*a.data, &*b.data) {
        (Data::I64(x), Data::I64(y)) => compare(
            x.view().mapv(|v| v as f64).view(),
            y.view().mapv(|v| v as f64).view(),
            op,
        ),
        _ => {
            check_binary(name, a, b);
            match (&*a.data, &*b.data) {
                (Data::F32(x), Data::F32(y)) => compare(x.view(), y.view(), op),
                (Data::F64(x), Data::F64(y)) => compare(x.view(), y.view(), op),
                _ => unreachable!("checked"),
            }
        }
    };
    Array::from_data(Data::Bool(crate::storage::Host::from_nd(out)))
}

macro_rules! comparisons {
    ($($(#[$doc:meta])* $name:ident => $op:expr;)*) => {
        impl Array {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $name(&self, other: &Array) -> Array {
                    cmp(self, other, $op, stringify!($name))
                }
            )*
        }
    };
}

comparisons! {
    /// `self > other` elementwise (broadcasting), a bool array.
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f32, 3.0], &[2]);
    /// assert_eq!(x.gt(&Array::scalar(2.0f32)).to_vec::<bool>(), vec![false, true]);
    /// ```
    gt => CompareOp::Gt;
    /// `self >= other` elementwise.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert!(Array::scalar(2.0f64).ge(&Array::scalar(2.0f64)).to_vec::<bool>()[0]);
    /// ```
    ge => CompareOp::Ge;
    /// `self < other` elementwise.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert!(Array::scalar(1.0f64).lt(&Array::scalar(2.0f64)).to_vec::<bool>()[0]);
    /// ```
    lt => CompareOp::Lt;
    /// `self <= other` elementwise.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert!(Array::scalar(2.0f64).le(&Array::scalar(2.0f64)).to_vec::<bool>()[0]);
    /// ```
    le => CompareOp::Le;
    /// `self == other` elementwise.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert!(Array::scalar(2.0f64).eq(&Array::scalar(2.0f64)).to_vec::<bool>()[0]);
    /// ```
    eq => CompareOp::Eq;
    /// `self != other` elementwise.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert!(Array::scalar(1.0f64).ne(&Array::scalar(2.0f64)).to_vec::<bool>()[0]);
    /// ```
    ne => CompareOp::Ne;
}
