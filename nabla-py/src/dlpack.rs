//! DLPack (the array interchange protocol of the Python Array API):
//! `Array.__dlpack__` / `Array.__dlpack_device__` hand Nabla's host memory
//! to `torch.from_dlpack`, `jax.dlpack.from_dlpack` and `np.from_dlpack`
//! without a copy, and `nabla.from_dlpack(x)` takes a CPU tensor of any
//! producer (or a raw capsule) without a copy where it can.
//!
//! The C structs of `dlpack.h` (v0.8 `DLManagedTensor`, v1
//! `DLManagedTensorVersioned`) are written out below. A capsule is named
//! `"dltensor"` (or `"dltensor_versioned"`); the consumer renames it
//! `"used_dltensor"` and calls the managed tensor's deleter when done; a
//! capsule never consumed is freed by its destructor.

use crate::array::PyArray;
use nabla::dynamic::Dyn;
use nabla::{Array, DType, Device};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};
use pyo3::{IntoPyObjectExt, ffi};
use std::ffi::{CStr, c_void};

/// `DLDeviceType::kDLCPU`.
const CPU: i32 = 1;
/// `DLDeviceType::kDLCUDA`.
const CUDA: i32 = 2;
/// `DLDataTypeCode`s: signed integer, float, bool.
const INT: u8 = 0;
const FLOAT: u8 = 2;
const BOOL: u8 = 6;
/// `DLPACK_FLAG_BITMASK_READ_ONLY` and `DLPACK_FLAG_BITMASK_IS_COPIED`.
const READ_ONLY: u64 = 1;
const IS_COPIED: u64 = 2;

const LEGACY: &CStr = c"dltensor";
const LEGACY_USED: &CStr = c"used_dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";
const VERSIONED_USED: &CStr = c"used_dltensor_versioned";

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`: the elements `data + byte_offset`, strides in elements
/// (null: row-major).
#[repr(C)]
pub(crate) struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

/// `DLManagedTensor` (DLPack 0.8, capsule `"dltensor"`).
#[repr(C)]
pub(crate) struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

/// `DLManagedTensorVersioned` (DLPack 1.x, capsule `"dltensor_versioned"`).
#[repr(C)]
pub(crate) struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

// --- Export: `Array.__dlpack__`. ---

/// One exported array: the managed tensor first (so a pointer to it is a
/// pointer to the whole), then what its `DLTensor` points into — the
/// array, whose storage stays alive until the consumer's deleter call, and
/// the shape and strides.
#[repr(C)]
struct Export<M> {
    managed: M,
    _array: Array,
    _shape: Vec<i64>,
    _strides: Vec<i64>,
}

/// The deleter of an exported `DLManagedTensor`.
unsafe extern "C" fn delete_legacy(m: *mut DLManagedTensor) {
    if !m.is_null() {
        // SAFETY: `m` is the first field of a boxed `Export` (repr(C)),
        // leaked by `export`; DLPack calls the deleter once.
        drop(unsafe { Box::from_raw(m.cast::<Export<DLManagedTensor>>()) });
    }
}

/// The deleter of an exported `DLManagedTensorVersioned`.
unsafe extern "C" fn delete_versioned(m: *mut DLManagedTensorVersioned) {
    if !m.is_null() {
        // SAFETY: as in `delete_legacy`.
        drop(unsafe { Box::from_raw(m.cast::<Export<DLManagedTensorVersioned>>()) });
    }
}

/// The destructor of an exported `"dltensor"` capsule: frees the tensor
/// unless a consumer took it (renaming the capsule).
unsafe extern "C" fn destroy_legacy(capsule: *mut ffi::PyObject) {
    // SAFETY: Python calls a destructor with a live capsule; a capsule
    // still named "dltensor" holds the pointer `export` leaked, which no
    // consumer owns (a consumer renames it first). `IsValid` sets no error.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, LEGACY.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, LEGACY.as_ptr());
            delete_legacy(m.cast());
        }
    }
}

/// The destructor of an exported `"dltensor_versioned"` capsule.
unsafe extern "C" fn destroy_versioned(capsule: *mut ffi::PyObject) {
    // SAFETY: as in `destroy_legacy`.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, VERSIONED.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, VERSIONED.as_ptr());
            delete_versioned(m.cast());
        }
    }
}

/// The `DLDataType` of a dtype.
fn dl_dtype(d: DType) -> DLDataType {
    let (code, bits) = match d {
        DType::F32 => (FLOAT, 32),
        DType::F64 => (FLOAT, 64),
        DType::I64 => (INT, 64),
        DType::Bool => (BOOL, 8),
    };
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

/// The address of element `[0, ..]` and the strides (in elements) of a
/// host array.
fn host_layout(a: &Array) -> (*mut c_void, Vec<i64>) {
    macro_rules! layout {
        ($t:ty) => {{
            let v = a.host_view::<$t>().expect("a host array of its dtype");
            let strides = v.strides().iter().map(|&s| s as i64).collect();
            (v.as_ptr() as *mut c_void, strides)
        }};
    }
    match a.dtype() {
        DType::F32 => layout!(f32),
        DType::F64 => layout!(f64),
        DType::I64 => layout!(i64),
        DType::Bool => layout!(bool),
    }
}

/// A capsule sharing host array `a`'s memory: `"dltensor_versioned"`
/// (read-only flag set; `copied` sets the copied flag) or `"dltensor"`.
fn export<'py>(
    py: Python<'py>,
    a: Array,
    versioned: bool,
    copied: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let (data, strides) = host_layout(&a);
    let shape: Vec<i64> = a.shape().iter().map(|&n| n as i64).collect();
    let dtype = dl_dtype(a.dtype());
    let tensor = |shape: &[i64], strides: &[i64]| DLTensor {
        data,
        device: DLDevice {
            device_type: CPU,
            device_id: 0,
        },
        ndim: shape.len() as i32,
        dtype,
        // Consumers only read these; the vectors stay in the `Export`.
        shape: shape.as_ptr().cast_mut(),
        strides: strides.as_ptr().cast_mut(),
        byte_offset: 0,
    };
    let (ptr, name, destructor): (*mut c_void, &CStr, ffi::PyCapsule_Destructor) = if versioned {
        let managed = DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 0 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_versioned),
            flags: READ_ONLY | if copied { IS_COPIED } else { 0 },
            dl_tensor: tensor(&shape, &strides),
        };
        let b = Box::new(Export {
            managed,
            _array: a,
            _shape: shape,
            _strides: strides,
        });
        (Box::into_raw(b).cast(), VERSIONED, destroy_versioned)
    } else {
        let managed = DLManagedTensor {
            dl_tensor: tensor(&shape, &strides),
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_legacy),
        };
        let b = Box::new(Export {
            managed,
            _array: a,
            _shape: shape,
            _strides: strides,
        });
        (Box::into_raw(b).cast(), LEGACY, destroy_legacy)
    };
    // SAFETY: `ptr` is a leaked `Export` whose first field is the managed
    // tensor `destructor` frees; `name` is a static C string.
    let capsule = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), Some(destructor)) };
    if capsule.is_null() {
        // SAFETY: the capsule was not made, so nothing else owns `ptr`.
        unsafe { free_export(ptr, versioned) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `capsule` is a new (owned) reference.
    Ok(unsafe { Bound::from_owned_ptr(py, capsule) })
}

/// Frees an `Export` leaked by `export` that no capsule holds.
///
/// # Safety
///
/// `ptr` is such an `Export`, freed once.
unsafe fn free_export(ptr: *mut c_void, versioned: bool) {
    // SAFETY: the caller's contract.
    unsafe {
        if versioned {
            delete_versioned(ptr.cast());
        } else {
            delete_legacy(ptr.cast());
        }
    }
}

/// The message for a device other than the CPU.
fn not_cpu(what: &str, device: Device) -> PyErr {
    PyBufferError::new_err(format!(
        "{what}: the array is on {device} and DLPack export shares host (CPU) memory only; \
         pass copy=True to export a host copy"
    ))
}

#[pymethods]
impl PyArray {
    /// The array as a DLPack capsule sharing its memory (no copy), for
    /// `torch.from_dlpack(x)`, `jax.dlpack.from_dlpack(x)` or
    /// `np.from_dlpack(x)`. With `max_version >= (1, 0)` the capsule is
    /// a versioned one (`"dltensor_versioned"`) flagged read-only; Nabla
    /// arrays are values, so do not write through the consumer's tensor.
    /// `copy=True` exports a fresh copy; `copy=False` never copies. Host
    /// arrays only (`dl_device` may be `None` or `(1, 0)`).
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut a = self.concrete("__dlpack__")?.detach();
        if stream.is_some_and(|s| !s.is_none()) {
            return Err(PyBufferError::new_err(
                "__dlpack__: stream must be None for a host (CPU) array",
            ));
        }
        if let Some(d) = dl_device
            && d != (CPU, 0)
        {
            return Err(PyBufferError::new_err(format!(
                "__dlpack__: cannot export to DLPack device {d:?}; Nabla exports host (CPU) arrays, device (1, 0)"
            )));
        }
        if a.device() != Device::Cpu {
            if copy != Some(true) {
                return Err(not_cpu("__dlpack__", a.device()));
            }
            a = crate::errors::guard(|| a.to_device(Device::Cpu))?;
        } else if copy == Some(true) {
            a = host_copy(&a);
        }
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        export(py, a, versioned, copy == Some(true))
    }

    /// `(device_type, device_id)` of the array's memory for DLPack:
    /// `(1, 0)` (kDLCPU) for a host array, `(2, n)` (kDLCUDA) on GPU `n`.
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        let a = self.concrete("__dlpack_device__")?;
        Ok(match a.device() {
            Device::Cpu => (CPU, 0),
            Device::Cuda(n) => (CUDA, n as i32),
        })
    }
}

/// A row-major copy of a host array, in fresh storage.
fn host_copy(a: &Array) -> Array {
    match a.dtype() {
        DType::F32 => Array::from_vec(a.to_vec::<f32>(), a.shape()),
        DType::F64 => Array::from_vec(a.to_vec::<f64>(), a.shape()),
        DType::I64 => Array::from_vec(a.to_vec::<i64>(), a.shape()),
        DType::Bool => Array::from_vec(a.to_vec::<bool>(), a.shape()),
    }
}

// --- Import: `nabla.from_dlpack`. ---

/// A managed tensor taken from a consumed capsule: its deleter runs when
/// this is dropped (when the last array using its memory goes).
pub(crate) enum Managed {
    Legacy(*mut DLManagedTensor),
    Versioned(*mut DLManagedTensorVersioned),
}

// SAFETY: the DLPack Python specification has producers' deleters callable
// from any thread (acquiring the GIL themselves where they need it), and
// Nabla only reads the tensor's elements.
unsafe impl Send for Managed {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for Managed {}

impl Managed {
    /// The tensor described.
    pub(crate) fn tensor(&self) -> &DLTensor {
        // SAFETY: the pointer came from a valid capsule and stays valid
        // until the deleter runs, in `drop`.
        unsafe {
            match *self {
                Managed::Legacy(m) => &(*m).dl_tensor,
                Managed::Versioned(m) => &(*m).dl_tensor,
            }
        }
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        // SAFETY: this value took the tensor from its capsule (renamed as
        // used), so it calls the deleter exactly once.
        unsafe {
            match *self {
                Managed::Legacy(m) => {
                    if let Some(d) = (*m).deleter {
                        d(m)
                    }
                }
                Managed::Versioned(m) => {
                    if let Some(d) = (*m).deleter {
                        d(m)
                    }
                }
            }
        }
    }
}

/// Takes the managed tensor out of a DLPack capsule, renaming the capsule
/// as used (from then on this side calls the deleter).
fn consume(capsule: &Bound<'_, PyAny>) -> PyResult<Managed> {
    let py = capsule.py();
    let p = capsule.as_ptr();
    // SAFETY: `p` is a live object; the capsule functions check its type
    // and name, and a pointer they return is the producer's managed tensor.
    unsafe {
        if ffi::PyCapsule_IsValid(p, VERSIONED.as_ptr()) == 1 {
            let m =
                ffi::PyCapsule_GetPointer(p, VERSIONED.as_ptr()).cast::<DLManagedTensorVersioned>();
            if m.is_null() {
                return Err(PyErr::fetch(py));
            }
            let major = (*m).version.major;
            if major != 1 {
                return Err(PyBufferError::new_err(format!(
                    "nabla.from_dlpack: DLPack version {major}.{} is not supported (Nabla reads 1.x)",
                    (*m).version.minor
                )));
            }
            if ffi::PyCapsule_SetName(p, VERSIONED_USED.as_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
            return Ok(Managed::Versioned(m));
        }
        if ffi::PyCapsule_IsValid(p, LEGACY.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(p, LEGACY.as_ptr()).cast::<DLManagedTensor>();
            if m.is_null() {
                return Err(PyErr::fetch(py));
            }
            if ffi::PyCapsule_SetName(p, LEGACY_USED.as_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
            return Ok(Managed::Legacy(m));
        }
        if ffi::PyCapsule_IsValid(p, LEGACY_USED.as_ptr()) == 1
            || ffi::PyCapsule_IsValid(p, VERSIONED_USED.as_ptr()) == 1
        {
            return Err(PyValueError::new_err(
                "nabla.from_dlpack: this DLPack capsule was already consumed; a capsule is read once, \
                 so call x.__dlpack__() again (or pass the array itself)",
            ));
        }
    }
    Err(PyTypeError::new_err(
        "nabla.from_dlpack: this capsule is not a DLPack tensor (named \"dltensor\" or \"dltensor_versioned\")",
    ))
}

/// The capsule of `x` (an object with `__dlpack__`, or a capsule), asking
/// for a versioned one and falling back for older producers.
fn capsule_of<'py>(x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if x.is_instance_of::<PyCapsule>() {
        return Ok(x.clone());
    }
    if !x.hasattr("__dlpack__")? {
        return Err(PyTypeError::new_err(format!(
            "nabla.from_dlpack: expected an array with __dlpack__ (NumPy, PyTorch, JAX, ...) or a DLPack capsule, got {}; \
             use nabla.asarray for lists and other values",
            x.get_type().name()?
        )));
    }
    if x.hasattr("__dlpack_device__")? {
        let (kind, id): (i32, i32) = x.call_method0("__dlpack_device__")?.extract()?;
        if kind != CPU {
            return Err(PyBufferError::new_err(format!(
                "nabla.from_dlpack: the array is on DLPack device ({kind}, {id}), not the CPU (1, 0); \
                 move it to the CPU first (PyTorch: x.cpu(); JAX: jax.device_put(x, jax.devices('cpu')[0]))"
            )));
        }
    }
    let kwargs = PyDict::new(x.py());
    kwargs.set_item("max_version", (1, 0))?;
    match x.call_method("__dlpack__", (), Some(&kwargs)) {
        Err(e) if e.is_instance_of::<PyTypeError>(x.py()) => x.call_method0("__dlpack__"),
        r => r,
    }
}

/// `nabla.from_dlpack(x, *, device=None, copy=None)`: a Nabla array of a
/// CPU tensor from any DLPack producer (`torch.Tensor`, `np.ndarray`, JAX
/// arrays, ...) or of a DLPack capsule. The array shares the producer's
/// memory (no copy) for float32, float64 and int64 elements; bool
/// elements, misaligned memory and `copy=True` copy (`copy=False` raises
/// instead of copying). Nabla never writes the shared memory; writing it
/// through the producer changes the Nabla array too, so don't.
#[pyfunction]
#[pyo3(signature = (x, /, *, device = None, copy = None))]
fn from_dlpack<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    device: Option<&Bound<'py, PyAny>>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(d) = device
        && !d.is_none()
        && d.str()? != "cpu"
    {
        return Err(PyValueError::new_err(format!(
            "nabla.from_dlpack: device {d} is not supported; pass device=None or 'cpu'"
        )));
    }
    if let Ok(arr) = x.cast::<PyArray>() {
        let a = arr.borrow().concrete("from_dlpack")?;
        let a = if copy == Some(true) {
            host_copy(&a)
        } else {
            a.detach()
        };
        return PyArray::new(Dyn::Array(a)).into_bound_py_any(py);
    }
    let capsule = capsule_of(x)?;
    let managed = consume(&capsule)?;
    let a = crate::dlpack_import::to_array(managed, copy)?;
    PyArray::new(Dyn::Array(a)).into_bound_py_any(py)
}

/// Adds `from_dlpack` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    Ok(())
}

/// The fields of a `DLTensor` that `dlpack_import` reads.
impl DLTensor {
    /// `(device_type, device_id)`.
    pub(crate) fn device(&self) -> (i32, i32) {
        (self.device.device_type, self.device.device_id)
    }
    /// `(code, bits, lanes)` of the element type.
    pub(crate) fn dtype(&self) -> (u8, u8, u16) {
        (self.dtype.code, self.dtype.bits, self.dtype.lanes)
    }
    /// The address of element `[0, ..]`.
    pub(crate) fn first(&self) -> *const u8 {
        self.data
            .cast::<u8>()
            .cast_const()
            .wrapping_add(self.byte_offset as usize)
    }
    /// The shape, and the strides in elements (`None`: row-major).
    ///
    /// # Safety
    ///
    /// The tensor is a valid one of a live managed tensor.
    pub(crate) unsafe fn shape_strides(&self) -> (&[i64], Option<&[i64]>) {
        let n = self.ndim.max(0) as usize;
        if n == 0 {
            return (&[], None);
        }
        // SAFETY: a valid tensor's `shape` (and non-null `strides`) hold
        // `ndim` values, alive as long as the managed tensor.
        unsafe {
            let shape = std::slice::from_raw_parts(self.shape, n);
            let strides =
                (!self.strides.is_null()).then(|| std::slice::from_raw_parts(self.strides, n));
            (shape, strides)
        }
    }
}
