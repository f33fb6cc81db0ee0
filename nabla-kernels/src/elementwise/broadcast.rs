//! NumPy broadcasting of shapes: the broadcast shape of two operands,
//! whether one shape broadcasts to another, and whether an operand is a row
//! repeated along the leading axes of a result.

/// NumPy broadcast of two shapes. Panics if they are incompatible.
///
/// ```
/// assert_eq!(nabla_kernels::elementwise::broadcast_shape(&[2, 1], &[3])[..], [2, 3]);
/// ```
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> crate::Shape {
    try_broadcast_shape(a, b).unwrap_or_else(|| panic!("shapes {a:?} and {b:?} do not broadcast"))
}

/// True when `from` broadcasts to exactly `to` (NumPy rules).
///
/// ```
/// use nabla_kernels::elementwise::broadcasts_to;
/// assert!(broadcasts_to(&[3], &[2, 3]) && broadcasts_to(&[], &[2]));
/// assert!(!broadcasts_to(&[2, 3], &[3]) && !broadcasts_to(&[2], &[3]));
/// ```
pub fn broadcasts_to(from: &[usize], to: &[usize]) -> bool {
    try_broadcast_shape(from, to).is_some_and(|s| s[..] == *to)
}

/// NumPy broadcast of two shapes, or `None` if they are incompatible.
///
/// ```
/// assert_eq!(nabla_kernels::elementwise::try_broadcast_shape(&[2], &[3]), None);
/// ```
pub fn try_broadcast_shape(a: &[usize], b: &[usize]) -> Option<crate::Shape> {
    if a == b {
        return Some(crate::Shape::from_slice(a));
    }
    // The longer shape, with the shorter one matched against its trailing axes.
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = crate::Shape::from_slice(long);
    let lead = long.len() - short.len();
    for (o, &s) in out[lead..].iter_mut().zip(short) {
        if *o != s {
            if *o == 1 {
                *o = s;
            } else if s != 1 {
                return None;
            }
        }
    }
    Some(out)
}

/// True when `small` (ignoring leading 1s) equals a non-empty suffix of
/// `full`, i.e. `small` repeats once per leading index of `full`.
pub(super) fn is_row_of(small: &[usize], full: &[usize]) -> bool {
    let s: &[usize] = {
        let k = small.iter().take_while(|&&d| d == 1).count();
        &small[k..]
    };
    !s.is_empty() && s.len() <= full.len() && full[full.len() - s.len()..] == *s
}
