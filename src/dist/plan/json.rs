//! Plans as JSON: [`Plan::to_json`], [`Plan::from_json`], [`Plan::save`],
//! [`Plan::load`]. Layouts and assignments are written with the mesh's
//! axis names; the moves of each edge are not written but recomputed from
//! its two layouts, as the runtime does.

use super::super::layout::{Layout, MeshShape};
use super::super::moves::moves;
use super::{CostModel, Edge, Plan, PlanNode};
use serde_json::{Value, json};
use std::fmt;
use std::path::{Path, PathBuf};

/// A plan that could not be written or read.
///
/// ```
/// let err = nabla::dist::Plan::from_json("{}").unwrap_err();
/// assert!(err.to_string().contains("not a plan"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum PlanError {
    /// Reading or writing the file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The text is not a plan written by [`Plan::to_json`].
    Format {
        /// The file, if read from one.
        path: Option<PathBuf>,
        /// What is wrong, and where.
        message: String,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            PlanError::Format { path, message } => {
                if let Some(p) = path {
                    write!(f, "{}: ", p.display())?;
                }
                write!(
                    f,
                    "not a plan ({message}); write plans with Plan::save or Plan::to_json"
                )
            }
        }
    }
}

impl std::error::Error for PlanError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PlanError::Io { source, .. } => Some(source),
            PlanError::Format { .. } => None,
        }
    }
}

fn bad(message: impl Into<String>) -> PlanError {
    PlanError::Format {
        path: None,
        message: message.into(),
    }
}

fn axes_json(axes: &[u8], mesh: &MeshShape) -> Value {
    Value::from(
        axes.iter()
            .map(|&a| mesh.name(a as usize))
            .collect::<Vec<_>>(),
    )
}

fn layout_json(l: &Layout, mesh: &MeshShape) -> Value {
    let partial: Vec<u8> = (0..mesh.len() as u8)
        .filter(|&a| l.partial & (1 << a) != 0)
        .collect();
    json!({
        "dims": l.dims.iter().map(|d| axes_json(d, mesh)).collect::<Vec<_>>(),
        "partial": axes_json(&partial, mesh),
    })
}

fn edge_json(e: &Edge, mesh: &MeshShape) -> Value {
    json!({
        "from": layout_json(&e.from, mesh),
        "to": layout_json(&e.to, mesh),
        "bytes": e.bytes,
        "time_s": e.time_s,
    })
}

/// Reads one JSON object's fields with errors naming the field.
struct Read<'a>(&'a Value, &'a str);

impl<'a> Read<'a> {
    fn get(&self, key: &str) -> Result<&'a Value, PlanError> {
        self.0
            .get(key)
            .ok_or_else(|| bad(format!("{} has no field `{key}`", self.1)))
    }
    fn f64(&self, key: &str) -> Result<f64, PlanError> {
        self.get(key)?
            .as_f64()
            .ok_or_else(|| bad(format!("{}.{key} is not a number", self.1)))
    }
    fn u64(&self, key: &str) -> Result<u64, PlanError> {
        self.get(key)?
            .as_u64()
            .ok_or_else(|| bad(format!("{}.{key} is not a whole number", self.1)))
    }
    fn str(&self, key: &str) -> Result<&'a str, PlanError> {
        self.get(key)?
            .as_str()
            .ok_or_else(|| bad(format!("{}.{key} is not a string", self.1)))
    }
    fn arr(&self, key: &str) -> Result<&'a Vec<Value>, PlanError> {
        self.get(key)?
            .as_array()
            .ok_or_else(|| bad(format!("{}.{key} is not a list", self.1)))
    }
}

fn usizes(v: &Value, what: &str) -> Result<Vec<usize>, PlanError> {
    v.as_array()
        .and_then(|a| a.iter().map(|x| x.as_u64().map(|x| x as usize)).collect())
        .ok_or_else(|| bad(format!("{what} is not a list of whole numbers")))
}

fn axes_from(v: &Value, mesh: &MeshShape, what: &str) -> Result<Vec<u8>, PlanError> {
    let list = v
        .as_array()
        .ok_or_else(|| bad(format!("{what} is not a list of mesh axes")))?;
    list.iter()
        .map(|x| {
            let name = x.as_str().unwrap_or("");
            mesh.axis(name)
                .map(|a| a as u8)
                .ok_or_else(|| bad(format!("{what} names {x}, which is not an axis of {mesh}")))
        })
        .collect()
}

fn layout_from(v: &Value, mesh: &MeshShape, what: &str) -> Result<Layout, PlanError> {
    let r = Read(v, what);
    let dims = r
        .arr("dims")?
        .iter()
        .map(|d| axes_from(d, mesh, what))
        .collect::<Result<_, _>>()?;
    let partial = axes_from(r.get("partial")?, mesh, what)?
        .iter()
        .fold(0, |m, &a| m | 1 << a);
    Ok(Layout { dims, partial })
}

fn edge_from(v: &Value, mesh: &MeshShape, shape: &[usize], what: &str) -> Result<Edge, PlanError> {
    let r = Read(v, what);
    let from = layout_from(r.get("from")?, mesh, what)?;
    let to = layout_from(r.get("to")?, mesh, what)?;
    if from.dims.len() != shape.len() || to.dims.len() != shape.len() {
        return Err(bad(format!(
            "{what}: its layouts do not have one entry per axis of its value's shape {shape:?}"
        )));
    }
    Ok(Edge {
        moves: moves(&from, &to, shape, mesh),
        from,
        to,
        bytes: r.u64("bytes")?,
        time_s: r.f64("time_s")?,
    })
}

impl Plan {
    /// The plan as JSON text.
    ///
    /// ```
    /// use nabla::dist::Plan;
    /// let p = Plan::for_mesh(&[("data", 2)]).mlp(64, &[8, 8]);
    /// assert_eq!(Plan::from_json(&p.to_json()).unwrap(), p);
    /// ```
    pub fn to_json(&self) -> String {
        let m = &self.mesh;
        let nodes: Vec<Value> = self
            .nodes
            .iter()
            .map(|n| {
                json!({
                    "name": n.name,
                    "op": n.op,
                    "input": n.input,
                    "shape": n.shape,
                    "elem": n.elem,
                    "operands": n.operands,
                    "assignment": n.assignment.iter().map(|f| axes_json(f, m)).collect::<Vec<_>>(),
                    "out": layout_json(&n.out, m),
                    "compute_s": n.compute_s,
                    "edges": n.edges.iter().map(|e| edge_json(e, m)).collect::<Vec<_>>(),
                })
            })
            .collect();
        let v = json!({
            "nabla_plan": 1,
            "mesh": m.axes().map(|(n, s)| json!([n, s])).collect::<Vec<_>>(),
            "cost_model": {
                "flops_per_s": self.model.flops_per_s,
                "bandwidth": self.model.bandwidth,
                "latency_s": self.model.latency_s,
            },
            "memory": self.memory,
            "memory_limit": self.limit,
            "lower_bound_s": self.lower_bound_s,
            "nodes": nodes,
            "outputs": self.outputs.iter().map(|(o, e)| json!({"node": o, "gather": edge_json(e, m)})).collect::<Vec<_>>(),
        });
        serde_json::to_string_pretty(&v).expect("a JSON value serialises")
    }

    /// Reads a plan written by [`Plan::to_json`].
    ///
    /// ```
    /// assert!(nabla::dist::Plan::from_json("[1, 2]").is_err());
    /// ```
    pub fn from_json(text: &str) -> Result<Plan, PlanError> {
        let v: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let r = Read(&v, "the plan");
        if r.u64("nabla_plan")? != 1 {
            return Err(bad("its version is not 1"));
        }
        let mut axes = Vec::new();
        for a in r.arr("mesh")? {
            let pair = (
                a.get(0).and_then(Value::as_str),
                a.get(1).and_then(Value::as_u64),
            );
            match pair {
                (Some(n), Some(s)) if s > 0 => axes.push((n.to_string(), s as usize)),
                _ => return Err(bad(format!("mesh axis {a} is not [name, size]"))),
            }
        }
        let named: Vec<(&str, usize)> = axes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let distinct = named
            .iter()
            .enumerate()
            .all(|(i, (n, _))| !n.is_empty() && named[..i].iter().all(|(m, _)| m != n));
        if !distinct || named.len() > 8 {
            return Err(bad("its mesh axes are not up to eight distinct names"));
        }
        let mesh = MeshShape::new(&named);
        let cm = Read(r.get("cost_model")?, "cost_model");
        let bandwidth = usizes_f64(cm.get("bandwidth")?)?;
        let model = CostModel {
            flops_per_s: cm.f64("flops_per_s")?,
            bandwidth,
            latency_s: cm.f64("latency_s")?,
        };
        let mut nodes: Vec<PlanNode> = Vec::new();
        for (i, nv) in r.arr("nodes")?.iter().enumerate() {
            let what = format!("node {i}");
            let n = Read(nv, &what);
            let operands = usizes(n.get("operands")?, &what)?;
            if operands.iter().any(|&o| o >= i) {
                return Err(bad(format!(
                    "{what} reads a node that does not come before it"
                )));
            }
            let edges_v = n.arr("edges")?;
            if edges_v.len() != operands.len() {
                return Err(bad(format!(
                    "{what} has {} operands but {} edges",
                    operands.len(),
                    edges_v.len()
                )));
            }
            let edges = edges_v
                .iter()
                .zip(&operands)
                .map(|(e, &o)| edge_from(e, &mesh, &nodes[o].shape, &what))
                .collect::<Result<Vec<_>, _>>()?;
            nodes.push(PlanNode {
                name: n.str("name")?.to_string(),
                op: n.str("op")?.to_string(),
                input: n.get("input")?.as_u64().map(|x| x as usize),
                shape: usizes(n.get("shape")?, &what)?,
                elem: n.u64("elem")? as usize,
                operands,
                assignment: n
                    .arr("assignment")?
                    .iter()
                    .map(|f| axes_from(f, &mesh, &what))
                    .collect::<Result<_, _>>()?,
                out: layout_from(n.get("out")?, &mesh, &what)?,
                compute_s: n.f64("compute_s")?,
                edges,
            });
        }
        let mut outputs = Vec::new();
        for o in r.arr("outputs")? {
            let ro = Read(o, "an output");
            let node = ro.u64("node")? as usize;
            if node >= nodes.len() {
                return Err(bad(format!("output node {node} is not a node")));
            }
            let shape = nodes
                .get(node)
                .map(|n: &PlanNode| n.shape.clone())
                .unwrap_or_default();
            outputs.push((
                node,
                edge_from(ro.get("gather")?, &mesh, &shape, "an output")?,
            ));
        }
        Ok(Plan {
            mesh,
            model,
            nodes,
            outputs,
            memory: r.u64("memory")?,
            limit: r.get("memory_limit")?.as_u64(),
            lower_bound_s: r.f64("lower_bound_s")?,
        })
    }

    /// Writes the plan to `path` as JSON.
    ///
    /// ```
    /// use nabla::dist::Plan;
    /// let p = Plan::for_mesh(&[("data", 2)]).mlp(64, &[8, 8]);
    /// let path = std::env::temp_dir().join("nabla_doc_plan_save.json");
    /// p.save(&path).unwrap();
    /// assert_eq!(Plan::load(&path).unwrap(), p);
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), PlanError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_json()).map_err(|source| PlanError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads a plan saved with [`Plan::save`].
    ///
    /// ```
    /// let err = nabla::dist::Plan::load("/nonexistent/plan.json").unwrap_err();
    /// assert!(err.to_string().starts_with("/nonexistent/plan.json"));
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Plan, PlanError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Plan::from_json(&text).map_err(|e| match e {
            PlanError::Format { message, .. } => PlanError::Format {
                path: Some(path.to_path_buf()),
                message,
            },
            other => other,
        })
    }
}

fn usizes_f64(v: &Value) -> Result<Vec<f64>, PlanError> {
    v.as_array()
        .and_then(|a| a.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>())
        .filter(|b| !b.is_empty())
        .ok_or_else(|| bad("cost_model.bandwidth is not a non-empty list of numbers"))
}
