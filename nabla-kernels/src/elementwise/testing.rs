//! Random operands for the broadcast tests of the strided kernels.

use ndarray::{ArrayD, Axis, IxDyn};

/// A xorshift generator.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// A draw from `0..n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// An operand that broadcasts to `out`: some leading axes dropped, some
/// lengths 1, values `i / 4 − salt`, laid out standard, reversed on
/// axis 0 (a negative stride) or column-major.
pub(crate) fn operand(rng: &mut Rng, out: &[usize], salt: f64) -> ArrayD<f64> {
    let nd = out.len();
    let drop = rng.below(nd + 1).min(nd);
    let shape: Vec<usize> = out[drop..]
        .iter()
        .map(|&d| if rng.below(3) == 0 { 1 } else { d })
        .collect();
    let n: usize = shape.iter().product();
    let x = ArrayD::from_shape_vec(
        IxDyn(&shape),
        (0..n).map(|i| i as f64 * 0.25 - salt).collect(),
    )
    .expect("shape matches length");
    let mut r = x.clone();
    match rng.below(3) {
        1 if r.ndim() > 0 => r.invert_axis(Axis(0)),
        2 => r = x.t().as_standard_layout().into_owned().reversed_axes(),
        _ => {}
    }
    r
}
