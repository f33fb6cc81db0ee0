//! The `scalar_grad` workload of issue 3: a 30-operation f64 function of
//! three inputs (`scalar30`), its reverse-mode gradient written by hand,
//! and the point both are evaluated at.

use nabla::prelude::*;

/// A scalar function of three inputs with exactly 30 operations (numbered).
/// Every `ln` and `sqrt` argument is positive for all real inputs.
#[differentiable]
pub fn scalar30(x: f64, y: f64, z: f64) -> f64 {
    let a = x * y; // 1
    let b = a.sin(); // 2
    let c = z.cos(); // 3
    let d = b * c; // 4
    let e = x.powi(2); // 5
    let f = e + 1.0; // 6
    let g = f.ln(); // 7
    let h = y.exp(); // 8
    let i = h / f; // 9
    let j = g + i; // 10
    let k = z.tanh(); // 11
    let l = k * x; // 12
    let m = y * y; // 13
    let n = m + 2.0; // 14
    let o = n.sqrt(); // 15
    let p = l / o; // 16
    let q = d + p; // 17
    let r = j * q; // 18
    let s = z.powi(3); // 19
    let t = s - x; // 20
    let u = t.sin(); // 21
    let v = u * h; // 22
    let w = r - v; // 23
    let aa = x + z; // 24
    let bb = aa.exp(); // 25
    let cc = o * bb; // 26
    let dd = cc.ln(); // 27
    let ee = w + dd; // 28
    let ff = ee.tanh(); // 29
    ff * o // 30
}

/// The gradient of [`scalar30`] written by hand: the same forward sweep with
/// named intermediates, then the adjoints (`*_b`) in reverse order.
#[inline(never)]
pub fn scalar30_grad_by_hand(x: f64, y: f64, z: f64) -> (f64, f64, f64) {
    let a = x * y;
    let b = a.sin();
    let c = z.cos();
    let d = b * c;
    let e = x.powi(2);
    let f = e + 1.0;
    let g = f.ln();
    let h = y.exp();
    let i = h / f;
    let j = g + i;
    let k = z.tanh();
    let l = k * x;
    let m = y * y;
    let n = m + 2.0;
    let o = n.sqrt();
    let p = l / o;
    let q = d + p;
    let r = j * q;
    let s = z.powi(3);
    let t = s - x;
    let u = t.sin();
    let v = u * h;
    let w = r - v;
    let aa = x + z;
    let bb = aa.exp();
    let cc = o * bb;
    let dd = cc.ln();
    let ee = w + dd;
    let ff = ee.tanh();
    // 30: out = ff * o
    let ff_b = o;
    let mut o_b = ff;
    // 29: ff = tanh(ee)
    let ee_b = ff_b * (1.0 - ff * ff);
    // 28: ee = w + dd
    let w_b = ee_b;
    let dd_b = ee_b;
    // 27: dd = ln(cc)
    let cc_b = dd_b / cc;
    // 26: cc = o * bb
    o_b += cc_b * bb;
    let bb_b = cc_b * o;
    // 25: bb = exp(aa)
    let aa_b = bb_b * bb;
    // 24: aa = x + z
    let mut x_b = aa_b;
    let mut z_b = aa_b;
    // 23: w = r - v
    let r_b = w_b;
    let v_b = -w_b;
    // 22: v = u * h
    let u_b = v_b * h;
    let mut h_b = v_b * u;
    // 21: u = sin(t)
    let t_b = u_b * t.cos();
    // 20: t = s - x
    let s_b = t_b;
    x_b -= t_b;
    // 19: s = z^3
    z_b += s_b * 3.0 * z * z;
    // 18: r = j * q
    let j_b = r_b * q;
    let q_b = r_b * j;
    // 17: q = d + p
    let d_b = q_b;
    let p_b = q_b;
    // 16: p = l / o
    let l_b = p_b / o;
    o_b -= p_b * p / o;
    // 15: o = sqrt(n)
    let n_b = o_b * 0.5 / o;
    // 14: n = m + 2
    let m_b = n_b;
    // 13: m = y * y
    let mut y_b = m_b * 2.0 * y;
    // 12: l = k * x
    let k_b = l_b * x;
    x_b += l_b * k;
    // 11: k = tanh(z)
    z_b += k_b * (1.0 - k * k);
    // 10: j = g + i
    let g_b = j_b;
    let i_b = j_b;
    // 9: i = h / f
    h_b += i_b / f;
    let mut f_b = -i_b * i / f;
    // 8: h = exp(y)
    y_b += h_b * h;
    // 7: g = ln(f)
    f_b += g_b / f;
    // 6: f = e + 1
    let e_b = f_b;
    // 5: e = x^2
    x_b += e_b * 2.0 * x;
    // 4: d = b * c
    let b_b = d_b * c;
    let c_b = d_b * b;
    // 3: c = cos(z)
    z_b -= c_b * z.sin();
    // 2: b = sin(a)
    let a_b = b_b * a.cos();
    // 1: a = x * y
    x_b += a_b * y;
    y_b += a_b * x;
    (x_b, y_b, z_b)
}

/// `(x, y, z)` the gradient is taken at.
pub const SCALAR_AT: (f64, f64, f64) = (0.7, 1.3, 0.4);
