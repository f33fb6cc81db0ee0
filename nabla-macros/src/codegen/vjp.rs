//! Reverse mode: one VJP program per function.
//!
//! `vjp` runs the forward sweep (the forward statements, with calls of other
//! differentiable functions going through *their* `vjp`) and returns the
//! outputs with a `move` closure — the reverse sweep ([`super::reverse`]).
//! The closure captures exactly the variables the reverse sweep mentions:
//! those are the residuals, owned by the closure, with no tape and no
//! boxing.

use super::forward::{self, Mode};
use super::names::{self, ct};
use super::reverse;
use super::sig::Sig;
use crate::ir::{Function, Kind, Output};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// The `vjp` function, and the `vjp_masked` program it runs.
pub fn vjp_fn(f: &Function, active: &[bool], sig: &Sig) -> TokenStream {
    let Sig {
        generic_params,
        bound,
        out_ty,
        out_ct_ty,
        arg_cts_ty,
        vis,
        ..
    } = sig;
    let name = names::item(f, "vjp");
    let masked = names::item(f, "vjp_masked");
    let masked_fn = program(
        f,
        active,
        sig,
        Program {
            name: &masked,
            doc: "The VJP computing cotangents only for the parameters flagged in `__want` \
                  (the others come back as zeros): what `grad` with `argnums` runs.",
            first_ty: out_ty,
            fwd: &forward::stmts(f, &f.body, Mode::Sweep { active }),
            first: &outputs(f),
            rev: &reverse::body(f, active, &f.body),
        },
    );
    let np = f.params.len();
    let names: Vec<&Ident> = f.params.iter().map(|p| &p.ident).collect();
    let masked = if f.method {
        quote!(self.#masked)
    } else {
        quote!(#masked)
    };
    quote! {
        #[doc(hidden)]
        #[allow(unused_variables, unused_mut, clippy::all)]
        #vis fn #name<'__a, __V: #bound + '__a>(#(#generic_params),*)
            -> (#out_ty, impl ::core::ops::FnOnce(#out_ct_ty) -> #arg_cts_ty + use<__V>)
        {
            #masked::<__V>(#(#names,)* [true; #np])
        }

        #masked_fn
    }
}

/// A VJP as one straight-line function of the parameters and the output
/// cotangent, returning the parameters' cotangents: the forward sweep,
/// then the reverse sweep, with no closure between them (what a fused
/// region's float-tier program runs, inlined into the fused pass).
pub fn direct_vjp_fn(f: &Function, active: &[bool], sig: &Sig) -> TokenStream {
    let Sig {
        generic_params,
        bound,
        out_ct_ty,
        arg_cts_ty,
        owned_params,
        vis,
        ..
    } = sig;
    let name = names::item(f, "vjp_direct");
    let fwd = forward::stmts(f, &f.body, Mode::Sweep { active });
    let rev = reverse::body(f, active, &f.body);
    let slots = slots(f, active);
    let result = result(f, active);
    let seed = seed(f, active);
    let np = f.params.len();
    quote! {
        #[doc(hidden)]
        #[inline(always)]
        #[allow(unused_variables, unused_mut, clippy::all)]
        #vis fn #name<'__a, __V: #bound + '__a>(#(#generic_params,)* __ct: #out_ct_ty) -> #arg_cts_ty {
            let __want = [true; #np];
            #(#owned_params)*
            #(#fwd)*
            #(#slots)*
            #seed
            #rev
            (#(#result,)*)
        }
    }
}

/// The parts of one VJP program that differ between programs.
pub struct Program<'a> {
    pub name: &'a Ident,
    pub doc: &'a str,
    /// The type of `first`.
    pub first_ty: &'a TokenStream,
    /// The forward sweep.
    pub fwd: &'a [TokenStream],
    /// What the program returns with its pullback: the outputs or their
    /// spec.
    pub first: &'a TokenStream,
    /// The reverse sweep's statements.
    pub rev: &'a TokenStream,
}

/// One VJP program, as a function of the parameters and `__want`: the
/// forward sweep, then `(first, pullback)`, where the pullback runs the
/// reverse statements. Static reference parameters are copied into the
/// pullback, so it never borrows from its caller.
pub fn program(f: &Function, active: &[bool], sig: &Sig, p: Program) -> TokenStream {
    let Sig {
        generic_params,
        bound,
        out_ct_ty,
        arg_cts_ty,
        owned_params,
        vis,
        ..
    } = sig;
    let Program {
        name,
        doc,
        first_ty,
        fwd,
        first,
        rev,
    } = p;
    let (mut own, mut reborrow) = owned_statics(f);
    let slots = slots(f, active);
    let result = result(f, active);
    let seed = seed(f, active);
    let np = f.params.len();
    let (own_values, reborrow_values) = owned_values(f, &quote!(#(#slots)* #seed #rev #(#result)*));
    own.extend(own_values);
    reborrow.extend(reborrow_values);
    quote! {
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(unused_variables, unused_mut, clippy::all)]
        #vis fn #name<'__a, __V: #bound + '__a>(#(#generic_params,)* __want: [bool; #np])
            -> (#first_ty, impl ::core::ops::FnOnce(#out_ct_ty) -> #arg_cts_ty + use<__V>)
        {
            #(#owned_params)*
            #(#fwd)*
            let __outputs = #first;
            #(#own)*
            (__outputs, move |__ct: #out_ct_ty| {
                #(#reborrow)*
                #(#slots)*
                #seed
                #rev
                (#(#result,)*)
            })
        }
    }
}

/// Static reference parameters: the reverse sweep owns a copy, so the
/// pullback does not borrow from the caller. The copies, made before the
/// closure, and the references the closure takes to them.
fn owned_statics(f: &Function) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let refs: Vec<(&syn::Ident, &syn::Type)> = f
        .params
        .iter()
        .filter(|p| p.var.is_none())
        .filter_map(|p| match &p.ty {
            syn::Type::Reference(r) if r.mutability.is_none() => Some((&p.ident, &*r.elem)),
            _ => None,
        })
        .collect();
    let own = refs
        .iter()
        .map(|(id, _)| {
            let o = format_ident!("__owned_{}", id);
            quote!(let #o = ::std::borrow::ToOwned::to_owned(#id);)
        })
        .collect();
    let reborrow = refs
        .iter()
        .map(|(id, ty)| {
            let o = format_ident!("__owned_{}", id);
            quote!(let #id: &#ty = ::std::borrow::Borrow::borrow(&#o);)
        })
        .collect();
    (own, reborrow)
}

/// The value parameters the pullback reads (the closure's tokens mention
/// them): each is cloned before the closure, which owns the copy and
/// borrows it under the parameter's name again. Parameters it does not
/// read are not cloned.
fn owned_values(f: &Function, closure: &TokenStream) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let mentioned = crate::ir::idents(closure.clone());
    let read: Vec<&Ident> = (0..f.vars.len())
        .filter(|&v| f.is_param_ref(v))
        .map(|v| f.name(v))
        .filter(|id| mentioned.contains(&id.to_string()))
        .collect();
    let own = read
        .iter()
        .map(|id| quote!(let #id: __V = ::core::clone::Clone::clone(#id);))
        .collect();
    let reborrow = read
        .iter()
        .map(|id| quote!(let #id: &__V = &#id;))
        .collect();
    (own, reborrow)
}

/// One cotangent slot per active value or tree variable (a tree's slot
/// holds one `Option` per leaf).
fn slots(f: &Function, active: &[bool]) -> Vec<TokenStream> {
    (0..f.vars.len()).filter(|&v| active[v] && f.vars[v].kind != Kind::Static).map(|v| {
        let c = ct(f, v);
        if let Some(k) = f.param_of(v).and_then(|p| p.fixed_len()) {
            quote!(let mut #c: [::core::option::Option<__V>; #k] = ::core::array::from_fn(|_| ::core::option::Option::None);)
        } else if f.vars[v].kind == Kind::Tree {
            let leaves = f.name(v);
            quote!(let mut #c: ::std::vec::Vec<::core::option::Option<__V>> = ::std::vec![::core::option::Option::None; #leaves.len()];)
        } else {
            quote!(let mut #c: ::core::option::Option<__V> = ::core::option::Option::None;)
        }
    }).collect()
}

/// The pullback's result: each parameter's cotangent (zeros where none
/// arrived, `Static` for static parameters).
fn result(f: &Function, active: &[bool]) -> Vec<TokenStream> {
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    f.params
        .iter()
        .map(|p| match p.var {
            Some(v) if p.fixed_len().is_some() => {
                let (c, x) = (ct(f, v), f.name(v));
                quote!(#krate::tree::fixed_or_zeros(#c, &#x))
            }
            Some(v) if p.tree.is_some() => {
                let (c, x) = (ct(f, v), f.name(v));
                quote!(#krate::tree::leaves_or_zeros(#c, &#x))
            }
            Some(v) if active[v] => {
                let (c, x) = (ct(f, v), f.val(v));
                quote!(#private::or_zeros(#c, #x))
            }
            Some(v) => {
                let x = f.val(v);
                quote!(#krate::Value::zeros_like(#x))
            }
            None => quote!(#krate::transforms::Static),
        })
        .collect()
}

/// The returned outputs (values cloned: the closure keeps the originals).
pub fn outputs(f: &Function) -> TokenStream {
    let items: Vec<TokenStream> = f
        .outputs
        .iter()
        .map(|o| match o {
            Output::Value(v) => {
                let x = f.val(*v);
                quote!(::core::clone::Clone::clone(#x))
            }
            Output::Static(t, _) => t.clone(),
        })
        .collect();
    if f.tuple_output {
        quote!((#(#items,)*))
    } else {
        quote!(#(#items)*)
    }
}

/// The output cotangents `__ct` into the outputs' slots.
fn seed(f: &Function, active: &[bool]) -> TokenStream {
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    if !f.tuple_output {
        return match &f.outputs[0] {
            Output::Value(v) if active[*v] => {
                let c = ct(f, *v);
                quote!(#private::acc(&mut #c, __ct);)
            }
            _ => quote!(let _ = __ct;),
        };
    }
    let parts = f.outputs.iter().enumerate().map(|(i, o)| {
        let idx = syn::Index::from(i);
        match o {
            Output::Value(v) if active[*v] => {
                let c = ct(f, *v);
                quote!(if let ::core::option::Option::Some(__g) = __ct.#idx { #private::acc(&mut #c, __g); })
            }
            _ => quote!(),
        }
    });
    quote!(#(#parts)*)
}
