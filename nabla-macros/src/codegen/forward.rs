//! The forward program: the function's body in A-normal form, generic over
//! the value type. Instantiated at `Array` it is the ordinary function; at
//! `Dual<V>` it is the JVP; the VJP's forward sweep is the same program
//! keeping what its reverse sweep needs.

use super::held::owned_residuals;
use super::names::{self, branch_holders, carry, loop_iter, pullback, tape};
use super::reverse::{loop_residuals, residuals, static_flags, static_residuals};
use super::{reads, revolve};
use crate::ir::{CallArg, Callee, Function, Merge, Stmt};
use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, quote, quote_spanned};

/// Which program a statement is generated for.
#[derive(Clone, Copy)]
pub enum Mode<'a> {
    /// The plain forward program.
    Forward,
    /// The VJP's forward sweep: active calls keep their pullback and
    /// branches return their residuals. `active` is the activity analysis.
    Sweep { active: &'a [bool] },
}

/// Arguments of a call in generated code (values by reference).
pub fn call_args(f: &Function, args: &[CallArg]) -> Vec<TokenStream> {
    args.iter()
        .map(|a| match a {
            CallArg::Value(v) => match f.param_of(*v).filter(|p| p.tree.is_some()) {
                // A tree is passed on as the caller received it.
                Some(p) => p.ident.to_token_stream(),
                None => f.val(*v),
            },
            CallArg::Static(t) => t.clone(),
            CallArg::Part { tree, skel, range } => {
                let (krate, leaves, range) = (&f.krate, f.name(*tree), f.name(*range));
                quote!(&#krate::tree::part(&#skel, &#leaves, #range))
            }
        })
        .collect()
}

/// The forward statement for `stmt` (see [`Mode`]).
pub fn stmt(f: &Function, s: &Stmt, mode: Mode) -> TokenStream {
    match s {
        Stmt::Prim { .. } => prim(f, s),
        Stmt::Call { .. } => call(f, s, mode),
        Stmt::If { .. } => branch(f, s, mode),
        Stmt::For {
            cond, snapshots, ..
        } => match (mode, snapshots, cond) {
            (Mode::Sweep { active }, Some(snaps), None) => revolve::sweep(f, s, active, *snaps),
            _ => repeat(f, s, mode),
        },
        Stmt::Static { out, expr } | Stmt::Constant { out, expr } => {
            let out = f.name(*out);
            quote!(let #out = #expr;)
        }
        Stmt::Leaf { out, tree, index } => {
            let (out, tree, index) = (f.name(*out), f.name(*tree), f.name(*index));
            quote!(let #out = ::core::clone::Clone::clone(&#tree[#index]);)
        }
    }
}

/// The statements of a body. In the sweep, a primitive is followed by the
/// shapes its reverse steps read (`reads::shape_bindings`), each taken once
/// per body.
pub fn stmts(f: &Function, body: &[Stmt], mode: Mode) -> Vec<TokenStream> {
    let mut taken = vec![false; f.vars.len()];
    body.iter()
        .map(|t| {
            let s = stmt(f, t, mode);
            match mode {
                Mode::Forward => s,
                Mode::Sweep { active } => {
                    let shapes = reads::shape_bindings(f, t, active, &mut taken);
                    quote!(#s #shapes)
                }
            }
        })
        .collect()
}

/// `let out = rules::<op>::forward(inputs.., params..);`
fn prim(f: &Function, s: &Stmt) -> TokenStream {
    let Stmt::Prim {
        out,
        op,
        inputs,
        params,
        span,
    } = s
    else {
        return quote!();
    };
    let krate = &f.krate;
    let out = f.name(*out);
    let rule = syn::Ident::new(op.rule, *span);
    let ins = inputs.iter().map(|v| f.val(*v));
    let params = params.iter().map(param);
    // The call carries the operation's span, its path included: a shape
    // or dtype panic (`#[track_caller]` down to the check) points at the
    // user's code.
    let krate = respanned(krate, *span);
    if op.variadic {
        quote_spanned!(*span=> let #out = #krate::rules::#rule::forward(&[#(#ins),*], #(#params),*);)
    } else {
        quote_spanned!(*span=> let #out = #krate::rules::#rule::forward(#(#ins,)* #(#params),*);)
    }
}

/// A call of another differentiable function: its `forward`, or in the
/// sweep its `vjp` (keeping the pullback) when an output is active and the
/// call is not checkpointed.
fn call(f: &Function, s: &Stmt, mode: Mode) -> TokenStream {
    let Stmt::Call {
        outs,
        callee,
        args,
        arg_spans,
        span,
        id,
        checkpoint,
        ..
    } = s
    else {
        return quote!();
    };
    let names: Vec<_> = outs.iter().map(|v| f.name(*v)).collect();
    let pat = if names.len() == 1 {
        quote!(#(#names)*)
    } else {
        quote!((#(#names),*))
    };
    match mode {
        Mode::Sweep { active } if !*checkpoint && outs.iter().any(|&o| active[o]) => {
            let pb = pullback(*id);
            let vjp = match callee {
                // Only the cotangents that reach a wanted parameter.
                Callee::Fn(_) => masked_call(f, active, callee, args, arg_spans, *span),
                _ => callee_call(f, callee, args, arg_spans, true, *span),
            };
            quote!(let (#pat, #pb) = #vjp;)
        }
        _ => {
            let fwd = callee_call(f, callee, args, arg_spans, false, *span);
            quote!(let #pat = #fwd;)
        }
    }
}

/// The VJP call of the function `callee` on `args` asking cotangents only
/// for the arguments they can reach a wanted parameter from: an active
/// argument that is a parameter of `f` is wanted when `f`'s caller wants
/// that parameter (`__want`), another active one always, an inactive or
/// static one never.
fn masked_call(
    f: &Function,
    active: &[bool],
    callee: &Callee,
    args: &[CallArg],
    arg_spans: &[proc_macro2::Span],
    span: proc_macro2::Span,
) -> TokenStream {
    let Callee::Fn(path) = callee else {
        unreachable!("only functions have a masked VJP")
    };
    let flags = args.iter().map(|a| {
        let v = match a {
            CallArg::Value(v) => *v,
            CallArg::Part { tree, .. } => *tree,
            CallArg::Static(_) => return quote!(false),
        };
        if !active[v] {
            return quote!(false);
        }
        match f.params.iter().position(|p| p.var == Some(v)) {
            Some(k) => quote!(__want[#k]),
            None => quote!(true),
        }
    });
    let a = checked_args(f, args, arg_spans, span);
    let g = function(f, path);
    let at = callee_span(path);
    quote_spanned!(at=> #g.vjp_with_mask::<__V>(#(#a,)* [#(#flags),*]))
}

/// The call of `callee` on `args` at `__V`: its forward program, or (with
/// `vjp`) its output and pullback. A function is reached through its
/// value (`variants(&g).forward::<__V>(..)`, see [`function`]) and a
/// method through its part, each differentiable argument through
/// `value_arg` ([`checked_args`]), so a function that is not
/// `#[differentiable]` or a value given to a static parameter is one error
/// at the user's call; a transformed function value runs through
/// `nabla::compose::apply*`, which takes its arguments as owned values (a
/// static argument lifted to a constant value).
pub fn callee_call(
    f: &Function,
    callee: &Callee,
    args: &[CallArg],
    arg_spans: &[proc_macro2::Span],
    vjp: bool,
    span: proc_macro2::Span,
) -> TokenStream {
    let krate = &f.krate;
    let program =
        |plain: &str, with_vjp: &str| Ident::new(if vjp { with_vjp } else { plain }, span);
    match callee {
        Callee::Fn(path) => {
            let a = checked_args(f, args, arg_spans, span);
            let name = program("forward", "vjp");
            let g = function(f, path);
            let at = callee_span(path);
            quote_spanned!(at=> #g.#name::<__V>(#(#a),*))
        }
        Callee::Region(path) => {
            let a = call_args(f, args);
            let name = program("forward", "vjp");
            quote!(#path::#name::<__V>(#(#a),*))
        }
        Callee::Value(g) => {
            let a = owned_args(f, args);
            let name = program("apply", "apply_vjp");
            quote_spanned!(span=> #krate::compose::#name::<__V, _>(#g, (#(#a,)*)))
        }
        Callee::Jvp(g) => {
            let a = owned_args(f, args);
            let (primals, tangents) = a.split_at(a.len() / 2);
            let name = program("apply_jvp", "apply_jvp_vjp");
            quote_spanned!(span=> #krate::compose::#name::<__V, _>(#g, (#(#primals,)*), (#(#tangents,)*)))
        }
        Callee::Method(m) => {
            let a = checked_args(f, args, arg_spans, span);
            let Some(CallArg::Part { skel, .. }) = args.first() else {
                unreachable!("a method call's first argument is its receiver's part")
            };
            let name = names::method(m, if vjp { "vjp" } else { "forward" });
            quote!((&#skel).#name::<__V>(#(#a),*))
        }
    }
}

/// The function value `path` as the receiver of its generic programs:
/// `nabla::transforms::private::variants(&path)`, spanned at the path, so
/// a function that is not differentiable is reported there.
pub fn function(f: &Function, path: &syn::Path) -> TokenStream {
    let at = callee_span(path);
    let krate = respanned(&f.krate, at);
    quote_spanned!(at=> #krate::transforms::private::variants(&#path))
}

/// The span of a called function's name (the last segment of its path).
fn callee_span(path: &syn::Path) -> proc_macro2::Span {
    path.segments
        .last()
        .map_or_else(proc_macro2::Span::call_site, |s| s.ident.span())
}

/// [`call_args`] for a call of a function or method: each differentiable
/// value (not a tree) through `value_arg`, spanned at the user's argument,
/// where the compiler reports a value given to a static parameter.
pub fn checked_args(
    f: &Function,
    args: &[CallArg],
    arg_spans: &[proc_macro2::Span],
    span: proc_macro2::Span,
) -> Vec<TokenStream> {
    checked(f, args, call_args(f, args), arg_spans, span)
}

/// The arguments `toks` of a call (one per `args`) with each
/// differentiable value through `value_arg` (see [`checked_args`]).
pub fn checked(
    f: &Function,
    args: &[CallArg],
    toks: Vec<TokenStream>,
    arg_spans: &[proc_macro2::Span],
    span: proc_macro2::Span,
) -> Vec<TokenStream> {
    let krate = &f.krate;
    toks.into_iter()
        .zip(args)
        .enumerate()
        .map(|(k, (a, arg))| match arg {
            CallArg::Value(v) if f.vars[*v].kind == crate::ir::Kind::Value => {
                // The call at the user's argument, where the error points
                // (the argument's own tokens keep their hygiene).
                let at = arg_spans.get(k).copied().unwrap_or(span);
                let krate = respanned(krate, at);
                quote_spanned!(at=> #krate::transforms::private::value_arg(#a))
            }
            _ => a,
        })
        .collect()
}

/// The arguments of a transformed function value, owned: values cloned,
/// statics lifted to constants like the first value argument.
fn owned_args(f: &Function, args: &[CallArg]) -> Vec<TokenStream> {
    let krate = &f.krate;
    let like = args.iter().find_map(|a| match a {
        CallArg::Value(v) => Some(f.val(*v)),
        CallArg::Static(_) | CallArg::Part { .. } => None,
    });
    args.iter()
        .map(|a| match a {
            CallArg::Value(v) => {
                let x = f.val(*v);
                quote!(::core::clone::Clone::clone(#x))
            }
            CallArg::Static(t) => quote!(#krate::transforms::private::promote(#like, &(#t))),
            CallArg::Part { .. } => unreachable!("parts are passed to methods only"),
        })
        .collect()
}

/// An `if`: the merged variables from the branch taken; in the sweep also
/// its residuals, `Some` in the holder of the branch that ran.
fn branch(f: &Function, s: &Stmt, mode: Mode) -> TokenStream {
    let Stmt::If {
        cond,
        then_body,
        else_body,
        merges,
        id,
    } = s
    else {
        return quote!();
    };
    let outs: Vec<&Ident> = merges.iter().map(|m| f.name(m.out)).collect();
    let then_stmts = stmts(f, then_body, mode);
    let else_stmts = stmts(f, else_body, mode);
    let clone = |pick: fn(&Merge) -> usize| -> Vec<TokenStream> {
        merges
            .iter()
            .map(|m| {
                let v = f.val(pick(m));
                quote!(::core::clone::Clone::clone(#v))
            })
            .collect()
    };
    let (tv, ev) = (clone(|m| m.then_v), clone(|m| m.else_v));
    let Mode::Sweep { active } = mode else {
        return quote! {
            let (#(#outs,)*) = if #cond { #(#then_stmts)* (#(#tv,)*) } else { #(#else_stmts)* (#(#ev,)*) };
        };
    };
    let (th, eh) = branch_holders(*id);
    let held = |b: &[Stmt]| -> Vec<TokenStream> {
        let names: Vec<TokenStream> = residuals(f, b, active).iter().map(|i| quote!(#i)).collect();
        owned_residuals(f, &names, &static_flags(f, b, active))
    };
    let (tr, er) = (held(then_body), held(else_body));
    let some = quote!(::core::option::Option::Some);
    let none = quote!(::core::option::Option::None);
    quote! {
        let (#(#outs,)* #th, #eh) = if #cond {
            #(#then_stmts)*
            (#(#tv,)* #some((#(#tr,)*)), #none)
        } else {
            #(#else_stmts)*
            (#(#ev,)* #none, #some((#(#er,)*)))
        };
    }
}

/// The pieces of a (not checkpointed) loop shared by `for` and `while`.
struct Loop<'f> {
    /// The running carried values.
    cs: Vec<Ident>,
    /// Their values before the loop.
    inits: Vec<TokenStream>,
    /// Their names at the start of an iteration.
    phis: Vec<&'f Ident>,
    /// Their values at the end of an iteration.
    nexts: Vec<TokenStream>,
    /// Their names after the loop.
    outs: Vec<&'f Ident>,
    /// The body's statements.
    stmts: Vec<TokenStream>,
    /// In the sweep: the tape's declaration and the push of an iteration's
    /// residuals.
    tape_decl: TokenStream,
    push: TokenStream,
}

/// A `for` or `while` loop (see [`Stmt::For`]): the carried values live in
/// `mut` variables; in the sweep, each iteration's residuals are pushed on
/// the loop's tape.
fn repeat(f: &Function, s: &Stmt, mode: Mode) -> TokenStream {
    let Stmt::For {
        pat,
        iter,
        body,
        carried,
        id,
        cond,
        ..
    } = s
    else {
        return quote!();
    };
    let clone = |v| {
        let v = f.val(v);
        quote!(::core::clone::Clone::clone(#v))
    };
    let (tape_decl, push) = match mode {
        Mode::Forward => (quote!(), quote!()),
        Mode::Sweep { active } => {
            let t = tape(*id);
            // Statics are taped owned (a reference into a borrowed
            // static argument cannot outlive the call).
            let res = owned_residuals(
                f,
                &loop_residuals(f, pat, body, carried, active),
                &static_residuals(f, pat, body, carried, active),
            );
            (
                quote!(let mut #t = ::std::vec::Vec::new();),
                quote!(#t.push((#(#res,)*));),
            )
        }
    };
    let parts = Loop {
        cs: (0..carried.len()).map(|j| carry(*id, j)).collect(),
        inits: carried.iter().map(|c| clone(c.init)).collect(),
        phis: carried.iter().map(|c| f.name(c.phi)).collect(),
        nexts: carried.iter().map(|c| clone(c.next)).collect(),
        outs: carried.iter().map(|c| f.name(c.out)).collect(),
        stmts: stmts(f, body, mode),
        tape_decl,
        push,
    };
    match cond {
        None => for_loop(parts, pat, iter, *id, mode),
        Some((k, test)) => while_loop(parts, pat, iter, *id, *k, test),
    }
}

/// `for pat in iter { .. }`.
fn for_loop(l: Loop, pat: &TokenStream, iter: &TokenStream, id: usize, mode: Mode) -> TokenStream {
    let Loop {
        cs,
        inits,
        phis,
        nexts,
        outs,
        stmts,
        tape_decl,
        push,
    } = l;
    // The forward sweep sizes the tape from the iterator's
    // length hint (exact for ranges): no regrowth while taping.
    let (tape_decl, iter) = match mode {
        Mode::Forward => (tape_decl, iter.clone()),
        Mode::Sweep { .. } => {
            let (t, it) = (tape(id), loop_iter(id));
            (
                quote! {
                    let #it = ::core::iter::IntoIterator::into_iter(#iter);
                    let mut #t = ::std::vec::Vec::with_capacity(::core::iter::Iterator::size_hint(&#it).0);
                },
                it.to_token_stream(),
            )
        }
    };
    quote! {
        #tape_decl
        #(let mut #cs = #inits;)*
        for #pat in #iter {
            #(let #phis = #cs;)*
            #(#stmts)*
            #(#cs = #nexts;)*
            #push
        }
        #(let #outs = #cs;)*
    }
}

/// `while` (or a `for` with `break`): the condition's `k` statements, the
/// test, then the body. A `for` first takes its next item.
fn while_loop(
    l: Loop,
    pat: &TokenStream,
    iter: &TokenStream,
    id: usize,
    k: usize,
    test: &TokenStream,
) -> TokenStream {
    let Loop {
        cs,
        inits,
        phis,
        nexts,
        outs,
        stmts,
        tape_decl,
        push,
    } = l;
    let (head, tail) = stmts.split_at(k);
    let (it_decl, next) = if iter.to_string() == "()" {
        (quote!(), quote!())
    } else {
        let it = loop_iter(id);
        (
            quote!(let mut #it = ::core::iter::IntoIterator::into_iter(#iter);),
            quote!(let ::core::option::Option::Some(#pat) = ::core::iter::Iterator::next(&mut #it) else { break; };),
        )
    };
    quote! {
        #tape_decl
        #it_decl
        #(let mut #cs = #inits;)*
        loop {
            #next
            #(let #phis = #cs;)*
            #(#head)*
            if !(#test) {
                #(#cs = #phis;)*
                break;
            }
            #(#tail)*
            #(#cs = #nexts;)*
            #push
        }
        #(let #outs = #cs;)*
    }
}

/// `tokens` with every span set to `span`.
fn respanned(tokens: &TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut t| {
            if let proc_macro2::TokenTree::Group(g) = &t {
                let mut g2 = proc_macro2::Group::new(g.delimiter(), respanned(&g.stream(), span));
                g2.set_span(span);
                return proc_macro2::TokenTree::Group(g2);
            }
            t.set_span(span);
            t
        })
        .collect()
}

/// A static parameter of an operation. Parameters are evaluated in the
/// forward sweep and again in the reverse sweep, so a bare variable is
/// cloned rather than moved (a no-op for `Copy` values).
pub fn param(p: &TokenStream) -> TokenStream {
    let toks: Vec<proc_macro2::TokenTree> = p.clone().into_iter().collect();
    match &toks[..] {
        [proc_macro2::TokenTree::Ident(id)] if id != "true" && id != "false" => {
            quote!(::core::clone::Clone::clone(&#id))
        }
        _ => p.clone(),
    }
}

/// The whole forward body (without the return expression).
pub fn body(f: &Function) -> TokenStream {
    let stmts = f.body.iter().map(|s| stmt(f, s, Mode::Forward));
    quote!(#(#stmts)*)
}
