//! The monomorphic entry points and the transform trait impls on the
//! function value's type:
//!
//! * `GradFn` / `ValueAndGradFn` (`grad`, `value_and_grad`), for one output
//!   or an output with aux;
//! * `DiffFn` (the composable transforms: `vmap`, `jacfwd`, `jacrev`,
//!   `hessian`, nested `grad`), for a function of one to six arrays or a
//!   list function, with `vjp_masked_shapes` when it has an output-only
//!   tail; `ScalarFn1` for a function of one float;
//! * `VjpFn` / `JvpFn` (`vjp`, `jvp`), for one output.

use super::names;
use super::sig::{Sig, concrete, with_lifetime};
use crate::analysis::Analysis;
use crate::ir::{Function, Output, Tier};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use syn::Type;

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
    let all_arrays = !f.params.is_empty()
        && f.params.len() <= 6
        && f.params.iter().all(|p| p.var.is_some() && p.tree.is_none());
    if e.single && f.params.len() == 1 && all_arrays && matches!(f.tier, Tier::Scalar(_)) {
        out.extend(e.scalar_fn());
    }
    if e.single {
        out.extend(e.vjp_entry());
        out.extend(e.jvp_entry());
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
    fn new(f: &'a Function, s: &'a Sig) -> Self {
        let krate = &f.krate;
        let tr = quote!(#krate::transforms);
        let private = quote!(#tr::private);
        let c = concrete(f);
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
            quote!(let #t = #krate::tree::TreeArg::new(#r);)
        });
        let convert = rebuild(f, |id| {
            let t = format_ident!("__tree_{}", id);
            quote!(#t.skeleton)
        });
        let cts_c = {
            let items = f.params.iter().map(|p| {
                if let Some(tree) = &p.tree {
                    quote!(<#tree as #krate::tree::Tree>::Grad)
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

    /// `grad` and `value_and_grad`: the masked VJP seeded with the output
    /// (the first output with aux), the wanted cotangents selected.
    fn grad(&self) -> TokenStream {
        let Entries {
            vis,
            tr,
            private,
            name,
            c,
            masked,
            user_params,
            user_types,
            call_args,
            tree_binds,
            convert,
            cts_c,
            sel,
            ..
        } = self;
        let (marker, seed, value, aux_ty, aux_val) = if self.single {
            (
                quote!(#tr::NoAux),
                quote!(#private::Seed::seed(&__y, __op)),
                quote!(__y),
                None,
                None,
            )
        } else {
            let second = match &self.f.outputs[1] {
                Output::Value(_) => quote!(::core::option::Option::None),
                Output::Static(..) => quote!(()),
            };
            let aux_ty = match &self.f.outputs[1] {
                Output::Value(_) => c.clone(),
                Output::Static(_, ty) => with_lifetime(ty),
            };
            (
                quote!(#tr::HasAux),
                quote!((::core::option::Option::Some(#private::Seed::seed(&__y.0, __op)), #second)),
                quote!(__y),
                Some(aux_ty),
                Some(quote!(__y.1)),
            )
        };
        let grad_fn = names::item(self.f, "grad");
        let vg_fn = names::item(self.f, "value_and_grad");
        let (grad_ret, grad_val) = match (&aux_ty, &aux_val) {
            (Some(t), Some(v)) => (quote!((#sel, #t)), quote!((__g, #v))),
            _ => (quote!(#sel), quote!(__g)),
        };
        let value_ret = if self.single {
            c.clone()
        } else {
            self.out_ty_c()
        };
        let np = self.f.params.len();
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #grad_fn<'__a, __A: #tr::Select<#cts_c>>(#(#user_params),*) -> #grad_ret {
                let __op = "grad";
                #tree_binds
                let mut __want = [false; #np];
                for &__i in <__A as #tr::Select<#cts_c>>::INDICES {
                    __want[__i] = true;
                }
                let (__y, __pullback) = #masked::<#c>(#(#call_args,)* __want);
                let __seed = #seed;
                let __all = __pullback(__seed);
                #convert
                let __g = <__A as #tr::Select<#cts_c>>::select(&__all);
                #grad_val
            }
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #vg_fn<'__a, __A: #tr::Select<#cts_c>>(#(#user_params),*) -> (#value_ret, #sel) {
                let __op = "value_and_grad";
                #tree_binds
                let mut __want = [false; #np];
                for &__i in <__A as #tr::Select<#cts_c>>::INDICES {
                    __want[__i] = true;
                }
                let (__y, __pullback) = #masked::<#c>(#(#call_args,)* __want);
                let __seed = #seed;
                let __value = ::core::clone::Clone::clone(&#value);
                let __all = __pullback(__seed);
                #convert
                (__value, <__A as #tr::Select<#cts_c>>::select(&__all))
            }
            impl<__A: #tr::Select<#cts_c> + 'static> #tr::GradFn<__A, #marker> for #name::Function
            where #sel: 'static
            {
                type Ptr = for<'__a> fn(#(#user_types),*) -> #grad_ret;
                const PTR: &'static Self::Ptr = &(#grad_fn::<__A> as for<'__a> fn(#(#user_types),*) -> #grad_ret);
            }
            impl<__A: #tr::Select<#cts_c> + 'static> #tr::ValueAndGradFn<__A, #marker> for #name::Function
            where #sel: 'static
            {
                type Ptr = for<'__a> fn(#(#user_types),*) -> (#value_ret, #sel);
                const PTR: &'static Self::Ptr = &(#vg_fn::<__A> as for<'__a> fn(#(#user_types),*) -> (#value_ret, #sel));
            }
        }
    }

    /// `DiffFn` for a function of one to six arrays returning one array.
    fn diff_fn(&self, has_tail: bool) -> TokenStream {
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
    fn list_diff_fn(&self, has_tail: bool) -> TokenStream {
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
            let __t: #krate::tree::TreeArg<'_, #tree, __V> =
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

    /// `ScalarFn1` for a function of one float returning one.
    fn scalar_fn(&self) -> TokenStream {
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

    /// `vjp(f)`: the output and a boxed pullback over the differentiable
    /// arguments.
    fn vjp_entry(&self) -> TokenStream {
        let Entries {
            f,
            vis,
            krate,
            tr,
            name,
            c,
            vjp,
            user_params,
            user_types,
            call_args,
            tree_binds,
            ..
        } = self;
        let diff: Vec<usize> = f
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.var.is_some())
            .map(|(i, _)| i)
            .collect();
        let ct_ty = |i: &usize| match &f.params[*i].tree {
            Some(tree) => quote!(<#tree as #krate::tree::Tree>::Grad),
            None => c.clone(),
        };
        let user_cts = if diff.len() == 1 {
            ct_ty(&diff[0])
        } else {
            let cs = diff.iter().map(ct_ty);
            quote!((#(#cs,)*))
        };
        let pick = if diff.len() == 1 {
            let i = syn::Index::from(diff[0]);
            quote!(__all.#i)
        } else {
            let is = diff.iter().map(|&i| syn::Index::from(i));
            quote!((#(__all.#is,)*))
        };
        let vjp_entry = names::item(f, "vjp_entry");
        let has_refs = f.params.iter().any(|p| matches!(p.ty, Type::Reference(_)));
        let lt = if has_refs {
            quote!('__a)
        } else {
            quote!('static)
        };
        let pb_ty = quote!(::std::boxed::Box<dyn ::core::ops::FnOnce(&#c) -> #user_cts + #lt>);
        let owned_skeletons = per_tree(f, "", |id, r| {
            let o = format_ident!("__skeleton_{}", id);
            quote!(let #o = ::std::borrow::ToOwned::to_owned(#r);)
        });
        let convert_owned = rebuild(f, |id| {
            let o = format_ident!("__skeleton_{}", id);
            quote!(&#o)
        });
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #vjp_entry<'__a>(#(#user_params),*) -> (#c, #pb_ty) {
                #tree_binds
                #owned_skeletons
                let (__y, __pullback) = #vjp::<#c>(#(#call_args),*);
                (__y, ::std::boxed::Box::new(move |__ct: &#c| {
                    let __all = __pullback(::core::clone::Clone::clone(__ct));
                    #convert_owned
                    #pick
                }))
            }
            impl #tr::VjpFn for #name::Function {
                type Ptr = for<'__a> fn(#(#user_types),*) -> (#c, #pb_ty);
                const PTR: &'static Self::Ptr = &(#vjp_entry as for<'__a> fn(#(#user_types),*) -> (#c, #pb_ty));
            }
        }
    }

    /// `jvp(f)`: (primals, tangents) → (output, tangent).
    fn jvp_entry(&self) -> TokenStream {
        let Entries {
            f,
            vis,
            krate,
            tr,
            name,
            c,
            jvp,
            user_types,
            call_args,
            tree_binds,
            ..
        } = self;
        let jvp_entry = names::item(f, "jvp_entry");
        let prim_names: Vec<&syn::Ident> = f.params.iter().map(|p| &p.ident).collect();
        let diff = || f.params.iter().filter(|p| p.var.is_some());
        let tan_names: Vec<syn::Ident> = diff().map(|p| format_ident!("{}_dot", p.ident)).collect();
        let tan_types: Vec<TokenStream> = diff().map(|p| with_lifetime(&p.ty)).collect();
        let tan_args: Vec<TokenStream> = diff()
            .map(|p| {
                let t = format_ident!("{}_dot", p.ident);
                if p.tree.is_some() {
                    let l = format_ident!("__tangent_leaves_{}", p.ident);
                    quote!(::core::option::Option::Some(&#l[..]))
                } else if p.by_ref {
                    quote!(::core::option::Option::Some(#t))
                } else {
                    quote!(::core::option::Option::Some(&#t))
                }
            })
            .collect();
        let tangent_leaves = per_tree(f, "_dot", |id, r| {
            let l = format_ident!("__tangent_leaves_{}", id);
            quote!(let #l = #krate::tree::leaves(#r);)
        });
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #jvp_entry<'__a>(__primals: (#(#user_types,)*), __tangents: (#(#tan_types,)*)) -> (#c, #c) {
                let (#(#prim_names,)*) = __primals;
                let (#(#tan_names,)*) = __tangents;
                #tree_binds
                #tangent_leaves
                #jvp::<#c>(#(#call_args,)* #(#tan_args),*)
            }
            impl #tr::JvpFn for #name::Function {
                type Ptr = for<'__a> fn((#(#user_types,)*), (#(#tan_types,)*)) -> (#c, #c);
                const PTR: &'static Self::Ptr = &(#jvp_entry as for<'__a> fn((#(#user_types,)*), (#(#tan_types,)*)) -> (#c, #c));
            }
        }
    }
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
    let items = f.params.iter().enumerate().map(|(i, p)| {
        let idx = syn::Index::from(i);
        match &p.tree {
            Some(tree) => {
                let sk = skeleton(&p.ident);
                quote!(<#tree as #krate::tree::Tree>::rebuild(#sk, &mut __all.#idx.into_iter()))
            }
            None => quote!(__all.#idx),
        }
    });
    quote!(let __all = (#(#items,)*);)
}
