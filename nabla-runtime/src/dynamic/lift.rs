//! [`lift!`]: runs one op on `Dyn` operands at the innermost transform
//! among them.

/// `lift!(a, b => body)`: finds the innermost transform among the `&Dyn`
/// operands `a, b`, rebinds each to that level's interpretation type
/// (`&Array`, `&Dual<Dyn>`, `&Batched<Dyn>`, `&Rev` or `&Staged`; operands of outer
/// levels become its constants) and wraps `body`'s result as a `Dyn` of
/// that level. `body` calls the op through its trait (`Value::sin(a)`),
/// so the one expression is the op at every interpretation type.
macro_rules! lift {
    ($($a:ident),+ => $body:expr) => {{
        use $crate::dynamic::{top, Dyn, Top};
        match top([$($a),+]) {
            Top::Array => {
                $(let $a = $a.concrete();)+
                Dyn::Array($body)
            }
            Top::Dual(l) => {
                $(let $a = &$a.dual_at(l);)+
                Dyn::Dual(l, Box::new($body))
            }
            Top::Batched(l) => {
                $(let $a = &$a.batched_at(l);)+
                Dyn::Batched(l, Box::new($body))
            }
            Top::Rev(l) => {
                $(let $a = &$a.rev_at(l);)+
                Dyn::Rev(l, Box::new($body))
            }
            Top::Staged(l) => {
                $(let $a = &$a.staged_at(l);)+
                Dyn::Staged(l, Box::new($body))
            }
        }
    }};
}
pub(crate) use lift;
