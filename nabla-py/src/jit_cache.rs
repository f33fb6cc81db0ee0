//! `nabla.jit`'s cache of recorded programs, looked up and replayed in
//! Rust: the arguments' pytree (lists, tuples, dicts with string keys,
//! None, arrays, Python numbers) is flattened and keyed by its structure,
//! shapes and dtypes, the program runs, and the result's pytree is
//! rebuilt, without running Python code. A miss (or a pytree it does not
//! handle) returns `None` and the Python side records.

use crate::array::PyArray;
use crate::convert::array_from;
use crate::trace::PyProgram;
use nabla::dynamic::Dyn;
use nabla::{ArrayValue, Value};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::sync::Mutex;

/// A pytree's structure, to rebuild a result.
enum Node {
    Leaf,
    None,
    List(Vec<Node>),
    Tuple(Vec<Node>),
    Dict(Vec<(String, Node)>),
}

/// Flattens `obj` into `leaves`, writing its structure and each leaf's
/// dtype and shape into `key`; `None` for something it does not handle.
fn flatten(
    obj: &Bound<'_, PyAny>,
    key: &mut Vec<u8>,
    leaves: &mut Vec<Dyn>,
) -> PyResult<Option<Node>> {
    if let Ok(a) = obj.cast::<PyArray>() {
        let v = a.borrow().value.clone();
        leaf_key(&v, key);
        leaves.push(v);
        return Ok(Some(Node::Leaf));
    }
    if obj.is_none() {
        key.push(b'N');
        return Ok(Some(Node::None));
    }
    let seq = |items: Vec<Bound<'_, PyAny>>,
               tag: u8,
               key: &mut Vec<u8>,
               leaves: &mut Vec<Dyn>|
     -> PyResult<Option<Vec<Node>>> {
        key.push(tag);
        key.extend_from_slice(&(items.len() as u32).to_le_bytes());
        let mut kids = Vec::with_capacity(items.len());
        for it in items {
            match flatten(&it, key, leaves)? {
                Some(n) => kids.push(n),
                None => return Ok(None),
            }
        }
        Ok(Some(kids))
    };
    if let Ok(t) = obj.cast::<PyTuple>() {
        return Ok(seq(t.iter().collect(), b'(', key, leaves)?.map(Node::Tuple));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return Ok(seq(l.iter().collect(), b'[', key, leaves)?.map(Node::List));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut items: Vec<(String, Bound<'_, PyAny>)> = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(k) = k.cast::<PyString>() else {
                return Ok(None);
            };
            items.push((k.to_string(), v));
        }
        items.sort_by(|a, b| a.0.cmp(&b.0));
        key.push(b'{');
        key.extend_from_slice(&(items.len() as u32).to_le_bytes());
        let mut kids = Vec::with_capacity(items.len());
        for (k, v) in items {
            key.extend_from_slice(k.as_bytes());
            key.push(0);
            match flatten(&v, key, leaves)? {
                Some(n) => kids.push((k, n)),
                None => return Ok(None),
            }
        }
        return Ok(Some(Node::Dict(kids)));
    }
    if crate::convert::is_scalar(obj) {
        let v = array_from(obj, None)?;
        leaf_key(&v, key);
        leaves.push(v);
        return Ok(Some(Node::Leaf));
    }
    Ok(None)
}

/// Appends a leaf's dtype and (per-example) shape to a cache key.
pub fn leaf_key(v: &Dyn, key: &mut Vec<u8>) {
    let s = v.shape_vec();
    key.push(b'A');
    key.push(match v.dtype() {
        nabla::DType::F32 => 0,
        nabla::DType::F64 => 1,
        nabla::DType::I64 => 2,
        nabla::DType::Bool => 3,
    });
    key.push(s.len() as u8);
    for d in s.iter() {
        key.extend_from_slice(&(*d as u64).to_le_bytes());
    }
}

fn rebuild(
    py: Python<'_>,
    node: &Node,
    values: &mut std::vec::IntoIter<Dyn>,
) -> PyResult<Py<PyAny>> {
    Ok(match node {
        Node::Leaf => PyArray::new(values.next().expect("one value per leaf"))
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        Node::None => py.None(),
        Node::List(kids) => {
            let items: PyResult<Vec<Py<PyAny>>> =
                kids.iter().map(|k| rebuild(py, k, values)).collect();
            PyList::new(py, items?)?.into_any().unbind()
        }
        Node::Tuple(kids) => {
            let items: PyResult<Vec<Py<PyAny>>> =
                kids.iter().map(|k| rebuild(py, k, values)).collect();
            PyTuple::new(py, items?)?.into_any().unbind()
        }
        Node::Dict(kids) => {
            let d = PyDict::new(py);
            for (k, n) in kids {
                d.set_item(k, rebuild(py, n, values)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// A recorded program and the structure of its result.
type Entry = (Py<PyProgram>, Node);

/// The recorded programs of one jitted function, by argument signature.
#[pyclass(name = "JitCache", module = "nabla", frozen)]
pub struct JitCache {
    entries: Mutex<HashMap<Vec<u8>, Entry>>,
}

#[pymethods]
impl JitCache {
    #[new]
    fn new() -> JitCache {
        JitCache {
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The result for `args` replayed from a recorded program, or `None`
    /// when this signature has none yet.
    fn call(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<Py<PyAny>>> {
        let mut key = Vec::with_capacity(64);
        let mut leaves = Vec::new();
        if flatten(args.as_any(), &mut key, &mut leaves)?.is_none() {
            return Ok(None);
        }
        let found = {
            let entries = self.entries.lock().expect("jit cache lock");
            entries.get(&key).map(|(p, _)| p.clone_ref(py))
        };
        let Some(program) = found else {
            return Ok(None);
        };
        let outs = program.get().run_values(py, leaves)?;
        let entries = self.entries.lock().expect("jit cache lock");
        let (_, node) = entries.get(&key).expect("present");
        rebuild(py, node, &mut outs.into_iter()).map(Some)
    }

    /// Stores `program` for the signature of `args`, with the structure of
    /// `result` (the recording's output) to rebuild later results.
    fn insert(
        &self,
        args: &Bound<'_, PyTuple>,
        program: Py<PyProgram>,
        result: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let mut key = Vec::new();
        let mut leaves = Vec::new();
        if flatten(args.as_any(), &mut key, &mut leaves)?.is_none() {
            return Ok(false);
        }
        let mut out_key = Vec::new();
        let mut out_leaves = Vec::new();
        let Some(node) = flatten(result, &mut out_key, &mut out_leaves)? else {
            return Ok(false);
        };
        self.entries
            .lock()
            .expect("jit cache lock")
            .insert(key, (program, node));
        Ok(true)
    }

    fn __len__(&self) -> usize {
        self.entries.lock().expect("jit cache lock").len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<JitCache>()?;
    Ok(())
}
