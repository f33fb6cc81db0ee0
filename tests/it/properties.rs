//! Property tests: broadcasting against a naive index loop, reductions over
//! arbitrary axes against ndarray, reshape/permute/slice round trips.

use nabla::prelude::*;
use ndarray::{ArrayD, Axis, IxDyn};
use proptest::prelude::*;

fn shape_strategy(max_nd: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..4, 0..=max_nd)
}

fn array_of(shape: &[usize], seed: u64) -> Array {
    nabla::random::Key::new(seed).normal(shape, DType::F64)
}

/// Two shapes that broadcast: take a shape and replace some dims by 1 or
/// drop leading dims.
fn broadcast_pair() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    shape_strategy(4).prop_flat_map(|s| {
        let n = s.len();
        (Just(s), prop::collection::vec(any::<bool>(), n), 0..=n).prop_map(|(s, ones, drop)| {
            let b: Vec<usize> = s
                .iter()
                .zip(&ones)
                .map(|(&d, &one)| if one { 1 } else { d })
                .collect();
            (s, b[drop..].to_vec())
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn broadcasting_matches_naive_indexing((sa, sb) in broadcast_pair(), swap in any::<bool>(), seed in 0u64..1000) {
        let (sa, sb) = if swap { (sb, sa) } else { (sa, sb) };
        let (a, b) = (array_of(&sa, seed), array_of(&sb, seed + 1));
        let c = &a - &b;
        let nd = sa.len().max(sb.len());
        let out: Vec<usize> = (0..nd).map(|i| {
            let da = if i + sa.len() >= nd { sa[i + sa.len() - nd] } else { 1 };
            let db = if i + sb.len() >= nd { sb[i + sb.len() - nd] } else { 1 };
            da.max(db)
        }).collect();
        prop_assert_eq!(c.shape(), &out[..]);
        let (an, bn, cn) = (a.to_ndarray::<f64>(), b.to_ndarray::<f64>(), c.to_ndarray::<f64>());
        for (idx, &v) in cn.indexed_iter() {
            let pick = |s: &[usize]| -> Vec<usize> {
                (0..s.len()).map(|i| if s[i] == 1 { 0 } else { idx[i + nd - s.len()] }).collect()
            };
            let want = an[IxDyn(&pick(&sa))] - bn[IxDyn(&pick(&sb))];
            prop_assert_eq!(v, want);
        }
    }

    #[test]
    fn reductions_over_any_axes(shape in shape_strategy(4), mask in prop::collection::vec(any::<bool>(), 4), keep in any::<bool>(), seed in 0u64..1000) {
        let x = array_of(&shape, seed);
        let axes: Vec<isize> = (0..shape.len()).filter(|&i| mask[i]).map(|i| i as isize).collect();
        let xn = x.to_ndarray::<f64>();
        let mut sum: ArrayD<f64> = xn.clone();
        let mut max: ArrayD<f64> = xn.clone();
        for &a in axes.iter().rev() {
            sum = sum.sum_axis(Axis(a as usize));
            max = max.map_axis(Axis(a as usize), |l| l.iter().cloned().fold(f64::NEG_INFINITY, f64::max));
        }
        let s = x.sum_axes(&axes, keep);
        let m = x.max_axes(&axes, keep);
        let mut want_shape: Vec<usize> = shape.clone();
        for &a in axes.iter().rev() {
            if keep { want_shape[a as usize] = 1 } else { want_shape.remove(a as usize); }
        }
        prop_assert_eq!(s.shape(), &want_shape[..]);
        for (g, w) in s.to_vec::<f64>().iter().zip(sum.iter()) {
            prop_assert!((g - w).abs() < 1e-12);
        }
        prop_assert_eq!(m.to_vec::<f64>(), max.iter().cloned().collect::<Vec<_>>());
    }

    #[test]
    fn reshape_permute_slice_round_trips(shape in shape_strategy(4), seed in 0u64..1000, rot in 0usize..4) {
        let x = array_of(&shape, seed);
        let nd = shape.len();
        // reshape to flat and back
        prop_assert_eq!(x.flatten().reshape(&shape).to_vec::<f64>(), x.to_vec::<f64>());
        // a rotation permutation and its inverse
        let perm: Vec<usize> = (0..nd).map(|i| (i + rot) % nd.max(1)).collect();
        let mut inv = vec![0; nd];
        for (i, &p) in perm.iter().enumerate() { inv[p] = i; }
        let back = x.permute(&perm).permute(&inv);
        prop_assert_eq!(back.shape(), x.shape());
        prop_assert_eq!(back.to_vec::<f64>(), x.to_vec::<f64>());
        // permuted then made contiguous by reshape keeps element order of the permutation
        let p = x.permute(&perm);
        prop_assert_eq!(p.reshape(&[p.numel()]).to_vec::<f64>(), p.to_vec::<f64>());
        // split along axis 0 and concatenate again
        if nd > 0 && shape[0] > 1 {
            let parts = x.split(&[1, shape[0] - 1], 0);
            prop_assert_eq!(nabla::concat(&parts, 0).to_vec::<f64>(), x.to_vec::<f64>());
            let ranged = x.slice_axis(0, 1..shape[0]);
            prop_assert_eq!(ranged.to_vec::<f64>(), parts[1].to_vec::<f64>());
        }
    }
}
