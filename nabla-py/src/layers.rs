//! The network layers of `nabla.nn.functional` under PyTorch's names and
//! arguments: `conv1d`/`conv2d`/`conv3d`, `max_pool2d`, `avg_pool2d`,
//! `layer_norm`, `rms_norm` and `embedding`, over the runtime's composites
//! (`nabla::conv`, ...) at `Dyn`, so they run on tracers.

use crate::array::PyArray;
use crate::convert::{operand, operands, shape_arg};
use crate::errors::guard;
use crate::ops_more::{arg, index_arg};
use nabla::dynamic::Dyn;
use nabla::{Array, ArrayValue, DType, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// An int (the same on every spatial axis) or one int per spatial axis.
fn per_axis(op: &str, name: &str, v: &Bound<'_, PyAny>, d: usize) -> PyResult<Vec<usize>> {
    if let Ok(n) = v.extract::<usize>() {
        return Ok(vec![n; d]);
    }
    match v.extract::<Vec<usize>>() {
        Ok(s) if s.len() == d => Ok(s),
        Ok(s) if s.len() == 1 => Ok(vec![s[0]; d]),
        _ => Err(PyValueError::new_err(format!(
            "{op}: {name} must be a non-negative int or {d} of them (one per spatial axis)"
        ))),
    }
}

/// `x` with a batch axis of 1 in front when it has `d + 1` axes (PyTorch's
/// unbatched `[C, *spatial]` input), and whether one was added.
fn batched_input(op: &str, x: Dyn, d: usize) -> PyResult<(Dyn, bool)> {
    let s = x.shape_vec();
    if s.len() == d + 1 {
        let mut s1 = vec![1];
        s1.extend(s.iter().copied());
        return Ok((guard(|| x.reshape(&s1))?, true));
    }
    if s.len() != d + 2 {
        return Err(PyValueError::new_err(format!(
            "{op}: input of shape {:?} must be [N, C, {d} spatial axes] or [C, {d} spatial axes]",
            &s[..]
        )));
    }
    Ok((x, false))
}

/// `y` without the batch axis `batched_input` added.
fn unbatched(y: Dyn, added: bool) -> PyResult<Dyn> {
    if !added {
        return Ok(y);
    }
    let s = y.shape_vec()[1..].to_vec();
    guard(|| y.reshape(&s))
}

/// Convolution over `d` spatial axes, PyTorch's arguments.
#[allow(clippy::too_many_arguments)]
fn conv_nd(
    op: &str,
    d: usize,
    input: &Bound<'_, PyAny>,
    weight: &Bound<'_, PyAny>,
    bias: Option<&Bound<'_, PyAny>>,
    stride: &Bound<'_, PyAny>,
    padding: &Bound<'_, PyAny>,
    dilation: &Bound<'_, PyAny>,
    groups: usize,
) -> PyResult<PyArray> {
    let (x, w) = operands(input, weight)?;
    let (x, added) = batched_input(op, x, d)?;
    let ws = w.shape_vec();
    if ws.len() != d + 2 {
        return Err(PyValueError::new_err(format!(
            "{op}: weight of shape {:?} must be [out_channels, in_channels / groups, {d} kernel axes]",
            &ws[..]
        )));
    }
    let stride = per_axis(op, "stride", stride, d)?;
    let dilation = per_axis(op, "dilation", dilation, d)?;
    // Symmetric padding goes to the convolution; 'same' with an odd total
    // pads the input first (the extra element at the end, as PyTorch).
    let mut pre: Option<Vec<(usize, usize)>> = None;
    let pad = if let Ok(mode) = padding.extract::<String>() {
        match mode.as_str() {
            "valid" => vec![0; d],
            "same" => {
                if stride.iter().any(|&s| s != 1) {
                    return Err(PyValueError::new_err(format!(
                        "{op}: padding='same' is not supported for strided convolutions (stride {stride:?})"
                    )));
                }
                let total: Vec<usize> = (0..d).map(|i| dilation[i] * (ws[2 + i] - 1)).collect();
                if total.iter().all(|t| t % 2 == 0) {
                    total.iter().map(|t| t / 2).collect()
                } else {
                    let mut p = vec![(0, 0); 2];
                    p.extend(total.iter().map(|t| (t / 2, t - t / 2)));
                    pre = Some(p);
                    vec![0; d]
                }
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{op}: padding {mode:?} is not one of 'valid', 'same' or ints"
                )));
            }
        }
    } else {
        per_axis(op, "padding", padding, d)?
    };
    let b = bias.map(|b| operand(b, &x)).transpose()?;
    let y = guard(|| {
        let x = match &pre {
            Some(p) => nabla::pad::forward::<Dyn>(&x, p, 0.0),
            None => x,
        };
        let y = nabla::conv::forward::<Dyn>(&x, &w, &stride, &pad, &dilation, groups);
        match b {
            Some(b) => {
                let mut s = vec![1, ws[0]];
                s.extend(vec![1; d]);
                y.add(&b.reshape(&s))
            }
            None => y,
        }
    })?;
    Ok(PyArray::new(unbatched(y, added)?))
}

/// 1-D convolution (`torch.nn.functional.conv1d`): `input` `[N, C, L]`
/// (or `[C, L]`), `weight` `[O, C / groups, k]`, optional `bias` `[O]`;
/// `padding` is ints, `'valid'` or `'same'`.
#[pyfunction]
#[pyo3(signature = (input, weight, bias = None, stride = None, padding = None, dilation = None, groups = 1),
       text_signature = "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)")]
#[allow(clippy::too_many_arguments)]
pub fn conv1d(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    weight: &Bound<'_, PyAny>,
    bias: Option<&Bound<'_, PyAny>>,
    stride: Option<&Bound<'_, PyAny>>,
    padding: Option<&Bound<'_, PyAny>>,
    dilation: Option<&Bound<'_, PyAny>>,
    groups: usize,
) -> PyResult<PyArray> {
    conv_dispatch(
        py,
        "conv1d",
        1,
        input,
        weight,
        bias,
        [stride, padding, dilation],
        groups,
    )
}

/// 2-D convolution (`torch.nn.functional.conv2d`): `input` `[N, C, H, W]`
/// (or `[C, H, W]`), `weight` `[O, C / groups, kh, kw]`, optional `bias`
/// `[O]`; `stride`, `padding`, `dilation` an int or a pair; `padding` also
/// `'valid'` or `'same'`.
#[pyfunction]
#[pyo3(signature = (input, weight, bias = None, stride = None, padding = None, dilation = None, groups = 1),
       text_signature = "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)")]
#[allow(clippy::too_many_arguments)]
pub fn conv2d(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    weight: &Bound<'_, PyAny>,
    bias: Option<&Bound<'_, PyAny>>,
    stride: Option<&Bound<'_, PyAny>>,
    padding: Option<&Bound<'_, PyAny>>,
    dilation: Option<&Bound<'_, PyAny>>,
    groups: usize,
) -> PyResult<PyArray> {
    conv_dispatch(
        py,
        "conv2d",
        2,
        input,
        weight,
        bias,
        [stride, padding, dilation],
        groups,
    )
}

/// 3-D convolution (`torch.nn.functional.conv3d`), as `conv2d` with three
/// spatial axes.
#[pyfunction]
#[pyo3(signature = (input, weight, bias = None, stride = None, padding = None, dilation = None, groups = 1),
       text_signature = "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)")]
#[allow(clippy::too_many_arguments)]
pub fn conv3d(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    weight: &Bound<'_, PyAny>,
    bias: Option<&Bound<'_, PyAny>>,
    stride: Option<&Bound<'_, PyAny>>,
    padding: Option<&Bound<'_, PyAny>>,
    dilation: Option<&Bound<'_, PyAny>>,
    groups: usize,
) -> PyResult<PyArray> {
    conv_dispatch(
        py,
        "conv3d",
        3,
        input,
        weight,
        bias,
        [stride, padding, dilation],
        groups,
    )
}

/// An optional argument, None when Python passed None.
fn given<'a, 'py>(v: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    v.filter(|v| !v.is_none())
}

/// PyTorch's defaults (stride 1, padding 0, dilation 1) filled in.
#[allow(clippy::too_many_arguments)]
fn conv_dispatch(
    py: Python<'_>,
    op: &str,
    d: usize,
    input: &Bound<'_, PyAny>,
    weight: &Bound<'_, PyAny>,
    bias: Option<&Bound<'_, PyAny>>,
    [stride, padding, dilation]: [Option<&Bound<'_, PyAny>>; 3],
    groups: usize,
) -> PyResult<PyArray> {
    let one = 1usize.into_pyobject(py)?.into_any();
    let zero = 0usize.into_pyobject(py)?.into_any();
    conv_nd(
        op,
        d,
        input,
        weight,
        given(bias),
        given(stride).unwrap_or(&one),
        given(padding).unwrap_or(&zero),
        given(dilation).unwrap_or(&one),
        groups,
    )
}

/// The pooling window, steps (the window when None) and padding.
fn pool_args(
    op: &str,
    kernel_size: &Bound<'_, PyAny>,
    stride: Option<&Bound<'_, PyAny>>,
    padding: Option<&Bound<'_, PyAny>>,
) -> PyResult<[Vec<usize>; 3]> {
    let k = per_axis(op, "kernel_size", kernel_size, 2)?;
    let s = match stride {
        Some(s) if !s.is_none() => per_axis(op, "stride", s, 2)?,
        _ => k.clone(),
    };
    let p = match padding {
        Some(p) if !p.is_none() => per_axis(op, "padding", p, 2)?,
        _ => vec![0, 0],
    };
    Ok([k, s, p])
}

fn no_ceil(op: &str, ceil_mode: bool) -> PyResult<()> {
    if ceil_mode {
        return Err(PyValueError::new_err(format!(
            "{op}: ceil_mode=True is not supported (the output size rounds down)"
        )));
    }
    Ok(())
}

/// Max pooling over the last two axes (`torch.nn.functional.max_pool2d`;
/// input `[N, C, H, W]` or `[C, H, W]`); `stride` defaults to
/// `kernel_size`, padding (with -inf) is at most half the window. Ties in
/// a window share the gradient evenly.
#[pyfunction]
#[pyo3(signature = (input, kernel_size, stride = None, padding = None, dilation = None, ceil_mode = false),
       text_signature = "(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False)")]
pub fn max_pool2d(
    input: &Bound<'_, PyAny>,
    kernel_size: &Bound<'_, PyAny>,
    stride: Option<&Bound<'_, PyAny>>,
    padding: Option<&Bound<'_, PyAny>>,
    dilation: Option<&Bound<'_, PyAny>>,
    ceil_mode: bool,
) -> PyResult<PyArray> {
    let op = "max_pool2d";
    let [k, s, p] = pool_args(op, kernel_size, stride, padding)?;
    let dilation = match dilation {
        Some(d) if !d.is_none() => per_axis(op, "dilation", d, 2)?,
        _ => vec![1, 1],
    };
    if dilation != [1, 1] {
        return Err(PyValueError::new_err(
            "max_pool2d: dilation other than 1 is not supported",
        ));
    }
    no_ceil(op, ceil_mode)?;
    let x = arg(input)?;
    guard(|| PyArray::new(nabla::max_pool2d::forward::<Dyn>(&x, &k, &s, &p)))
}

/// Average pooling over the last two axes
/// (`torch.nn.functional.avg_pool2d`): `count_include_pad` counts the zero
/// padding in each average, `divisor_override` replaces the count.
#[pyfunction]
#[pyo3(signature = (input, kernel_size, stride = None, padding = None, ceil_mode = false, count_include_pad = true, divisor_override = None),
       text_signature = "(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None)")]
pub fn avg_pool2d(
    input: &Bound<'_, PyAny>,
    kernel_size: &Bound<'_, PyAny>,
    stride: Option<&Bound<'_, PyAny>>,
    padding: Option<&Bound<'_, PyAny>>,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<usize>,
) -> PyResult<PyArray> {
    let op = "avg_pool2d";
    let [k, s, p] = pool_args(op, kernel_size, stride, padding)?;
    no_ceil(op, ceil_mode)?;
    if divisor_override == Some(0) {
        return Err(PyValueError::new_err(
            "avg_pool2d: divisor_override must be positive",
        ));
    }
    let x = arg(input)?;
    let window = (k[0] * k[1]) as f64;
    guard(|| {
        let pool = |v: &Dyn| nabla::avg_pool2d::forward::<Dyn>(v, &k, &s, &p);
        let y = pool(&x);
        PyArray::new(match divisor_override {
            Some(d) => y.mul_scalar(window / d as f64),
            None if !count_include_pad && p.iter().any(|&q| q > 0) => {
                // Each average over the window's elements inside the input.
                y.div(&pool(&x.ones_like().stop_gradient()))
            }
            None => y,
        })
    })
}

/// A normalisation's weight (or bias): the given one, checked against
/// `normalized_shape`, or `fill` everywhere.
fn affine(
    op: &str,
    p: Option<&Bound<'_, PyAny>>,
    x: &Dyn,
    shape: &[usize],
    fill: f64,
) -> PyResult<Dyn> {
    match p.filter(|p| !p.is_none()) {
        Some(p) => {
            let v = operand(p, x)?;
            if v.shape_vec()[..] != *shape {
                return Err(PyValueError::new_err(format!(
                    "{op}: weight and bias must have normalized_shape {shape:?}, found {:?}",
                    &v.shape_vec()[..]
                )));
            }
            Ok(if v.dtype() == x.dtype() {
                v
            } else {
                guard(|| v.cast(x.dtype()))?
            })
        }
        None => Ok(Dyn::Array(
            Array::full(shape, fill, x.dtype()).to_device(x.device()),
        )),
    }
}

/// The input, and `normalized_shape` after checking it ends its shape.
fn normalized(
    op: &str,
    input: &Bound<'_, PyAny>,
    normalized_shape: &Bound<'_, PyAny>,
) -> PyResult<(Dyn, Vec<usize>)> {
    let x = arg(input)?;
    let ns = shape_arg(normalized_shape)?;
    let s = x.shape_vec();
    if ns.is_empty() || ns.len() > s.len() || s[s.len() - ns.len()..] != ns[..] {
        return Err(PyValueError::new_err(format!(
            "{op}: normalized_shape {ns:?} must be the last axes of the input's shape {:?}",
            &s[..]
        )));
    }
    if !x.dtype().is_float() {
        return Err(PyTypeError::new_err(format!(
            "{op}: input must be float32 or float64, found {:?}",
            x.dtype()
        )));
    }
    Ok((x, ns))
}

/// Layer normalisation (`torch.nn.functional.layer_norm`): over the
/// trailing `normalized_shape` axes, `(x - mean) / sqrt(var + eps) *
/// weight + bias` (biased variance; weight 1 and bias 0 when None).
#[pyfunction]
#[pyo3(signature = (input, normalized_shape, weight = None, bias = None, eps = 1e-5))]
pub fn layer_norm(
    input: &Bound<'_, PyAny>,
    normalized_shape: &Bound<'_, PyAny>,
    weight: Option<&Bound<'_, PyAny>>,
    bias: Option<&Bound<'_, PyAny>>,
    eps: f64,
) -> PyResult<PyArray> {
    let (x, ns) = normalized("layer_norm", input, normalized_shape)?;
    let w = affine("layer_norm", weight, &x, &ns, 1.0)?;
    let b = affine("layer_norm", bias, &x, &ns, 0.0)?;
    guard(|| PyArray::new(nabla::layer_norm::forward::<Dyn>(&x, &w, &b, eps)))
}

/// Root-mean-square normalisation (`torch.nn.functional.rms_norm`): over
/// the trailing `normalized_shape` axes, `x / sqrt(mean(x²) + eps) *
/// weight`; `eps` None is the dtype's machine epsilon, as in PyTorch.
#[pyfunction]
#[pyo3(signature = (input, normalized_shape, weight = None, eps = None))]
pub fn rms_norm(
    input: &Bound<'_, PyAny>,
    normalized_shape: &Bound<'_, PyAny>,
    weight: Option<&Bound<'_, PyAny>>,
    eps: Option<f64>,
) -> PyResult<PyArray> {
    let (x, ns) = normalized("rms_norm", input, normalized_shape)?;
    let w = affine("rms_norm", weight, &x, &ns, 1.0)?;
    let eps = eps.unwrap_or(match x.dtype() {
        DType::F32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    });
    guard(|| PyArray::new(nabla::rms_norm::forward::<Dyn>(&x, &w, eps)))
}

/// The rows of `weight` (`[vocab, dim]`) at the integer `input` (any
/// shape): `input.shape + (dim,)` (`torch.nn.functional.embedding`).
#[pyfunction]
pub fn embedding(input: &Bound<'_, PyAny>, weight: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let idx = index_arg("embedding", input)?;
    let w = arg(weight)?;
    guard(|| {
        PyArray::new(match &idx {
            Dyn::Array(idx) => nabla::embedding::forward::<Dyn>(&w, idx),
            traced => {
                // Rows of the table at indices read when the op runs.
                let s = w.shape_vec();
                if s.len() != 2 {
                    panic!("embedding: the table must be [vocab, dim], found shape {s:?}");
                }
                w.take_named("embedding", 0, traced)
            }
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! add {
        ($($f:ident),*) => { $(m.add_function(wrap_pyfunction!($f, m)?)?;)* };
    }
    add!(
        conv1d, conv2d, conv3d, max_pool2d, avg_pool2d, layer_norm, rms_norm, embedding
    );
    Ok(())
}
