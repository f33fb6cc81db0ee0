//! `TupleGet<I>` for tuples of 1 to 8 elements: how `argnums` picks an
//! argument out of a function's argument tuple.

use super::grad::TupleGet;

/// One `impl TupleGet<i>` per listed index of the tuple type.
macro_rules! tuple_get {
    ($tuple:tt: $($i:tt => $ti:ident),+) => {
        $(tuple_get!(@one $tuple $i $ti);)+
    };
    (@one ($($t:ident),+) $i:tt $ti:ident) => {
        impl<$($t: Clone),+> TupleGet<$i> for ($($t,)+) {
            type Out = $ti;
            fn get(&self) -> $ti {
                self.$i.clone()
            }
        }
    };
}

tuple_get!((T0): 0 => T0);
tuple_get!((T0, T1): 0 => T0, 1 => T1);
tuple_get!((T0, T1, T2): 0 => T0, 1 => T1, 2 => T2);
tuple_get!((T0, T1, T2, T3): 0 => T0, 1 => T1, 2 => T2, 3 => T3);
tuple_get!((T0, T1, T2, T3, T4): 0 => T0, 1 => T1, 2 => T2, 3 => T3, 4 => T4);
tuple_get!((T0, T1, T2, T3, T4, T5): 0 => T0, 1 => T1, 2 => T2, 3 => T3, 4 => T4, 5 => T5);
tuple_get!((T0, T1, T2, T3, T4, T5, T6): 0 => T0, 1 => T1, 2 => T2, 3 => T3, 4 => T4, 5 => T5, 6 => T6);
tuple_get!((T0, T1, T2, T3, T4, T5, T6, T7): 0 => T0, 1 => T1, 2 => T2, 3 => T3, 4 => T4, 5 => T5, 6 => T6, 7 => T7);
