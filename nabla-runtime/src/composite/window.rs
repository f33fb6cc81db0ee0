//! Convolution and pooling over 1, 2 or 3 spatial axes, in PyTorch's
//! layouts (`x` `[N, C, *spatial]`, weights `[O, C / groups, *kernel]`).
//!
//! Both are written as `#[differentiable]` code: one gather builds the
//! windows (im2col: for each channel and kernel offset, the row of inputs
//! it meets at every output position; zero padding
//! read from an appended fill element), then a GEMM (convolution) or a
//! reduction over the window (pooling). Their derivatives are those of the
//! gather (a scatter-add), the GEMM and the reduction, so every transform
//! composes with them.

use crate::Array;
use crate::composite::gather::strides;
use nabla_macros::differentiable;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The windows of a sliding kernel over a grid: output shape, and for each
/// output position and kernel offset (layout `[out positions, kernel
/// offsets]`) the flat input position it reads, `None` in the padding.
fn windows(
    op: &str,
    input: &[usize],
    kernel: &[usize],
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
) -> (Vec<usize>, Vec<Option<usize>>) {
    let d = input.len();
    for (name, v) in [
        ("kernel", kernel),
        ("stride", stride),
        ("padding", padding),
        ("dilation", dilation),
    ] {
        assert!(
            v.len() == d,
            "{op}: {name} {v:?} has {} entries for {d} spatial axes (input spatial shape {input:?}); give one per axis",
            v.len()
        );
    }
    assert!(
        stride.iter().chain(dilation).chain(kernel).all(|&s| s > 0),
        "{op}: kernel {kernel:?}, stride {stride:?} and dilation {dilation:?} must be positive"
    );
    let out: Vec<usize> = (0..d)
        .map(|i| {
            let span = dilation[i] * (kernel[i] - 1) + 1;
            let padded = input[i] + 2 * padding[i];
            assert!(
                padded >= span,
                "{op}: the kernel spans {span} on spatial axis {i} but the padded input has only {padded} \
                 (input {input:?}, kernel {kernel:?}, padding {padding:?}, dilation {dilation:?})"
            );
            (padded - span) / stride[i] + 1
        })
        .collect();
    let (is, os, ks) = (strides(input), strides(&out), strides(kernel));
    let (npos, nk): (usize, usize) = (out.iter().product(), kernel.iter().product());
    let mut reads = Vec::with_capacity(npos * nk);
    for l in 0..npos {
        for k in 0..nk {
            let mut flat = Some(0);
            for i in 0..d {
                let (o, kk) = (l / os[i] % out[i], k / ks[i] % kernel[i]);
                let at = (o * stride[i] + kk * dilation[i]) as isize - padding[i] as isize;
                flat = match flat {
                    Some(f) if (0..input[i] as isize).contains(&at) => {
                        Some(f + at as usize * is[i])
                    }
                    _ => None,
                };
            }
            reads.push(flat);
        }
    }
    (out, reads)
}

/// What `conv` computes, from the shapes and parameters.
#[doc(hidden)]
pub struct ConvPlan {
    /// For each example: the positions of `[x.flatten(), 0]` the gather reads,
    /// layout `[groups, channels per group, kernel offsets, out positions]`.
    pub cols: Vec<usize>,
    /// Whether any window reads the padding (the fill is appended).
    pub padded: bool,
    /// Batch size, groups, output channels per group, `channels per group ×
    /// kernel size`, output positions.
    pub n: usize,
    pub g: usize,
    pub og: usize,
    pub cgk: usize,
    pub l: usize,
    /// Channels times input positions (one example's length).
    pub cs: usize,
    /// `[N, O, *out spatial]`.
    pub out: Vec<usize>,
}

/// The shapes and parameters a [`ConvPlan`] is built from.
type ConvKey = (
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    usize,
);

impl ConvPlan {
    /// Checks the shapes and returns the plan, built once per shapes and
    /// parameters (a training loop's convolutions reuse theirs: building
    /// the window table costs about a tenth of a small layer's step).
    #[track_caller]
    pub fn new(
        x: impl AsRef<[usize]>,
        w: impl AsRef<[usize]>,
        stride: &[usize],
        padding: &[usize],
        dilation: &[usize],
        groups: usize,
    ) -> Arc<ConvPlan> {
        static PLANS: Mutex<Option<HashMap<ConvKey, Arc<ConvPlan>>>> = Mutex::new(None);
        let (x, w) = (x.as_ref(), w.as_ref());
        let key = (
            x.to_vec(),
            w.to_vec(),
            stride.to_vec(),
            padding.to_vec(),
            dilation.to_vec(),
            groups,
        );
        if let Some(p) = PLANS
            .lock()
            .ok()
            .and_then(|m| m.as_ref()?.get(&key).cloned())
        {
            return p;
        }
        let plan = Arc::new(ConvPlan::build(x, w, stride, padding, dilation, groups));
        if let Ok(mut m) = PLANS.lock() {
            let m = m.get_or_insert_with(HashMap::new);
            if m.len() >= 64 {
                m.clear();
            }
            m.insert(key, plan.clone());
        }
        plan
    }

    #[track_caller]
    fn build(
        x: &[usize],
        w: &[usize],
        stride: &[usize],
        padding: &[usize],
        dilation: &[usize],
        groups: usize,
    ) -> ConvPlan {
        assert!(
            (3..=5).contains(&x.len()) && w.len() == x.len(),
            "conv: x must be [N, C, *spatial] with 1 to 3 spatial axes and w [O, C / groups, *kernel] \
             of the same rank; found x {x:?}, w {w:?}"
        );
        let (n, c, o, cg) = (x[0], x[1], w[0], w[1]);
        assert!(
            groups > 0 && c == cg * groups && o % groups == 0,
            "conv: {c} input channels and weights {w:?} do not fit groups = {groups}: \
             w must be [O, C / groups, ..] with O divisible by groups"
        );
        let (out_sp, reads) = windows("conv", &x[2..], &w[2..], stride, padding, dilation);
        let s: usize = x[2..].iter().product();
        let k: usize = w[2..].iter().product();
        let npos: usize = out_sp.iter().product();
        let fill = c * s;
        let mut cols = Vec::with_capacity(npos * c * k);
        for ch in 0..c {
            for kk in 0..k {
                for l in 0..npos {
                    cols.push(reads[l * k + kk].map_or(fill, |p| ch * s + p));
                }
            }
        }
        let mut out = vec![n, o];
        out.extend(&out_sp);
        ConvPlan {
            padded: reads.iter().any(Option::is_none),
            cols,
            n,
            g: groups,
            og: o / groups,
            cgk: cg * k,
            l: npos,
            cs: c * s,
            out,
        }
    }
}

/// Convolution (cross-correlation, as in PyTorch and JAX's
/// `conv_general_dilated`) of `x` `[N, C, *spatial]` with `w`
/// `[O, C / groups, *kernel]` over 1, 2 or 3 spatial axes; `stride`,
/// `padding` (zeros, on both sides) and `dilation` give one entry per
/// spatial axis. No bias (add it after: `y + b.reshape(&[1, O, 1, 1])`).
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[1, 1, 4]);
/// let w = Array::from_vec(vec![1.0f64, -1.0], &[1, 1, 2]);
/// let y = nabla::conv(&x, &w, &[1], &[0], &[1], 1);
/// assert_eq!(y.to_vec::<f64>(), vec![-1.0, -1.0, -1.0]);
/// ```
#[differentiable(crate = crate)]
pub fn conv(
    x: &Array,
    w: &Array,
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
    groups: usize,
) -> Array {
    let p = crate::composite::window::ConvPlan::new(
        x.shape(),
        w.shape(),
        stride,
        padding,
        dilation,
        groups,
    );
    let mut xf = x.reshape(&[p.n, p.cs]);
    if p.padded {
        xf = crate::composite::gather::with_fill(&xf, 0.0);
    }
    let cols = xf.index_select(1, &p.cols);
    // [G, Og, Cg·k] · [N, G, Cg·k, positions]: the output comes out as
    // [N, G, Og, positions], which is NCHW.
    let y = w
        .reshape(&[p.g, p.og, p.cgk])
        .matmul(&cols.reshape(&[p.n, p.g, p.cgk, p.l]));
    y.reshape(&p.out)
}

/// What a pooling op computes: the positions of `[x_row, fill]` each
/// window reads (layout `[out positions, kernel offsets]`), the number of
/// rows (all leading axes), the window size and the output shape.
#[doc(hidden)]
pub struct PoolPlan {
    pub reads: Vec<usize>,
    pub padded: bool,
    pub rows: usize,
    pub s: usize,
    pub l: usize,
    pub k: usize,
    pub out: Vec<usize>,
}

impl PoolPlan {
    /// Checks the shapes and builds the plan; pooling runs over the last
    /// `kernel.len()` axes.
    #[track_caller]
    pub fn new(
        op: &str,
        x: impl AsRef<[usize]>,
        kernel: &[usize],
        stride: &[usize],
        padding: &[usize],
    ) -> PoolPlan {
        let x = x.as_ref();
        let d = kernel.len();
        assert!(
            x.len() > d,
            "{op}: x of shape {x:?} needs at least one leading axis before the {d} pooled axes"
        );
        for (i, (&k, &p)) in kernel.iter().zip(padding).enumerate() {
            assert!(
                2 * p <= k,
                "{op}: padding {p} on pooled axis {i} is more than half the kernel {k} (as in PyTorch, padding <= kernel / 2)"
            );
        }
        let lead = x.len() - d;
        let ones = vec![1; d];
        let (out_sp, reads) = windows(op, &x[lead..], kernel, stride, padding, &ones);
        let s: usize = x[lead..].iter().product();
        let mut out = x[..lead].to_vec();
        out.extend(&out_sp);
        PoolPlan {
            padded: reads.iter().any(Option::is_none),
            reads: reads.iter().map(|r| r.unwrap_or(s)).collect(),
            rows: x[..lead].iter().product(),
            s,
            l: out_sp.iter().product(),
            k: kernel.iter().product(),
            out,
        }
    }
}

/// Max pooling over the last two axes of `x` (`[N, C, H, W]` or
/// `[C, H, W]`), windows `kernel`, steps `stride`, padding (with −∞)
/// `padding` on both sides. Ties in a window share the gradient evenly.
///
/// ```
/// # use nabla::*;
/// let x = Array::arange(16, DType::F64).reshape(&[1, 1, 4, 4]);
/// let y = nabla::max_pool2d(&x, &[2, 2], &[2, 2], &[0, 0]);
/// assert_eq!(y.to_vec::<f64>(), vec![5.0, 7.0, 13.0, 15.0]);
/// ```
#[differentiable(crate = crate)]
pub fn max_pool2d(x: &Array, kernel: &[usize], stride: &[usize], padding: &[usize]) -> Array {
    let p =
        crate::composite::window::PoolPlan::new("max_pool2d", x.shape(), kernel, stride, padding);
    let mut rows = x.reshape(&[p.rows, p.s]);
    if p.padded {
        rows = crate::composite::gather::with_fill(&rows, f64::NEG_INFINITY);
    }
    rows.index_select(1, &p.reads)
        .reshape(&[p.rows, p.l, p.k])
        .max_axes(&[2], false)
        .reshape(&p.out)
}

/// Average pooling over the last two axes (as [`max_pool2d`]); zero
/// padding counts in the average (PyTorch's `count_include_pad=True`).
///
/// ```
/// # use nabla::*;
/// let x = Array::arange(16, DType::F64).reshape(&[1, 1, 4, 4]);
/// let y = nabla::avg_pool2d(&x, &[2, 2], &[2, 2], &[0, 0]);
/// assert_eq!(y.to_vec::<f64>(), vec![2.5, 4.5, 10.5, 12.5]);
/// ```
#[differentiable(crate = crate)]
pub fn avg_pool2d(x: &Array, kernel: &[usize], stride: &[usize], padding: &[usize]) -> Array {
    let p =
        crate::composite::window::PoolPlan::new("avg_pool2d", x.shape(), kernel, stride, padding);
    let mut rows = x.reshape(&[p.rows, p.s]);
    if p.padded {
        rows = crate::composite::gather::with_fill(&rows, 0.0);
    }
    rows.index_select(1, &p.reads)
        .reshape(&[p.rows, p.l, p.k])
        .sum_axes(&[2], false)
        .reshape(&p.out)
        * (1.0 / p.k as f64)
}
