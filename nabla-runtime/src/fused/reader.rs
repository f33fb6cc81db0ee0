//! [`Reader`]: a pass's operands read a block at a time, with one bounds
//! check per block and no branch on the operand's kind in the loop (each
//! operand's elements are a pointer and a step, 0 for a broadcast
//! scalar).

use super::lanes::{LANES, Lanes};
use super::region::Kernel;
use super::simd::Src;
use std::marker::PhantomData;

/// The operands of a pass over `n` elements, read block by block.
pub(crate) struct Reader<'a, T, const N: usize> {
    ptr: [*const T; N],
    /// 1 for a buffer of the pass's `n` elements, 0 for a scalar (read
    /// from `splat`).
    step: [usize; N],
    splat: [[T; LANES]; N],
    n: usize,
    _src: PhantomData<&'a [T]>,
}

impl<'a, T: Kernel, const N: usize> Reader<'a, T, N> {
    /// Reads `src`, whose buffers hold the pass's `n` elements each.
    pub fn new(src: &[Src<'a, T>; N], n: usize) -> Self {
        let mut r = Reader {
            ptr: [std::ptr::null(); N],
            step: [0; N],
            splat: [[T::ZERO; LANES]; N],
            n,
            _src: PhantomData,
        };
        for (k, s) in src.iter().enumerate() {
            match s {
                Src::Slice(s) => {
                    assert!(s.len() >= n, "a fused operand shorter than its pass");
                    r.ptr[k] = s.as_ptr();
                    r.step[k] = 1;
                }
                Src::Scalar(v) => r.splat[k] = [*v; LANES],
            }
        }
        r
    }

    /// The whole block of elements `t0 .. t0 + LANES`.
    #[inline(always)]
    pub fn block(&self, t0: usize) -> [Lanes<T>; N] {
        assert!(t0 + LANES <= self.n, "a block past the end of its pass");
        std::array::from_fn(|k| {
            if self.step[k] == 0 {
                Lanes(self.splat[k])
            } else {
                // SAFETY: a buffer holds at least `n` elements (checked in
                // `new`, and borrowed for 'a), and `t0 + LANES <= n`.
                Lanes(unsafe { (self.ptr[k].add(t0) as *const [T; LANES]).read_unaligned() })
            }
        })
    }

    /// The `len < LANES` elements from `t0` on, in the first lanes of each
    /// block (the other lanes zero).
    #[inline(always)]
    pub fn partial(&self, t0: usize, len: usize) -> [Lanes<T>; N] {
        assert!(t0 + len <= self.n, "a block past the end of its pass");
        std::array::from_fn(|k| {
            if self.step[k] == 0 {
                Lanes(self.splat[k])
            } else {
                let mut b = [T::ZERO; LANES];
                // SAFETY: as in `block`, with `t0 + len <= n`.
                let s = unsafe { std::slice::from_raw_parts(self.ptr[k].add(t0), len) };
                b[..len].copy_from_slice(s);
                Lanes(b)
            }
        })
    }
}
