//! NumPy-like printing.

use crate::Array;
use crate::storage::Data;
use std::fmt;

/// Arrays with more elements than this print with `...` like NumPy.
const SUMMARY_THRESHOLD: usize = 1000;
/// Items kept at each end of a summarised axis.
const EDGE_ITEMS: usize = 3;

/// One float as NumPy prints it (`precision` digits at most, trailing
/// zeros dropped, `1.` for whole numbers), or with exactly `fixed` digits
/// when the format asks for a precision (`{:.2}`).
fn fmt_float(v: f64, precision: usize, fixed: Option<usize>) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = v.abs();
    let p = fixed.unwrap_or(precision);
    if a != 0.0 && !(1e-4..1e8).contains(&a) {
        return format!("{v:.p$e}");
    }
    let s = format!("{v:.p$}");
    if fixed.is_some() {
        return s;
    }
    let s = s.trim_end_matches('0');
    // NumPy keeps the point: `1.` not `1`.
    s.to_string()
}

impl Array {
    fn element_strings(&self, fixed: Option<usize>) -> Vec<String> {
        match &*self.data {
            Data::F32(a) => a
                .view()
                .iter()
                .map(|&v| fmt_float(v as f64, 4, fixed))
                .collect(),
            Data::F64(a) => a.view().iter().map(|&v| fmt_float(v, 4, fixed)).collect(),
            Data::I64(a) => a.view().iter().map(|v| v.to_string()).collect(),
            Data::Bool(a) => a
                .view()
                .iter()
                .map(|&v| if v { "true".into() } else { "false".into() })
                .collect(),
            #[cfg(feature = "cuda")]
            Data::Cuda(g) => {
                Array::from_data(crate::storage::gpu::download(g)).element_strings(fixed)
            }
        }
    }
}

fn write_nested(
    f: &mut fmt::Formatter<'_>,
    cells: &[String],
    shape: &[usize],
    width: usize,
    depth: usize,
    summarise: bool,
) -> fmt::Result {
    if shape.is_empty() {
        return write!(f, "{:>width$}", cells[0]);
    }
    let n = shape[0];
    let inner: usize = shape[1..].iter().product();
    f.write_str("[")?;
    let show: Vec<Option<usize>> = if summarise && n > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS)
            .map(Some)
            .chain([None])
            .chain((n - EDGE_ITEMS..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    };
    for (k, i) in show.iter().enumerate() {
        if k > 0 {
            if shape.len() == 1 {
                f.write_str(" ")?;
            } else {
                f.write_str(&"\n".repeat(shape.len() - 1))?;
                f.write_str(&" ".repeat(depth + 1))?;
            }
        }
        match i {
            Some(i) => write_nested(
                f,
                &cells[i * inner..(i + 1) * inner],
                &shape[1..],
                width,
                depth + 1,
                summarise,
            )?,
            None => f.write_str("...")?,
        }
    }
    f.write_str("]")
}

impl fmt::Display for Array {
    /// Prints like NumPy: nested brackets, aligned columns, `...` for large
    /// arrays. A precision (`{:.2}`) prints every float with exactly that
    /// many digits; a width (`{:8}`) is the least width of every element.
    ///
    /// ```
    /// use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f32, 2.5, -3.0, 4.0], &[2, 2]);
    /// assert_eq!(format!("{x}"), "[[ 1.   2.5]\n [-3.   4. ]]");
    /// assert_eq!(format!("{x:.2}"), "[[ 1.00  2.50]\n [-3.00  4.00]]");
    /// assert_eq!(format!("{:6.1}", Array::from_vec(vec![0.25f64, 10.0], &[2])), "[   0.2   10.0]");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cells = self.element_strings(f.precision());
        let summarise = cells.len() > SUMMARY_THRESHOLD;
        // Pad fractional parts so decimal points line up, as NumPy does.
        let frac = |s: &str| {
            s.find('.')
                .map(|p| s.len() - p - 1)
                .filter(|_| !s.contains('e'))
        };
        let max_frac = cells.iter().filter_map(|s| frac(s)).max();
        let cells: Vec<String> = match max_frac {
            Some(m) => cells
                .iter()
                .map(|s| match frac(s) {
                    Some(k) => format!("{s}{}", " ".repeat(m - k)),
                    None => s.clone(),
                })
                .collect(),
            None => cells,
        };
        let width = cells.iter().map(|s| s.len()).max().unwrap_or(0);
        let width = width.max(f.width().unwrap_or(0));
        write_nested(f, &cells, self.shape(), width, 0, summarise)
    }
}

impl fmt::Debug for Array {
    /// `Array(shape=[..], dtype=f32, [values])`.
    ///
    /// ```
    /// use nabla::Array;
    /// assert_eq!(format!("{:?}", Array::scalar(1.0f64)), "Array(shape=[], dtype=f64, 1.)");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Array(shape={:?}, dtype={}, {self})",
            self.shape(),
            self.dtype()
        )
    }
}
