//! Layouts over a mesh, without ranks: a mesh's named axes
//! ([`MeshShape`]) and how one array lies on them ([`Spec`]). The planner
//! reasons about these alone, so it runs without MPI.

use std::fmt;

/// A mesh's axes, by name and size, major first: the shape of a
/// [`Mesh`](super::Mesh) without its ranks. What the planner needs to plan
/// for a machine this process is not part of.
///
/// ```
/// use nabla::dist::MeshShape;
/// let m = MeshShape::new(&[("data", 8), ("model", 4)]);
/// assert_eq!((m.devices(), m.axis("model"), m.size(1)), (32, Some(1), 4));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MeshShape {
    names: Vec<String>,
    sizes: Vec<usize>,
}

impl MeshShape {
    /// Axes `(name, size)`, major first. Panics on a repeated name, an
    /// empty name, a size of zero, or more than eight axes.
    ///
    /// ```
    /// let m = nabla::dist::MeshShape::new(&[("data", 2), ("model", 2)]);
    /// assert_eq!(m.len(), 2);
    /// ```
    #[track_caller]
    pub fn new(axes: &[(&str, usize)]) -> MeshShape {
        if axes.len() > 8 {
            panic!(
                "nabla::dist::Mesh: {} axes; a mesh has at most eight (merge some)",
                axes.len()
            );
        }
        for (i, &(name, size)) in axes.iter().enumerate() {
            if name.is_empty() || size == 0 {
                panic!(
                    "nabla::dist::Mesh: axis {i} is ({name:?}, {size}); every axis needs a name and a size of at least 1"
                );
            }
            if axes[..i].iter().any(|&(n, _)| n == name) {
                panic!(
                    "nabla::dist::Mesh: the axis name {name:?} appears twice in {axes:?}; give each axis its own name"
                );
            }
        }
        MeshShape {
            names: axes.iter().map(|&(n, _)| n.to_string()).collect(),
            sizes: axes.iter().map(|&(_, s)| s).collect(),
        }
    }

    /// The number of axes.
    ///
    /// ```
    /// assert_eq!(nabla::dist::MeshShape::new(&[("x", 4)]).len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Whether the mesh has no axes (one device).
    ///
    /// ```
    /// assert!(nabla::dist::MeshShape::new(&[]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// The number of devices (ranks): the product of the sizes.
    ///
    /// ```
    /// assert_eq!(nabla::dist::MeshShape::new(&[("a", 2), ("b", 3)]).devices(), 6);
    /// ```
    pub fn devices(&self) -> usize {
        self.sizes.iter().product()
    }

    /// The index of the axis named `name`.
    ///
    /// ```
    /// let m = nabla::dist::MeshShape::new(&[("a", 2), ("b", 3)]);
    /// assert_eq!((m.axis("b"), m.axis("c")), (Some(1), None));
    /// ```
    pub fn axis(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The size of axis `i`.
    ///
    /// ```
    /// assert_eq!(nabla::dist::MeshShape::new(&[("a", 2), ("b", 3)]).size(1), 3);
    /// ```
    pub fn size(&self, i: usize) -> usize {
        self.sizes[i]
    }

    /// The name of axis `i`.
    ///
    /// ```
    /// assert_eq!(nabla::dist::MeshShape::new(&[("a", 2)]).name(0), "a");
    /// ```
    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// The axes as `(name, size)` pairs.
    ///
    /// ```
    /// let m = nabla::dist::MeshShape::new(&[("a", 2)]);
    /// assert_eq!(m.axes().collect::<Vec<_>>(), vec![("a", 2)]);
    /// ```
    pub fn axes(&self) -> impl Iterator<Item = (&str, usize)> {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.sizes.iter().copied())
    }

    /// Rank `r`'s coordinate on every axis (row-major: the last axis
    /// varies fastest).
    ///
    /// ```
    /// let m = nabla::dist::MeshShape::new(&[("a", 2), ("b", 3)]);
    /// assert_eq!(m.coords(4), vec![1, 1]);
    /// ```
    pub fn coords(&self, r: usize) -> Vec<usize> {
        let mut c = vec![0; self.len()];
        let mut rest = r;
        for i in (0..self.len()).rev() {
            c[i] = rest % self.sizes[i];
            rest /= self.sizes[i];
        }
        c
    }
}

impl fmt::Display for MeshShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let axes: Vec<String> = self.axes().map(|(n, s)| format!("{n}: {s}")).collect();
        write!(f, "mesh({})", axes.join(", "))
    }
}

/// How an array lies on a mesh: for each array axis, the mesh axes that
/// split it (none: every rank holds the whole axis; several: split over
/// the first, each block split over the next), and the mesh axes over
/// which the array is a partial sum (the value is the sum of the ranks'
/// arrays along them, as after a local matrix product over a split
/// contraction).
///
/// ```
/// use nabla::dist::Spec;
/// let s = Spec::new(&[None, Some("model")]);
/// assert_eq!(s.dim(1), &["model".to_string()]);
/// assert_eq!(s.to_string(), "[-, model]");
/// let p = Spec::replicated(2).partial_over(&["model"]);
/// assert_eq!(p.to_string(), "[-, -] partial(model)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Spec {
    dims: Vec<Vec<String>>,
    partial: Vec<String>,
}

impl Spec {
    /// One entry per array axis: `None` whole, `Some(axis)` split over the
    /// mesh axis of that name.
    ///
    /// ```
    /// let s = nabla::dist::Spec::new(&[Some("data"), None]);
    /// assert_eq!(s.ndim(), 2);
    /// ```
    pub fn new(axes: &[Option<&str>]) -> Spec {
        Spec {
            dims: axes
                .iter()
                .map(|a| a.map(|n| vec![n.to_string()]).unwrap_or_default())
                .collect(),
            partial: Vec::new(),
        }
    }

    /// One list of mesh axes per array axis (major first).
    ///
    /// ```
    /// let s = nabla::dist::Spec::split(&[&["data", "model"], &[]]);
    /// assert_eq!(s.to_string(), "[data·model, -]");
    /// ```
    pub fn split(axes: &[&[&str]]) -> Spec {
        Spec {
            dims: axes
                .iter()
                .map(|d| d.iter().map(|n| n.to_string()).collect())
                .collect(),
            partial: Vec::new(),
        }
    }

    /// Every axis whole on every rank.
    ///
    /// ```
    /// assert!(nabla::dist::Spec::replicated(3).is_replicated());
    /// ```
    pub fn replicated(ndim: usize) -> Spec {
        Spec {
            dims: vec![Vec::new(); ndim],
            partial: Vec::new(),
        }
    }

    /// The same split, a partial sum over `axes` (added to those already
    /// pending).
    ///
    /// ```
    /// let s = nabla::dist::Spec::replicated(1).partial_over(&["model"]);
    /// assert_eq!(s.partial(), &["model".to_string()]);
    /// ```
    pub fn partial_over(mut self, axes: &[&str]) -> Spec {
        for a in axes {
            if !self.partial.iter().any(|p| p == a) {
                self.partial.push(a.to_string());
            }
        }
        self
    }

    /// The number of array axes.
    ///
    /// ```
    /// assert_eq!(nabla::dist::Spec::replicated(2).ndim(), 2);
    /// ```
    pub fn ndim(&self) -> usize {
        self.dims.len()
    }

    /// The mesh axes splitting array axis `i`, major first.
    ///
    /// ```
    /// assert!(nabla::dist::Spec::new(&[None]).dim(0).is_empty());
    /// ```
    pub fn dim(&self, i: usize) -> &[String] {
        &self.dims[i]
    }

    /// The mesh axes over which the array is a partial sum.
    ///
    /// ```
    /// assert!(nabla::dist::Spec::new(&[None]).partial().is_empty());
    /// ```
    pub fn partial(&self) -> &[String] {
        &self.partial
    }

    /// Whether every axis is whole and nothing is pending.
    ///
    /// ```
    /// assert!(!nabla::dist::Spec::new(&[Some("x")]).is_replicated());
    /// ```
    pub fn is_replicated(&self) -> bool {
        self.partial.is_empty() && self.dims.iter().all(Vec::is_empty)
    }

    /// Into mesh-axis indices, checked against `shape` and `mesh`: every
    /// named axis exists, no mesh axis is used twice, every split axis
    /// divides evenly. Panics naming `op` and the fix otherwise.
    #[track_caller]
    pub(crate) fn resolve(&self, shape: &[usize], mesh: &MeshShape, op: &str) -> Layout {
        if self.ndim() != shape.len() {
            panic!(
                "nabla::dist::{op}: the spec {self} has {} axes but the array's shape {shape:?} has {}; give one entry per axis",
                self.ndim(),
                shape.len()
            );
        }
        let find = |name: &str| {
            mesh.axis(name).unwrap_or_else(|| {
                panic!(
                    "nabla::dist::{op}: the spec {self} names the mesh axis {name:?}, which {mesh} does not have; use one of its axes"
                )
            })
        };
        let mut used = 0u16;
        let mut claim = |i: usize, name: &str| {
            if used & (1 << i) != 0 {
                panic!(
                    "nabla::dist::{op}: the spec {self} uses the mesh axis {name:?} twice; a mesh axis splits at most one array axis and is not also a pending sum"
                );
            }
            used |= 1 << i;
        };
        let mut dims = Vec::with_capacity(shape.len());
        for (k, names) in self.dims.iter().enumerate() {
            let mut d = Vec::with_capacity(names.len());
            let mut parts = 1;
            for n in names {
                let i = find(n);
                claim(i, n);
                parts *= mesh.size(i);
                d.push(i as u8);
            }
            if !shape[k].is_multiple_of(parts) {
                panic!(
                    "nabla::dist::{op}: axis {k} of shape {shape:?} has length {}, which does not split evenly over {} ({} parts); pick a length divisible by {parts} or split another axis",
                    shape[k],
                    names.join("·"),
                    parts
                );
            }
            dims.push(d);
        }
        let mut partial = 0u8;
        for n in &self.partial {
            let i = find(n);
            claim(i, n);
            partial |= 1 << i;
        }
        Layout { dims, partial }
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self
            .dims
            .iter()
            .map(|d| {
                if d.is_empty() {
                    "-".to_string()
                } else {
                    d.join("·")
                }
            })
            .collect();
        write!(f, "[{}]", dims.join(", "))?;
        if !self.partial.is_empty() {
            write!(f, " partial({})", self.partial.join(", "))?;
        }
        Ok(())
    }
}

/// A [`Spec`] resolved against a mesh: mesh-axis indices per array axis
/// (major first) and the partial-sum axes as a bit mask. What the runtime,
/// the rules and the planner compute with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct Layout {
    pub dims: Vec<Vec<u8>>,
    pub partial: u8,
}

impl Layout {
    /// Every axis whole, nothing pending.
    pub fn replicated(ndim: usize) -> Layout {
        Layout {
            dims: vec![Vec::new(); ndim],
            partial: 0,
        }
    }

    /// The mesh axes this layout uses to split array axes, as a bit mask.
    pub fn split_mask(&self) -> u8 {
        self.dims.iter().flatten().fold(0, |m, &a| m | 1 << a)
    }

    /// How many blocks array axis `k` is cut into.
    pub fn parts(&self, k: usize, mesh: &MeshShape) -> usize {
        self.dims[k]
            .iter()
            .map(|&a| mesh.size(a as usize))
            .product()
    }

    /// This layout's block shape for the global `shape`.
    pub fn local_shape(&self, shape: &[usize], mesh: &MeshShape) -> Vec<usize> {
        (0..shape.len())
            .map(|k| shape[k] / self.parts(k, mesh))
            .collect()
    }

    /// The [`Spec`] naming this layout's axes on `mesh`.
    pub fn spec(&self, mesh: &MeshShape) -> Spec {
        Spec {
            dims: self
                .dims
                .iter()
                .map(|d| {
                    d.iter()
                        .map(|&a| mesh.name(a as usize).to_string())
                        .collect()
                })
                .collect(),
            partial: (0..mesh.len())
                .filter(|&a| self.partial & (1 << a) != 0)
                .map(|a| mesh.name(a).to_string())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_resolve_and_name_what_is_wrong() {
        let mesh = MeshShape::new(&[("data", 2), ("model", 4)]);
        let l = Spec::split(&[&["data"], &["model"]])
            .partial_over(&[])
            .resolve(&[4, 8], &mesh, "t");
        assert_eq!(l.dims, vec![vec![0], vec![1]]);
        assert_eq!(l.local_shape(&[4, 8], &mesh), vec![2, 2]);
        assert_eq!(l.spec(&mesh), Spec::new(&[Some("data"), Some("model")]));
        let msg = |f: fn()| {
            let e = std::panic::catch_unwind(f).unwrap_err();
            e.downcast_ref::<String>().cloned().unwrap_or_default()
        };
        assert!(
            msg(|| {
                let mesh = MeshShape::new(&[("data", 2)]);
                Spec::new(&[Some("model")]).resolve(&[4], &mesh, "t");
            })
            .contains("names the mesh axis \"model\"")
        );
        assert!(
            msg(|| {
                let mesh = MeshShape::new(&[("data", 2)]);
                Spec::new(&[Some("data"), Some("data")]).resolve(&[4, 4], &mesh, "t");
            })
            .contains("uses the mesh axis \"data\" twice")
        );
        assert!(
            msg(|| {
                let mesh = MeshShape::new(&[("data", 2)]);
                Spec::new(&[Some("data")]).resolve(&[3], &mesh, "t");
            })
            .contains("does not split evenly over data")
        );
    }
}
