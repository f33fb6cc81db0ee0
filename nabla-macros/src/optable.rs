//! The operation table: which methods and `nabla::` functions the macro
//! knows, how many value inputs and static parameters each takes, the
//! runtime entry point (`rules::<op>`) that holds its forward and VJP, and
//! what its reverse steps read. All of it comes from the op registry
//! (`nabla-ops`), expanded here by the `*_specs` callbacks.

use crate::tail::Use;

/// What a reverse step reads of one of its op's values (an input or the
/// output): the generated call passes the value, its shape, or nothing,
/// and the VJP keeps for its reverse sweep only what some call passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// The value (`&V`).
    Value,
    /// Only its shape (`&[usize]`, the sweep's `shape_<name>`).
    Shape,
    /// Nothing.
    Not,
}

/// One differentiable operation.
pub struct OpSpec {
    /// Module name under `nabla::rules` (the registry's name).
    pub rule: &'static str,
    /// The names users write: method and `nabla::` function names.
    pub names: &'static [&'static str],
    /// Number of value inputs (the receiver counts for methods).
    pub values: usize,
    /// Number of static parameters that follow the value inputs.
    pub params: usize,
    /// Static parameters written *before* the values (`where_(&mask, ..)`);
    /// the rule still receives them after the values.
    pub leading: usize,
    /// The values come as one array literal (`concat(&[a, b], axis)`).
    pub variadic: bool,
    /// How the op's reverse step reads each value input inside an
    /// output-only tail (`nabla::rules::tail::<op>`), or `None` when the op
    /// cannot be in a tail (its reverse step reads its own output).
    pub tail: Option<&'static [Use]>,
    /// `reads[k]`: what `rules::<op>::vjp_<k>` (the reverse step for value
    /// input `k`) reads of each value input and then of the output, in
    /// that order; its parameters are exactly the values and shapes read,
    /// then the static parameters, then the cotangent. A variadic op has
    /// one entry, `[Shape]`: every part's shape.
    pub reads: &'static [&'static [Read]],
}

impl OpSpec {
    /// Whether the rule accumulates its input's cotangent itself
    /// (`rules::<op>::acc_0(&mut slot, ..)`) instead of returning it for
    /// `acc`: slices, whose cotangent is mostly zeros, add into the region
    /// of an existing cotangent; `square` adds `2·x·ȳ` in one fused pass.
    pub fn accumulates_own_cotangent(&self) -> bool {
        matches!(self.rule, "slice_axis" | "square")
    }
}

/// A unary op's tail use, from what its derivative reads (`reads:` in the
/// registry): only `x` → its value; nothing → its shape; `y` → no tail.
macro_rules! unary_tail {
    (x) => {
        Some(&[Use::Value])
    };
    (none) => {
        Some(&[Use::Shape])
    };
    ($other:ident) => {
        None
    };
}

/// A binary op's tail uses: `shapes`, `inputs` or `cross` (values), `all`
/// (no tail).
macro_rules! binary_tail {
    (shapes) => {
        Some(&[Use::Shape, Use::Shape])
    };
    (inputs) => {
        Some(&[Use::Value, Use::Value])
    };
    (cross) => {
        Some(&[Use::Value, Use::Value])
    };
    (all) => {
        None
    };
}

/// The other ops' tail uses: `[S]`, `[V V]`, `no`.
macro_rules! other_tail {
    (no) => {
        None
    };
    ([$($u:ident)*]) => {
        Some(&[$(other_tail!(@ $u)),*])
    };
    (@ S) => {
        Use::Shape
    };
    (@ V) => {
        Use::Value
    };
}

/// What a unary op's reverse step reads, from `reads:` in the registry.
macro_rules! unary_reads {
    (x) => {
        &[&[Read::Value, Read::Not]]
    };
    (y) => {
        &[&[Read::Not, Read::Value]]
    };
    (xy) => {
        &[&[Read::Value, Read::Value]]
    };
    (none) => {
        &[&[Read::Not, Read::Not]]
    };
}

/// What a binary op's reverse steps read: `shapes` (each its own input's
/// shape), `cross` (its own input's shape and the other input), `inputs`
/// (both inputs), `all` (both inputs and the output).
macro_rules! binary_reads {
    (shapes) => {
        &[
            &[Read::Shape, Read::Not, Read::Not],
            &[Read::Not, Read::Shape, Read::Not],
        ]
    };
    (cross) => {
        &[
            &[Read::Shape, Read::Value, Read::Not],
            &[Read::Value, Read::Shape, Read::Not],
        ]
    };
    (inputs) => {
        &[
            &[Read::Value, Read::Value, Read::Not],
            &[Read::Value, Read::Value, Read::Not],
        ]
    };
    (all) => {
        &[
            &[Read::Value, Read::Value, Read::Value],
            &[Read::Value, Read::Value, Read::Value],
        ]
    };
}

/// The other ops' reads, one `[..]` per value input: `V`, `S`, `_`.
macro_rules! other_reads {
    ($([$($r:tt)*])*) => {
        &[$(&[$(other_reads!(@ $r)),*]),*]
    };
    (@ V) => {
        Read::Value
    };
    (@ S) => {
        Read::Shape
    };
    (@ _) => {
        Read::Not
    };
}

macro_rules! unary_specs {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident ($($p:ident: $pt:ty),*) {
            method: $method:ident, func: $func:ident,
            kernel: |$v:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: $rule:tt, reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        &[$(OpSpec {
            rule: stringify!($name),
            names: &[stringify!($method), stringify!($func)],
            values: 1,
            params: <[&str]>::len(&[$(stringify!($p)),*]),
            leading: 0,
            variadic: false,
            tail: unary_tail!($reads),
            reads: unary_reads!($reads),
        },)*]
    };
}

macro_rules! binary_specs {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident {
            method: $method:ident, func: $func:ident,
            kernel: |$a:ident, $b:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: $rule:tt, reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        &[$(OpSpec {
            rule: stringify!($name),
            names: &[stringify!($method), stringify!($func)],
            values: 2,
            params: 0,
            leading: 0,
            variadic: false,
            tail: binary_tail!($reads),
            reads: binary_reads!($reads),
        },)*]
    };
}

macro_rules! other_specs {
    ($($name:ident [$($n:ident)*] $values:literal, $params:literal, tail $tail:tt,
        reads $([$($reads:tt)*])+;)*) => {
        &[$(OpSpec {
            rule: stringify!($name),
            names: &[$(stringify!($n)),*],
            values: $values,
            params: $params,
            leading: 0,
            variadic: false,
            tail: other_tail!($tail),
            reads: other_reads!($([$($reads)*])+),
        },)*]
    };
}

/// The elementwise ops of the registry (`nabla-ops`).
static UNARY: &[OpSpec] = nabla_ops::unary_ops!(unary_specs);
static BINARY: &[OpSpec] = nabla_ops::binary_ops!(binary_specs);
/// Reductions, shape ops, indexing, matmul, scalar arithmetic.
static OTHER: &[OpSpec] = nabla_ops::other_ops!(other_specs);
/// Ops whose call syntax is special: a leading mask, a list of values.
static SPECIAL: &[OpSpec] = &[
    OpSpec {
        rule: "where_",
        names: &["where_"],
        values: 2,
        params: 0,
        leading: 1,
        variadic: false,
        tail: None,
        reads: &[
            &[Read::Shape, Read::Not, Read::Not],
            &[Read::Not, Read::Shape, Read::Not],
        ],
    },
    OpSpec {
        rule: "concat",
        names: &["concat"],
        values: 0,
        params: 1,
        leading: 0,
        variadic: true,
        tail: None,
        reads: &[&[Read::Shape]],
    },
    OpSpec {
        rule: "stack",
        names: &["stack"],
        values: 0,
        params: 1,
        leading: 0,
        variadic: true,
        tail: None,
        reads: &[&[Read::Shape]],
    },
];

/// Every operation the macro can differentiate.
fn ops() -> impl Iterator<Item = &'static OpSpec> {
    UNARY.iter().chain(BINARY).chain(OTHER).chain(SPECIAL)
}

/// Every operation (for the table's own tests).
#[cfg(test)]
pub fn all() -> impl Iterator<Item = &'static OpSpec> {
    ops()
}

/// Whether an op is elementwise (a unary or binary registry op, or scalar
/// arithmetic): what a fused region may hold.
pub fn is_elementwise(op: &OpSpec) -> bool {
    UNARY.iter().chain(BINARY).any(|o| std::ptr::eq(o, op))
        || matches!(op.rule, "add_scalar" | "mul_scalar")
}

/// Looks up an operation by method or `nabla::` function name.
pub fn lookup(name: &str) -> Option<&'static OpSpec> {
    ops().find(|o| o.names.contains(&name))
}

/// Looks up an operation by its rule name.
pub fn by_rule(rule: &str) -> Option<&'static OpSpec> {
    ops().find(|o| o.rule == rule)
}

/// Looks up an operation by name, or by rule name for the ops users do
/// not name (`add_const`); always present for internal uses.
pub fn op(name: &str) -> &'static OpSpec {
    lookup(name)
        .or_else(|| by_rule(name))
        .expect("internal op names are in the table")
}

/// Methods on values that give static information.
pub fn static_query(name: &str) -> bool {
    matches!(
        name,
        "shape" | "ndim" | "numel" | "shape_vec" | "dtype" | "device"
    )
}

/// Methods on values that produce a value with no derivative.
pub fn constant_method(name: &str) -> bool {
    matches!(
        name,
        "zeros_like" | "ones_like" | "full_like" | "stop_gradient" | "detach"
    )
}

/// Methods that call one of the library's `#[differentiable]` composites
/// (`x.softmax(-1)` is `nabla::softmax(&x, -1)`): the registry's
/// `composite_methods!` list.
pub fn composite_method(name: &str) -> bool {
    macro_rules! one_of {
        ($($m:ident)*) => {
            [$(stringify!($m)),*]
        };
    }
    nabla_ops::composite_methods!(one_of).contains(&name)
}

/// The known name closest to `name` (edit distance at most a third of its
/// length, and at least 1), for "did you mean" in error messages; among
/// equally close names, the one sharing the longest prefix with `name`
/// (`sinn` suggests `sin`, not `sign`).
pub fn suggestion(name: &str) -> Option<&'static str> {
    let limit = (name.chars().count() / 3).max(1);
    let shared = |n: &str| {
        name.chars()
            .zip(n.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    ops()
        .flat_map(|o| o.names.iter().copied())
        .filter(|n| !n.ends_with("_scalar"))
        .map(|n| (edit_distance(name, n), std::cmp::Reverse(shared(n)), n))
        .filter(|&(d, _, _)| d <= limit)
        .min()
        .map(|(_, _, n)| n)
}

/// Levenshtein distance between two names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut row = vec![i + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            row.push(sub.min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::suggestion;

    #[test]
    fn suggestions_prefer_the_longest_shared_prefix() {
        assert_eq!(suggestion("sinn"), Some("sin"));
        assert_eq!(suggestion("expp"), Some("exp"));
        assert_eq!(suggestion("matmull"), Some("matmul"));
        assert_eq!(suggestion("frobnicate"), None);
    }
}
