//! The monomorphic entry points and the transform trait impls on the
//! function value's type; [`entries`] emits those that apply:
//!
//! * [`grad`]: `GradFn` / `ValueAndGradFn` (`grad`, `value_and_grad`), for
//!   one output or an output with aux;
//! * [`compose`]: `DiffFn` (the composable transforms: `vmap`, `jacfwd`,
//!   `jacrev`, `hessian`, nested `grad`), for a function of one to six
//!   arrays or a list function, with `vjp_masked_shapes` when it has an
//!   output-only tail; `ScalarFn1` for a function of one float;
//! * [`vjp_jvp`]: `VjpFn` / `JvpFn` (`vjp`, `jvp`), for one output;
//! * [`second`]: `GradJvpFn` / `GradVjpFn` (`jvp(grad(f))`,
//!   `vjp(grad(f))`), for one output and no tree arguments.
//!
//! They share the pieces in [`Entries`].

mod compose;
mod fixed;
mod fixed_second;
mod grad;
mod second;
mod vjp_jvp;

use super::names;
use super::sig::{Sig, with_lifetime};
use crate::analysis::Analysis;
use crate::ir::{Function, Output, Tier};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// Monomorphic entry points and the transform trait impls.
pub fn entries(f: &Function, s: &Sig, analysis: &Analysis) -> TokenStream {
    let e = Entries::new(f, s);
    let has_tail = analysis.tail.is_some();
    let mut out = TokenStream::new();
    if e.single || e.aux {
        out.extend(e.grad());
    }
    // Functions of one to six arrays (or of one float) returning one value
    // join the composable transforms (vmap, jacfwd, jacrev, hessian, nested
    // grad).
    if f.is_composable() {
        out.extend(e.diff_fn(has_tail));
    }
    if f.is_list_fn() {
        out.extend(e.list_diff_fn(has_tail));
    }
    if f.is_slot_composable() {
        out.extend(e.slot_diff_fn(has_tail));
    }
    let all_arrays = !f.params.is_empty()
        && f.params.len() <= 6
        && f.params.iter().all(|p| p.var.is_some() && p.tree.is_none());
    if let Tier::Scalar(_) = f.tier {
        let (krate, name) = (e.krate, e.name);
        out.extend(quote! {
            impl #krate::compose::Tiered for #name::Function {
                type Tier = #krate::compose::ScalarTier;
            }
        });
        if e.single && f.params.len() == 1 && all_arrays {
            out.extend(e.scalar_fn());
        }
        if e.single || f.array_output {
            out.extend(e.fixed_jacobians());
        }
    }
    if e.single || f.array_output {
        out.extend(e.vjp_entry());
        out.extend(e.jvp_entry());
    }
    if e.single
        && f.params.iter().all(|p| p.tree.is_none())
        && f.params.iter().any(|p| p.var.is_some())
    {
        out.extend(e.grad_jvp());
        if e.has_grad_vjp() {
            out.extend(e.grad_vjp());
        }
    } else if e.single
        && matches!(f.tier, Tier::Scalar(_))
        && f.params.iter().any(|p| p.fixed_len().is_some())
        && f.params
            .iter()
            .all(|p| p.tree.is_none() || p.fixed_len().is_some())
    {
        out.extend(e.fixed_grad_jvp());
    }
    out
}

/// What the entry points share.
struct Entries<'a> {
    f: &'a Function,
    vis: &'a syn::Visibility,
    krate: &'a TokenStream,
    /// `<krate>::transforms`.
    tr: TokenStream,
    /// `<krate>::transforms::private`.
    private: TokenStream,
    name: &'a Ident,
    /// The concrete value type.
    c: TokenStream,
    /// The hidden variants the entry points call.
    fwd: Ident,
    vjp: Ident,
    jvp: Ident,
    masked: Ident,
    /// The parameters and their types, as the user wrote them.
    user_params: Vec<TokenStream>,
    user_types: Vec<TokenStream>,
    /// The arguments passing the parameters to a generic variant.
    call_args: Vec<TokenStream>,
    /// `let __tree_<p> = TreeArg::new(..)`: tree arguments travel as their
    /// leaves.
    tree_binds: TokenStream,
    /// `let __all = (..)`: the cotangents with each tree's rebuilt into the
    /// tree's own type.
    convert: TokenStream,
    /// The concrete cotangents' type, and what `Select` picks from it.
    cts_c: TokenStream,
    sel: TokenStream,
    /// One value output.
    single: bool,
    /// A value output and an aux output.
    aux: bool,
}

impl<'a> Entries<'a> {
    /// The shared pieces for `f`.
    fn new(f: &'a Function, s: &'a Sig) -> Self {
        let krate = &f.krate;
        let tr = quote!(#krate::transforms);
        let private = quote!(#tr::private);
        let c = f.concrete();
        let user_params = f
            .params
            .iter()
            .map(|p| {
                let (id, ty) = (&p.ident, with_lifetime(&p.ty));
                quote!(#id: #ty)
            })
            .collect();
        let user_types = f.params.iter().map(|p| with_lifetime(&p.ty)).collect();
        let call_args = f
            .params
            .iter()
            .map(|p| {
                let id = &p.ident;
                if p.tree.is_some() {
                    let t = format_ident!("__tree_{}", id);
                    quote!(&#t)
                } else if p.var.is_some() && !p.by_ref {
                    quote!(&#id)
                } else {
                    quote!(#id)
                }
            })
            .collect();
        let tree_binds = per_tree(f, "", |id, r| {
            let t = format_ident!("__tree_{}", id);
            match fixed_len(f, id) {
                // A fixed-size array's floats, on the stack.
                Some(k) => quote!(let #t = #krate::tree::TreeArg {
                    skeleton: #r,
                    leaves: #krate::tree::fixed_leaves::<#c, _, { #k }>(#r),
                };),
                None => quote!(let #t = #krate::tree::TreeArg::new(#r);),
            }
        });
        let convert = rebuild(f, |id| {
            let t = format_ident!("__tree_{}", id);
            quote!(#t.skeleton)
        });
        let cts_c = {
            let items = f.params.iter().map(|p| {
                if let Some(tree) = &p.tree {
                    quote!(<#tree as #krate::tree::Tree<#c>>::Grad)
                } else if p.var.is_some() {
                    c.clone()
                } else {
                    quote!(#tr::Static)
                }
            });
            quote!((#(#items,)*))
        };
        let sel = quote!(<__A as #tr::Select<#cts_c>>::Out);
        Entries {
            f,
            vis: &s.vis,
            krate,
            tr,
            private,
            name: &f.ident,
            c,
            fwd: names::item(f, "forward"),
            vjp: names::item(f, "vjp"),
            jvp: names::item(f, "jvp"),
            masked: names::item(f, "vjp_masked"),
            user_params,
            user_types,
            call_args,
            tree_binds,
            convert,
            cts_c,
            sel,
            single: !f.tuple_output && matches!(f.outputs[0], Output::Value(_)),
            aux: f.tuple_output
                && !f.list_output
                && !f.array_output
                && f.outputs.len() == 2
                && matches!(f.outputs[0], Output::Value(_)),
        }
    }

    /// The concrete outputs' type.
    fn out_ty_c(&self) -> TokenStream {
        let items: Vec<TokenStream> = self
            .f
            .outputs
            .iter()
            .map(|o| match o {
                Output::Value(_) => self.c.clone(),
                Output::Static(_, ty) => with_lifetime(ty),
            })
            .collect();
        if self.f.tuple_output {
            quote!((#(#items,)*))
        } else {
            quote!(#(#items)*)
        }
    }
}

/// The number of floats of parameter `id` if it is a fixed-size array.
pub(super) fn fixed_len(f: &Function, id: &syn::Ident) -> Option<TokenStream> {
    f.params.iter().find(|p| p.ident == *id)?.fixed_len()
}

/// One `let` per tree parameter: `make(name, reference to the argument)`,
/// where the argument is the parameter itself or, with `suffix`, its
/// `<name><suffix>` companion (the tangent).
fn per_tree(
    f: &Function,
    suffix: &str,
    make: impl Fn(&syn::Ident, TokenStream) -> TokenStream,
) -> TokenStream {
    f.params
        .iter()
        .filter(|p| p.tree.is_some())
        .map(|p| {
            let arg = format_ident!("{}{}", p.ident, suffix);
            let r = if p.by_ref {
                quote!(#arg)
            } else {
                quote!(&#arg)
            };
            make(&p.ident, r)
        })
        .collect()
}

/// `let __all = (..)`: the cotangents `__all` with each tree parameter's
/// leaves rebuilt into the tree's type on the given skeleton.
fn rebuild(f: &Function, skeleton: impl Fn(&syn::Ident) -> TokenStream) -> TokenStream {
    let krate = &f.krate;
    let c = f.concrete();
    let items = f.params.iter().enumerate().map(|(i, p)| {
        let idx = syn::Index::from(i);
        match &p.tree {
            Some(tree) => {
                let sk = skeleton(&p.ident);
                quote!(<#tree as #krate::tree::Tree<#c>>::rebuild(#sk, &mut __all.#idx.into_iter()))
            }
            None => quote!(__all.#idx),
        }
    });
    quote!(let __all = (#(#items,)*);)
}
