//! Names in generated code: the hidden items of a function and the
//! variables the forward sweep and the reverse sweep share.

use crate::ir::{Function, VarId};
use proc_macro2::Ident;
use quote::format_ident;

/// The visibility, inside the function's `mod <f>`, that re-exports items
/// declared with `vis` beside it: one level further out for private and
/// `super`-relative visibilities, the same for `pub` and `crate` paths.
pub fn reexport(vis: &syn::Visibility) -> proc_macro2::TokenStream {
    match vis {
        syn::Visibility::Inherited => quote::quote!(pub(super)),
        syn::Visibility::Public(_) => quote::quote!(pub),
        syn::Visibility::Restricted(r) => {
            let path = &r.path;
            let first = path.segments.first().map(|s| s.ident.to_string());
            match first.as_deref() {
                Some("self") => quote::quote!(pub(super)),
                Some("super") => quote::quote!(pub(in super::#path)),
                _ => quote::quote!(#vis),
            }
        }
    }
}

/// The hidden item `__nabla_<f>_<what>` (`primal`, `forward`, `vjp`, ..).
pub fn item(f: &Function, what: &str) -> Ident {
    format_ident!("__nabla_{}_{}", f.ident, what)
}

/// The hidden method `__nabla_<method>_<what>` (`forward`, `vjp`) a
/// `#[differentiable]` method has beside it, spanned at `method` (so a
/// call of a method that is not differentiable is reported there).
pub fn method(method: &Ident, what: &str) -> Ident {
    Ident::new(&format!("__nabla_{method}_{what}"), method.span())
}

/// The cotangent slot of variable `v` in the reverse sweep: `ct_h` for `h`
/// (`__ct_h` where `ct_h` is taken).
pub fn ct(f: &Function, v: VarId) -> Ident {
    derived(f, "ct", v)
}

/// The shape of variable `v` (`shape_h`, or `__shape_h` where taken).
pub fn shape(f: &Function, v: VarId) -> Ident {
    derived(f, "shape", v)
}

/// `<what>_<name of v>`, or `__<what>_<name of v>` when a variable or an
/// identifier of the user's item already has that name.
fn derived(f: &Function, what: &str, v: VarId) -> Ident {
    let plain = format!("{what}_{}", f.name(v));
    if !f.name(v).to_string().starts_with("__") && f.is_free(&plain) {
        format_ident!("{}", plain)
    } else {
        format_ident!("__{}", plain)
    }
}

/// The name of a call's pullback in the VJP.
pub fn pullback(id: usize) -> Ident {
    format_ident!("__pullback{}", id)
}

/// The names holding a branch's residuals (`Some` for the branch taken).
pub fn branch_holders(id: usize) -> (Ident, Ident) {
    (format_ident!("__then{}", id), format_ident!("__else{}", id))
}

/// The tape of a loop in the VJP: one residual tuple per iteration.
pub fn tape(id: usize) -> Ident {
    format_ident!("__tape{}", id)
}

/// The running value of a loop's `j`-th carried variable.
pub fn carry(id: usize, j: usize) -> Ident {
    format_ident!("__carry{}_{}", id, j)
}

/// A loop's iterator, when the generated code advances it by hand.
pub fn loop_iter(id: usize) -> Ident {
    format_ident!("__loop{}", id)
}

/// The cotangent flowing through a loop's `j`-th live carried variable in
/// the reverse sweep.
pub fn flow(id: usize, j: usize) -> Ident {
    format_ident!("__flow{}_{}", id, j)
}

/// The vector of a checkpointed loop's iterator values (so the trip count
/// is known before the loop runs), or only their number when the loop
/// variable is `_`.
pub fn iters(id: usize) -> Ident {
    format_ident!("__iters{}", id)
}
