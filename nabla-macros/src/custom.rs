//! `#[custom_op(jvp = .., vjp = .., batch = ..)]`: a user-defined
//! primitive. The annotated function is the forward computation on arrays
//! (it may call custom kernels); the rules are generic functions over the
//! value traits. Parameters that are not arrays are static (not
//! differentiated) and are passed to every rule after its usual arguments.
//! The expansion gives the op the same interface as a `#[differentiable]`
//! function (value, module, transform entry points), so it is called the
//! same way everywhere.

use crate::codegen;
use crate::ir::{Function, Kind, Output, Param, Tier, Var};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Pat, Path, ReturnType};

/// The batching rule option.
enum Batch {
    /// No rule: the runtime loops over the batch.
    Loop,
    /// `batch = elementwise`: the op runs once on the stacked, broadcast inputs.
    Elementwise,
    /// `batch = path`: the user's rule.
    Rule(Path),
}

/// Options: `jvp = path`, `vjp = path` (at least one), `batch = elementwise
/// | path`, `shard = last(k)`, and `crate = path`.
pub struct Rules {
    jvp: Option<Path>,
    vjp: Option<Path>,
    batch: Batch,
    /// `shard = last(k)`: the last `k` axes whole, the leading ones free.
    whole_last: Option<syn::LitInt>,
    krate: TokenStream,
}

/// Parses the attribute's arguments.
pub fn rules(attr: TokenStream) -> syn::Result<Rules> {
    let mut r = Rules {
        jvp: None,
        vjp: None,
        batch: Batch::Loop,
        whole_last: None,
        krate: quote!(::nabla),
    };
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("jvp") {
            r.jvp = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("vjp") {
            r.vjp = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("batch") {
            let p: Path = meta.value()?.parse()?;
            r.batch = if p.is_ident("elementwise") {
                Batch::Elementwise
            } else {
                Batch::Rule(p)
            };
        } else if meta.path.is_ident("shard") {
            let expr: syn::Expr = meta.value()?.parse()?;
            let k = match &expr {
                syn::Expr::Call(call) if call.args.len() == 1 => {
                    let named_last =
                        matches!(&*call.func, syn::Expr::Path(p) if p.path.is_ident("last"));
                    match call.args.first() {
                        Some(syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Int(k),
                            ..
                        })) if named_last => Some(k.clone()),
                        _ => None,
                    }
                }
                _ => None,
            };
            match k {
                Some(k) => r.whole_last = Some(k),
                None => {
                    return Err(syn::Error::new_spanned(
                        expr,
                        "`shard` takes `last(k)`: the op's last k axes must be whole on every rank, the leading (batch) axes may be split (e.g. `shard = last(1)` for an op over rows)",
                    ));
                }
            }
        } else if meta.path.is_ident("crate") {
            let p: Path = meta.value()?.parse()?;
            r.krate = quote!(#p);
        } else {
            return Err(meta.error(
                "unknown option; #[custom_op] takes `jvp = path`, `vjp = path`, `batch = elementwise | path` and `shard = last(k)`",
            ));
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, attr)?;
    Ok(r)
}

/// One parameter of the forward function.
struct Arg {
    ident: syn::Ident,
    ty: syn::Type,
    /// An array input (else a static parameter).
    array: bool,
    by_ref: bool,
}

/// The op's parameters; each is an array when its type mentions `Array`.
fn args(item: &ItemFn) -> syn::Result<Vec<Arg>> {
    let mut out = Vec::new();
    for arg in &item.sig.inputs {
        let FnArg::Typed(pt) = arg else {
            return Err(syn::Error::new(
                arg.span(),
                "a custom op is a free function of arrays (and static parameters), not a method",
            ));
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return Err(syn::Error::new(
                pt.pat.span(),
                "custom op parameters must be plain names",
            ));
        };
        let ty = &*pt.ty;
        let array = quote!(#ty).to_string().contains("Array");
        out.push(Arg {
            ident: pi.ident.clone(),
            ty: ty.clone(),
            array,
            by_ref: matches!(ty, syn::Type::Reference(_)),
        });
    }
    Ok(out)
}

/// Expands a custom op.
pub fn expand(r: Rules, item: &ItemFn) -> syn::Result<TokenStream> {
    let op = Op::new(&r, item)?;
    let value = op.value_and_module();
    let op_impl = op.custom_op_impl();
    let call = op.call_fn();
    let variants = op.variants();
    // The same interface as a #[differentiable] function.
    let f = op.function();
    let s = codegen::sig(&f);
    let entries = codegen::entries(&f, &s, &crate::analysis::analyse(&f));
    let callable = codegen::callable(&f, &s);
    Ok(quote! {
        #value
        #op_impl
        #call
        #variants
        #callable
        #entries
    })
}

/// One custom op being expanded.
struct Op<'a> {
    r: &'a Rules,
    item: &'a ItemFn,
    name: &'a syn::Ident,
    krate: &'a TokenStream,
    /// The parameters in order: arrays and statics.
    all: Vec<Arg>,
    /// The number of arrays.
    n: usize,
    /// `A<n>`: the op's arity.
    arity: syn::Ident,
}

impl<'a> Op<'a> {
    /// Checks the rules and the signature.
    fn new(r: &'a Rules, item: &'a ItemFn) -> syn::Result<Self> {
        let sig = &item.sig;
        let name = &sig.ident;
        if r.jvp.is_none() && r.vjp.is_none() {
            return Err(syn::Error::new(
                name.span(),
                "#[custom_op] needs its rules: `#[custom_op(jvp = my_jvp, vjp = my_vjp)]` (the JVP rule gives forward mode, the VJP rule reverse mode; with only one, the other modes panic saying which rule to add)",
            ));
        }
        let all = args(item)?;
        let n = all.iter().filter(|a| a.array).count();
        if n == 0 || n > 6 {
            return Err(syn::Error::new(
                sig.inputs.span(),
                "a custom op takes one to six arrays (`&Array` or `Array`), plus any static parameters",
            ));
        }
        if !matches!(&sig.output, ReturnType::Type(_, t) if quote!(#t).to_string().contains("Array"))
        {
            return Err(syn::Error::new(
                sig.ident.span(),
                "a custom op returns one `Array`",
            ));
        }
        Ok(Op {
            r,
            item,
            name,
            krate: &r.krate,
            all,
            n,
            arity: format_ident!("A{}", n),
        })
    }

    /// The hidden item `__nabla_<op>_<what>`.
    fn hidden(&self, what: &str) -> syn::Ident {
        format_ident!("__nabla_{}_{}", self.name, what)
    }

    /// The array parameters, in order.
    fn arrays(&self) -> impl Iterator<Item = &Arg> {
        self.all.iter().filter(|a| a.array)
    }

    /// The static parameters, in order.
    fn statics(&self) -> impl Iterator<Item = &Arg> {
        self.all.iter().filter(|a| !a.array)
    }

    /// The array parameters' names.
    fn array_names(&self) -> Vec<&syn::Ident> {
        self.arrays().map(|a| &a.ident).collect()
    }

    /// `0, 1, ..` for the arrays.
    fn idx(&self) -> Vec<syn::Index> {
        (0..self.n).map(syn::Index::from).collect()
    }

    /// `__V` once per array.
    fn vs(&self) -> Vec<TokenStream> {
        (0..self.n).map(|_| quote!(__V)).collect()
    }

    /// The statics of `self` (the op value), by value, for the rules.
    fn self_statics(&self) -> Vec<TokenStream> {
        (0..self.statics().count())
            .map(syn::Index::from)
            .map(|i| quote!(::core::clone::Clone::clone(&self.#i)))
            .collect()
    }

    /// The op value built from the static parameters in scope.
    fn make_op(&self) -> TokenStream {
        let name = self.name;
        let static_names = self.statics().map(|a| &a.ident);
        quote!(#name::Op(#(::core::clone::Clone::clone(&#static_names),)*))
    }

    /// Generic parameter lists in the original order: arrays become
    /// `&__V`, statics keep their type.
    fn gen_params(&self) -> Vec<TokenStream> {
        self.all
            .iter()
            .map(|a| {
                let (i, t) = (&a.ident, codegen::with_lifetime(&a.ty));
                if a.array {
                    quote!(#i: &__V)
                } else {
                    quote!(#i: #t)
                }
            })
            .collect()
    }

    /// The primal (the function as written), the op value with the user's
    /// docs, and the module holding `Op` and the variants.
    fn value_and_module(&self) -> TokenStream {
        let (name, vis) = (self.name, &self.item.vis);
        let name_str = name.to_string();
        let (primal, fwd, jvp, vjp) = (
            self.hidden("primal"),
            self.hidden("forward"),
            self.hidden("jvp"),
            self.hidden("vjp"),
        );
        let mut orig = self.item.clone();
        orig.sig.ident = primal.clone();
        orig.attrs.retain(|a| !a.path().is_ident("doc"));
        let docs = self.item.attrs.iter().filter(|a| a.path().is_ident("doc"));
        let static_tys = self.statics().map(|a| &a.ty);
        let reexport = codegen::names::reexport(vis);
        quote! {
            #[doc(hidden)]
            #orig

            #(#docs)*
            #[allow(non_upper_case_globals)]
            #vis const #name: #name::Function = #name::Function;

            #[doc = concat!("The custom op `", #name_str, "`: `Op` (its [`CustomOp`] impl, holding the static parameters) and the generated variants.")]
            #vis mod #name {
                #[allow(unused_imports)]
                use super::*;
                #reexport use super::{#primal as primal, #fwd as forward, #jvp as jvp, #vjp as vjp};
                /// The op's [`CustomOp`] implementation; its fields are the
                /// static parameters.
                #[derive(Clone)]
                #reexport struct Op(#(pub #static_tys,)*);
                /// The type of the op's function value.
                #[derive(Clone, Copy, Debug, Default)]
                #reexport struct Function;
            }
        }
    }

    /// `impl CustomOp for Op`: the forward function and the user's rules.
    fn custom_op_impl(&self) -> TokenStream {
        let (name, krate, arity) = (self.name, self.krate, &self.arity);
        let name_str = name.to_string();
        let primal = self.hidden("primal");
        let vs = self.vs();
        let array_tys = (0..self.n).map(|_| quote!(#krate::Array));
        // The forward function's arguments, in their original order, from
        // the array tuple `x` and the op value `self`.
        let (mut a_k, mut s_k) = (0usize, 0usize);
        let primal_args: Vec<TokenStream> = self
            .all
            .iter()
            .map(|a| {
                if a.array {
                    let i = syn::Index::from(a_k);
                    a_k += 1;
                    if a.by_ref {
                        quote!(&x.#i)
                    } else {
                        quote!(::core::clone::Clone::clone(&x.#i))
                    }
                } else {
                    let i = syn::Index::from(s_k);
                    s_k += 1;
                    quote!(::core::clone::Clone::clone(&self.#i))
                }
            })
            .collect();
        let (jvp_body, vjp_body) = self.rule_bodies();
        let batch_fn = self.batch_fn();
        let shard = self.r.whole_last.as_ref().map(|k| {
            quote!(const WHOLE_LAST: ::core::option::Option<usize> = ::core::option::Option::Some(#k);)
        });
        quote! {
            impl #krate::custom::CustomOp<#krate::compose::#arity> for #name::Op {
                const NAME: &'static str = #name_str;
                #shard
                fn forward(&self, x: &(#(#array_tys,)*)) -> #krate::Array {
                    #primal(#(#primal_args),*)
                }
                #[allow(unreachable_code)]
                fn jvp<__V: #krate::ArrayValue>(&self, x: &(#(#vs,)*), y: &__V, dx: &(#(::core::option::Option<#vs>,)*)) -> __V {
                    #jvp_body
                }
                #[allow(unreachable_code)]
                fn vjp<__V: #krate::ArrayValue>(&self, x: &(#(#vs,)*), y: &__V, ct: &__V) -> (#(#vs,)*) {
                    #vjp_body
                }
                #batch_fn
            }
        }
    }

    /// The bodies of `CustomOp::jvp` and `CustomOp::vjp`: the user's rule,
    /// or a panic naming the missing one.
    fn rule_bodies(&self) -> (TokenStream, TokenStream) {
        let krate = self.krate;
        let name_str = self.name.to_string();
        let (idx, vs, self_statics) = (self.idx(), self.vs(), self.self_statics());
        let jvp_body = match &self.r.jvp {
            Some(rule) => {
                quote!(#rule::<__V>(#(&x.#idx,)* y, #(dx.#idx.as_ref(),)* #(#self_statics),*))
            }
            None => quote!(#krate::custom::missing_rule(#name_str, "jvp")),
        };
        let vjp_body = match &self.r.vjp {
            // The value type is given explicitly, so a rule returning the wrong
            // number of cotangents is reported as exactly that.
            Some(rule) if self.n == 1 => {
                quote!((#rule::<__V>(#(&x.#idx,)* y, ct, #(#self_statics),*),))
            }
            Some(rule) => {
                let want = quote!((#(#vs,)*));
                let call = quote::quote_spanned!(rule.span()=> #rule::<__V>(#(&x.#idx,)* y, ct, #(#self_statics),*));
                let bind = quote::quote_spanned!(rule.span()=> let cts: #want = #call;);
                quote!({
                    #bind
                    cts
                })
            }
            None => quote!(#krate::custom::missing_rule(#name_str, "vjp")),
        };
        (jvp_body, vjp_body)
    }

    /// `CustomOp::batch`, from the `batch` option (none: the runtime loops).
    fn batch_fn(&self) -> TokenStream {
        let (krate, arity, n) = (self.krate, &self.arity, self.n);
        let (idx, vs, self_statics) = (self.idx(), self.vs(), self.self_statics());
        match &self.r.batch {
            Batch::Loop => quote!(),
            Batch::Elementwise => quote! {
                fn batch<__V: #krate::ArrayValue>(&self, x: &(#(#vs,)*), batched: &[bool]) -> ::core::option::Option<__V> {
                    ::core::option::Option::Some(#krate::custom::elementwise_batch::<Self, #krate::compose::#arity, __V>(self, x, batched))
                }
            },
            Batch::Rule(rule) => quote! {
                fn batch<__V: #krate::ArrayValue>(&self, x: &(#(#vs,)*), batched: &[bool]) -> ::core::option::Option<__V> {
                    let flags: [bool; #n] = ::core::array::from_fn(|i| batched[i]);
                    ::core::option::Option::Some(#rule::<__V>(#(&x.#idx,)* flags, #(#self_statics),*))
                }
            },
        }
    }

    /// The plain call (`op(&x, k)` through the function value): the op
    /// applied to its arrays.
    fn call_fn(&self) -> TokenStream {
        let (name, krate, arity, vis) = (self.name, self.krate, &self.arity, &self.item.vis);
        let call_fn = self.hidden("call");
        let ret = &self.item.sig.output;
        let user_types: Vec<&syn::Type> = self.all.iter().map(|a| &a.ty).collect();
        let user_names = self.all.iter().map(|a| &a.ident);
        let call_owned = self.arrays().map(|a| {
            let i = &a.ident;
            if a.by_ref {
                quote!(::core::clone::Clone::clone(#i))
            } else {
                quote!(#i)
            }
        });
        let make_op = self.make_op();
        quote! {
            #[doc(hidden)]
            #vis fn #call_fn(#(#user_names: #user_types),*) #ret {
                #krate::custom::call::<#name::Op, #krate::compose::#arity>(&#make_op, &(#(#call_owned,)*))
            }

            impl ::core::ops::Deref for #name::Function {
                type Target = fn(#(#user_types),*) #ret;
                fn deref(&self) -> &Self::Target {
                    &(#call_fn as fn(#(#user_types),*) #ret)
                }
            }
        }
    }

    /// The generic variants (`forward`, `vjp`, `vjp_masked`, `jvp`), each
    /// applying the op at the value type.
    fn variants(&self) -> TokenStream {
        let (name, krate, arity, vis) = (self.name, self.krate, &self.arity, &self.item.vis);
        let (fwd, vjp, masked, jvp) = (
            self.hidden("forward"),
            self.hidden("vjp"),
            self.hidden("vjp_masked"),
            self.hidden("jvp"),
        );
        let array_names = self.array_names();
        let user_names = self.all.iter().map(|a| &a.ident);
        let gen_params = self.gen_params();
        let dots: Vec<syn::Ident> = array_names
            .iter()
            .map(|i| format_ident!("{}_dot", i))
            .collect();
        let jvp_params = gen_params.iter().cloned().chain(
            dots.iter()
                .map(|d| quote!(#d: ::core::option::Option<&'__a __V>)),
        );
        // The pullback's cotangents in parameter order (`Static` for statics).
        let (mut a_k, np) = (0usize, self.all.len());
        let full_cts = self.all.iter().map(|a| {
            if a.array {
                let i = syn::Index::from(a_k);
                a_k += 1;
                quote!(__c.#i)
            } else {
                quote!(#krate::transforms::Static)
            }
        });
        let cts_ty: Vec<TokenStream> = self
            .all
            .iter()
            .map(|a| {
                if a.array {
                    quote!(__V)
                } else {
                    quote!(#krate::transforms::Static)
                }
            })
            .collect();
        let make_op = self.make_op();
        quote! {
            #[doc(hidden)]
            #vis fn #fwd<'__a, __V: #krate::ArrayValue + '__a>(#(#gen_params),*) -> __V {
                <__V as #krate::ArrayValue>::apply_custom::<#name::Op, #krate::compose::#arity>(&#make_op, &(#(::core::clone::Clone::clone(#array_names),)*))
            }

            #[doc(hidden)]
            #vis fn #vjp<'__a, __V: #krate::ArrayValue + '__a>(#(#gen_params),*)
                -> (__V, impl ::core::ops::FnOnce(__V) -> (#(#cts_ty,)*) + use<__V>)
            {
                let op = #make_op;
                let x = (#(::core::clone::Clone::clone(#array_names),)*);
                let y = <__V as #krate::ArrayValue>::apply_custom::<#name::Op, #krate::compose::#arity>(&op, &x);
                let out = ::core::clone::Clone::clone(&y);
                (y, move |ct: __V| {
                    let __c = <#name::Op as #krate::custom::CustomOp<#krate::compose::#arity>>::vjp::<__V>(&op, &x, &out, &ct);
                    (#(#full_cts,)*)
                })
            }

            #[doc(hidden)]
            #vis fn #masked<'__a, __V: #krate::ArrayValue + '__a>(#(#gen_params,)* __want: [bool; #np])
                -> (__V, impl ::core::ops::FnOnce(__V) -> (#(#cts_ty,)*) + use<__V>)
            {
                #vjp::<__V>(#(#user_names),*)
            }

            #[doc(hidden)]
            #vis fn #jvp<'__a, __V: #krate::ArrayValue + '__a>(#(#jvp_params),*) -> (__V, __V) {
                let d = (#(#krate::Dual::new(::core::clone::Clone::clone(#array_names), #dots.cloned()),)*);
                let y = <#krate::Dual<__V> as #krate::ArrayValue>::apply_custom::<#name::Op, #krate::compose::#arity>(&#make_op, &d);
                let t = y.tangent_or_zero();
                (y.primal, t)
            }
        }
    }

    /// The op as a [`Function`] with no body: what the entry points need to
    /// give it the interface of a `#[differentiable]` function.
    fn function(&self) -> Function {
        let mut k = 0usize;
        Function {
            vis: self.item.vis.clone(),
            ident: self.name.clone(),
            tier: Tier::Array,
            params: self
                .all
                .iter()
                .map(|a| Param {
                    ident: a.ident.clone(),
                    ty: a.ty.clone(),
                    var: a.array.then(|| {
                        k += 1;
                        k - 1
                    }),
                    by_ref: a.by_ref,
                    tree: None,
                })
                .collect(),
            vars: self
                .arrays()
                .map(|a| Var {
                    ident: a.ident.clone(),
                    kind: Kind::Value,
                })
                .collect(),
            body: Vec::new(),
            outputs: vec![Output::Value(0)],
            tuple_output: false,
            list_output: false,
            array_output: false,
            ret_ty: match &self.item.sig.output {
                ReturnType::Type(_, t) => (**t).clone(),
                ReturnType::Default => unreachable!("checked"),
            },
            krate: self.krate.clone(),
            user_idents: Default::default(),
            method: false,
            promoted: false,
        }
    }
}
