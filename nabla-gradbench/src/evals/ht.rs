//! `ht`: hand tracking. A skinned hand model (22 bones, linear blend
//! skinning) posed by 26 parameters; the objective is the distance of
//! observed points to their corresponding model vertices (`simple`) or to
//! points inside corresponding triangles at barycentric coordinates `us`
//! (`complicated`, when `us` is not empty). The Jacobian's columns are the
//! 26 pose parameters (after two for `us` in the complicated variant), all
//! 26 by one forward pass carrying a batch of tangents; every error depends
//! on its own point's `us` only, so one pass with ones per `us` coordinate
//! gives those columns. Only the model vertices that some point
//! corresponds to are skinned.

use super::{Job, field, matrix, nums, unknown};
use nabla::prelude::*;
use serde_json::Value as Json;

const BONES: usize = 22;
const POSE: usize = 26;

/// The model and the correspondences, fixed per input.
struct Hand {
    /// `[22, 4, 4]`: each bone's base transform relative to its parent.
    relative: Array,
    /// `[22, 4, 4]`: each bone's inverse base absolute transform.
    inverse_absolute: Array,
    /// `[4, nu]`: the rest-pose vertices (homogeneous) that some point
    /// corresponds to, as columns.
    rest: Array,
    /// `[22, 1, nu]`: their skinning weights, bone-major.
    weights: Array,
    parents: Vec<i64>,
    mirrored: bool,
    points: Array,
    /// The corresponding vertex (simple) or the triangle's three vertices
    /// (complicated) of every point, as columns of `rest`.
    corners: [Vec<usize>; 3],
}

/// Position in `[θ, 0]` of each bone's three Euler angles (`[22 × 3]`,
/// row-major; 26 is the zero): fingers' first joints take two angles, the
/// others one, in GradBench's order.
fn angle_slots() -> Vec<usize> {
    let mut slots = vec![POSE; BONES * 3];
    for f in 0..5 {
        let (b, t) = (4 * f + 2, 6 + 4 * f);
        slots[b * 3] = t;
        slots[b * 3 + 1] = t + 1;
        slots[(b + 1) * 3] = t + 2;
        slots[(b + 2) * 3] = t + 3;
    }
    slots
}

/// `pad` widths: one more row and column on each `3 × 3` block.
fn to_homogeneous() -> Vec<(usize, usize)> {
    vec![(0, 0), (0, 1), (0, 1)]
}

/// `pad` widths: one element after a vector.
fn one_after() -> Vec<(usize, usize)> {
    vec![(0, 1)]
}

/// `[−1, 1, 1]` as a column: mirrors x.
fn mirror() -> Array {
    Array::from_vec(vec![-1.0, 1.0, 1.0], &[3, 1])
}

/// A `[4, 4]` matrix with a single 1 at `(3, 3)`.
fn corner_one() -> Array {
    let mut v = vec![0.0; 16];
    v[15] = 1.0;
    Array::from_vec(v, &[4, 4])
}

/// Column `i` of a `[rows, k]` matrix, as `[rows, 1]`.
#[differentiable]
fn col(m: &Array, #[nondiff] i: usize) -> Array {
    m.slice_axis(1, i..i + 1)
}

/// Every bone's rotation `Rz(v₁) Ry(v₂) Rx(v₀)` from its angles `[22, 3]`,
/// as `[22, 3, 3]`.
#[differentiable]
fn euler(v: &Array) -> Array {
    let (cx, sx) = (col(v, 0).cos(), col(v, 0).sin());
    let (cz, sz) = (col(v, 1).cos(), col(v, 1).sin());
    let (cy, sy) = (col(v, 2).cos(), col(v, 2).sin());
    let r = nabla::concat(
        &[
            &cz * &cy,
            -(&sz * &cx) + &cz * &sy * &sx,
            &sz * &sx + &cz * &sy * &cx,
            &sz * &cy,
            &cz * &cx + &sz * &sy * &sx,
            -(&cz * &sx) + &sz * &sy * &cx,
            -(&sy),
            &cy * &sx,
            &cy * &cx,
        ],
        1,
    );
    r.reshape(&[v.shape()[0], 3, 3])
}

/// The global rotation (Rodrigues) of the angle-axis vector `a [3]`.
#[differentiable]
fn global_rotation(a: &Array) -> Array {
    let theta = nabla::sum(&a.square()).sqrt();
    let u = a / &theta;
    let (x, y, z) = (
        u.slice_axis(0, 0..1),
        u.slice_axis(0, 1..2),
        u.slice_axis(0, 2..3),
    );
    let (c, s) = (theta.cos(), theta.sin());
    let k = -(&c) + 1.0;
    let r = nabla::concat(
        &[
            &x * &x * &k + &c,
            &x * &y * &k - &z * &s,
            &x * &z * &k + &y * &s,
            &x * &y * &k + &z * &s,
            &y * &y * &k + &c,
            &y * &z * &k - &x * &s,
            &x * &z * &k - &y * &s,
            &z * &y * &k + &x * &s,
            &z * &z * &k + &c,
        ],
        0,
    );
    r.reshape(&[3, 3])
}

/// The posed vertices `[nu, 3]` (the skinned vertices) for pose `theta [26]`; `still` when the
/// global rotation is below 1e-4 (then the identity, as GradBench's). The
/// model's arrays are arguments like `theta` (products need them so);
/// callers pass no tangent for them.
#[differentiable]
#[allow(clippy::too_many_arguments)]
fn posed(
    theta: &Array,
    relative: &Array,
    inverse_absolute: &Array,
    rest: &Array,
    weights: &Array,
    parents: &[i64],
    #[nondiff] still: bool,
    #[nondiff] mirrored: bool,
) -> Array {
    let angles = nabla::pad(theta, &one_after(), 0.0)
        .index_select(0, &angle_slots())
        .reshape(&[BONES, 3]);
    let local = nabla::pad(&euler(&angles), &to_homogeneous(), 0.0) + corner_one();
    let rel = relative.matmul(&local);
    let mut absolute = rel.slice_axis(0, 0..1);
    #[allow(clippy::needless_range_loop)]
    for b in 1..BONES {
        let own = rel.slice_axis(0, b..b + 1);
        let p = parents[b];
        let next = if p < 0 {
            own
        } else {
            absolute
                .slice_axis(0, p as usize..p as usize + 1)
                .matmul(&own)
        };
        absolute = nabla::concat(&[absolute, next], 0);
    }
    let transforms = absolute.matmul(inverse_absolute);
    // Σ_b w[v, b] (T_b · rest_v)[0..3], as [3, nu].
    let moved = transforms.matmul(rest).slice_axis(1, 0..3);
    let mut pos = nabla::sum_axes(&(moved * weights), &[0], false);
    if mirrored {
        pos *= mirror();
    }
    if !still {
        pos = global_rotation(&theta.slice_axis(0, 0..3)).matmul(&pos);
    }
    (pos + theta.slice_axis(0, 3..6).expand_dims(1)).permute(&[1, 0])
}

/// The errors `[3 · npts]` (point minus model point, x y z per point).
#[differentiable]
#[allow(clippy::too_many_arguments)]
fn errors(
    theta: &Array,
    us: &Array,
    points: &Array,
    relative: &Array,
    inverse_absolute: &Array,
    rest: &Array,
    weights: &Array,
    parents: &[i64],
    c0: &[usize],
    c1: &[usize],
    c2: &[usize],
    #[nondiff] still: bool,
    #[nondiff] mirrored: bool,
    #[nondiff] complicated: bool,
) -> Array {
    let pos = posed(
        theta,
        relative,
        inverse_absolute,
        rest,
        weights,
        parents,
        still,
        mirrored,
    );
    let mut model = pos.index_select(0, c0);
    if complicated {
        let (u0, u1) = (col(us, 0), col(us, 1));
        let w2 = -(&u0) - &u1 + 1.0;
        model = model * u0 + pos.index_select(0, c1) * u1 + pos.index_select(0, c2) * w2;
    }
    (points - &model).reshape(&[points.numel()])
}

struct Ht {
    hand: Hand,
    theta: Array,
    us: Array,
    complicated: bool,
    jacobian: bool,
    out: Option<Array>,
}

impl Ht {
    /// Whether the global rotation is below 1e-4 (then the identity).
    fn still(&self) -> bool {
        nabla::sum(&self.theta.slice_axis(0, 0..3).square())
            .item()
            .sqrt()
            < 1e-4
    }

    /// The errors and, with tangents, their directional derivative.
    fn errors(&self, dtheta: Option<&Array>, dus: Option<&Array>) -> (Array, Array) {
        let h = &self.hand;
        let still = self.still();
        errors::jvp::<Array>(
            &self.theta,
            &self.us,
            &h.points,
            &h.relative,
            &h.inverse_absolute,
            &h.rest,
            &h.weights,
            &h.parents,
            &h.corners[0],
            &h.corners[1],
            &h.corners[2],
            still,
            h.mirrored,
            self.complicated,
            dtheta,
            dus,
            None,
            None,
            None,
            None,
            None,
        )
    }

    /// The Jacobian in the pose, `[3 · npts, 26]`, as `jacfwd` computes
    /// it: one forward pass of `Dual<Batched<Array>>` values whose tangent
    /// carries all 26 basis directions on a batch axis, so the primal runs
    /// once. (`jacfwd` itself takes functions of arrays only; `errors`
    /// also takes the model's index lists and flags.)
    fn pose_jacobian(&self) -> Array {
        let h = &self.hand;
        let constant = |v: &Array| Dual::new(Batched::unbatched(v.clone()), None);
        let basis = Batched::new(Array::eye(POSE, DType::F64), Some(0));
        let theta = Dual::new(Batched::unbatched(self.theta.clone()), Some(basis));
        let y = errors::forward::<Dual<Batched<Array>>>(
            &theta,
            &constant(&self.us),
            &constant(&h.points),
            &constant(&h.relative),
            &constant(&h.inverse_absolute),
            &constant(&h.rest),
            &constant(&h.weights),
            &h.parents,
            &h.corners[0],
            &h.corners[1],
            &h.corners[2],
            self.still(),
            h.mirrored,
            self.complicated,
        );
        y.tangent_or_zero().materialize(POSE, 1)
    }
}

impl Job for Ht {
    fn run(&mut self) {
        if !self.jacobian {
            self.out = Some(self.errors(None, None).0);
            return;
        }
        let mut columns = Vec::with_capacity(3);
        if self.complicated {
            for k in 0..2 {
                let n = self.us.shape()[0];
                let v: Vec<f64> = (0..2 * n)
                    .map(|i| if i % 2 == k { 1.0 } else { 0.0 })
                    .collect();
                let column = self.errors(None, Some(&Array::from_vec(v, &[n, 2]))).1;
                columns.push(column.expand_dims(1));
            }
        }
        columns.push(self.pose_jacobian());
        self.out = Some(nabla::concat(&columns, 1));
    }

    fn output(&self) -> Json {
        let out = self.out.as_ref().expect("run first");
        if self.jacobian {
            super::rows(out)
        } else {
            super::list(out)
        }
    }
}

/// A list of 4 × 4 matrices as `[count, 4, 4]`.
fn matrices(j: &Json, what: &str) -> Result<Array, String> {
    let list = j
        .as_array()
        .ok_or_else(|| format!("{what}: expected a list of 4 × 4 matrices"))?;
    let mut flat = Vec::with_capacity(list.len() * 16);
    for m in list {
        let m = matrix(m, what)?;
        if m.shape() != [4, 4] {
            return Err(format!(
                "{what}: a matrix of shape {:?}, expected [4, 4]",
                m.shape()
            ));
        }
        flat.extend(m.to_vec::<f64>());
    }
    Ok(Array::from_vec(flat, &[list.len(), 4, 4]))
}

/// Non-negative integers below `bound`.
fn indices(j: &Json, what: &str, bound: usize) -> Result<Vec<usize>, String> {
    nums(j, what)?
        .into_iter()
        .map(|v| {
            (v >= 0.0 && v.fract() == 0.0 && (v as usize) < bound)
                .then_some(v as usize)
                .ok_or_else(|| format!("{what}: {v} is not an index below {bound}"))
        })
        .collect()
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let jacobian = match function {
        "objective" => false,
        "jacobian" => true,
        f => return Err(unknown("ht", f)),
    };
    let theta = nums(field(input, "theta")?, "theta")?;
    if theta.len() != POSE {
        return Err(format!(
            "ht: theta has {} numbers, {POSE} expected",
            theta.len()
        ));
    }
    let data = field(input, "data")?;
    let model = field(data, "model")?;
    let relative = matrices(field(model, "base_relatives")?, "base_relatives")?;
    let inverse_absolute = matrices(
        field(model, "inverse_base_absolutes")?,
        "inverse_base_absolutes",
    )?;
    let positions = matrix(field(model, "base_positions")?, "base_positions")?;
    let weights = matrix(field(model, "weights")?, "weights")?;
    let nv = positions.shape()[0];
    let parents: Vec<i64> = nums(field(model, "parents")?, "parents")?
        .iter()
        .map(|&p| p as i64)
        .collect();
    if relative.shape()[0] != BONES
        || inverse_absolute.shape()[0] != BONES
        || parents.len() != BONES
        || positions.shape()[1] != 4
        || weights.shape() != [nv, BONES]
        || parents.iter().enumerate().any(|(b, &p)| p >= b as i64)
    {
        return Err(format!(
            "ht: the model must have {BONES} bones (parents before children), base_positions [nv, 4] and weights [nv, {BONES}]"
        ));
    }
    let mirrored = model
        .get("is_mirrored")
        .and_then(Json::as_bool)
        .unwrap_or(false);
    let points = matrix(field(data, "points")?, "points")?;
    let npts = points.shape()[0];
    let corr = indices(
        field(data, "correspondences")?,
        "correspondences",
        usize::MAX,
    )?;
    let us_list = field(input, "us")?.as_array().map_or(0, Vec::len);
    let complicated = us_list > 0;
    let (us, corners) = if complicated {
        let us = matrix(field(input, "us")?, "us")?;
        let tris = matrix(field(model, "triangles")?, "triangles")?.to_vec::<f64>();
        let ntri = tris.len() / 3;
        if us.shape() != [npts, 2]
            || corr.iter().any(|&c| c >= ntri)
            || tris.iter().any(|&v| v < 0.0 || v as usize >= nv)
        {
            return Err(
                "ht: us must be [npts, 2] and correspondences triangles of the model".into(),
            );
        }
        let corner = |k: usize| {
            corr.iter()
                .map(|&t| tris[3 * t + k] as usize)
                .collect::<Vec<_>>()
        };
        (us, [corner(0), corner(1), corner(2)])
    } else {
        if corr.iter().any(|&v| v >= nv) {
            return Err("ht: a correspondence is not a vertex of the model".into());
        }
        (
            Array::zeros(&[npts, 2], DType::F64),
            [corr.clone(), corr.clone(), corr],
        )
    };
    if points.shape() != [npts, 3] || corners[0].len() != npts {
        return Err("ht: points must be [npts, 3] with one correspondence each".into());
    }
    // Only the vertices some point corresponds to are skinned: the model's
    // other vertices change no error (GradBench's small inputs use a few of
    // them, its largest more than the model has).
    let used: Vec<usize> = {
        let mut v: Vec<usize> = corners.iter().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut slot = vec![0; nv];
    for (k, &v) in used.iter().enumerate() {
        slot[v] = k;
    }
    let corners = corners.map(|c| c.iter().map(|&v| slot[v]).collect::<Vec<_>>());
    let hand = Hand {
        relative,
        inverse_absolute,
        rest: positions.index_select(0, &used).permute(&[1, 0]),
        weights: weights
            .index_select(0, &used)
            .permute(&[1, 0])
            .reshape(&[BONES, 1, used.len()]),
        parents,
        mirrored,
        points,
        corners,
    };
    Ok(Box::new(Ht {
        hand,
        theta: Array::from_vec(theta, &[POSE]),
        us,
        complicated,
        jacobian,
        out: None,
    }))
}
