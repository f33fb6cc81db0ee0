//! Drawn arguments: a small seeded generator (splitmix64, so a failure
//! names a case that reruns the same way) and the arrays, axes and
//! parameters the bad-input tests pass.

use nabla::{Array, DType};

/// A seeded generator of choices.
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    /// A value: mostly ordinary (in -3..3), sometimes 0, ±0.5, NaN, ±inf
    /// or a huge one.
    pub fn value(&mut self) -> f64 {
        if self.chance(0.2) {
            self.pick(&[
                0.0,
                -0.0,
                0.5,
                -0.5,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e300,
                -1e300,
            ])
        } else {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 6.0 - 3.0
        }
    }

    /// A static parameter: ordinary, zero, negative, NaN, inf or extreme.
    pub fn param(&mut self) -> f64 {
        self.pick(&[
            0.0,
            1.0,
            2.0,
            -1.0,
            0.5,
            3.0,
            f64::NAN,
            f64::INFINITY,
            -1e9,
            i32::MAX as f64,
            i32::MIN as f64,
        ])
    }

    /// An axis for an array of rank `nd`: mostly in range (either sign),
    /// sometimes just out of it, sometimes far out.
    pub fn axis(&mut self, nd: usize) -> isize {
        let n = nd as isize;
        match self.below(10) {
            0 => n,
            1 => -n - 1,
            2 => self.pick(&[isize::MAX, isize::MIN, 100]),
            _ if nd == 0 => 0,
            _ => self.below(2 * nd) as isize - n,
        }
    }

    /// A list of axes: in range, with repeats or out of range.
    pub fn axes(&mut self, nd: usize) -> Vec<isize> {
        let k = self.below(nd.min(3) + 2);
        (0..k).map(|_| self.axis(nd)).collect()
    }

    /// A shape: rank 0 to 8 (mostly up to 3), lengths 0 to 3 (rank above
    /// 4: 1 or 2), so at most a few hundred elements.
    pub fn shape(&mut self) -> Vec<usize> {
        let nd = if self.chance(0.1) {
            5 + self.below(4)
        } else {
            self.below(4)
        };
        (0..nd)
            .map(|_| {
                if nd > 4 {
                    1 + self.below(2)
                } else if self.chance(0.1) {
                    0
                } else {
                    1 + self.below(3)
                }
            })
            .collect()
    }

    pub fn dtype(&mut self) -> DType {
        match self.below(10) {
            0..=4 => DType::F64,
            5..=7 => DType::F32,
            8 => DType::I64,
            _ => DType::Bool,
        }
    }

    /// An array of `shape` and `dtype` with drawn values, as a contiguous
    /// array or as a view of another layout: transposed, a slice of a
    /// larger array, or broadcast along its length-1 axes.
    pub fn array_of(&mut self, shape: &[usize], dtype: DType) -> Drawn {
        let layout = self.below(4);
        let nd = shape.len();
        let (array, how) = match layout {
            1 if nd >= 2 => {
                let rev: Vec<usize> = shape.iter().rev().copied().collect();
                let perm: Vec<usize> = (0..nd).rev().collect();
                (self.filled(&rev, dtype).permute(&perm), "transposed")
            }
            2 if nd >= 1 => {
                let mut big = shape.to_vec();
                big[0] += 2;
                (
                    self.filled(&big, dtype).slice_axis(0, 1..1 + shape[0]),
                    "sliced",
                )
            }
            3 if nd >= 1 => {
                // Broadcast an array with some lengths 1 up to the shape.
                let small: Vec<usize> = shape
                    .iter()
                    .map(|&n| if n == 1 || self.chance(0.5) { 1 } else { n })
                    .collect();
                (self.filled(&small, dtype).broadcast_to(shape), "broadcast")
            }
            _ => (self.filled(shape, dtype), "contiguous"),
        };
        Drawn {
            desc: format!("{dtype} {shape:?} {how}"),
            array,
        }
    }

    /// A drawn shape, dtype and layout.
    pub fn array(&mut self) -> Drawn {
        let (s, d) = (self.shape(), self.dtype());
        self.array_of(&s, d)
    }

    fn filled(&mut self, shape: &[usize], dtype: DType) -> Array {
        let n: usize = shape.iter().product();
        let v: Vec<f64> = (0..n).map(|_| self.value()).collect();
        match dtype {
            DType::F64 => Array::from_vec(v, shape),
            DType::F32 => Array::from_vec(v.iter().map(|&x| x as f32).collect(), shape),
            DType::I64 => Array::from_vec(v.iter().map(|&x| x as i64).collect(), shape),
            DType::Bool => Array::from_vec(v.iter().map(|&x| x > 0.0).collect(), shape),
        }
    }

    /// Index values for an axis of length `n`: mostly valid, sometimes
    /// `n` or far out.
    pub fn indices(&mut self, n: usize) -> Vec<usize> {
        let k = self.below(4);
        (0..k)
            .map(|_| match self.below(8) {
                0 => n,
                1 => usize::MAX,
                _ => self.below(n.max(1)),
            })
            .collect()
    }
}

/// A drawn array and how it was made (for failure messages).
pub struct Drawn {
    pub array: Array,
    pub desc: String,
}

/// A contiguous copy of a float array (the reference for layout checks).
pub fn contiguous(x: &Array) -> Array {
    match x.dtype() {
        DType::F32 => Array::from_vec(x.to_vec::<f32>(), x.shape()),
        _ => Array::from_vec(x.to_vec::<f64>(), x.shape()),
    }
}

/// Whether two arrays hold the same shape, dtype and values (NaN equal
/// to NaN).
pub fn same(a: &Array, b: &Array) -> bool {
    a.shape() == b.shape()
        && a.dtype() == b.dtype()
        && a.cast(DType::F64)
            .to_vec::<f64>()
            .iter()
            .zip(b.cast(DType::F64).to_vec::<f64>())
            .all(|(x, y)| *x == y || (x.is_nan() && y.is_nan()))
}

/// The broadcast shape of two shapes under NumPy's rules, if any.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let at = |s: &[usize], i: usize| {
        if i + s.len() >= n {
            s[i + s.len() - n]
        } else {
            1
        }
    };
    (0..n)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}
