//! Views: arrays sharing another array's host elements under a new
//! shape, strides or first element (permutes, slices, reshapes that need
//! no copy).

/// `$x` (an `&Array` on the host) viewed through `$body`, which maps the
/// raw ndarray view `$r` of its elements to the new view (any dtype).
macro_rules! host_view {
    ($x:expr, |$r:ident| $body:expr) => {{
        use $crate::storage::Data;
        let d = &$x.data;
        $crate::Array::from_data(match &**d {
            Data::F32(h) => Data::F32(h.derive(d, |$r| $body)),
            Data::F64(h) => Data::F64(h.derive(d, |$r| $body)),
            Data::I64(h) => Data::I64(h.derive(d, |$r| $body)),
            Data::Bool(h) => Data::Bool(h.derive(d, |$r| $body)),
            #[cfg(feature = "cuda")]
            Data::Cuda(_) => $crate::storage::no_gpu_path(),
        })
    }};
}
pub(crate) use host_view;
