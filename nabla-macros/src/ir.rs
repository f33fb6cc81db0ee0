//! The intermediate representation: a function in A-normal form.
//!
//! Every intermediate value is a named variable ([`VarId`]) produced by one
//! [`Stmt`]. Variables are either *values* (the generic `__V` the function is
//! instantiated at: arrays, scalars, duals, ...) or *static* (ordinary Rust
//! values: integers, shapes, flags), which pass through every transform
//! untouched.

use crate::optable::OpSpec;
use proc_macro2::{Span, TokenStream};
use std::collections::HashSet;
use syn::{Ident, Path, Type, Visibility};

/// Index of a variable in [`Function::vars`].
pub type VarId = usize;

/// Whether a variable is transformed (`Value`) or passed through (`Static`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Value,
    Static,
    /// A tree parameter (struct of arrays, `Vec<Array>`, ...): read through
    /// its leaves (`p.w1`, `p.layers[i]`).
    Tree,
}

/// A variable: its generated (readable) name and its kind.
pub struct Var {
    pub ident: Ident,
    pub kind: Kind,
}

/// The value tier a function is generic over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Arguments are arrays: `__V: ArrayValue`, instantiated at `Array`.
    Array,
    /// Arguments are floats: `__V: Value`, instantiated at this float type.
    Scalar(ScalarTy),
}

/// `f32` or `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarTy {
    F32,
    F64,
}

/// A parameter of the annotated function.
pub struct Param {
    pub ident: Ident,
    /// The type as written by the user.
    pub ty: Type,
    /// `Some(var)` for differentiable parameters; `None` for static ones.
    pub var: Option<VarId>,
    /// For value parameters: whether the user's type is a reference.
    pub by_ref: bool,
    /// For tree parameters: the tree type without the reference.
    pub tree: Option<Type>,
}

impl Param {
    /// For a fixed-size array of floats (`[f64; N]`, `[[f64; N]; M]`): the
    /// number of its floats (`(N) * (M)`), the length of its leaves array
    /// in generated code (no heap).
    pub fn fixed_len(&self) -> Option<TokenStream> {
        let mut ty = self.tree.as_ref()?;
        let mut lens = Vec::new();
        while let Type::Array(a) = ty {
            lens.push(a.len.clone());
            ty = &a.elem;
        }
        let float = matches!(ty, Type::Path(p) if p.path.is_ident("f64") || p.path.is_ident("f32"));
        (float && !lens.is_empty()).then(|| quote::quote!(1usize #(* (#lens))*))
    }
}

/// One output of the function.
pub enum Output {
    Value(VarId),
    /// A static output: its tokens and its declared type.
    Static(TokenStream, Box<Type>),
}

/// What a [`Stmt::Call`] calls.
pub enum Callee {
    /// A `#[differentiable]` function or custom op, by its path: its
    /// `forward` and `vjp` variants.
    Fn(Path),
    /// A transformed function value (`nabla::vmap(f)`, `grad!(f, argnums =
    /// 1)`), through its composable programs (`nabla::compose::apply`).
    Value(TokenStream),
    /// `nabla::jvp(g)((x, ..), (t, ..))`: the arguments are `g`'s primals
    /// then its tangents; the outputs are `g`'s output and its tangent.
    Jvp(TokenStream),
    /// A fused region (`crate::fusion`), by its type: its associated
    /// `forward`, `vjp` and `vjp_shapes` functions.
    Region(Path),
    /// `part.name(args..)`: a `#[differentiable]` method of the part of a
    /// tree that is the first argument ([`CallArg::Part`]), through its
    /// hidden `__nabla_<name>_forward`/`_vjp` methods (method resolution
    /// finds the type).
    Method(Ident),
}

/// An argument of a call to another differentiable function.
pub enum CallArg {
    Value(VarId),
    Static(TokenStream),
    /// A part of tree variable `tree` (`self.attn`, `p.blocks[i]`): `skel`
    /// is its value in the skeleton (`(p.skeleton).blocks[i]`), `range` a
    /// static variable holding its leaves' `[start, end)`.
    Part {
        tree: VarId,
        skel: TokenStream,
        range: VarId,
    },
}

/// One statement of the A-normal form.
pub enum Stmt {
    /// `let out = rules::<op>::forward(inputs.., params..)`.
    Prim {
        out: VarId,
        op: &'static OpSpec,
        inputs: Vec<VarId>,
        params: Vec<TokenStream>,
        span: Span,
    },
    /// `let outs = path::forward(args..)`: another differentiable function
    /// (or a transformed function value, see [`Callee`]). `id` names its
    /// pullback in the VJP.
    Call {
        outs: Vec<VarId>,
        callee: Callee,
        args: Vec<CallArg>,
        /// The arguments' spans as the user wrote them (empty for calls
        /// the macro makes): where a differentiable argument given to a
        /// static parameter is reported.
        arg_spans: Vec<Span>,
        span: Span,
        id: usize,
        /// `nabla::checkpoint(f)(..)`: keep only the arguments; the reverse
        /// sweep recomputes `f`'s forward sweep.
        checkpoint: bool,
        /// A fused region whose own program has an output-only tail: it can
        /// be in the enclosing function's tail, reading its arguments by
        /// value (its `vjp_shapes` skips the ops only its output reads).
        region_tail: bool,
    },
    /// `if cond { .. } else { .. }` on a static condition. Variables either
    /// branch (re)binds, and the branch value, leave it through `merges`.
    /// The VJP records which branch ran (with its residuals) and replays
    /// that branch in reverse.
    If {
        cond: TokenStream,
        then_body: Vec<Stmt>,
        else_body: Vec<Stmt>,
        merges: Vec<Merge>,
        id: usize,
    },
    /// `let out = <static expression>`.
    Static { out: VarId, expr: TokenStream },
    /// `for pat in iter { body }` over a static iterator. `carried` are the
    /// variables the body rebinds: each enters the body as `phi`, leaves an
    /// iteration as `next` and the loop as `out`. The VJP pushes each
    /// iteration's residuals on a tape (a `Vec`) and replays the body in
    /// reverse, iteration by iteration.
    /// A `while` loop is a `For` with `cond = Some((k, cond))`: each
    /// iteration first runs the first `k` statements of `body` (which
    /// compute the condition) and leaves the loop unless the static
    /// (possibly data-dependent) `cond` holds; the tape holds completed
    /// iterations only.
    For {
        pat: TokenStream,
        iter: TokenStream,
        body: Vec<Stmt>,
        carried: Vec<Carried>,
        id: usize,
        cond: Option<(usize, TokenStream)>,
        /// `#[nabla::checkpoint(snapshots = s)]` on a `for` loop: the VJP
        /// keeps at most `s` carried states and recomputes iterations by
        /// the binomial (Revolve) schedule instead of keeping a tape.
        snapshots: Option<usize>,
    },
    /// `let out = tree_leaves[index]`: one array of a tree parameter;
    /// `index` is a static variable (the leaf's position).
    Leaf {
        out: VarId,
        tree: VarId,
        index: VarId,
    },
    /// `let out = <expression on a value that has no derivative>`
    /// (`zeros_like`, `stop_gradient`, ...): a value, never active.
    Constant { out: VarId, expr: TokenStream },
}

/// A variable leaving an `if`: `out` is `then_v` or `else_v`.
pub struct Merge {
    pub out: VarId,
    pub then_v: VarId,
    pub else_v: VarId,
}

/// A variable carried around a loop.
pub struct Carried {
    /// The value before the loop.
    pub init: VarId,
    /// Its name at the start of an iteration.
    pub phi: VarId,
    /// Its value at the end of an iteration.
    pub next: VarId,
    /// Its value after the loop.
    pub out: VarId,
}

/// A lowered function.
pub struct Function {
    pub vis: Visibility,
    pub ident: Ident,
    pub tier: Tier,
    pub params: Vec<Param>,
    pub vars: Vec<Var>,
    pub body: Vec<Stmt>,
    pub outputs: Vec<Output>,
    /// True when the function returns a tuple (even of one element).
    pub tuple_output: bool,
    /// True when it returns `vec![a, b, ..]` as a `Vec<Array>` (then also
    /// `tuple_output`: the generated variants return a tuple).
    pub list_output: bool,
    /// True when it returns `[a, b, ..]` as a `[f64; M]` (then also
    /// `tuple_output`: the generated variants return a tuple).
    pub array_output: bool,
    /// The declared return type.
    pub ret_ty: Type,
    /// Path of the facade crate in generated code (`::nabla` or `crate`).
    pub krate: TokenStream,
    /// Every identifier in the user's item: generated names avoid them
    /// (see `lower::scope`).
    pub user_idents: HashSet<String>,
    /// A method (`&self`, in an inherent `impl`): `self` is a tree
    /// parameter, and the variants are hidden methods beside it.
    pub method: bool,
    /// A static became a value (`lower::promote`): `let mut v = 0.0;` then
    /// `v += dt * a`. In a function of arrays the body as written is then
    /// not Rust that compiles, and direct calls run the forward program.
    pub promoted: bool,
}

impl Function {
    /// The tokens naming a variable.
    pub fn name(&self, v: VarId) -> &Ident {
        &self.vars[v].ident
    }

    /// A borrow of variable `v` in generated code: a value parameter is
    /// already a reference (`x`), any other variable is borrowed (`&h`).
    pub fn val(&self, v: VarId) -> TokenStream {
        let id = self.name(v);
        if self.is_param_ref(v) {
            quote::quote!(#id)
        } else {
            quote::quote!(&#id)
        }
    }

    /// Whether `v` is a value parameter: generated code holds it as the
    /// caller's `&__V`, never cloning it in the forward program.
    pub fn is_param_ref(&self, v: VarId) -> bool {
        self.vars[v].kind == Kind::Value && self.param_of(v).is_some()
    }

    /// Whether `name` is free for a generated name: no variable and no
    /// identifier of the user's item has it.
    pub fn is_free(&self, name: &str) -> bool {
        !self.user_idents.contains(name) && self.vars.iter().all(|v| v.ident != name)
    }

    /// The value type the monomorphic entry points use, and the leaves'
    /// type of a tree parameter: `Array`, `f64` or `f32`.
    pub fn concrete(&self) -> TokenStream {
        let krate = &self.krate;
        match self.tier {
            Tier::Array => quote::quote!(#krate::Array),
            Tier::Scalar(ScalarTy::F64) => quote::quote!(f64),
            Tier::Scalar(ScalarTy::F32) => quote::quote!(f32),
        }
    }

    /// The parameter a (tree) variable comes from.
    pub fn param_of(&self, v: VarId) -> Option<&Param> {
        self.params.iter().find(|p| p.var == Some(v))
    }

    /// Whether the function joins the composable transforms as a function
    /// of one to six arrays returning one array (`impl DiffFn`).
    pub fn is_composable(&self) -> bool {
        !self.tuple_output
            && matches!(self.outputs[0], Output::Value(_))
            && self.tier == Tier::Array
            && !self.params.is_empty()
            && self.params.len() <= 6
            && self
                .params
                .iter()
                .all(|p| p.var.is_some() && p.tree.is_none())
    }

    /// Whether it joins the composable transforms through a tuple of
    /// argument slots (`One` for an array, `TreeS` for a tree): a function
    /// of arrays and trees with at least one tree returning one array, or a
    /// function of arrays and trees returning a pair of arrays (`(value,
    /// aux)`, `DiffFn` with a pair output).
    pub fn is_slot_composable(&self) -> bool {
        let args = self.tier == Tier::Array
            && !self.params.is_empty()
            && self.params.len() <= 6
            && self
                .params
                .iter()
                .all(|p| p.var.is_some() && p.fixed_len().is_none());
        let one = !self.tuple_output
            && matches!(self.outputs[0], Output::Value(_))
            && self.params.iter().any(|p| p.tree.is_some());
        args && (one || self.is_pair_output())
    }

    /// Whether it returns a pair of arrays, `(a, b)`.
    pub fn is_pair_output(&self) -> bool {
        self.tuple_output
            && !self.list_output
            && !self.array_output
            && self.outputs.len() == 2
            && self.outputs.iter().all(|o| matches!(o, Output::Value(_)))
    }

    /// Whether it is a list function, `fn f(args: &[Array]) -> Vec<Array>`
    /// returning `vec![..]` (`DiffFn` with `AList` arity and `List` output).
    pub fn is_list_fn(&self) -> bool {
        self.list_output
            && self.tier == Tier::Array
            && self.params.len() == 1
            && self.params[0].var.is_some()
            && self.params[0].tree.as_ref().is_some_and(is_list_of_arrays)
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

/// Every identifier in `ts` (in the user's item: generated names avoid
/// them; in generated code: what it mentions).
pub fn idents(ts: TokenStream) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut stack = vec![ts];
    while let Some(ts) = stack.pop() {
        for t in ts {
            match t {
                proc_macro2::TokenTree::Ident(i) => {
                    out.insert(i.to_string());
                }
                proc_macro2::TokenTree::Group(g) => stack.push(g.stream()),
                _ => {}
            }
        }
    }
    out
}
