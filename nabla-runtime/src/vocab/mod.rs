//! L2 vocabulary: the traits and plain data every layer above speaks —
//! the value traits the rules and generated code are generic over
//! ([`value`]), argument indices ([`argnums`]), the shapes of composable
//! functions' arguments and results ([`structure`], [`arity`]), what flows
//! backward ([`cotangent`], [`accumulate`]) and the custom-op trait ([`custom_op`]). Trees
//! (`tree.rs`) belong to this layer too.

pub(crate) mod accumulate;
pub(crate) mod argnums;
pub(crate) mod arity;
pub(crate) mod cotangent;
pub(crate) mod custom_op;
pub(crate) mod structure;
pub(crate) mod value;
