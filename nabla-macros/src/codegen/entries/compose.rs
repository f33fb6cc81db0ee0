//! The composable transforms' traits: `DiffFn` for a function of one to six
//! arrays or a list function (with `vjp_masked_shapes` when it has an
//! output-only tail), and `ScalarFn1` for a function of one float.

use super::Entries;
use crate::codegen::names;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

impl Entries<'_> {
    /// `DiffFn` for a function of one to six arrays returning one array.
    pub(super) fn diff_fn(&self, has_tail: bool) -> TokenStream {
        let Entries {
            krate,
            name,
            fwd,
            vjp,
            masked,
            ..
        } = self;
        let n = self.f.params.len();
        let arity = format_ident!("A{}", n);
        let idx: Vec<syn::Index> = (0..n).map(syn::Index::from).collect();
        let vs: Vec<TokenStream> = (0..n).map(|_| quote!(__V)).collect();
        // With an output-only tail, callers that need only the output's
        // shape skip it.
        let shapes = has_tail.then(|| {
            let tail = names::item(self.f, "vjp_tail");
            quote! {
                fn vjp_masked_shapes<__V: #krate::ArrayValue>(x: &(#(#vs,)*), want: &[bool]) -> (#krate::compose::OutSpec, impl ::core::ops::FnOnce(__V) -> (#(#vs,)*) + use<__V>) {
                    let __want: [bool; #n] = ::core::array::from_fn(|i| #krate::compose::is_wanted(want, i));
                    #tail::<__V>(#(&x.#idx,)* __want)
                }
            }
        });
        quote! {
            impl #krate::compose::Tiered for #name::Function {
                type Tier = #krate::compose::ArrayTier;
            }
            impl #krate::compose::DiffFn for #name::Function {
                type Arity = #krate::compose::#arity;
                type Out = #krate::compose::One;
                fn eval<__V: #krate::ArrayValue>(x: &(#(#vs,)*)) -> __V {
                    #fwd::<__V>(#(&x.#idx),*)
                }
                fn vjp<__V: #krate::ArrayValue>(x: &(#(#vs,)*)) -> (__V, impl ::core::ops::FnOnce(__V) -> (#(#vs,)*) + use<__V>) {
                    #vjp::<__V>(#(&x.#idx),*)
                }
                fn vjp_masked<__V: #krate::ArrayValue>(x: &(#(#vs,)*), want: &[bool]) -> (__V, impl ::core::ops::FnOnce(__V) -> (#(#vs,)*) + use<__V>) {
                    let __want: [bool; #n] = ::core::array::from_fn(|i| #krate::compose::is_wanted(want, i));
                    #masked::<__V>(#(&x.#idx,)* __want)
                }
                #shapes
            }
        }
    }

    /// `DiffFn` for a list function, `fn f(args: &[Array]) -> Vec<Array>`
    /// returning `vec![..]` (the seed's form): the list of arrays in, the
    /// list of outputs out. Generated code reads the list through a
    /// `TreeArg` whose skeleton only gives positions, so a list of
    /// placeholders of the right length stands in for it.
    pub(super) fn list_diff_fn(&self, has_tail: bool) -> TokenStream {
        let Entries {
            krate,
            name,
            fwd,
            vjp,
            ..
        } = self;
        let f = self.f;
        let idx: Vec<syn::Index> = (0..f.outputs.len()).map(syn::Index::from).collect();
        let n_out = f.outputs.len();
        let somes = (0..n_out).map(|_| {
            quote!(::core::option::Option::Some(
                __it.next().expect("checked length")
            ))
        });
        // The list pullback: the cotangent list as the program's tuple of
        // per-output cotangents, the tree's leaf cotangents back.
        let list_pullback = quote! {
            move |__ct: ::std::vec::Vec<__V>| {
                #krate::compose::check_cotangents(__ct.len(), #n_out);
                let mut __it = __ct.into_iter();
                __pullback((#(#somes,)*)).0
            }
        };
        let tree = f.params[0].tree.as_ref();
        let tree_arg = quote! {
            let __sk = #krate::compose::list_skeleton(x.len());
            let __t: #krate::tree::TreeArg<'_, #tree, ::std::vec::Vec<__V>> =
                #krate::tree::TreeArg { skeleton: &__sk, leaves: ::core::clone::Clone::clone(x) };
        };
        // With an output-only tail, callers that need only the outputs'
        // shapes skip it (every leaf's cotangent is computed, as in `vjp`).
        let shapes = has_tail.then(|| {
            let tail = names::item(f, "vjp_tail");
            quote! {
                fn vjp_masked_shapes<__V: #krate::ArrayValue>(x: &::std::vec::Vec<__V>, _want: &[bool]) -> (
                    ::std::vec::Vec<#krate::compose::OutSpec>,
                    impl ::core::ops::FnOnce(::std::vec::Vec<__V>) -> ::std::vec::Vec<__V> + use<__V>,
                ) {
                    #tree_arg
                    let (__s, __pullback) = #tail::<__V>(&__t, [true]);
                    (::std::vec![#(__s.#idx),*], #list_pullback)
                }
            }
        });
        quote! {
            impl #krate::compose::Tiered for #name::Function {
                type Tier = #krate::compose::ArrayTier;
            }
            impl #krate::compose::DiffFn for #name::Function {
                type Arity = #krate::compose::AList;
                type Out = #krate::compose::List;
                fn eval<__V: #krate::ArrayValue>(x: &::std::vec::Vec<__V>) -> ::std::vec::Vec<__V> {
                    #tree_arg
                    let __y = #fwd::<__V>(&__t);
                    ::std::vec![#(__y.#idx),*]
                }
                fn vjp<__V: #krate::ArrayValue>(x: &::std::vec::Vec<__V>) -> (
                    ::std::vec::Vec<__V>,
                    impl ::core::ops::FnOnce(::std::vec::Vec<__V>) -> ::std::vec::Vec<__V> + use<__V>,
                ) {
                    #tree_arg
                    let (__y, __pullback) = #vjp::<__V>(&__t);
                    (::std::vec![#(__y.#idx),*], #list_pullback)
                }
                #shapes
            }
        }
    }

    /// `DiffFn` for a function of arrays and trees returning one array or a
    /// pair: its arity is a tuple of slots (`One`, `TreeS<T>`), a tree
    /// travelling as a `TreeVal` (the tree for its structure, and its
    /// leaves). With trees, also `jvp(grad(f))` and `vjp(grad(f))` w.r.t.
    /// one argument, through the composable `grad`.
    pub(super) fn slot_diff_fn(&self, has_tail: bool) -> TokenStream {
        let Entries {
            krate,
            name,
            fwd,
            vjp,
            masked,
            tr,
            ..
        } = self;
        let f = self.f;
        let n = f.params.len();
        let c = quote!(#krate::compose);
        let slots = f.params.iter().map(|p| match &p.tree {
            Some(t) => quote!(#c::TreeS<#t>),
            None => quote!(#c::One),
        });
        // The generated programs read a tree through a `TreeArg` on the
        // `TreeVal`'s skeleton; their pullbacks return its leaves, which
        // go back onto the same skeleton.
        let binds: TokenStream = f
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.tree.is_some())
            .map(|(i, _)| {
                let (idx, t, sk) = (
                    syn::Index::from(i),
                    format_ident!("__t{}", i),
                    format_ident!("__sk{}", i),
                );
                quote! {
                    let #t = x.#idx.arg();
                    let #sk = ::core::clone::Clone::clone(&x.#idx.skeleton);
                }
            })
            .collect();
        let args: Vec<TokenStream> = f
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if p.tree.is_some() {
                    let t = format_ident!("__t{}", i);
                    quote!(&#t)
                } else {
                    let idx = syn::Index::from(i);
                    quote!(&x.#idx)
                }
            })
            .collect();
        let back = f.params.iter().enumerate().map(|(i, p)| {
            let idx = syn::Index::from(i);
            if p.tree.is_some() {
                let sk = format_ident!("__sk{}", i);
                quote!(#c::TreeVal { skeleton: #sk, leaves: __c.#idx })
            } else {
                quote!(__c.#idx)
            }
        });
        // A pair output's pullback takes a cotangent per output.
        let pair = f.is_pair_output();
        let (out, out_ty, seed) = if pair {
            (
                quote!((#c::One, #c::One)),
                quote!((__V, __V)),
                quote!((
                    ::core::option::Option::Some(__ct.0),
                    ::core::option::Option::Some(__ct.1)
                )),
            )
        } else {
            (quote!(#c::One), quote!(__V), quote!(__ct))
        };
        let pullback = quote! {
            move |__ct: #out_ty| {
                let __c = __pullback(#seed);
                (#(#back,)*)
            }
        };
        let pb_ty = quote!(impl ::core::ops::FnOnce(#out_ty) -> #c::ArgsOf<Self, __V> + use<__V>);
        let shapes = has_tail.then(|| {
            let tail = names::item(f, "vjp_tail");
            quote! {
                fn vjp_masked_shapes<__V: #krate::ArrayValue>(x: &#c::ArgsOf<Self, __V>, want: &[bool]) -> (#c::OutSpec, #pb_ty) {
                    let __want: [bool; #n] = ::core::array::from_fn(|i| #c::is_wanted(want, i));
                    #binds
                    let (__y, __pullback) = #tail::<__V>(#(#args,)* __want);
                    (__y, #pullback)
                }
            }
        });
        let grad_of = quote!(#tr::Grad<Self, #tr::Argnum<__K>, #tr::NoAux>);
        let arity = quote!(<Self as #c::DiffFn>::Arity);
        // Functions of arrays get `jvp(grad(f))`/`vjp(grad(f))` from
        // `second.rs` (with tuple argnums).
        let grad_entries = f.params.iter().any(|p| p.tree.is_some()).then(|| {
            quote! {
                impl<const __K: usize> #tr::GradJvpFn<#tr::Argnum<__K>> for #name::Function
                where
                    #grad_of: #c::DiffFn<Arity = #arity>,
                    #arity: #c::Entries<#grad_of>,
                {
                    type Ptr = <#arity as #c::Entries<#grad_of>>::Jvp;
                    const PTR: &'static Self::Ptr = <#arity as #c::Entries<#grad_of>>::JVP;
                }
                impl<const __K: usize> #tr::GradVjpFn<#tr::Argnum<__K>> for #name::Function
                where
                    #grad_of: #c::DiffFn<Arity = #arity>,
                    #arity: #c::Entries<#grad_of>,
                {
                    type Ptr = <#arity as #c::Entries<#grad_of>>::Vjp;
                    const PTR: &'static Self::Ptr = <#arity as #c::Entries<#grad_of>>::VJP;
                }
            }
        });
        quote! {
            impl #c::Tiered for #name::Function {
                type Tier = #c::ArrayTier;
            }
            impl #c::DiffFn for #name::Function {
                type Arity = (#(#slots,)*);
                type Out = #out;
                fn eval<__V: #krate::ArrayValue>(x: &#c::ArgsOf<Self, __V>) -> #out_ty {
                    #binds
                    #fwd::<__V>(#(#args),*)
                }
                fn vjp<__V: #krate::ArrayValue>(x: &#c::ArgsOf<Self, __V>) -> (#out_ty, #pb_ty) {
                    #binds
                    let (__y, __pullback) = #vjp::<__V>(#(#args),*);
                    (__y, #pullback)
                }
                fn vjp_masked<__V: #krate::ArrayValue>(x: &#c::ArgsOf<Self, __V>, want: &[bool]) -> (#out_ty, #pb_ty) {
                    let __want: [bool; #n] = ::core::array::from_fn(|i| #c::is_wanted(want, i));
                    #binds
                    let (__y, __pullback) = #masked::<__V>(#(#args,)* __want);
                    (__y, #pullback)
                }
                #shapes
            }
            #grad_entries
        }
    }

    /// `ScalarFn1` for a function of one float returning one.
    pub(super) fn scalar_fn(&self) -> TokenStream {
        let Entries {
            krate,
            name,
            c,
            fwd,
            vjp,
            ..
        } = self;
        quote! {
            impl #krate::compose::ScalarFn1 for #name::Function {
                type S = #c;
                fn eval<__V: #krate::Value>(x: &__V) -> __V {
                    #fwd::<__V>(x)
                }
                fn vjp<__V: #krate::Value>(x: &__V) -> (__V, impl ::core::ops::FnOnce(__V) -> __V + use<__V>) {
                    let (__y, __pullback) = #vjp::<__V>(x);
                    (__y, move |__ct: __V| __pullback(__ct).0)
                }
            }
        }
    }
}
