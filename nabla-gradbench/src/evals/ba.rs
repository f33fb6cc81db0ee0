//! `ba`: bundle adjustment. GradBench sends one camera, one point, one
//! weight and one feature and asks for the problem of `n` cameras, `m`
//! points and `p` observations built from copies of them (observation `i`
//! sees point `i mod m` from camera `i mod n`): every observation is
//! computed, none is skipped for being a copy. `objective` gives the
//! reprojection errors `w (proj − feat)` and weight errors `1 − w²`
//! (GradBench reports observation 0's and the count); `jacobian` the
//! sparse Jacobian, every observation's 2 × 15 block by two reverse passes
//! over all observations at once (observations share no parameters, so
//! the pullback of one error row of every observation is each one's row),
//! reported as GradBench's 31-entry summary of the CSR arrays.

use super::{Job, field, int, num, nums, unknown};
use nabla::prelude::*;
use serde_json::{Value as Json, json};

/// Camera parameters: rotation (Rodrigues) 0..3, centre 3..6, focal length
/// 6, principal point 7..9, radial distortion 9..11.
const CAM: usize = 11;

/// `a × b` for columns of three (`[3, p]`).
#[differentiable]
fn cross(a: &Array, b: &Array) -> Array {
    let (a0, a1, a2) = (
        a.slice_axis(0, 0..1),
        a.slice_axis(0, 1..2),
        a.slice_axis(0, 2..3),
    );
    let (b0, b1, b2) = (
        b.slice_axis(0, 0..1),
        b.slice_axis(0, 1..2),
        b.slice_axis(0, 2..3),
    );
    nabla::concat(
        &[
            &a1 * &b2 - &a2 * &b1,
            &a2 * &b0 - &a0 * &b2,
            &a0 * &b1 - &a1 * &b0,
        ],
        0,
    )
}

/// The reprojection errors `[2, p]` of observations with cameras `[11, p]`,
/// points `[3, p]`, weights `[1, p]` and features `[2, p]`; `still [1, p]`
/// marks cameras with no rotation (`r = 0`), which take the first-order
/// formula `X + r × X` as GradBench's reference does. Observations run
/// along the last axis, so every parameter's values are one contiguous
/// row and each step is a pass over rows.
#[differentiable]
fn reprojection(
    cams: &Array,
    xs: &Array,
    w: &Array,
    feats: &Array,
    #[nondiff] still: &Array,
) -> Array {
    let r = cams.slice_axis(0, 0..3);
    let xo = xs - &cams.slice_axis(0, 3..6);
    let t2 = nabla::sum_axes(&r.square(), &[0], true);
    // The rotation with θ = ‖r‖ (θ² replaced by 1 where it is 0, so that
    // branch's derivatives stay finite where it is not taken).
    let theta = nabla::where_(still, &t2.ones_like(), &t2).sqrt();
    let axis = &r / &theta;
    let (c, s) = (theta.cos(), theta.sin());
    let along = nabla::sum_axes(&(&axis * &xo), &[0], true);
    let rotated = &xo * &c + cross(&axis, &xo) * &s + &axis * &along * (-(&c) + 1.0);
    let xcam = nabla::where_(still, &(&xo + &cross(&r, &xo)), &rotated);
    let pt = xcam.slice_axis(0, 0..2) / xcam.slice_axis(0, 2..3);
    let rho = nabla::sum_axes(&pt.square(), &[0], true);
    let distortion =
        &rho * &cams.slice_axis(0, 9..10) + rho.square() * cams.slice_axis(0, 10..11) + 1.0;
    let proj = pt * distortion * cams.slice_axis(0, 6..7) + cams.slice_axis(0, 7..9);
    (proj - feats) * w
}

/// The weight errors `1 − w²`.
#[differentiable]
fn weight_error(w: &Array) -> Array {
    -w.square() + 1.0
}

struct Ba {
    n: usize,
    m: usize,
    cams: Array,
    xs: Array,
    w: Array,
    feats: Array,
    still: Array,
    jacobian: bool,
    errors: Option<(Array, Array)>,
    /// ∂e/∂(camera, point, weight) for every observation: `[2, 15, p]`.
    blocks: Option<Array>,
    /// ∂(1 − wᵢ²)/∂wᵢ for every observation.
    weight_slopes: Option<Array>,
}

impl Ba {
    fn p(&self) -> usize {
        self.w.shape()[1]
    }
}

impl Job for Ba {
    fn run(&mut self) {
        if !self.jacobian {
            let e = reprojection(&self.cams, &self.xs, &self.w, &self.feats, &self.still);
            self.errors = Some((e, weight_error(&self.w)));
            return;
        }
        // Observation i's errors depend on its own camera, point and weight
        // only, so the pullback of "row r of every observation" gives every
        // observation's row r: two reverse passes for all 2 × 15 blocks.
        let p = self.p();
        let rows = [0, 1].map(|r| {
            let (_, pullback) =
                vjp(reprojection)(&self.cams, &self.xs, &self.w, &self.feats, &self.still);
            let ct: Vec<f64> = (0..2 * p)
                .map(|k| if k / p == r { 1.0 } else { 0.0 })
                .collect();
            let (dc, dx, dw, _) = pullback(&Array::from_vec(ct, &[2, p]));
            nabla::concat(&[dc, dx, dw], 0)
        });
        self.blocks = Some(nabla::stack(&rows, 0));
        // Each weight error depends on its own weight only: one JVP with
        // ones gives every derivative.
        self.weight_slopes = Some(jvp(weight_error)((&self.w,), (&self.w.ones_like(),)).1);
    }

    fn output(&self) -> Json {
        let p = self.p();
        if !self.jacobian {
            let (e, we) = self.errors.as_ref().expect("run first");
            let e0 = e.slice_axis(1, 0..1).to_vec::<f64>();
            return json!({
                "reproj_error": {"elements": e0, "repeated": p},
                "w_err": {"element": we.to_vec::<f64>()[0], "repeated": p},
            });
        }
        // Observation 0's two rows (15 entries each) and the last weight
        // row, as GradBench's summary of the CSR arrays.
        let blocks = self.blocks.as_ref().expect("run first").to_vec::<f64>();
        let at = |k: usize, row: usize| blocks[(row * 15 + k) * p];
        let (n, m) = (self.n, self.m);
        let mut cols: Vec<usize> = (0..CAM).collect();
        cols.extend([11 * n, 11 * n + 1, 11 * n + 2, 11 * n + 3 * m]);
        let cols: Vec<usize> = [cols.clone(), cols, vec![11 * n + 3 * m + p - 1]].concat();
        let mut vals: Vec<f64> = Vec::with_capacity(31);
        for row in 0..2 {
            vals.extend((0..CAM + 4).map(|k| at(k, row)));
        }
        let dw = self.weight_slopes.as_ref().expect("run first");
        vals.push(dw.to_vec::<f64>()[p - 1]);
        let mut rows: Vec<usize> = (0..30).map(|r| 15 * r).collect();
        rows.push(31 * p);
        json!({"rows": rows, "cols": cols, "vals": vals})
    }
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let jacobian = match function {
        "objective" => false,
        "jacobian" => true,
        f => return Err(unknown("ba", f)),
    };
    let (n, m, p) = (
        int(field(input, "n")?, "n")?,
        int(field(input, "m")?, "m")?,
        int(field(input, "p")?, "p")?,
    );
    let cam = nums(field(input, "cam")?, "cam")?;
    let x = nums(field(input, "x")?, "x")?;
    let w = num(field(input, "w")?, "w")?;
    let feat = nums(field(input, "feat")?, "feat")?;
    if cam.len() != CAM || x.len() != 3 || feat.len() != 2 || n == 0 || m == 0 || p < 15 {
        return Err(format!(
            "ba: needs cam of 11, x of 3, feat of 2 numbers, n, m ≥ 1 and p ≥ 15 (GradBench's summary reads 30 Jacobian rows); got {}, {}, {}, n = {n}, m = {m}, p = {p}",
            cam.len(),
            x.len(),
            feat.len()
        ));
    }
    // The full problem: n cameras, m points, p observations; each
    // observation's camera and point gathered into columns.
    let cameras = cam.repeat(n);
    let points = x.repeat(m);
    let cam_of: Vec<usize> = (0..p).map(|i| i % n).collect();
    let point_of: Vec<usize> = (0..p).map(|i| i % m).collect();
    let columns = |table: &[f64], width: usize, of: &[usize]| {
        let values = (0..width)
            .flat_map(|k| of.iter().map(move |&j| table[j * width + k]))
            .collect();
        Array::from_vec(values, &[width, of.len()])
    };
    let still: Vec<bool> = cam_of
        .iter()
        .map(|&j| cameras[j * CAM..j * CAM + 3].iter().all(|&r| r == 0.0))
        .collect();
    Ok(Box::new(Ba {
        n,
        m,
        cams: columns(&cameras, CAM, &cam_of),
        xs: columns(&points, 3, &point_of),
        w: Array::from_vec(vec![w; p], &[1, p]),
        feats: Array::from_vec(
            feat.iter()
                .flat_map(|&f| std::iter::repeat_n(f, p))
                .collect(),
            &[2, p],
        ),
        still: Array::from_vec(still, &[1, p]),
        jacobian,
        errors: None,
        blocks: None,
        weight_slopes: None,
    }))
}
