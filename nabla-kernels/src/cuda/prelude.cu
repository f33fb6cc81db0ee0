// The prelude of every CUDA source Nabla compiles (kernels.cu, and the
// kernels of fused regions written at run time, see fused.rs): element
// types, the `Layout` through which kernels read operands, and the
// registry's elementwise ops as `unary_op`, `binary_op`, `compare_op`.
//
// Nabla's CUDA kernels are compiled at run time with NVRTC, once per device
// (see device.rs). Every kernel writes a contiguous output
// and reads its inputs through a `Layout` (shape of the output, the input's
// own strides in elements, 0 on broadcast axes), so strided views, slices,
// transposes and broadcasts never need a copy first.
//
// Naming: `<family>_<dtype>`, dtype in f32 f64 i64 u8 (bool). Operation
// codes are passed as ints; the elementwise ones and their `switch` cases
// are spliced in from the op registry (nabla_kernels::ops::cuda_source).

typedef long long i64;
typedef unsigned char u8;

#define MAX_DIMS 8

struct Layout {
    i64 ndim;
    i64 offset;
    i64 contiguous;  // 1: element i lives at offset + i
    i64 shape[MAX_DIMS];
    i64 strides[MAX_DIMS];
    i64 periodic;  // 1: element i lives at offset + (i / inner) % period;
                   // 2: at offset + (i / inner) * period + i % inner
    i64 inner;
    i64 period;
};

__device__ __forceinline__ i64 at(const Layout& l, i64 i) {
    if (l.contiguous) return l.offset + i;
    if (l.periodic == 1) {  // fewer than 2^32 elements (checked on the host)
        unsigned int u = (unsigned int)i;
        if (l.inner != 1) u /= (unsigned int)l.inner;
        return l.offset + (i64)(u % (unsigned int)l.period);
    }
    if (l.periodic == 2) {
        const unsigned int u = (unsigned int)i, row = (unsigned int)l.inner;
        return l.offset + (i64)(u / row) * l.period + (i64)(u % row);
    }
    i64 off = l.offset;
    for (int d = (int)l.ndim - 1; d >= 0; --d) {
        i64 s = l.shape[d];
        off += (i % s) * l.strides[d];
        i /= s;
    }
    return off;
}

#define GRID_LOOP(i, n) \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)blockDim.x * gridDim.x)

// ---------------------------------------------------------------- unary
// Special functions CUDA's math library lacks (see nabla-kernels/src/special.rs
// for the method: reflection below -20, recurrence up to x >= 20, then the
// asymptotic series).
template <typename T>
__device__ T nabla_polygamma(int n, T xt) {
    double x = (double)xt;
    if (n < 0 || n > 170 || x != x || (x <= 0.0 && x == floor(x))) return (T)nan("");
    // Below -20, the reflection psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x)),
    // with P_0(c) = c and P_(k+1)(c) = -(1 + c^2) P_k'(c), keeps the recurrence short.
    double rsign = 1.0, rterm = 0.0;
    if (x < -20.0) {
        const double pi = 3.141592653589793;
        double c = 1.0 / tan(pi * (x - floor(x)));
        double p[172];
        for (int j = 0; j < n + 2; ++j) p[j] = 0.0;
        p[1] = 1.0;
        for (int k = 0; k < n; ++k) {
            for (int j = 0; j <= k; ++j) p[j] = (j + 1) * p[j + 1];
            p[k + 1] = 0.0;
            for (int j = k + 2; j >= 0; --j) p[j] = -(p[j] + (j >= 2 ? p[j - 2] : 0.0));
        }
        double v = 0.0;
        for (int j = n + 1; j >= 0; --j) v = v * c + p[j];
        rsign = (n % 2 == 0) ? 1.0 : -1.0;
        rterm = pow(pi, (double)(n + 1)) * v;
        x = 1.0 - x;
    }
    double acc = 0.0, fact = 1.0;
    for (int i = 2; i <= n; ++i) fact *= i;
    if (n == 0) {
        while (x < 20.0) { acc -= 1.0 / x; x += 1.0; }
        const double c[8] = {1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132,
                             -691.0 / 32760, 1.0 / 12, -3617.0 / 8160};
        double inv2 = 1.0 / (x * x), pw = inv2, s = 0.0;
        for (int k = 0; k < 8; ++k) { s += c[k] * pw; pw *= inv2; }
        return (T)(rsign * (acc + log(x) - 0.5 / x - s) - rterm);
    }
    const double b[8] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
                         -691.0 / 2730, 7.0 / 6, -3617.0 / 510};
    double nf = n, sign = (n % 2 == 1) ? 1.0 : -1.0;
    while (x < 20.0) { acc += 1.0 / pow(x, nf + 1.0); x += 1.0; }
    double s = fact / nf / pow(x, nf) + fact / (2.0 * pow(x, nf + 1.0));
    double ratio = fact * (nf + 1.0) / 2.0, inv2 = 1.0 / (x * x), pw = 1.0 / pow(x, nf + 2.0);
    for (int k = 1; k <= 8; ++k) {
        if (k > 1) ratio *= (2.0 * k + nf - 2.0) * (2.0 * k + nf - 1.0) / ((2.0 * k - 1.0) * (2.0 * k));
        s += b[k - 1] * ratio * pw;
        pw *= inv2;
    }
    return (T)(rsign * sign * (fact * acc + s) - rterm);
}
template <typename T>
__device__ __forceinline__ T nabla_digamma(T x) { return nabla_polygamma<T>(0, x); }
template <typename T>
__device__ __forceinline__ T nabla_logaddexp(T a, T b) {
    T m = a > b ? a : b;
    return isinf(m) && m < (T)0 ? m : m + log1p(exp(-fabs(a - b)));
}
template <typename T>
__device__ __forceinline__ T nabla_remainder(T a, T b) {
    T r = a - b * floor(a / b);
    return (r != (T)0 && ((r < (T)0) != (b < (T)0))) ? r + b : r;
}

// Operation codes of the unary ops (written from the op registry,
// nabla-ops, by nabla_kernels::ops::cuda_source).
NABLA_OP_CODES
template <typename T>
__device__ __forceinline__ T unary_op(int op, T v, double p, double q) {
    const T zero = (T)0, one = (T)1;
    switch (op) {
        // One case per registry op: its `cuda` expression.
NABLA_UNARY_CASES
        case UOP_Affine: return (T)p * v + (T)q;
        case UOP_RDiv: return (T)p / v;
        case UOP_ExpBase: return exp(v * (T)log(p));
    }
    return v;
}

template <typename T>
__device__ __forceinline__ T binary_op(int op, T a, T b) {
    switch (op) {
        // One case per registry op: its `cuda` expression.
NABLA_BINARY_CASES
    }
    return a;
}

template <typename T>
__device__ __forceinline__ bool compare_op(int op, T a, T b) {
    switch (op) {
        case 0: return a > b;
        case 1: return a >= b;
        case 2: return a < b;
        case 3: return a <= b;
        case 4: return a == b;
        case 5: return a != b;
    }
    return false;
}
