//! The operation table: which methods and `nabla::` functions the macro
//! knows, how many value inputs and static parameters each takes, and the
//! runtime entry point (`rules::<op>`) that holds its forward and VJP.

/// One differentiable operation.
pub struct OpSpec {
    /// Module name under `nabla::rules`.
    pub rule: &'static str,
    /// Number of value inputs (the receiver counts for methods).
    pub values: usize,
    /// Number of static parameters that follow the value inputs.
    pub params: usize,
    /// Static parameters written *before* the values (`where_(&mask, ..)`);
    /// the rule still receives them after the values.
    pub leading: usize,
    /// The values come as one array literal (`concat(&[a, b], axis)`).
    pub variadic: bool,
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

macro_rules! table {
    ($($rule:ident: $values:literal, $params:literal;)*) => {
        /// Every operation the macro can differentiate.
        pub static OPS: &[OpSpec] = &[
            $(OpSpec { rule: stringify!($rule), values: $values, params: $params, leading: 0, variadic: false },)*
            OpSpec { rule: "where_", values: 2, params: 0, leading: 1, variadic: false },
            OpSpec { rule: "concat", values: 0, params: 1, leading: 0, variadic: true },
            OpSpec { rule: "stack", values: 0, params: 1, leading: 0, variadic: true },
        ];
    };
}

table! {
    neg: 1, 0; exp: 1, 0; ln: 1, 0; log: 1, 0; sin: 1, 0; cos: 1, 0; tan: 1, 0; tanh: 1, 0;
    sigmoid: 1, 0; relu: 1, 0; sqrt: 1, 0; rsqrt: 1, 0; abs: 1, 0; square: 1, 0; recip: 1, 0;
    reciprocal: 1, 0; ln_1p: 1, 0; log1p: 1, 0; exp_m1: 1, 0; expm1: 1, 0; erf: 1, 0;
    signum: 1, 0; sign: 1, 0; floor: 1, 0; ceil: 1, 0; round: 1, 0;
    powi: 1, 1; powf: 1, 1; clip: 1, 2;
    add: 2, 0; sub: 2, 0; mul: 2, 0; div: 2, 0; pow: 2, 0; maximum: 2, 0; minimum: 2, 0; atan2: 2, 0;
    add_scalar: 1, 1; mul_scalar: 1, 1;
    sum: 1, 0; sum_axes: 1, 2; max: 1, 0; max_axes: 1, 2; min: 1, 0; min_axes: 1, 2;
    prod: 1, 0; prod_axes: 1, 2; mean: 1, 0; mean_axes: 1, 2; cumsum: 1, 1;
    matmul: 2, 0; dot: 2, 0; outer: 2, 0;
    reshape: 1, 1; flatten: 1, 0; permute: 1, 1; transpose: 1, 0; broadcast_to: 1, 1;
    expand_dims: 1, 1; squeeze: 1, 1; slice_axis: 1, 2; index_select: 1, 2;
}

/// Free functions with NumPy names that map to a different rule module.
const ALIASES: &[(&str, &str)] = &[("negative", "neg")];

/// Looks up an operation by method or `nabla::` function name.
pub fn lookup(name: &str) -> Option<&'static OpSpec> {
    let name = ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map(|(_, r)| *r)
        .unwrap_or(name);
    OPS.iter().find(|o| o.rule == name)
}

/// Looks up an operation by rule name (always present for internal uses).
pub fn op(name: &str) -> &'static OpSpec {
    lookup(name).expect("internal op names are in the table")
}

/// Methods on values that give static information.
pub fn static_query(name: &str) -> bool {
    matches!(name, "shape" | "ndim" | "numel" | "shape_vec")
}

/// Methods on values that produce a value with no derivative.
pub fn constant_method(name: &str) -> bool {
    matches!(
        name,
        "zeros_like" | "ones_like" | "full_like" | "stop_gradient" | "detach"
    )
}

/// Methods that call one of the library's `#[differentiable]` composites
/// (`x.softmax(-1)` is `nabla::softmax(&x, -1)`).
pub fn composite_method(name: &str) -> bool {
    matches!(
        name,
        "softmax"
            | "log_softmax"
            | "logsumexp_axes"
            | "var_axes"
            | "gelu"
            | "gelu_tanh"
            | "silu"
            | "softplus"
    )
}

/// Known names, for error messages.
pub fn known_names() -> String {
    let mut v: Vec<&str> = OPS
        .iter()
        .map(|o| o.rule)
        .filter(|n| !n.ends_with("_scalar"))
        .collect();
    v.sort_unstable();
    v.dedup();
    v.join(", ")
}
