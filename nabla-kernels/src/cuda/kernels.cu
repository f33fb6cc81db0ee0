// Nabla's CUDA kernels, compiled after prelude.cu into one module per
// device (see device.rs).

// Contiguous operands take the ILP path: each thread loads ILP elements a
// block apart before computing any, so several loads are in flight per
// thread (one at a time leaves HBM bandwidth unused). Launched with
// `grid_ilp` (n / (block * ILP) blocks); the strided path grid-strides.
#define ILP 4
#define ILP_LOOP(b, n)                                                   \
    for (i64 b = (i64)blockIdx.x * blockDim.x * ILP + threadIdx.x; b < (n); \
         b += (i64)gridDim.x * blockDim.x * ILP)

// The contiguous ILP loop with the op known at compile time (OP >= 0: the
// `switch` in unary_op folds away) or at run time (OP = -1, `op`).
// f32 with 16-byte aligned pointers: one float4 (4 elements, one 16-byte
// transaction) per thread, then a scalar tail.
__device__ __forceinline__ bool aligned16(const void* a, const void* b) {
    return (((unsigned long long)a | (unsigned long long)b) & 15) == 0;
}

template <typename T, int OP>
__device__ __forceinline__ void unary_ilp(const T* __restrict__ xs, T* __restrict__ y, i64 n,
                                          int op, double p, double q) {
    const int code = OP >= 0 ? OP : op;
    if constexpr (sizeof(T) == 4) {
        if (aligned16(xs, y)) {
            const i64 n4 = n / 4, step = (i64)gridDim.x * blockDim.x;
            const float4* x4 = reinterpret_cast<const float4*>(xs);
            float4* y4 = reinterpret_cast<float4*>(y);
            for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += step) {
                float4 v = x4[i];
                v.x = unary_op<T>(code, v.x, p, q);
                v.y = unary_op<T>(code, v.y, p, q);
                v.z = unary_op<T>(code, v.z, p, q);
                v.w = unary_op<T>(code, v.w, p, q);
                y4[i] = v;
            }
            for (i64 i = n4 * 4 + (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
                y[i] = unary_op<T>(code, xs[i], p, q);
            return;
        }
    }
    ILP_LOOP(b, n) {
        T v[ILP];
        for (int k = 0; k < ILP; ++k) {
            i64 j = b + (i64)k * blockDim.x;
            v[k] = j < n ? xs[j] : (T)0;
        }
        for (int k = 0; k < ILP; ++k) {
            i64 j = b + (i64)k * blockDim.x;
            if (j < n) y[j] = unary_op<T>(code, v[k], p, q);
        }
    }
}

// The transcendental and most frequent ops get their own loop (exp, log,
// sin, cos, tanh, sigmoid, relu, sqrt, square, affine); the rest share one
// with a run-time switch.
#define UNARY_CASE(T, K) \
    case K:              \
        unary_ilp<T, K>(xs, y, n, op, p, q); \
        return;

#define UNARY(T, NAME)                                                                      \
    extern "C" __global__ void unary_##NAME(const T* __restrict__ x, Layout lx,           \
                                            T* __restrict__ y, i64 n, int op, double p,    \
                                            double q) {                                     \
        if (lx.contiguous) {                                                                \
            const T* xs = x + lx.offset;                                                    \
            switch (op) {                                                                   \
                UNARY_CASE(T, UOP_Exp) UNARY_CASE(T, UOP_Ln) UNARY_CASE(T, UOP_Sin)         \
                UNARY_CASE(T, UOP_Cos) UNARY_CASE(T, UOP_Tanh) UNARY_CASE(T, UOP_Sigmoid)   \
                UNARY_CASE(T, UOP_Relu) UNARY_CASE(T, UOP_Sqrt) UNARY_CASE(T, UOP_Square)   \
                UNARY_CASE(T, UOP_Affine)                                                   \
                default: unary_ilp<T, -1>(xs, y, n, op, p, q);                              \
            }                                                                               \
        } else {                                                                            \
            GRID_LOOP(i, n) { y[i] = unary_op<T>(op, x[at(lx, i)], p, q); }                \
        }                                                                                   \
    }
UNARY(float, f32)
UNARY(double, f64)

// ---------------------------------------------------------------- binary
// The f32 float4 path of a contiguous binary op; false when not taken.
template <typename T>
__device__ __forceinline__ bool binary_vec4(const T* __restrict__ as, const T* __restrict__ bs,
                                            T* __restrict__ y, i64 n, int op) {
    if constexpr (sizeof(T) == 4) {
        if (aligned16(as, y) && aligned16(bs, y)) {
            const i64 n4 = n / 4, step = (i64)gridDim.x * blockDim.x;
            const float4* a4 = reinterpret_cast<const float4*>(as);
            const float4* b4 = reinterpret_cast<const float4*>(bs);
            float4* y4 = reinterpret_cast<float4*>(y);
            for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += step) {
                float4 u = a4[i], v = b4[i];
                u.x = binary_op<T>(op, u.x, v.x);
                u.y = binary_op<T>(op, u.y, v.y);
                u.z = binary_op<T>(op, u.z, v.z);
                u.w = binary_op<T>(op, u.w, v.w);
                y4[i] = u;
            }
            for (i64 i = n4 * 4 + (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
                y[i] = binary_op<T>(op, as[i], bs[i]);
            return true;
        }
    }
    return false;
}

#define BINARY(T, NAME)                                                                      \
    extern "C" __global__ void binary_##NAME(const T* __restrict__ a, Layout la,             \
                                             const T* __restrict__ b, Layout lb,             \
                                             T* __restrict__ y, i64 n, int op) {             \
        if (la.contiguous && lb.contiguous) {                                                \
            const T* as = a + la.offset;                                                     \
            const T* bs = b + lb.offset;                                                     \
            if (binary_vec4<T>(as, bs, y, n, op)) return;                                    \
            ILP_LOOP(s, n) {                                                                 \
                T u[ILP], v[ILP];                                                            \
                for (int k = 0; k < ILP; ++k) {                                              \
                    i64 j = s + (i64)k * blockDim.x;                                         \
                    u[k] = j < n ? as[j] : (T)0;                                             \
                    v[k] = j < n ? bs[j] : (T)0;                                             \
                }                                                                            \
                for (int k = 0; k < ILP; ++k) {                                              \
                    i64 j = s + (i64)k * blockDim.x;                                         \
                    if (j < n) y[j] = binary_op<T>(op, u[k], v[k]);                          \
                }                                                                            \
            }                                                                                \
        } else {                                                                             \
            GRID_LOOP(i, n) { y[i] = binary_op<T>(op, a[at(la, i)], b[at(lb, i)]); }        \
        }                                                                                    \
    }
BINARY(float, f32)
BINARY(double, f64)

// ---------------------------------------------------------------- compare
#define COMPARE(T, NAME)                                                                    \
    extern "C" __global__ void compare_##NAME(const T* a, Layout la, const T* b, Layout lb, \
                                              u8* y, i64 n, int op) {                       \
        GRID_LOOP(i, n) { y[i] = compare_op<T>(op, a[at(la, i)], b[at(lb, i)]) ? 1 : 0; }  \
    }
COMPARE(float, f32)
COMPARE(double, f64)
COMPARE(i64, i64)

// ---------------------------------------------------------------- select
#define WHERE(T, NAME)                                                                     \
    extern "C" __global__ void where_##NAME(const u8* m, Layout lm, const T* a, Layout la, \
                                            const T* b, Layout lb, T* y, i64 n) {          \
        GRID_LOOP(i, n) { y[i] = m[at(lm, i)] ? a[at(la, i)] : b[at(lb, i)]; }            \
    }
WHERE(float, f32)
WHERE(double, f64)
WHERE(i64, i64)
WHERE(u8, u8)

// ------------------------------------------------- copy / cast / scatter
// dst[at(ld, i)] = (TO) src[at(ls, i)]: contiguous copies, casts, writes into
// strided regions (slice placement, concatenation).
template <typename TO, typename FROM>
__device__ __forceinline__ TO convert(FROM v) { return (TO)v; }
template <>
__device__ __forceinline__ u8 convert<u8, float>(float v) { return v != 0.0f; }
template <>
__device__ __forceinline__ u8 convert<u8, double>(double v) { return v != 0.0; }
template <>
__device__ __forceinline__ u8 convert<u8, i64>(i64 v) { return v != 0; }

#define COPY(TF, NF, TT, NT)                                                                 \
    extern "C" __global__ void copy_##NF##_##NT(const TF* src, Layout ls, TT* dst, Layout ld, \
                                                i64 n) {                                    \
        GRID_LOOP(i, n) { dst[at(ld, i)] = convert<TT, TF>(src[at(ls, i)]); }               \
    }
#define COPY_FROM(TF, NF)      \
    COPY(TF, NF, float, f32)   \
    COPY(TF, NF, double, f64)  \
    COPY(TF, NF, i64, i64)     \
    COPY(TF, NF, u8, u8)
COPY_FROM(float, f32)
COPY_FROM(double, f64)
COPY_FROM(i64, i64)
COPY_FROM(u8, u8)

#define FILL(T, NAME)                                                               \
    extern "C" __global__ void fill_##NAME(T* y, i64 n, double v) {                \
        GRID_LOOP(i, n) { y[i] = convert<T, double>(v); }                          \
    }                                                                               \
    extern "C" __global__ void arange_##NAME(T* y, i64 n, double start, double step) { \
        GRID_LOOP(i, n) { y[i] = convert<T, double>(start + step * (double)i); }   \
    }
FILL(float, f32)
FILL(double, f64)
FILL(i64, i64)
FILL(u8, u8)

// ---------------------------------------------------------------- reductions
// Input viewed as [rows, cols] through `lx` (the reduced axes permuted to the
// end). Large rows: `chunks` blocks per row each reduce `chunk` columns into
// partials[row * chunks + c] (a second launch reduces the partials). Warp
// shuffles, then shared memory across warps.
template <typename T>
__device__ __forceinline__ T reduce_identity(int op) {
    switch (op) {
        case 0: return (T)0;
        case 1: return (T)1;
        case 2: return -(T)__longlong_as_double(0x7ff0000000000000LL);
        case 3: return (T)__longlong_as_double(0x7ff0000000000000LL);
    }
    return (T)0;
}

template <typename T>
__device__ __forceinline__ T reduce_combine(int op, T a, T b) {
    switch (op) {
        case 0: return a + b;
        case 1: return a * b;
        case 2: return (a != a || a > b) ? a : b;
        case 3: return (a != a || a < b) ? a : b;
    }
    return a;
}

template <typename T>
__device__ T block_reduce(int op, T v) {
    __shared__ T warps[32];
    const unsigned full = 0xffffffffu;
    for (int o = 16; o > 0; o >>= 1) v = reduce_combine<T>(op, v, __shfl_down_sync(full, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warps[warp] = v;
    __syncthreads();
    int nwarps = (blockDim.x + 31) >> 5;
    v = threadIdx.x < nwarps ? warps[lane] : reduce_identity<T>(op);
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1) v = reduce_combine<T>(op, v, __shfl_down_sync(full, v, o));
    return v;
}

// This thread's partial reduction of xs[start..end) (contiguous): f32 reads
// one float4 per step after a scalar head up to 16-byte alignment, unrolled
// so several loads are in flight; other types keep four independent
// accumulators (four loads in flight).
template <typename T>
__device__ __forceinline__ T contig_partial(const T* __restrict__ xs, i64 start, i64 end, int op) {
    T acc = reduce_identity<T>(op), acc1 = acc, acc2 = acc, acc3 = acc;
    const i64 bd = blockDim.x;
    if constexpr (sizeof(T) == 4) {
        const T* base = xs + start;
        const i64 len = end - start;
        i64 head = (i64)(((16 - ((unsigned long long)base & 15)) & 15) / sizeof(T));
        if (head > len) head = len;  // (a float pointer is always 4-byte aligned)
        if (threadIdx.x < head) acc = reduce_combine<T>(op, acc, base[threadIdx.x]);
        const float4* v4 = reinterpret_cast<const float4*>(base + head);
        const i64 m4 = (len - head) / 4;
#pragma unroll 4
        for (i64 i = threadIdx.x; i < m4; i += bd) {
            float4 v = v4[i];
            acc = reduce_combine<T>(op, acc, v.x);
            acc1 = reduce_combine<T>(op, acc1, v.y);
            acc2 = reduce_combine<T>(op, acc2, v.z);
            acc3 = reduce_combine<T>(op, acc3, v.w);
        }
        for (i64 j = head + m4 * 4 + threadIdx.x; j < len; j += bd)
            acc = reduce_combine<T>(op, acc, base[j]);
    } else {
        i64 j = start + threadIdx.x;
        for (; j + 3 * bd < end; j += 4 * bd) {
            T v0 = xs[j], v1 = xs[j + bd], v2 = xs[j + 2 * bd], v3 = xs[j + 3 * bd];
            acc = reduce_combine<T>(op, acc, v0);
            acc1 = reduce_combine<T>(op, acc1, v1);
            acc2 = reduce_combine<T>(op, acc2, v2);
            acc3 = reduce_combine<T>(op, acc3, v3);
        }
        for (; j < end; j += bd) acc = reduce_combine<T>(op, acc, xs[j]);
    }
    return reduce_combine<T>(op, reduce_combine<T>(op, acc, acc1), reduce_combine<T>(op, acc2, acc3));
}

// One thread's reduction of the `len` elements from flat index `first` of
// a row: with `uniform`, the row's elements lie `rstride` apart in memory
// (one index computation, then pointer steps); otherwise each element's
// place comes from the layout.
template <typename T>
__device__ __forceinline__ T row_partial(const T* __restrict__ x, const Layout& lx, i64 first,
                                         i64 len, i64 rstride, int uniform, int op) {
    T acc = reduce_identity<T>(op), acc1 = acc;
    if (uniform) {
        const T* p = x + at(lx, first);
        i64 j = 0;
        for (; j + 1 < len; j += 2) {
            acc = reduce_combine<T>(op, acc, p[j * rstride]);
            acc1 = reduce_combine<T>(op, acc1, p[(j + 1) * rstride]);
        }
        if (j < len) acc = reduce_combine<T>(op, acc, p[j * rstride]);
    } else {
        for (i64 j = 0; j < len; ++j) acc = reduce_combine<T>(op, acc, x[at(lx, first + j)]);
    }
    return reduce_combine<T>(op, acc, acc1);
}

#define REDUCE(T, NAME)                                                                       \
    extern "C" __global__ void reduce_##NAME(const T* x, Layout lx, T* y, i64 rows, i64 cols, \
                                             i64 chunks, i64 chunk, int op) {                 \
        for (i64 blk = blockIdx.x; blk < rows * chunks; blk += gridDim.x) {                  \
            i64 row = blk / chunks, c = blk % chunks;                                         \
            i64 start = c * chunk, end = min(cols, start + chunk);                            \
            T acc = reduce_identity<T>(op);                                                   \
            if (lx.contiguous) {                                                              \
                acc = contig_partial<T>(x + lx.offset + row * cols, start, end, op);          \
            } else {                                                                          \
                for (i64 j = start + threadIdx.x; j < end; j += blockDim.x)                   \
                    acc = reduce_combine<T>(op, acc, x[at(lx, row * cols + j)]);              \
            }                                                                                 \
            acc = block_reduce<T>(op, acc);                                                   \
            if (threadIdx.x == 0) y[blk] = acc;                                               \
            __syncthreads();                                                                  \
        }                                                                                     \
    }                                                                                         \
    extern "C" __global__ void reduce_rows_##NAME(const T* x, Layout lx, T* y, i64 rows,      \
                                                  i64 cols, i64 rstride, int uniform, int op) { \
        GRID_LOOP(row, rows) {                                                                \
            y[row] = row_partial<T>(x, lx, row * cols, cols, rstride, uniform, op);           \
        }                                                                                     \
    }                                                                                         \
    extern "C" __global__ void reduce_warp_rows_##NAME(const T* x, Layout lx, T* y, i64 rows, \
                                                       i64 cols, i64 rstride, int uniform,   \
                                                       int op) {                              \
        const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;                                 \
        const int lane = threadIdx.x & 31;                                                    \
        for (i64 row = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows;         \
             row += warps) {                                                                  \
            T acc = reduce_identity<T>(op);                                                   \
            if (uniform) {                                                                    \
                const T* base = x + at(lx, row * cols);                                       \
                for (i64 j = lane; j < cols; j += 32)                                         \
                    acc = reduce_combine<T>(op, acc, base[j * rstride]);                      \
            } else {                                                                          \
                for (i64 j = lane; j < cols; j += 32)                                         \
                    acc = reduce_combine<T>(op, acc, x[at(lx, row * cols + j)]);              \
            }                                                                                 \
            for (int o = 16; o > 0; o >>= 1)                                                  \
                acc = reduce_combine<T>(op, acc, __shfl_down_sync(0xffffffffu, acc, o));      \
            if (lane == 0) y[row] = acc;                                                      \
        }                                                                                     \
    }                                                                                         \
    extern "C" __global__ void reduce_rows_chunked_##NAME(const T* x, Layout lx, T* y,        \
                                                          i64 rows, i64 cols, i64 chunks,     \
                                                          i64 chunk, i64 rstride,             \
                                                          int uniform, int op) {              \
        GRID_LOOP(t, rows * chunks) {                                                         \
            i64 row = t % rows, c = t / rows;                                                 \
            i64 start = c * chunk, end = min(cols, start + chunk);                            \
            y[c * rows + row] =                                                               \
                row_partial<T>(x, lx, row * cols + start, end - start, rstride, uniform, op); \
        }                                                                                     \
    }                                                                                         \
    extern "C" __global__ void argreduce_##NAME(const T* x, Layout lx, i64* y, i64 rows,      \
                                                i64 cols, int is_max) {                       \
        GRID_LOOP(row, rows) {                                                                \
            i64 best = 0;                                                                     \
            T bv = x[at(lx, row * cols)];                                                     \
            for (i64 j = 1; j < cols; ++j) {                                                  \
                T v = x[at(lx, row * cols + j)];                                              \
                if (bv != bv) break;                                                          \
                if (v != v || (is_max ? v > bv : v < bv)) { bv = v; best = j; }               \
            }                                                                                 \
            y[row] = best;                                                                    \
        }                                                                                     \
    }                                                                                         \
    extern "C" __global__ void cumsum_##NAME(const T* x, Layout lx, T* y, i64 rows, i64 cols, \
                                             int reverse) {                                   \
        GRID_LOOP(row, rows) {                                                                \
            T acc = (T)0;                                                                     \
            for (i64 k = 0; k < cols; ++k) {                                                  \
                i64 j = reverse ? cols - 1 - k : k;                                           \
                acc += x[at(lx, row * cols + j)];                                             \
                y[row * cols + j] = acc;                                                      \
            }                                                                                 \
        }                                                                                     \
    }
REDUCE(float, f32)
REDUCE(double, f64)

// ---------------------------------------------------------------- gather / scatter
// Output shape = lx.shape (x's shape with axis length replaced by the index
// count); coordinate `axis` goes through idx.
#define INDEX(T, NAME)                                                                         \
    extern "C" __global__ void index_select_##NAME(const T* x, Layout lx, const i64* idx,      \
                                                   int axis, T* y, i64 n) {                    \
        GRID_LOOP(i, n) {                                                                      \
            i64 off = lx.offset, r = i;                                                        \
            for (int d = (int)lx.ndim - 1; d >= 0; --d) {                                      \
                i64 s = lx.shape[d], c = r % s;                                                \
                r /= s;                                                                        \
                off += (d == axis ? idx[c] : c) * lx.strides[d];                               \
            }                                                                                  \
            y[i] = x[off];                                                                     \
        }                                                                                      \
    }
INDEX(float, f32)
INDEX(double, f64)
INDEX(i64, i64)
INDEX(u8, u8)

// y (contiguous, zeroed, shape ly.shape) += src scattered along axis: src's
// element with coordinate c on `axis` goes to idx[c]. `ls` has src's shape;
// ly.strides are y's (contiguous) strides. Repeated indices add atomically.
#define INDEX_ADD(T, NAME)                                                                     \
    extern "C" __global__ void index_add_##NAME(const T* src, Layout ls, const i64* idx,       \
                                                int axis, T* y, Layout ly, i64 n) {            \
        GRID_LOOP(i, n) {                                                                      \
            i64 off = 0, r = i;                                                                \
            for (int d = (int)ls.ndim - 1; d >= 0; --d) {                                      \
                i64 s = ls.shape[d], c = r % s;                                                \
                r /= s;                                                                        \
                off += (d == axis ? idx[c] : c) * ly.strides[d];                               \
            }                                                                                  \
            atomicAdd(&y[off], src[at(ls, i)]);                                                \
        }                                                                                      \
    }
INDEX_ADD(float, f32)
INDEX_ADD(double, f64)

// dst[region] += src: `ld` reads the region of the (contiguous, unshared)
// destination over src's shape; a slice's elements are distinct, so no
// two threads add into one place.
#define ADD_INTO(T, NAME)                                                                 \
    extern "C" __global__ void add_into_##NAME(const T* __restrict__ src, Layout ls, T* dst, \
                                               Layout ld, i64 n) {                         \
        GRID_LOOP(i, n) { dst[at(ld, i)] += src[at(ls, i)]; }                              \
    }
ADD_INTO(float, f32)
ADD_INTO(double, f64)

