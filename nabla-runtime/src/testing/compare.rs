//! The comparisons of [`super::check_grads_with`] and how a disagreement
//! is reported.

use super::Options;
use super::points::{self, Dir};
use crate::compose::{ArgsOf, DiffFn};
use crate::vocab::arity::Arity;
use crate::{Array, DType};
use std::fmt;

/// What a passing check compared.
#[derive(Clone, Debug)]
pub struct Checked {
    /// Derivative values compared.
    pub comparisons: usize,
    /// The dtype the finite differences were taken in.
    pub differences_in: DType,
}

/// The worst disagreement a check found.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// 1 or 2.
    pub order: usize,
    /// What was compared with what (`"reverse mode (VJP) against finite
    /// differences"`).
    pub mode: &'static str,
    /// The derivative's input: argument, array within it, element.
    pub input: Place,
    /// The second input direction, for second derivatives.
    pub second: Option<Place>,
    /// The differentiated output and its element.
    pub output: (usize, Vec<usize>),
    /// The derivative the mode computed.
    pub got: f64,
    /// The value it was compared with.
    pub expected: f64,
    /// The tolerance it exceeded.
    pub tolerance: f64,
    /// How many other comparisons failed.
    pub others: usize,
}

/// An element of an argument: which argument, which array within it (for
/// trees and lists), which element.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    /// The argument's position in the call.
    pub argument: usize,
    /// The array's position within the argument (0 for a plain array).
    pub array: usize,
    /// The element's index.
    pub element: Vec<usize>,
    /// Whether the argument holds more than one array.
    pub in_tree: bool,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "argument {}", self.argument)?;
        if self.in_tree {
            write!(f, " (array {})", self.array)?;
        }
        write!(f, "{:?}", self.element)
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (o, e) = &self.output;
        let d = if self.order == 2 { "d²" } else { "d" };
        write!(
            f,
            "check_grads: order {}, {}: {d}(output {o}){e:?} / d({})",
            self.order, self.mode, self.input
        )?;
        if let Some(s) = &self.second {
            write!(f, " d({s})")?;
        }
        write!(
            f,
            " is {:.8e}, but {:.8e} is expected; |difference| {:.3e} > tolerance {:.3e}",
            self.got,
            self.expected,
            (self.got - self.expected).abs(),
            self.tolerance
        )?;
        if self.others > 0 {
            write!(f, " ({} more values disagree)", self.others)?;
        }
        Ok(())
    }
}

impl std::error::Error for Mismatch {}

/// Row-major multi-index of flat element `e` of `shape`.
fn unravel(mut e: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (k, &n) in shape.iter().enumerate().rev() {
        idx[k] = e % n.max(1);
        e /= n.max(1);
    }
    idx
}

/// Up to `max` flat elements of `n`, spread evenly (all of them when `n`
/// is at most `max`), first and last included.
fn sample(n: usize, max: usize) -> Vec<usize> {
    match max {
        _ if n <= max => (0..n).collect(),
        0 => Vec::new(),
        1 => vec![0],
        _ => (0..max).map(|k| k * (n - 1) / (max - 1)).collect(),
    }
}

/// The comparisons of one check, keeping the worst failure.
struct Tally<'a, F: DiffFn> {
    args: &'a ArgsOf<F, Array>,
    outs: Vec<Option<Vec<usize>>>,
    atol: f64,
    rtol: f64,
    compared: usize,
    failures: usize,
    worst: Option<(f64, Mismatch)>,
}

impl<F: DiffFn> Tally<'_, F> {
    fn place(&self, d: Dir) -> Place {
        let arity = |i| <F::Arity as Arity>::arg_of(self.args, i);
        let argument = arity(d.leaf);
        let leaves = <F::Arity as Arity>::arg_leaves(self.args, argument);
        let shape = <F::Arity as Arity>::get(self.args, d.leaf).shape().to_vec();
        Place {
            argument,
            array: leaves.iter().position(|&l| l == d.leaf).unwrap_or(0),
            element: unravel(d.elem, &shape),
            in_tree: leaves.len() > 1,
        }
    }

    /// Compares `got` with `expected` for output `o`'s element `k`.
    #[allow(clippy::too_many_arguments)]
    fn compare(
        &mut self,
        order: usize,
        mode: &'static str,
        input: Dir,
        second: Option<Dir>,
        o: usize,
        k: usize,
        got: f64,
        expected: f64,
    ) {
        self.compared += 1;
        let tolerance = self.atol + self.rtol * got.abs().max(expected.abs());
        let diff = (got - expected).abs();
        let both_nan = got.is_nan() && expected.is_nan();
        let excess = if both_nan {
            0.0
        } else if diff.is_nan() {
            f64::INFINITY
        } else {
            diff / tolerance
        };
        if excess <= 1.0 {
            return;
        }
        self.failures += 1;
        if self.worst.as_ref().is_some_and(|(w, _)| *w >= excess) {
            return;
        }
        let shape = self.outs[o].clone().unwrap_or_default();
        let m = Mismatch {
            order,
            mode,
            input: self.place(input),
            second: second.map(|s| self.place(s)),
            output: (o, unravel(k, &shape)),
            got,
            expected,
            tolerance,
            others: 0,
        };
        self.worst = Some((excess, m));
    }
}

/// Runs every comparison `opts` asks for.
pub(super) fn run<F: DiffFn>(
    args: &ArgsOf<F, Array>,
    opts: &Options,
) -> Result<Checked, Box<Mismatch>> {
    let n = <F::Arity as Arity>::len(args);
    let leaf = |i| <F::Arity as Arity>::get(args, i);
    let f32_in = (0..n).any(|i| leaf(i).dtype() == DType::F32);
    // Finite differences in f64 where the function runs on promoted
    // arguments, else in the arguments' own dtype with a larger step.
    let promoted = points::cast_args::<F>(args, DType::F64);
    let in_f64 = !f32_in || {
        let run = std::panic::AssertUnwindSafe(|| points::value::<F>(&promoted));
        std::panic::catch_unwind(run).is_ok()
    };
    let fd_args = if in_f64 { &promoted } else { args };
    let h = opts.eps.unwrap_or(if in_f64 { 1e-6 } else { 1e-3 });
    let tol = if f32_in { 5e-3 } else { 1e-5 };
    let mut t = Tally::<F> {
        args,
        outs: points::output_shapes::<F>(args),
        atol: opts.atol.unwrap_or(tol),
        rtol: opts.rtol.or(opts.atol).unwrap_or(tol),
        compared: 0,
        failures: 0,
        worst: None,
    };
    let dirs: Vec<Dir> = (0..n)
        .filter(|&i| points::is_float(leaf(i)))
        .flat_map(|i| {
            let ds = sample(leaf(i).numel(), opts.max_elements);
            ds.into_iter().map(move |elem| Dir { leaf: i, elem })
        })
        .collect();
    let step = |d: Dir| {
        let x = <F::Arity as Arity>::get(fd_args, d.leaf);
        let scale = x.to_vec::<f64>()[d.elem].abs().max(1.0);
        (h * scale, points::span(x, d.elem, h * scale))
    };
    let outs: Vec<(usize, Vec<usize>)> = t
        .outs
        .iter()
        .enumerate()
        .filter_map(|(o, s)| {
            let s = s.as_ref()?;
            Some((o, sample(s.iter().product(), opts.max_elements)))
        })
        .collect();
    // First order: each mode's column (JVP) or row (VJP) against central
    // differences of the function.
    let mut fd_cols = Vec::with_capacity(dirs.len());
    for &d in &dirs {
        let (hd, span) = step(d);
        let (up, down) = (
            points::value_at::<F>(fd_args, d, hd),
            points::value_at::<F>(fd_args, d, -hd),
        );
        let fd: Vec<Vec<f64>> = up
            .iter()
            .zip(&down)
            .map(|(u, w)| u.iter().zip(w).map(|(a, b)| (a - b) / span).collect())
            .collect();
        let jv = points::jvp::<F>(args, d);
        for (o, _) in &outs {
            for (k, (&g, &e)) in jv[*o].iter().zip(&fd[*o]).enumerate() {
                t.compare(
                    1,
                    "forward mode (JVP) against finite differences",
                    d,
                    None,
                    *o,
                    k,
                    g,
                    e,
                );
            }
        }
        fd_cols.push(fd);
    }
    for (o, ks) in &outs {
        for &k in ks {
            let g = points::vjp::<F>(args, *o, k);
            for (d, fd) in dirs.iter().zip(&fd_cols) {
                let got = g[d.leaf].as_ref().map_or(0.0, |v| v[d.elem]);
                t.compare(
                    1,
                    "reverse mode (VJP) against finite differences",
                    *d,
                    None,
                    *o,
                    k,
                    got,
                    fd[*o][k],
                );
            }
        }
    }
    if opts.order >= 2 {
        second_order::<F>(&mut t, args, fd_args, &dirs, &outs, &step, opts);
    }
    match t.worst {
        None => Ok(Checked {
            comparisons: t.compared,
            differences_in: if in_f64 { DType::F64 } else { DType::F32 },
        }),
        Some((_, mut m)) => {
            m.others = t.failures - 1;
            Err(Box::new(m))
        }
    }
}

/// Second order: the JVP differentiated forward (forward over forward)
/// and the VJP differentiated forward (forward over reverse), each against
/// central differences of the first-order derivative, over a smaller
/// sample of directions.
fn second_order<F: DiffFn>(
    t: &mut Tally<'_, F>,
    args: &ArgsOf<F, Array>,
    fd_args: &ArgsOf<F, Array>,
    dirs: &[Dir],
    outs: &[(usize, Vec<usize>)],
    step: &dyn Fn(Dir) -> (f64, f64),
    opts: &Options,
) {
    let few = opts.max_elements.div_ceil(3).max(2);
    let pick = |v: &[Dir]| -> Vec<Dir> { sample(v.len(), few).into_iter().map(|i| v[i]).collect() };
    let ds = pick(dirs);
    for &u in &ds {
        for &v in &ds {
            let (hv, span) = step(v);
            let up = points::jvp_at::<F>(fd_args, u, v, hv);
            let down = points::jvp_at::<F>(fd_args, u, v, -hv);
            let jj = points::jvp_jvp::<F>(args, u, v);
            for (o, _) in outs {
                for (k, &g) in jj[*o].iter().enumerate() {
                    let e = (up[*o][k] - down[*o][k]) / span;
                    t.compare(
                        2,
                        "forward over forward against finite differences of the JVP",
                        u,
                        Some(v),
                        *o,
                        k,
                        g,
                        e,
                    );
                }
            }
        }
    }
    for (o, ks) in outs {
        for &k in sample(ks.len(), few).iter().map(|&i| &ks[i]) {
            for &v in &ds {
                let (hv, span) = step(v);
                let up = points::vjp_at::<F>(fd_args, v, hv, *o, k);
                let down = points::vjp_at::<F>(fd_args, v, -hv, *o, k);
                let vj = points::vjp_jvp::<F>(args, *o, k, v);
                for (i, g) in vj.iter().enumerate() {
                    let (Some(g), Some(a), Some(b)) = (g, &up[i], &down[i]) else {
                        continue;
                    };
                    for (e, &gv) in g.iter().enumerate() {
                        let u = Dir { leaf: i, elem: e };
                        let want = (a[e] - b[e]) / span;
                        t.compare(
                            2,
                            "forward over reverse against finite differences of the VJP",
                            u,
                            Some(v),
                            *o,
                            k,
                            gv,
                            want,
                        );
                    }
                }
            }
        }
    }
}
