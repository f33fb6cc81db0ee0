// ---- Row kernels: softmax and normalisation over the last axis ----
// One warp per row of `d` contiguous elements (rows[row * d ..]): the
// row's statistics are warp sums (shuffles, no shared memory), and its
// passes re-read the row from L1/L2, so each row costs one read from
// memory and one write. Grid: any number of warps; each loops over rows.

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <typename T>
__device__ __forceinline__ T warp_max(T v) {
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Mean and 1/sqrt(var + eps) of a row (variance about the mean).
template <typename T>
__device__ __forceinline__ void row_moments(const T* __restrict__ r, i64 d, int lane, double eps,
                                            T& mean, T& rstd) {
    T s = 0;
    for (i64 j = lane; j < d; j += 32) s += r[j];
    mean = warp_sum<T>(s) / (T)d;
    T v = 0;
    for (i64 j = lane; j < d; j += 32) {
        T c = r[j] - mean;
        v += c * c;
    }
    rstd = (T)1 / sqrt(warp_sum<T>(v) / (T)d + (T)eps);
}

#define WARP_PER_ROW(row, rows)                                                          \
    const int lane = threadIdx.x & 31;                                                   \
    const i64 warps_ = ((i64)gridDim.x * blockDim.x) >> 5;                               \
    for (i64 row = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < (rows); \
         row += warps_)

#define ROWS(T, NAME)                                                                          \
    extern "C" __global__ void softmax_rows_##NAME(const T* __restrict__ x, T* __restrict__ y, \
                                                   i64 rows, i64 d, double scale, i64 causal) { \
        WARP_PER_ROW(row, rows) {                                                              \
            const T* xr = x + row * d;                                                         \
            T* yr = y + row * d;                                                               \
            const i64 keep = causal > 0 ? min(d, row % causal + 1) : d;                        \
            const T c = (T)scale;                                                              \
            T m = reduce_identity<T>(2);                                                       \
            for (i64 j = lane; j < keep; j += 32) m = fmax(m, xr[j]);                          \
            m = warp_max<T>(m);                                                                \
            T s = 0;                                                                           \
            for (i64 j = lane; j < keep; j += 32) s += exp((xr[j] - m) * c);                   \
            const T inv = (T)1 / warp_sum<T>(s);                                               \
            for (i64 j = lane; j < d; j += 32) yr[j] = j < keep ? exp((xr[j] - m) * c) * inv : (T)0; \
        }                                                                                      \
    }                                                                                          \
    extern "C" __global__ void softmax_backward_rows_##NAME(                                   \
        const T* __restrict__ y, const T* __restrict__ g, T* __restrict__ dx, i64 rows, i64 d, \
        double scale) {                                                                        \
        WARP_PER_ROW(row, rows) {                                                              \
            const T *yr = y + row * d, *gr = g + row * d;                                      \
            T s = 0;                                                                           \
            for (i64 j = lane; j < d; j += 32) s += yr[j] * gr[j];                             \
            s = warp_sum<T>(s);                                                                \
            const T c = (T)scale;                                                              \
            for (i64 j = lane; j < d; j += 32) dx[row * d + j] = c * yr[j] * (gr[j] - s);      \
        }                                                                                      \
    }                                                                                          \
    extern "C" __global__ void normalize_rows_##NAME(const T* __restrict__ x, T* __restrict__ y, \
                                                     i64 rows, i64 d, double eps) {            \
        WARP_PER_ROW(row, rows) {                                                              \
            const T* xr = x + row * d;                                                         \
            T mean, rstd;                                                                      \
            row_moments<T>(xr, d, lane, eps, mean, rstd);                                      \
            for (i64 j = lane; j < d; j += 32) y[row * d + j] = (xr[j] - mean) * rstd;         \
        }                                                                                      \
    }                                                                                          \
    extern "C" __global__ void normalize_backward_rows_##NAME(                                 \
        const T* __restrict__ x, const T* __restrict__ g, T* __restrict__ dx, i64 rows, i64 d, \
        double eps) {                                                                          \
        WARP_PER_ROW(row, rows) {                                                              \
            const T *xr = x + row * d, *gr = g + row * d;                                      \
            T mean, rstd;                                                                      \
            row_moments<T>(xr, d, lane, eps, mean, rstd);                                      \
            T a = 0, b = 0;                                                                    \
            for (i64 j = lane; j < d; j += 32) {                                               \
                a += gr[j];                                                                    \
                b += gr[j] * (xr[j] - mean) * rstd;                                            \
            }                                                                                  \
            a = warp_sum<T>(a) / (T)d;                                                         \
            b = warp_sum<T>(b) / (T)d;                                                         \
            for (i64 j = lane; j < d; j += 32)                                                 \
                dx[row * d + j] = rstd * (gr[j] - a - (xr[j] - mean) * rstd * b);              \
        }                                                                                      \
    }
ROWS(float, f32)
ROWS(double, f64)
