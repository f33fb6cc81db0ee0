//! Reproducible random numbers: seeded streams, one per thread
//! (`manual_seed`, `randn`, `rand`), and explicit JAX-style keys ([`Key`],
//! `split`).
//!
//! The generator is counter-based: element `i` of a draw with key `k` is a
//! pure function of `(k, i)` (SplitMix64's output function over a Weyl
//! sequence), so draws are reproducible, order-independent, parallel, and
//! the same formula can run on a GPU.
//!
//! Each thread draws from its own stream, so a thread that seeds itself
//! gets the same numbers whatever other threads draw meanwhile (tests
//! running in parallel, a data loader beside the training loop) and however
//! many threads the kernels use. [`manual_seed`] restarts the calling
//! thread's stream and sets the seed that threads which have not drawn yet
//! start from; a thread that draws without seeding itself gets a stream of
//! its own from that seed and the order in which threads first draw, which
//! only a program that starts its threads in a fixed order can reproduce.
//! Seed each thread, or pass [`Key`]s, where that matters.

use crate::{Array, DType};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An explicit random key, like `jax.random.PRNGKey`. Keys are values:
/// the same key always gives the same numbers; [`Key::split`] derives
/// independent keys.
///
/// ```
/// use nabla::{random::Key, DType};
/// let key = Key::new(0);
/// let [a, b] = key.split2();
/// assert_eq!(a.normal(&[3], DType::F64).to_vec::<f64>(), a.normal(&[3], DType::F64).to_vec::<f64>());
/// assert_ne!(a.normal(&[3], DType::F64).to_vec::<f64>(), b.normal(&[3], DType::F64).to_vec::<f64>());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key(u64);

impl Key {
    /// A key from a seed.
    ///
    /// ```
    /// use nabla::{random::Key, DType};
    /// assert_eq!(Key::new(7), Key::new(7));
    /// assert_ne!(Key::new(7), Key::new(8));
    /// let a = Key::new(7).uniform(&[2], DType::F64).to_vec::<f64>();
    /// assert_eq!(a, Key::new(7).uniform(&[2], DType::F64).to_vec::<f64>());
    /// ```
    pub fn new(seed: u64) -> Key {
        Key(mix(seed ^ 0x5EED_0000_0000_0001))
    }

    /// `n` new keys, independent of each other and of `self`.
    ///
    /// ```
    /// let keys = nabla::random::Key::new(1).split(3);
    /// assert_eq!(keys.len(), 3);
    /// ```
    pub fn split(self, n: usize) -> Vec<Key> {
        (0..n as u64).map(|i| self.fold_in(i)).collect()
    }

    /// Two new keys.
    ///
    /// ```
    /// let [a, b] = nabla::random::Key::new(1).split2();
    /// assert_ne!(a, b);
    /// ```
    pub fn split2(self) -> [Key; 2] {
        [self.fold_in(0), self.fold_in(1)]
    }

    /// A new key derived from `self` and `data`.
    ///
    /// ```
    /// use nabla::random::Key;
    /// assert_ne!(Key::new(0).fold_in(1), Key::new(0).fold_in(2));
    /// ```
    pub fn fold_in(self, data: u64) -> Key {
        Key(mix(
            mix(self.0 ^ 0xA076_1D64_78BD_642F).wrapping_add(mix(data.wrapping_add(GOLDEN)))
        ))
    }

    fn bits(self, i: u64) -> u64 {
        mix(self.0.wrapping_add(i.wrapping_add(1).wrapping_mul(GOLDEN)))
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    fn uniform_at(self, i: u64) -> f64 {
        (self.bits(i) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform samples in `[0, 1)`.
    ///
    /// ```
    /// use nabla::{random::Key, DType};
    /// let u = Key::new(3).uniform(&[1000], DType::F64).to_vec::<f64>();
    /// assert!(u.iter().all(|&v| (0.0..1.0).contains(&v)));
    /// ```
    #[track_caller]
    pub fn uniform(self, shape: &[usize], dtype: DType) -> Array {
        let mut v = crate::array::create::reserve("uniform", shape);
        let n: usize = shape.iter().product(); // checked by `reserve`
        v.extend((0..n as u64).map(|i| self.uniform_at(i)));
        Array::from_vec(v, shape).cast(float(dtype, "uniform"))
    }

    /// Standard normal samples (Box–Muller on pairs of uniforms).
    ///
    /// ```
    /// use nabla::{random::Key, DType};
    /// let x = Key::new(3).normal(&[20000], DType::F64);
    /// assert!(x.mean().item().abs() < 0.05);
    /// ```
    #[track_caller]
    pub fn normal(self, shape: &[usize], dtype: DType) -> Array {
        let mut v = crate::array::create::reserve("normal", shape);
        let n: usize = shape.iter().product(); // checked by `reserve`
        v.extend((0..n as u64).map(|i| {
            let pair = i / 2;
            let u1 = 1.0 - self.uniform_at(2 * pair); // (0, 1]
            let u2 = self.uniform_at(2 * pair + 1);
            let r = (-2.0 * u1.ln()).sqrt();
            let t = std::f64::consts::TAU * u2;
            if i % 2 == 0 { r * t.cos() } else { r * t.sin() }
        }));
        Array::from_vec(v, shape).cast(float(dtype, "normal"))
    }
}

#[track_caller]
fn float(dtype: DType, op: &str) -> DType {
    if !dtype.is_float() {
        panic!("{op}: random samples need a float dtype (F32 or F64), got {dtype}");
    }
    dtype
}

/// The seed that threads start from when they draw without seeding
/// themselves ([`manual_seed`] sets it).
static PROCESS_SEED: AtomicU64 = AtomicU64::new(0x0123_4567_89AB_CDEF);
/// How many threads have started a stream of their own.
static THREADS_STARTED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's stream: its key and how many draws it has made.
    static STREAM: Cell<Option<(Key, u64)>> = const { Cell::new(None) };
}

fn next_key() -> Key {
    STREAM.with(|stream| {
        let (key, counter) = stream.get().unwrap_or_else(|| {
            let seed = PROCESS_SEED.load(Ordering::Relaxed);
            let ordinal = THREADS_STARTED.fetch_add(1, Ordering::Relaxed);
            (Key::new(seed).fold_in(ordinal), 0)
        });
        stream.set(Some((key, counter + 1)));
        key.fold_in(counter)
    })
}

/// Seeds the calling thread's stream, used by [`randn`] and [`rand`], like
/// `torch.manual_seed`; threads that have not drawn yet start from the same
/// seed (each with a stream of its own; see the [module docs](self)).
///
/// Draws after a seed depend only on the seed and this thread's draws,
/// never on other threads:
///
/// ```
/// use nabla::{manual_seed, randn, DType};
/// manual_seed(7);
/// let a = randn(&[4], DType::F32).to_vec::<f32>();
/// let other = std::thread::spawn(|| randn(&[1000], DType::F32));
/// manual_seed(7);
/// assert_eq!(a, randn(&[4], DType::F32).to_vec::<f32>());
/// other.join().unwrap();
/// ```
pub fn manual_seed(seed: u64) {
    PROCESS_SEED.store(seed, Ordering::Relaxed);
    STREAM.with(|stream| stream.set(Some((Key::new(seed), 0))));
}

/// Standard normal samples from this thread's stream (see [`manual_seed`]).
///
/// ```
/// use nabla::{randn, DType};
/// assert_eq!(randn(&[2, 3], DType::F32).shape(), &[2, 3]);
/// ```
#[track_caller]
pub fn randn(shape: &[usize], dtype: DType) -> Array {
    next_key().normal(shape, dtype)
}

/// Uniform `[0, 1)` samples from this thread's stream (see [`manual_seed`]).
///
/// ```
/// use nabla::{rand, DType};
/// assert!(rand(&[5], DType::F64).to_vec::<f64>().iter().all(|&v| (0.0..1.0).contains(&v)));
/// ```
#[track_caller]
pub fn rand(shape: &[usize], dtype: DType) -> Array {
    next_key().uniform(shape, dtype)
}

/// Standard normal samples from this thread's stream, placed on `device`.
///
/// Samples are drawn by the same counter-based generator as [`randn`] and
/// copied to the device, so a seed gives the same values on every device
/// (reproducible CPU/GPU comparisons); the cost is one host→device copy.
///
/// ```
/// use nabla::{manual_seed, randn, randn_on, DType, Device};
/// manual_seed(1);
/// let a = randn(&[3], DType::F32).to_vec::<f32>();
/// manual_seed(1);
/// assert_eq!(randn_on(&[3], DType::F32, Device::Cpu).to_vec::<f32>(), a);
/// ```
#[track_caller]
pub fn randn_on(shape: &[usize], dtype: DType, device: crate::Device) -> Array {
    randn(shape, dtype).to_device(device)
}

/// Uniform `[0, 1)` samples from this thread's stream, placed on `device`
/// (same values as [`rand`] for the same seed; see [`randn_on`]).
///
/// ```
/// use nabla::{rand_on, DType, Device};
/// assert_eq!(rand_on(&[4], DType::F64, Device::Cpu).shape(), &[4]);
/// ```
#[track_caller]
pub fn rand_on(shape: &[usize], dtype: DType, device: crate::Device) -> Array {
    rand(shape, dtype).to_device(device)
}
