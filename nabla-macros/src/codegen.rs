//! Code generation: assembles the generated items for one function.
//!
//! For `fn foo` the output is, at the function's own level:
//!
//! * `const foo: foo::Function` — the function value: it dereferences to a
//!   plain `fn` pointer (so `foo(&x)` works) and implements the transform
//!   traits (so `nabla::grad(foo)` works);
//! * `mod foo` — `Function` and the variants: `primal` (the body as
//!   written), `forward::<V>` (generic A-normal form), `jvp::<V>` (forward
//!   at `Dual<V>`), `vjp::<V>` (forward sweep + reverse-sweep closure);
//! * hidden `__nabla_foo_*` items holding those variants and the monomorphic
//!   entry points of `grad`, `value_and_grad`, `vjp` and `jvp` (they live at
//!   the function's level so every path in the body resolves as written).

use crate::ir::{Function, Output, ScalarTy, Tier};
use crate::{activity, forward, vjp};
use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use syn::{ItemFn, Type, Visibility};

/// Signature pieces shared by the generic variants.
pub struct Sig {
    pub generic_params: Vec<TokenStream>,
    pub bound: TokenStream,
    pub out_ty: TokenStream,
    pub out_ct_ty: TokenStream,
    pub arg_cts_ty: TokenStream,
    pub owned_params: Vec<TokenStream>,
    pub vis: Visibility,
}

/// Gives every top-level reference in a type the lifetime `'__a`.
pub fn with_lifetime(ty: &Type) -> TokenStream {
    match ty {
        Type::Reference(r) => {
            let (m, elem) = (&r.mutability, &r.elem);
            quote!(&'__a #m #elem)
        }
        Type::Tuple(t) => {
            let elems = t.elems.iter().map(with_lifetime);
            quote!((#(#elems,)*))
        }
        other => other.to_token_stream(),
    }
}

fn concrete(f: &Function) -> TokenStream {
    let krate = &f.krate;
    match f.tier {
        Tier::Array => quote!(#krate::Array),
        Tier::Scalar(ScalarTy::F64) => quote!(f64),
        Tier::Scalar(ScalarTy::F32) => quote!(f32),
    }
}

pub(crate) fn sig(f: &Function) -> Sig {
    let krate = &f.krate;
    let bound = match f.tier {
        Tier::Array => quote!(#krate::ArrayValue),
        Tier::Scalar(_) => quote!(#krate::Value),
    };
    let mut generic_params = Vec::new();
    let mut owned_params = Vec::new();
    for p in &f.params {
        let id = &p.ident;
        match (p.var, &p.tree) {
            (Some(v), Some(tree)) => {
                generic_params.push(quote!(#id: &#krate::tree::TreeArg<'_, #tree, __V>));
                let var = f.name(v);
                owned_params.push(quote!(let #var: ::std::vec::Vec<__V> = ::core::clone::Clone::clone(&#id.leaves);));
            }
            (Some(v), None) => {
                generic_params.push(quote!(#id: &__V));
                let var = f.name(v);
                owned_params.push(quote!(let #var: __V = ::core::clone::Clone::clone(#id);));
            }
            (None, _) => {
                let ty = with_lifetime(&p.ty);
                generic_params.push(quote!(#id: #ty));
            }
        }
    }
    let out_items: Vec<TokenStream> = f
        .outputs
        .iter()
        .map(|o| match o {
            Output::Value(_) => quote!(__V),
            Output::Static(_, ty) => with_lifetime(ty),
        })
        .collect();
    let ct_items: Vec<TokenStream> = f
        .outputs
        .iter()
        .map(|o| match o {
            Output::Value(_) => quote!(::core::option::Option<__V>),
            Output::Static(..) => quote!(()),
        })
        .collect();
    let (out_ty, out_ct_ty) = if f.tuple_output {
        (quote!((#(#out_items,)*)), quote!((#(#ct_items,)*)))
    } else {
        (quote!(#(#out_items)*), quote!(__V))
    };
    let arg_cts = f.params.iter().map(|p| {
        if p.tree.is_some() {
            quote!(::std::vec::Vec<__V>)
        } else if p.var.is_some() {
            quote!(__V)
        } else {
            quote!(#krate::transforms::Static)
        }
    });
    Sig {
        generic_params,
        bound,
        out_ty,
        out_ct_ty,
        arg_cts_ty: quote!((#(#arg_cts,)*)),
        owned_params,
        vis: f.vis.clone(),
    }
}

/// Everything generated for one annotated function.
pub fn expand(f: &Function, item: &ItemFn) -> TokenStream {
    let krate = &f.krate;
    let name = &f.ident;
    let vis = &f.vis;
    let s = sig(f);
    let active = activity::active(f);
    let primal = format_ident!("__nabla_{}_primal", name);
    let fwd = format_ident!("__nabla_{}_forward", name);
    let jvp = format_ident!("__nabla_{}_jvp", name);
    let vjp_name = format_ident!("__nabla_{}_vjp", name);

    // The function as written (with `#[nondiff]` markers removed).
    let mut orig = item.clone();
    orig.sig.ident = primal.clone();
    orig.vis = vis.clone();
    crate::loop_attr::strip(&mut orig);
    for arg in orig.sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(pt) = arg {
            pt.attrs.retain(|a| !a.path().is_ident("nondiff"));
        }
    }
    let docs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    orig.attrs.retain(|a| !a.path().is_ident("doc"));
    let user_types: Vec<&Type> = f.params.iter().map(|p| &p.ty).collect();
    let ret_ty = &f.ret_ty;

    // forward::<V>
    let Sig {
        generic_params,
        bound,
        out_ty,
        owned_params,
        ..
    } = &s;
    let body = forward::body(f);
    let outs = vjp::outputs(f);
    let forward_fn = quote! {
        #[doc(hidden)]
        #[allow(unused_variables, clippy::all)]
        #vis fn #fwd<'__a, __V: #bound + '__a>(#(#generic_params),*) -> #out_ty {
            #(#owned_params)*
            #body
            #outs
        }
    };

    // jvp::<V>: forward at Dual<V>.
    let dual = quote!(#krate::Dual<__V>);
    let tangent_params: Vec<TokenStream> = f
        .params
        .iter()
        .filter(|p| p.var.is_some())
        .map(|p| {
            let t = format_ident!("{}_dot", p.ident);
            if p.tree.is_some() {
                quote!(#t: ::core::option::Option<&'__a [__V]>)
            } else {
                quote!(#t: ::core::option::Option<&'__a __V>)
            }
        })
        .collect();
    let dual_args: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            let id = &p.ident;
            if p.var.is_some() {
                let d = format_ident!("__dual_{}", id);
                quote!(&#d)
            } else {
                quote!(#id)
            }
        })
        .collect();
    let dual_binds = f.params.iter().filter(|p| p.var.is_some()).map(|p| {
        let (id, d, t) = (
            &p.ident,
            format_ident!("__dual_{}", p.ident),
            format_ident!("{}_dot", p.ident),
        );
        if p.tree.is_some() {
            quote! {
                let #d = #krate::tree::TreeArg {
                    skeleton: #id.skeleton,
                    leaves: #id.leaves.iter().enumerate().map(|(__i, __l)| {
                        #krate::Dual::new(::core::clone::Clone::clone(__l), #t.map(|__t| ::core::clone::Clone::clone(&__t[__i])))
                    }).collect(),
                };
            }
        } else {
            quote!(let #d = #krate::Dual::new(::core::clone::Clone::clone(#id), #t.cloned());)
        }
    });
    let (jvp_ret, jvp_split) = if f.tuple_output {
        let prim = f.outputs.iter().enumerate().map(|(i, o)| {
            let idx = syn::Index::from(i);
            match o {
                Output::Value(_) => quote!(__y.#idx.primal),
                Output::Static(..) => quote!(__y.#idx),
            }
        });
        let tan = f.outputs.iter().enumerate().map(|(i, o)| {
            let idx = syn::Index::from(i);
            match o {
                Output::Value(_) => quote!(__y.#idx.tangent_or_zero()),
                Output::Static(..) => quote!(()),
            }
        });
        let tan_ty = f.outputs.iter().map(|o| match o {
            Output::Value(_) => quote!(__V),
            Output::Static(..) => quote!(()),
        });
        (
            quote!((#out_ty, (#(#tan_ty,)*))),
            quote!({ let __t = (#(#tan,)*); ((#(#prim,)*), __t) }),
        )
    } else {
        (
            quote!((__V, __V)),
            quote!({
                let __t = __y.tangent_or_zero();
                (__y.primal, __t)
            }),
        )
    };
    let jvp_generic: Vec<TokenStream> = generic_params
        .iter()
        .cloned()
        .chain(tangent_params)
        .collect();
    let jvp_fn = quote! {
        #[doc(hidden)]
        #[allow(unused_variables, clippy::all)]
        #vis fn #jvp<'__a, __V: #bound + '__a>(#(#jvp_generic),*) -> #jvp_ret {
            #(#dual_binds)*
            let __y = #fwd::<#dual>(#(#dual_args),*);
            #jvp_split
        }
    };

    let vjp_fn = vjp::vjp_fn(f, &active, &s);
    let vjp_tail_fn = tail_of(f).map(|t| vjp::vjp_tail_fn(f, &active, &s, &t));
    let entries = entries(f, &s);

    let reexport = match vis {
        Visibility::Inherited => quote!(pub(super)),
        Visibility::Public(_) => quote!(pub),
        Visibility::Restricted(_) => quote!(pub(crate)),
    };
    let module_doc = format!(
        "Generated variants of the differentiable function [`{name}`](const@{name}): `primal` (as written), \
         `forward::<V>`, `jvp::<V>` and `vjp::<V>`."
    );
    quote! {
        #[doc(hidden)]
        #orig
        #forward_fn
        #jvp_fn
        #vjp_fn
        #vjp_tail_fn

        #(#docs)*
        #[allow(non_upper_case_globals)]
        #vis const #name: #name::Function = #name::Function;

        #[doc = #module_doc]
        #vis mod #name {
            #reexport use super::{#primal as primal, #fwd as forward, #jvp as jvp, #vjp_name as vjp};
            /// The type of the function value (see the constant of the same name).
            #[derive(Clone, Copy, Debug, Default)]
            #reexport struct Function;
        }

        impl ::core::ops::Deref for #name::Function {
            type Target = fn(#(#user_types),*) -> #ret_ty;
            fn deref(&self) -> &Self::Target {
                &(#primal as fn(#(#user_types),*) -> #ret_ty)
            }
        }

        #entries
    }
}

/// `[Array]` or `Vec<Array>`: a list of arrays.
fn is_list_of_arrays(ty: &Type) -> bool {
    let is_array = |t: &Type| matches!(t, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Array"));
    match ty {
        Type::Slice(s) => is_array(&s.elem),
        Type::Path(p) => p.path.segments.last().is_some_and(|s| {
            s.ident == "Vec"
                && matches!(&s.arguments, syn::PathArguments::AngleBracketed(a)
                    if matches!(a.args.first(), Some(syn::GenericArgument::Type(t)) if is_array(t)))
        }),
        _ => false,
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

/// Monomorphic entry points and the transform trait impls.
pub(crate) fn entries(f: &Function, s: &Sig) -> TokenStream {
    let krate = &f.krate;
    let tr = quote!(#krate::transforms);
    let private = quote!(#tr::private);
    let name = &f.ident;
    let vis = &s.vis;
    let c = concrete(f);
    let vjp_name = format_ident!("__nabla_{}_vjp", name);
    let jvp_name = format_ident!("__nabla_{}_jvp", name);
    let user_params: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            let (id, ty) = (&p.ident, with_lifetime(&p.ty));
            quote!(#id: #ty)
        })
        .collect();
    let user_types: Vec<TokenStream> = f.params.iter().map(|p| with_lifetime(&p.ty)).collect();
    let call_args: Vec<TokenStream> = f
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
    // Tree arguments travel as their leaves; their gradients are rebuilt
    // into the tree's own type.
    let tree_binds = per_tree(f, "", |id, r| {
        let t = format_ident!("__tree_{}", id);
        quote!(let #t = #krate::tree::TreeArg::new(#r);)
    });
    let rebuild = |skeleton: &dyn Fn(&syn::Ident) -> TokenStream| -> TokenStream {
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
    };
    let convert = rebuild(&|id| {
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
    let masked = format_ident!("__nabla_{}_vjp_masked", name);
    let np = f.params.len();
    let mut out = TokenStream::new();

    let single = !f.tuple_output && matches!(f.outputs[0], Output::Value(_));
    let aux = f.tuple_output
        && !f.list_output
        && f.outputs.len() == 2
        && matches!(f.outputs[0], Output::Value(_));
    let out_ty_c = {
        let items: Vec<TokenStream> = f
            .outputs
            .iter()
            .map(|o| match o {
                Output::Value(_) => c.clone(),
                Output::Static(_, ty) => with_lifetime(ty),
            })
            .collect();
        if f.tuple_output {
            quote!((#(#items,)*))
        } else {
            quote!(#(#items)*)
        }
    };

    if single || aux {
        let (marker, seed, value, aux_ty, aux_val) = if single {
            (
                quote!(#tr::NoAux),
                quote!(#private::Seed::seed(&__y, __op)),
                quote!(__y),
                None,
                None,
            )
        } else {
            let second = match &f.outputs[1] {
                Output::Value(_) => quote!(::core::option::Option::None),
                Output::Static(..) => quote!(()),
            };
            let aux_ty = match &f.outputs[1] {
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
        let grad_fn = format_ident!("__nabla_{}_grad", name);
        let vg_fn = format_ident!("__nabla_{}_value_and_grad", name);
        let (grad_ret, grad_val) = match (&aux_ty, &aux_val) {
            (Some(t), Some(v)) => (quote!((#sel, #t)), quote!((__g, #v))),
            _ => (quote!(#sel), quote!(__g)),
        };
        let value_ret = if single { c.clone() } else { out_ty_c.clone() };
        out.extend(quote! {
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
        });
    }

    // Functions of one to six arrays (or of one float) returning one value
    // join the composable transforms (vmap, jacfwd, jacrev, hessian, nested
    // grad).
    let all_arrays = !f.params.is_empty()
        && f.params.len() <= 6
        && f.params.iter().all(|p| p.var.is_some() && p.tree.is_none());
    let fwd = format_ident!("__nabla_{}_forward", name);
    if composable(f) {
        let n = f.params.len();
        let arity = format_ident!("A{}", n);
        let idx: Vec<syn::Index> = (0..n).map(syn::Index::from).collect();
        let vs: Vec<TokenStream> = (0..n).map(|_| quote!(__V)).collect();
        // With an output-only tail, callers that need only the output's
        // shape skip it.
        let shapes = tail_of(f).map(|_| {
            let tail = format_ident!("__nabla_{}_vjp_tail", name);
            quote! {
                fn vjp_masked_shapes<__V: #krate::ArrayValue>(x: &(#(#vs,)*), want: &[bool]) -> (#krate::compose::OutSpec, impl ::core::ops::FnOnce(__V) -> (#(#vs,)*) + use<__V>) {
                    let __want: [bool; #n] = ::core::array::from_fn(|i| #krate::compose::is_wanted(want, i));
                    #tail::<__V>(#(&x.#idx,)* __want)
                }
            }
        });
        out.extend(quote! {
            impl #krate::compose::DiffFn for #name::Function {
                type Arity = #krate::compose::#arity;
                type Out = #krate::compose::One;
                fn eval<__V: #krate::ArrayValue>(x: &(#(#vs,)*)) -> __V {
                    #fwd::<__V>(#(&x.#idx),*)
                }
                fn vjp<__V: #krate::ArrayValue>(x: &(#(#vs,)*)) -> (__V, impl ::core::ops::FnOnce(__V) -> (#(#vs,)*) + use<__V>) {
                    #vjp_name::<__V>(#(&x.#idx),*)
                }
                fn vjp_masked<__V: #krate::ArrayValue>(x: &(#(#vs,)*), want: &[bool]) -> (__V, impl ::core::ops::FnOnce(__V) -> (#(#vs,)*) + use<__V>) {
                    let __want: [bool; #n] = ::core::array::from_fn(|i| #krate::compose::is_wanted(want, i));
                    #masked::<__V>(#(&x.#idx,)* __want)
                }
                #shapes
            }
        });
    }
    // `fn f(args: &[Array]) -> Vec<Array>` returning `vec![..]` (the seed's
    // form) joins them as a list function: the list of arrays in, the list
    // of outputs out. Generated code reads the list through a `TreeArg`
    // whose skeleton only gives positions, so a list of placeholders of the
    // right length stands in for it.
    if list_fn(f) {
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
        let shapes = tail_of(f).map(|_| {
            let tail = format_ident!("__nabla_{}_vjp_tail", name);
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
        out.extend(quote! {
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
                    let (__y, __pullback) = #vjp_name::<__V>(&__t);
                    (::std::vec![#(__y.#idx),*], #list_pullback)
                }
                #shapes
            }
        });
    }
    if single && f.params.len() == 1 && all_arrays && matches!(f.tier, Tier::Scalar(_)) {
        out.extend(quote! {
            impl #krate::compose::ScalarFn1 for #name::Function {
                type S = #c;
                fn eval<__V: #krate::Value>(x: &__V) -> __V {
                    #fwd::<__V>(x)
                }
                fn vjp<__V: #krate::Value>(x: &__V) -> (__V, impl ::core::ops::FnOnce(__V) -> __V + use<__V>) {
                    let (__y, __pullback) = #vjp_name::<__V>(x);
                    (__y, move |__ct: __V| __pullback(__ct).0)
                }
            }
        });
    }

    if single {
        // vjp(f): output and a boxed pullback over the differentiable args.
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
        let vjp_entry = format_ident!("__nabla_{}_vjp_entry", name);
        let has_refs = f.params.iter().any(|p| matches!(p.ty, Type::Reference(_)));
        let lt = if has_refs {
            quote!('__a)
        } else {
            quote!('static)
        };
        let pb_ty = quote!(::std::boxed::Box<dyn ::core::ops::FnOnce(&#c) -> #user_cts + #lt>);
        // jvp(f): (primals, tangents) -> (output, tangent).
        let jvp_entry = format_ident!("__nabla_{}_jvp_entry", name);
        let prim_names: Vec<&syn::Ident> = f.params.iter().map(|p| &p.ident).collect();
        let tan_names: Vec<syn::Ident> = f
            .params
            .iter()
            .filter(|p| p.var.is_some())
            .map(|p| format_ident!("{}_dot", p.ident))
            .collect();
        let tan_types: Vec<TokenStream> = f
            .params
            .iter()
            .filter(|p| p.var.is_some())
            .map(|p| with_lifetime(&p.ty))
            .collect();
        let tan_args: Vec<TokenStream> = f
            .params
            .iter()
            .filter(|p| p.var.is_some())
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
        let owned_skeletons = per_tree(f, "", |id, r| {
            let o = format_ident!("__skeleton_{}", id);
            quote!(let #o = ::std::borrow::ToOwned::to_owned(#r);)
        });
        let convert_owned = rebuild(&|id| {
            let o = format_ident!("__skeleton_{}", id);
            quote!(&#o)
        });
        out.extend(quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #vjp_entry<'__a>(#(#user_params),*) -> (#c, #pb_ty) {
                #tree_binds
                #owned_skeletons
                let (__y, __pullback) = #vjp_name::<#c>(#(#call_args),*);
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
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #jvp_entry<'__a>(__primals: (#(#user_types,)*), __tangents: (#(#tan_types,)*)) -> (#c, #c) {
                let (#(#prim_names,)*) = __primals;
                let (#(#tan_names,)*) = __tangents;
                #tree_binds
                #tangent_leaves
                #jvp_name::<#c>(#(#call_args,)* #(#tan_args),*)
            }
            impl #tr::JvpFn for #name::Function {
                type Ptr = for<'__a> fn((#(#user_types,)*), (#(#tan_types,)*)) -> (#c, #c);
                const PTR: &'static Self::Ptr = &(#jvp_entry as for<'__a> fn((#(#user_types,)*), (#(#tan_types,)*)) -> (#c, #c));
            }
        });
    }
    out
}

/// Whether `f` joins the composable transforms as a function of one to six
/// arrays returning one array (`impl DiffFn`).
fn composable(f: &Function) -> bool {
    !f.tuple_output
        && matches!(f.outputs[0], Output::Value(_))
        && f.tier == Tier::Array
        && !f.params.is_empty()
        && f.params.len() <= 6
        && f.params.iter().all(|p| p.var.is_some() && p.tree.is_none())
}

/// `fn f(args: &[Array]) -> Vec<Array>` returning `vec![..]`: a list
/// function (`DiffFn` with `AList` arity and `List` output).
fn list_fn(f: &Function) -> bool {
    f.list_output
        && f.tier == Tier::Array
        && f.params.len() == 1
        && f.params[0].var.is_some()
        && f.params[0].tree.as_ref().is_some_and(is_list_of_arrays)
}

/// The output-only tail of a composable or list function, if it has one
/// (then it gets a `vjp_tail` program and `DiffFn::vjp_masked_shapes`).
fn tail_of(f: &Function) -> Option<crate::tail::Tail> {
    if composable(f) || list_fn(f) {
        crate::tail::analyse(f)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    /// The expansion of a small function stays readable: one forward line
    /// per operation, one guarded reverse line per active input. (Reviewed
    /// in docs/generated-code.md; not golden-locked to formatting.)
    #[test]
    fn small_function_expansion_is_readable() {
        let item: syn::ItemFn = syn::parse_quote! {
            fn f(x: &Array, w: &Array) -> Array {
                let h = x.matmul(w).tanh();
                nabla::sum(&(&h * &h))
            }
        };
        let opts = crate::parse::Options {
            krate: quote::quote!(::nabla),
        };
        let f = crate::parse::lower(&item, &opts).expect("lowers");
        let code = super::expand(&f, &item).to_string();
        if std::env::var_os("NABLA_PRINT_EXPANSION").is_some() {
            println!("{code}");
        }
        for piece in [
            "let __matmul1 = :: nabla :: rules :: matmul :: forward (& x_1 , & w_1 ,)",
            "let __tanh1 = :: nabla :: rules :: tanh :: forward (& __matmul1 ,)",
            "if let :: core :: option :: Option :: Some (__g) = __ct___mul1 . take ()",
            ":: nabla :: rules :: mul :: vjp_0 (& __tanh1 , & __tanh1 , & __mul1 , & __g)",
            ":: nabla :: rules :: matmul :: vjp_1 (& x_1 , & w_1 , & __matmul1 , & __g)",
            "const f : f :: Function = f :: Function",
            // The output-only tail (`h * h` and the sum) in `vjp_tail`.
            "let __shape___sum1 = :: nabla :: rules :: tail :: sum :: out_shape (& __shape___mul1 ,)",
            ":: nabla :: rules :: tail :: fit (:: nabla :: rules :: tail :: mul :: vjp_0 (& __tanh1 , & __tanh1 , & __g) , & __shape___tanh1)",
        ] {
            assert!(code.contains(piece), "expansion lacks `{piece}`:\n{code}");
        }
    }
}
