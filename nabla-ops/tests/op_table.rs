//! `docs/ops.md`, the table of every primitive, generated from the op
//! registry, and a check that the committed file is current.
//!
//! The callbacks below expand `unary_ops!`, `binary_ops!` and `other_ops!`
//! and `stringify!` what the table shows. What the registry does not say
//! (the other ops' free functions, rule files, batching, fusion and GPU
//! kernels) is in [`OTHER_FACTS`], which must name exactly the registry's
//! other ops. `NABLA_BLESS=1 cargo test -p nabla-ops --test op_table`
//! rewrites the file.

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The command that regenerates the file.
const BLESS: &str = "NABLA_BLESS=1 cargo test -p nabla-ops --test op_table";

/// A derivative rule as the registry writes it.
enum Rule {
    /// `(custom)`: a hand-written rule module.
    Custom,
    /// `(|params| body [, scale c])`.
    Formula {
        params: Vec<String>,
        body: String,
        scale: Option<String>,
    },
}

impl Rule {
    /// Parses a rule from its tokens as `stringify!` prints them.
    fn parse(tokens: &str) -> Rule {
        let flat = tidy(tokens);
        let inner = flat
            .strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .unwrap_or_else(|| panic!("rule `{flat}`: not parenthesised"));
        if inner == "custom" {
            return Rule::Custom;
        }
        let (params, rest) = inner
            .strip_prefix('|')
            .and_then(|s| s.split_once('|'))
            .unwrap_or_else(|| panic!("rule `{flat}`: not `(|x, y| ..)`"));
        // `, scale c` at the top level, outside every bracket.
        let mut depth = 0i32;
        let mut split = None;
        for (i, c) in rest.char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 && rest[i..].starts_with(", scale ") => split = Some(i),
                _ => {}
            }
        }
        let (body, scale) = match split {
            Some(i) => (&rest[..i], Some(tidy(&rest[i + ", scale ".len()..]))),
            None => (rest, None),
        };
        Rule::Formula {
            params: params.split(',').map(|p| p.trim().to_string()).collect(),
            body: tidy(body),
            scale,
        }
    }
}

/// Tokens as `stringify!` prints them, spaced as the registry writes
/// them: one space between tokens, none around `::` nor after a unary `&`
/// or `-` (tokens from another crate come spaced out, and long lines
/// broken).
fn tidy(s: &str) -> String {
    let mut out = String::new();
    for w in s.split_whitespace() {
        if !out.is_empty() && !glued(&out, w) {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// Whether token `next` follows `out` without a space.
fn glued(out: &str, next: &str) -> bool {
    if out.ends_with("::") || next.starts_with("::") {
        return true;
    }
    let Some(before) = out.strip_suffix(['&', '-']) else {
        return false;
    };
    let before = before.trim_end();
    before.is_empty() || before.ends_with(['(', '[', '{', ',', '=', '|'])
}

/// A unary or binary entry.
struct Elementwise {
    kind: &'static str,
    name: &'static str,
    method: &'static str,
    func: &'static str,
    params: Vec<&'static str>,
    cuda: &'static str,
    rule: Rule,
    reads: &'static str,
}

/// An `other_ops!` entry.
struct Other {
    name: &'static str,
    names: Vec<&'static str>,
    values: usize,
    tail: &'static str,
    /// Per value input `k`: what `vjp_<k>` reads of each input, then of
    /// the output (`V`, `S`, `_`).
    reads: Vec<Vec<&'static str>>,
}

macro_rules! elementwise {
    ($kind:ident $(
        $(#[$doc:meta])*
        $name:ident $k:ident $(($($p:ident: $pt:ty),*))? {
            method: $method:ident, func: $func:ident,
            kernel: |$($v:ident),*| $kernel:expr,
            cuda: $cuda:literal,
            rule: $rule:tt, reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        vec![$(Elementwise {
            kind: stringify!($kind),
            name: stringify!($name),
            method: stringify!($method),
            func: stringify!($func),
            params: vec![$($(concat!(stringify!($p), ": ", stringify!($pt))),*)?],
            cuda: $cuda,
            rule: Rule::parse(stringify!($rule)),
            reads: stringify!($reads),
        }),*]
    };
}

macro_rules! others {
    ($($name:ident [$($n:ident)*] $values:literal, $params:literal, tail $tail:tt,
        reads $([$($r:tt)*])+;)*) => {
        vec![$(Other {
            name: stringify!($name),
            names: vec![$(stringify!($n)),*],
            values: $values,
            tail: stringify!($tail),
            reads: vec![$(vec![$(stringify!($r)),*]),+],
        }),*]
    };
}

/// What the registry does not say about the other ops, one line each:
/// `name; nabla:: function (yes/no); the hand-written rule's file (under
/// nabla-runtime/src/); the Batched methods its batching goes through
/// (interp/batched.rs); fusion; GPU kernel`, cells in markdown. Read from
/// the code: the free functions in `functions.rs`, the entries in
/// `entry.rs`, the `ArrayValue` calls of each forward, `fusable`, `is_view`
/// and `is_sum` in `nabla-macros/src/fusion.rs`, and the
/// `on_gpu!`/`on_gpus!` calls in `primitives/`.
const OTHER_FACTS: &[&str] = &[
    "add_scalar; no; `primitives/unary.rs` (`affine`); add_scalar; yes, literal `c`; `cuda::unary` (`Affine`, `primitives/unary.rs`)",
    "mul_scalar; no; `primitives/unary.rs` (`affine`); mul_scalar; yes, literal `c`; `cuda::unary` (`Affine`, `primitives/unary.rs`)",
    "add_const; no; `entry/constant.rs`; add_scalar, lift, add; no; `cuda::unary` (a number) or `cuda::binary` (an array)",
    "mul_const; no; `entry/constant.rs`; mul_scalar, lift, mul; no; `cuda::unary` (a number) or `cuda::binary` (an array)",
    "sum; yes; `primitives/reduce.rs`; sum_axes; ends a region (map-reduce); `cuda::reduce` (`primitives/reduce.rs`)",
    "sum_axes; yes; `primitives/reduce.rs`; sum_axes; no; `cuda::reduce` (`primitives/reduce.rs`)",
    "max; yes; `primitives/reduce/chooser.rs`; max_axes, chooser_vjp; no; `cuda::reduce` (`primitives/reduce.rs`)",
    "max_axes; yes; `primitives/reduce/chooser.rs`; max_axes, chooser_vjp; no; `cuda::reduce` (`primitives/reduce.rs`)",
    "min; yes; `primitives/reduce/chooser.rs`; min_axes, chooser_vjp; no; `cuda::reduce` (`primitives/reduce.rs`)",
    "min_axes; yes; `primitives/reduce/chooser.rs`; min_axes, chooser_vjp; no; `cuda::reduce` (`primitives/reduce.rs`)",
    "prod; yes; `primitives/reduce.rs`; prod_axes; no; `cuda::reduce` (`primitives/reduce.rs`)",
    "prod_axes; yes; `primitives/reduce.rs`; prod_axes; no; `cuda::reduce` (`primitives/reduce.rs`)",
    "mean; yes; `primitives/reduce.rs` (`mean`: the sum · 1/n); sum_axes, mul_scalar; ends a region (map-reduce); `cuda::reduce`, `cuda::unary`",
    "mean_axes; yes; `primitives/reduce.rs` (`mean`: the sum · 1/n); sum_axes, mul_scalar; no; `cuda::reduce`, `cuda::unary`",
    "cumsum; yes; `primitives/reduce.rs`; cumsum_axis; no; `cuda::cumsum` (`primitives/reduce.rs`)",
    "matmul; yes; `primitives/linalg.rs`; matmul; no; `cuda::matmul` (`primitives/linalg.rs`)",
    "dot; yes; `primitives/linalg.rs` (`matmul`); matmul; no; `cuda::matmul` (`primitives/linalg.rs`)",
    "outer; yes; `primitives/linalg.rs` (`outer`: reshape, mul); reshape, mul; no; `GpuArray::reshape`, `cuda::binary`",
    "reshape; yes; `primitives/shape/reshape.rs`; reshape; no; `GpuArray::reshape` (`primitives/shape/reshape.rs`)",
    "flatten; no; `primitives/shape/reshape.rs`; reshape; no; `GpuArray::reshape` (`primitives/shape/reshape.rs`)",
    "permute; yes; `primitives/shape/permute.rs`; permute; no; `GpuArray::permute` (`primitives/shape/permute.rs`)",
    "transpose; yes; `primitives/shape/permute.rs`; permute; no; `GpuArray::permute` (`primitives/shape/permute.rs`)",
    "broadcast_to; yes; `primitives/shape/broadcast_to.rs`; broadcast_to; no; `GpuArray::broadcast_to` (`primitives/shape/broadcast_to.rs`)",
    "expand_dims; yes; `primitives/shape/reshape.rs`; reshape; no; `GpuArray::reshape` (`primitives/shape/reshape.rs`)",
    "squeeze; yes; `primitives/shape/reshape.rs`; reshape; no; `GpuArray::reshape` (`primitives/shape/reshape.rs`)",
    "slice_axis; no; `primitives/shape/slice.rs`; slice, add_into_slice; read in place by a region; `GpuArray::slice`, `cuda::add_into_region` (`primitives/shape/`)",
    "index_select; no; `primitives/index.rs`; index_select; no; `cuda::index_select` (`primitives/index.rs`)",
    "index_add; no; `primitives/index.rs`; index_add; no; `cuda::index_add` (`primitives/index.rs`)",
];

/// One parsed line of [`OTHER_FACTS`].
struct Fact {
    name: &'static str,
    func: bool,
    rule: &'static str,
    batching: Vec<&'static str>,
    fusion: &'static str,
    gpu: &'static str,
}

fn facts() -> Vec<Fact> {
    OTHER_FACTS
        .iter()
        .map(|line| {
            let f: Vec<&str> = line.split("; ").collect();
            assert_eq!(f.len(), 6, "OTHER_FACTS line `{line}`: six fields");
            assert!(f[1] == "yes" || f[1] == "no", "`{line}`: yes or no");
            Fact {
                name: f[0],
                func: f[1] == "yes",
                rule: f[2],
                batching: f[3].split(", ").collect(),
                fusion: f[4],
                gpu: f[5],
            }
        })
        .collect()
}

/// Markdown table cells may not hold a bare `|` (even inside code).
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn code(s: &str) -> String {
    format!("`{}`", cell(s))
}

/// The identifiers a stringified expression reads.
fn idents(s: &str) -> BTreeSet<&str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The names a unary `reads:` or a binary `reads:` lets a formula use.
fn readable(e: &Elementwise) -> &'static [&'static str] {
    match e.reads {
        "x" => &["x"],
        "y" => &["y"],
        "xy" => &["x", "y"],
        "inputs" => &["a", "b"],
        "all" => &["a", "b", "y"],
        _ => &[],
    }
}

/// Problems in an elementwise entry: a formula that uses a value its
/// `reads:` does not declare (the generated `vjp_0` passes `x` for `y`,
/// or `y` for `x`, so it would compute a wrong derivative), or a unary
/// formula that declares a value it never uses.
fn check_reads(e: &Elementwise) -> Option<String> {
    let Rule::Formula { params, body, .. } = &e.rule else {
        return None;
    };
    let expected: &[&str] = if e.kind == "unary" {
        &["x", "y"]
    } else {
        &["a", "b", "y"]
    };
    if params
        .iter()
        .map(String::as_str)
        .ne(expected.iter().copied())
    {
        return Some(format!(
            "{}: rule parameters {params:?}, not {expected:?}",
            e.name
        ));
    }
    let used = idents(body);
    let allowed = readable(e);
    let over: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|p| used.contains(p) && !allowed.contains(p))
        .collect();
    let under: Vec<&str> = allowed
        .iter()
        .copied()
        .filter(|p| !used.contains(p))
        .collect();
    if !over.is_empty() {
        return Some(format!(
            "{}: the rule reads {over:?} but `reads: {}`",
            e.name, e.reads
        ));
    }
    (e.kind == "unary" && !under.is_empty()).then(|| {
        format!(
            "{}: `reads: {}` but the rule never reads {under:?}",
            e.name, e.reads
        )
    })
}

/// Problems in an other op's `tail` and `reads`.
fn check_other(o: &Other) -> Option<String> {
    let n = o.values;
    if o.reads.len() != n || o.reads.iter().any(|r| r.len() != n + 1) {
        return Some(format!("{}: reads {:?} for {n} inputs", o.name, o.reads));
    }
    if o.reads
        .iter()
        .flatten()
        .any(|r| !matches!(*r, "V" | "S" | "_"))
    {
        return Some(format!("{}: reads {:?}: V, S or _", o.name, o.reads));
    }
    if o.tail == "no" {
        return None;
    }
    let uses: Vec<&str> = o.tail.trim_matches(['[', ']']).split_whitespace().collect();
    if uses.len() != n || uses.iter().any(|u| !matches!(*u, "S" | "V")) {
        return Some(format!("{}: tail {} for {n} inputs", o.name, o.tail));
    }
    if o.reads.iter().any(|r| r[n] != "_") {
        return Some(format!(
            "{}: tail {} but a step reads the output",
            o.name, o.tail
        ));
    }
    (0..n)
        .find(|&k| uses[k] == "S" && o.reads.iter().any(|r| r[k] == "V"))
        .map(|k| format!("{}: tail reads input {k}'s shape, a step its value", o.name))
}

/// What a unary or binary op's reverse step reads, in words.
fn elementwise_reads(e: &Elementwise) -> String {
    match e.reads {
        "x" => "`x`".into(),
        "y" => "`y`".into(),
        "xy" => "`x`, `y`".into(),
        "none" => "nothing".into(),
        "shapes" => "each operand: its own shape".into(),
        "cross" => "each operand: its own shape, the other operand".into(),
        "inputs" => "`a`, `b`".into(),
        "all" => "`a`, `b`, `y`".into(),
        r => panic!("{}: unknown `reads: {r}`", e.name),
    }
}

/// What an other op's reverse steps read, in words: inputs `x` (or `a`,
/// `b`), output `y`.
fn other_reads(o: &Other) -> String {
    let names: &[&str] = if o.values == 1 {
        &["x", "y"]
    } else {
        &["a", "b", "y"]
    };
    let step = |r: &Vec<&str>| {
        let read: Vec<String> = r
            .iter()
            .zip(names)
            .filter_map(|(r, v)| match *r {
                "V" => Some(format!("`{v}`")),
                "S" => Some(format!("shape of `{v}`")),
                _ => None,
            })
            .collect();
        if read.is_empty() {
            "nothing".to_string()
        } else {
            read.join(", ")
        }
    };
    if o.values == 1 {
        return step(&o.reads[0]);
    }
    let steps: Vec<String> = o
        .reads
        .iter()
        .zip(names)
        .map(|(r, v)| format!("∂{v}: {}", step(r)))
        .collect();
    steps.join("; ")
}

fn rule_cell(e: &Elementwise) -> String {
    match &e.rule {
        Rule::Custom => format!("hand-written in `primitives/{}.rs`", e.kind),
        Rule::Formula { body, scale, .. } => {
            let scale = scale
                .as_deref()
                .map(|c| format!(" · {}", code(c)))
                .unwrap_or_default();
            format!("{}{scale}", code(body))
        }
    }
}

fn render(unary: &[Elementwise], binary: &[Elementwise], other: &[Other]) -> String {
    let facts = facts();
    let mut s = String::new();
    let total = unary.len() + binary.len() + other.len();
    let (u, b, o) = (unary.len(), binary.len(), other.len());
    writeln!(s, "# Primitives\n").unwrap();
    writeln!(
        s,
        "_Generated from the op registry (`nabla-ops`) by `nabla-ops/tests/op_table.rs`; \
         do not edit. Regenerate with `{BLESS}`; that test fails when this file is \
         out of date._\n"
    )
    .unwrap();
    writeln!(
        s,
        "{total} primitives: {u} unary and {b} binary elementwise ops (`unary_ops!`, \
         `binary_ops!`), {o} others (`other_ops!`). See docs/design.md, \"The op registry\".\n"
    )
    .unwrap();
    let legend = [
        "**method**: the `Value`/`Array` method (with a unary op's static parameters); \
         **function**: the free function.",
        "**derivative rule**: for elementwise ops, the registry's formula for `dy/dx` \
         (unary, over the input `x` and the output `y`) or `(∂y/∂a, ∂y/∂b)` (binary), \
         on one line (comments dropped), `· c` for `scale c`; otherwise the file \
         under `nabla-runtime/src/` with the hand-written rule.",
        "**reverse step reads**: what `rules::<op>::vjp_<k>` takes (`reads` in the \
         registry); the VJP keeps only that for its reverse sweep.",
        "**batching**: elementwise ops get theirs generated (`value_methods batched`); \
         the others go through the `Batched` methods named, in \
         `nabla-runtime/src/interp/batched.rs`.",
        "**fuses**: whether `#[differentiable]` puts the op in a fused region \
         (`nabla-macros/src/fusion.rs`: `fusable` takes every unary and binary op and \
         `add_scalar`, `mul_scalar` whose static parameters are literals; `is_view` takes \
         `slice_axis`; `is_sum` a whole `sum` or `mean`).",
        "**GPU**: elementwise ops with a CUDA expression in the registry run on a GPU \
         (`nabla-kernels/src/cuda/launch.rs`); for the others, the kernel their forward \
         calls through `on_gpu!` (files under `nabla-runtime/src/`).",
    ];
    for l in legend {
        writeln!(s, "- {l}").unwrap();
    }
    writeln!(
        s,
        "\n| op | kind | method | function | derivative rule | reverse step reads \
         | batching | fuses | GPU |\n|---|---|---|---|---|---|---|---|---|"
    )
    .unwrap();
    for e in unary.iter().chain(binary) {
        let method = if e.params.is_empty() {
            code(e.method)
        } else {
            code(&format!("{}({})", e.method, e.params.join(", ")))
        };
        let fuses = if e.params.is_empty() {
            "yes"
        } else {
            "yes, literal parameters"
        };
        let gpu = if e.cuda.is_empty() { "no" } else { "yes" };
        writeln!(
            s,
            "| `{}` | {} | {method} | `nabla::{}` | {} | {} | generated, elementwise | {fuses} | {gpu} |",
            e.name,
            e.kind,
            e.func,
            rule_cell(e),
            elementwise_reads(e),
        )
        .unwrap();
    }
    for o in other {
        let f = facts.iter().find(|f| f.name == o.name).expect("checked");
        let method = match o.names[..] {
            [] => "— (internal)".to_string(),
            [n] => code(n),
            ref ns => panic!("{}: names {ns:?}: at most one", o.name),
        };
        let func = match (f.func, o.names.first()) {
            (true, Some(n)) => format!("`nabla::{n}`"),
            (true, None) => panic!("{}: a free function needs a name", o.name),
            (false, _) => "—".to_string(),
        };
        let batching: Vec<String> = f
            .batching
            .iter()
            .map(|m| format!("`Batched::{m}`"))
            .collect();
        writeln!(
            s,
            "| `{}` | other | {method} | {func} | hand-written in {} | {} | {} | {} | yes: {} |",
            o.name,
            cell(f.rule),
            other_reads(o),
            batching.join(", "),
            f.fusion,
            cell(f.gpu),
        )
        .unwrap();
    }
    s
}

#[test]
fn op_table_is_current() {
    let unary: Vec<Elementwise> = nabla_ops::unary_ops!(elementwise unary);
    let binary: Vec<Elementwise> = nabla_ops::binary_ops!(elementwise binary);
    let other: Vec<Other> = nabla_ops::other_ops!(others);

    let mut problems: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    let names = unary
        .iter()
        .chain(&binary)
        .map(|e| e.name)
        .chain(other.iter().map(|o| o.name));
    for n in names {
        if !seen.insert(n) {
            problems.push(format!("`{n}` is in the registry twice"));
        }
    }
    problems.extend(unary.iter().chain(&binary).filter_map(check_reads));
    problems.extend(other.iter().filter_map(check_other));
    let facts = facts();
    for o in &other {
        if !facts.iter().any(|f| f.name == o.name) {
            problems.push(format!(
                "`{}` is in other_ops! but not in OTHER_FACTS (nabla-ops/tests/op_table.rs): \
                 add its line",
                o.name
            ));
        }
    }
    for (i, f) in facts.iter().enumerate() {
        if facts[..i].iter().any(|g| g.name == f.name) {
            problems.push(format!("OTHER_FACTS names `{}` twice", f.name));
        }
        if !other.iter().any(|o| o.name == f.name) {
            problems.push(format!(
                "OTHER_FACTS names `{}`, which other_ops! does not list",
                f.name
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the op registry:\n  {}",
        problems.join("\n  ")
    );

    let table = render(&unary, &binary, &other);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/ops.md");
    if std::env::var("NABLA_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(path, &table).expect("write docs/ops.md");
        return;
    }
    let Ok(committed) = std::fs::read_to_string(path) else {
        panic!("docs/ops.md is missing; run `{BLESS}` and commit it");
    };
    if committed != table {
        let line = committed
            .lines()
            .zip(table.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(table.lines().count()));
        panic!(
            "docs/ops.md is not the table the registry gives (first difference at line {}); \
             run `{BLESS}` and commit the result",
            line + 1
        );
    }
}
